"""A seeded fuzzer and a tamper test for p3-whir proof documents, over both encodings of the proof (the serde JSON
``proof`` and the postcard bytes of ``proof_postcard_hex``).

Whatever is changed, ``read_p3_document_bytes`` + ``verify_p3_document`` may only raise ``ProofFormatError``,
``VerificationError`` or ``ConfigError``, and may accept only a document that says nothing the one it started from
does not: the same configuration, commitment, points and values proven, every other key it keeps unchanged but
the informational ones (texts, notes); optional keys may go. Nothing else in a document goes unchecked. The postcard
decoder, called directly on changed bytes, returns a proof that re-encodes to exactly those bytes or raises
``ProofFormatError``, with and without the configuration's bounds.

Tampering: one integer of each key changed to another (value + 1 mod p) is rejected with the error the
document policy (``profiles/p3_whir/document.py``) names for that key: ``VerificationError`` for the proof, the
commitment and the statement (checks ``claimed_values``, ``points``, ``ood_points``), ``ProofFormatError`` naming
the key for a copy or a derived value.
"""

from __future__ import annotations

import copy
import functools
import json
import random

import numpy as np
import pytest

from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.field import KOALABEAR
from whirgpu.profiles.p3_whir.document import read_p3_document_bytes, verify_p3_document
from whirgpu.profiles.p3_whir.document_checks import NOTES_KEY, TEXT_KEYS
from whirgpu.profiles.p3_whir.format import ProofBounds, pcs_proof_from_postcard, pcs_proof_to_postcard

from ..conftest import golden_p3_bytes

BASE = "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json"
PRESCRIBED = "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json"
P = KOALABEAR.P
N_JSON_CASES = 60
N_POSTCARD_CASES = 20
N_DECODER_CASES = 200
CHUNK = 30


@functools.lru_cache(maxsize=None)
def _base_doc(name: str = BASE) -> str:
    return golden_p3_bytes(name).decode()


def _unchanged(doc: dict, base: dict, verified) -> bool:
    """Whether an accepted ``doc`` says nothing ``base`` does not: it proves the same (configuration, commitment,
    points, values), and every key it keeps, but the informational ones (texts, notes) and ``params`` (judged
    through the configuration it derives), is the base's, unchanged. Optional keys may be left out."""
    reference = verify_p3_document(read_p3_document_bytes(json.dumps(base).encode()))
    same_proven = (verified.config.to_json_dict() == reference.config.to_json_dict()
                   and verified.prescribed == reference.prescribed and verified.commitment == reference.commitment
                   and np.array_equal(verified.points, reference.points)
                   and np.array_equal(verified.values, reference.values))
    kept = [k for k in doc if k not in TEXT_KEYS and k not in (NOTES_KEY, "params")]
    return same_proven and all(k in base and _same_json(doc[k], base[k]) for k in kept)


def _same_json(a, b) -> bool:
    """Equal trees, types included (1 is not 1.0 nor True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return a == b


def _outcome(data: bytes, where: str, unchanged=lambda verified: False) -> str:
    """Read and verify ``data``: 'format', 'config', 'verification' or 'accepted'; anything else fails the test,
    and so does an accepted document for which ``unchanged(verified)`` is false."""
    try:
        verified = verify_p3_document(read_p3_document_bytes(data))
    except ProofFormatError as err:
        assert str(err), where
        return "format"
    except ConfigError as err:
        assert str(err), where
        return "config"
    except VerificationError as err:
        assert err.check and err.round, f"{where}: VerificationError without check/round: {err}"
        return "verification"
    except Exception as err:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{where}: raised {type(err).__name__}: {err!r:.300}")
    assert unchanged(verified), f"{where}: a changed document was accepted"
    return "accepted"


# ---- JSON mutations ------------------------------------------------------------------------------------------------

def _nodes(tree, path=()):
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _nodes(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _nodes(value, path + (i,))


def _walk(rng: random.Random, tree) -> tuple:
    """A path chosen level by level (the few structural nodes are hit as often as the many leaves)."""
    path, node = (), tree
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path, node = path + (key,), node[key]
    return path


def _junk(rng: random.Random):
    return rng.choice([
        lambda: rng.randrange(P), lambda: rng.randrange(P, 1 << 32), lambda: -rng.randrange(1, 1 << 40),
        lambda: rng.randrange(1 << 64, 1 << 130), lambda: rng.choice(["", "Base", "transcript", "x" * 50]),
        lambda: None, lambda: rng.choice([True, False]), lambda: rng.choice([0.0, 2.5, 1e300]),
        lambda: [rng.randrange(P) for _ in range(rng.randrange(6))],
        lambda: {"value": [rng.randrange(P) for _ in range(4)], "_phantom": None}, lambda: {}, lambda: [[]],
        lambda: [[[[[[]]]]]],
    ])()


def _mutate(rng: random.Random, doc: dict) -> str:
    done: list[str] = []
    for _ in range(1 if rng.random() < 0.75 else rng.randrange(2, 5)):
        choice = rng.random()
        if choice < 0.25:  # an integer the verifier judges (the proof, the commitment, the statement), kept valid
            key = rng.choice(["proof", "proof", "commitment", "claimed_values_canonical", "points_canonical"])
            path = rng.choice([p for p, v in _nodes(doc[key], (key,)) if isinstance(v, int) and
                               not isinstance(v, bool)] or [(key,)])
        else:
            path = _walk(rng, doc) if choice < 0.6 else rng.choice([p for p, _ in _nodes(doc)])
        while not path:
            path = _walk(rng, doc)
        parent = functools.reduce(lambda node, step: node[step], path[:-1], doc)
        key, node = path[-1], parent[path[-1]]
        action = 0 if choice < 0.25 else rng.randrange(8)
        if isinstance(node, int) and not isinstance(node, bool) and action < 3:
            parent[key] = rng.choice([(node + 1) % P, rng.randrange(P), node ^ (1 << rng.randrange(32))])
            done.append(f"change the integer at {path}")
        elif action == 3 and isinstance(parent, dict):
            del parent[key]
            done.append(f"delete {path}")
        elif action == 4 and isinstance(node, list) and node:
            del node[rng.randrange(len(node)):]
            done.append(f"truncate {path}")
        elif action == 5 and isinstance(node, list) and node:
            node.append(copy.deepcopy(rng.choice(node)))
            done.append(f"append to {path}")
        elif action == 6 and isinstance(node, list) and len(node) > 1:
            i, j = rng.sample(range(len(node)), 2)
            node[i], node[j] = node[j], node[i]
            done.append(f"swap {path}[{i}], [{j}]")
        elif action == 7 and isinstance(parent, dict):
            parent[f"{key}_extra"] = _junk(rng)
            done.append(f"add the key {key}_extra next to {path}")
        else:
            parent[key] = _junk(rng)
            done.append(f"replace {path} with {parent[key]!r:.60}")
    return "; ".join(done)


@functools.lru_cache(maxsize=None)
def _json_case(seed: int) -> str:
    rng = random.Random(seed)
    base = json.loads(_base_doc())
    doc = copy.deepcopy(base)
    what = _mutate(rng, doc)
    return _outcome(json.dumps(doc).encode(), f"seed {seed}: {what}", lambda verified: _unchanged(doc, base, verified))


@pytest.mark.parametrize("first", range(0, N_JSON_CASES, CHUNK))
def test_json_document_mutations(first):
    for seed in range(first, first + CHUNK):
        _json_case(seed)


def test_the_json_fuzzer_reaches_the_verifier():
    outcomes = [_json_case(seed) for seed in range(N_JSON_CASES)]
    counts = {kind: outcomes.count(kind) for kind in ("format", "config", "verification", "accepted")}
    assert counts["verification"] >= N_JSON_CASES // 10 and counts["format"] >= N_JSON_CASES // 2, counts
    assert counts["accepted"] <= N_JSON_CASES // 10, counts


# ---- postcard mutations --------------------------------------------------------------------------------------------

def _mutated_bytes(rng: random.Random, base: bytes) -> bytes:
    data = bytearray(base)
    action = rng.randrange(5)
    if action == 0:
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif action == 1:
        offset = rng.randrange(len(data) - 4)
        data[offset:offset + 4] = rng.randrange(P).to_bytes(4, "little")
    elif action == 2:
        start = rng.randrange(len(data))
        del data[start:start + rng.randrange(1, 64)]
    elif action == 3:
        start = rng.randrange(len(data))
        data[start:start] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    else:  # a length varint made huge
        start = rng.randrange(len(data))
        data[start:start + 1] = bytes([0xFF] * rng.randrange(1, 10) + [rng.randrange(1, 0x80)])
    return bytes(data)


@functools.lru_cache(maxsize=None)
def _bounds() -> ProofBounds:
    document = read_p3_document_bytes(_base_doc())
    return ProofBounds.of(document.config, document.num_openings)


def test_postcard_decoder_mutations():
    base = bytes.fromhex(json.loads(_base_doc())["proof_postcard_hex"])
    for seed in range(N_DECODER_CASES):
        data = _mutated_bytes(random.Random(30_000 + seed), base)
        for bounds in (_bounds(), None):
            try:
                proof = pcs_proof_from_postcard(data, P, bounds)
            except ProofFormatError as err:
                assert str(err)
            except Exception as err:  # noqa: BLE001
                pytest.fail(f"postcard seed {seed}: raised {type(err).__name__}: {err!r:.300}")
            else:
                assert pcs_proof_to_postcard(proof, P) == data, f"postcard seed {seed}: not its own encoding"


def test_postcard_hex_mutations_in_a_document():
    base = json.loads(_base_doc())
    original = bytes.fromhex(base["proof_postcard_hex"])
    for seed in range(N_POSTCARD_CASES):
        data = _mutated_bytes(random.Random(40_000 + seed), original)
        doc = dict(base, proof_postcard_hex=data.hex())
        where = f"postcard document seed {seed}"
        outcome = _outcome(json.dumps(doc).encode(), where, lambda verified: data == original)
        assert outcome == "format" or data == original, where


# ---- tampering -----------------------------------------------------------------------------------------------------

def _integers(tree, path=()):
    for node_path, node in _nodes(tree, path):
        if isinstance(node, int) and not isinstance(node, bool):
            yield node_path


PROOF_KEYS = {"proof": None, "commitment": None}
STATEMENT_KEYS = {"claimed_values_canonical": "claimed_values", "initial_ood_points_canonical": "ood_points"}
COPY_KEYS = ("proof_canonical", "commitment_canonical", "commitment_root_canonical", "polynomial_evals_canonical",
             "domain_separator_canonical", "config", "proof_postcard_len")


def _tamper_cases():
    """Two integers of every key of the small document; of the prescribed one, of its statement."""
    cases = []
    for name, keys in ((BASE, [*PROOF_KEYS, *STATEMENT_KEYS, "points_canonical", *COPY_KEYS, "params"]),
                       (PRESCRIBED, ["points_canonical", "claimed_values_canonical"])):
        doc = json.loads(_base_doc(name))
        prescribed = doc["params"]["points"] == "prescribed"
        for key in keys:
            paths = list(_integers(doc[key], (key,)))
            for path in random.Random(f"{name}/{key}").sample(paths, min(2, len(paths))):
                if path[-1] == "seed":
                    continue
                cases.append((name, path, prescribed))
    return cases


@pytest.mark.parametrize("name, path, prescribed", _tamper_cases(), ids=lambda v: str(v)[:60])
def test_a_tampered_integer_is_rejected_as_the_policy_says(name, path, prescribed):
    doc = json.loads(_base_doc(name))
    parent = functools.reduce(lambda node, step: node[step], path[:-1], doc)
    parent[path[-1]] = (parent[path[-1]] + 1) % P
    key = path[0]
    with pytest.raises((ProofFormatError, VerificationError)) as caught:
        verify_p3_document(read_p3_document_bytes(json.dumps(doc).encode()))
    error = caught.value
    if key in PROOF_KEYS or (key == "points_canonical" and prescribed):
        assert isinstance(error, VerificationError), error  # a false proof, or one of another statement
    elif key in STATEMENT_KEYS or key == "points_canonical":
        assert isinstance(error, VerificationError) and error.round == "statement", error
        assert error.check == STATEMENT_KEYS.get(key, "points") and str(error).startswith(key), error
    elif key in COPY_KEYS:
        assert isinstance(error, ProofFormatError) and str(error).startswith(key), error
