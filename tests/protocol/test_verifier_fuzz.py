"""A seeded fuzzer for the verifier's input side: hostile proof files and proof objects.

Whatever is changed, ``load`` + ``verify`` may only raise ``ProofFormatError`` or ``VerificationError`` (never
another exception), and may accept only a file that decodes to the very proof it started from (a change of an
ignored key, or one that leaves the decoded proof the same). Three sources of hostile input: the JSON tree of a
small golden proof mutated at random paths, the binary encoding with random bytes changed, and the decoded proof
object with attributes replaced by junk.
"""

from __future__ import annotations

import copy
import functools
import json
import random

import numpy as np
import pytest

from whirgpu import api
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.protocol.params import WhirConfig
from whirgpu.profiles.whir_p3_metal.serialize import ProofFile, from_whir_p3_json, load, proof_to_json_tree, to_binary
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier

from ..conftest import golden_text

GOLDEN = "n10_f2_r1_s32_p0_cb.json"
N_JSON_CASES = 240
N_BINARY_CASES = 80
N_OBJECT_CASES = 120
CHUNK = 40  # cases per test, so a failure names a small seed range


@functools.lru_cache(maxsize=None)
def _base_text() -> str:
    """The golden file without the keys the decoder ignores anyway (they would only dilute the fuzzing)."""
    doc = json.loads(golden_text(GOLDEN))
    for key in ("proof_canonical", "polynomial_evals_canonical", "derived", "domain_separator_canonical", "field",
                "crypto", "source", "proof_field_encoding_note"):
        doc.pop(key, None)
    return json.dumps(doc)


@functools.lru_cache(maxsize=None)
def _base() -> ProofFile:
    return from_whir_p3_json(_base_text())


def _fingerprint(pf: ProofFile) -> tuple:
    """What the verifier looks at: parameters, statement and proof (not the instance seed)."""
    return (
        pf.params,
        pf.statement.points.tobytes(), pf.statement.points.shape,
        pf.statement.values.tobytes(), pf.statement.values.shape,
        json.dumps(proof_to_json_tree(pf.proof), sort_keys=True),
    )


def _check_outcome(data, where: str) -> str:
    """load + verify ``data``; return 'format', 'verification' or 'accepted'. Anything else fails the test."""
    try:
        pf = load(data)
    except ProofFormatError as err:
        assert str(err), where
        return "format"
    except Exception as err:  # noqa: BLE001 - the point of the test
        pytest.fail(f"{where}: load raised {type(err).__name__}: {err!r:.300}")
    try:
        MetalWhirVerifier(WhirConfig.from_params(pf.params)).verify(pf.proof, pf.statement)
    except ProofFormatError as err:
        assert str(err), where
        return "format"
    except VerificationError as err:
        assert err.check and err.round, f"{where}: VerificationError without check/round: {err}"
        return "verification"
    except Exception as err:  # noqa: BLE001
        pytest.fail(f"{where}: verify raised {type(err).__name__}: {err!r:.300}")
    assert _fingerprint(pf) == _fingerprint(_base()), f"{where}: a changed proof was accepted"
    return "accepted"


# ---- JSON tree mutations -----------------------------------------------------------------------------------------

def _nodes(tree, path=()):
    """Every (path, value) of the tree, containers included."""
    yield path, tree
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _nodes(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            yield from _nodes(value, path + (i,))


def _random_walk(rng: random.Random, tree) -> tuple:
    """A path chosen level by level, so the few structural nodes are hit as often as the many leaves."""
    path, node = (), tree
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path, node = path + (key,), node[key]
    return path


def _junk(rng: random.Random):
    kind = rng.randrange(12)
    return [
        lambda: rng.randrange(P),  # another valid element
        lambda: rng.randrange(P, 1 << 32),
        lambda: -rng.randrange(1, 1 << 40),
        lambda: rng.randrange(1 << 64, 1 << 200),
        lambda: rng.choice(["", "0", "base", "extension", "montgomery", "CapacityBound", "x" * 50]),
        lambda: None,
        lambda: rng.choice([True, False]),
        lambda: rng.choice([0.0, 1.5, 1e300, float(rng.randrange(P))]),
        lambda: [rng.randrange(P) for _ in range(rng.randrange(6))],
        lambda: {"value": [rng.randrange(P) for _ in range(4)], "_phantom": None},
        lambda: {},
        lambda: [[]],
    ][kind]()


def _mutate(rng: random.Random, doc: dict) -> str:
    """Change ``doc`` in place at one or a few random paths; describe what was done."""
    done: list[str] = []
    n_changes = 1 if rng.random() < 0.75 else rng.randrange(2, 5)
    while len(done) < n_changes:
        if rng.random() < 0.5:
            path = _random_walk(rng, doc)
        else:
            path = rng.choice([p for p, _ in _nodes(doc)])
        if not path:
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        key = path[-1]
        node = parent[key]
        action = rng.randrange(10)
        if isinstance(node, int) and not isinstance(node, bool) and rng.random() < 0.4:
            parent[key] = rng.randrange(P)  # in range: the decoder passes it on, the verifier must judge it
            done.append(f"set {path} to a valid element")
        elif action == 0 and isinstance(parent, dict):
            del parent[key]
            done.append(f"delete {path}")
        elif action == 1 and isinstance(node, list) and node:
            del node[rng.randrange(len(node)):]
            done.append(f"truncate {path}")
        elif action == 2 and isinstance(node, list) and node:
            node.append(copy.deepcopy(rng.choice(node)))
            done.append(f"append to {path}")
        elif action == 3 and isinstance(node, list) and len(node) > 1:
            i, j = rng.sample(range(len(node)), 2)
            node[i], node[j] = node[j], node[i]
            done.append(f"swap {path}[{i}], [{j}]")
        elif action == 4 and isinstance(node, int) and not isinstance(node, bool):
            parent[key] = (node + rng.choice([1, -1, P - 1, P])) % (1 << 32)
            done.append(f"nudge {path}")
        else:
            parent[key] = _junk(rng)
            done.append(f"replace {path} with {parent[key]!r:.60}")
    return "; ".join(done)


@functools.lru_cache(maxsize=None)
def _json_case(seed: int) -> str:
    rng = random.Random(seed)
    doc = json.loads(_base_text())
    what = _mutate(rng, doc)
    return _check_outcome(json.dumps(doc).encode(), f"seed {seed}: {what}")


@pytest.mark.parametrize("first", range(0, N_JSON_CASES, CHUNK))
def test_json_tree_mutations(first):
    for seed in range(first, first + CHUNK):
        _json_case(seed)


def test_json_fuzzer_reaches_the_verifier():
    """Over all seeds, both kinds of rejection happen and few mutations are no-ops (a fuzzer stuck in the decoder,
    or changing only what the decoder ignores, would test little). Reuses the outcomes above when they ran."""
    outcomes = [_json_case(seed) for seed in range(N_JSON_CASES)]
    counts = {kind: outcomes.count(kind) for kind in ("format", "verification", "accepted")}
    assert counts["verification"] >= N_JSON_CASES // 20 and counts["format"] >= N_JSON_CASES // 2, counts
    assert counts["accepted"] <= N_JSON_CASES // 4, counts


# ---- binary byte mutations ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("first", range(0, N_BINARY_CASES, CHUNK))
def test_binary_byte_mutations(first):
    base = to_binary(_base())
    for seed in range(first, first + CHUNK):
        rng = random.Random(10_000 + seed)
        data = bytearray(base)
        action = rng.randrange(4)
        if action == 0:  # flip a few bytes
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif action == 1:  # overwrite a word with a random valid element
            offset = 4 * rng.randrange(len(data) // 4)
            data[offset:offset + 4] = rng.randrange(P).to_bytes(4, "little")
        elif action == 2:  # cut a slice out
            start = rng.randrange(len(data))
            del data[start:start + rng.randrange(1, 64)]
        else:  # insert random bytes
            start = rng.randrange(len(data))
            data[start:start] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        # accepted only if the bytes still decode to the original proof (e.g. a changed digit of the header's seed)
        _check_outcome(bytes(data), f"binary seed {seed} (action {action})")


# ---- proof-object mutations (the verifier called directly) -------------------------------------------------------

def _object_junk(rng: random.Random):
    kind = rng.randrange(12)
    return [
        lambda: None,
        lambda: "abc",
        lambda: 3.5,
        lambda: -1,
        lambda: P,
        lambda: np.zeros((0,), np.uint32),
        lambda: np.full((rng.randrange(1, 5), 4), P, np.uint32),
        lambda: np.ones((rng.randrange(1, 5), rng.randrange(1, 9)), np.float64),
        lambda: np.zeros((2, 3, 4, 5), np.uint32),
        lambda: [[1, 2], [3]],
        lambda: {"a": 1},
        lambda: np.array([object()]),
    ][kind]()


def _object_slots(pf: ProofFile):
    """(owner, attribute) of every attribute of the statement, the proof, its rounds, sumchecks and a query."""
    proof = pf.proof
    slots = [(pf.statement, "points"), (pf.statement, "values")]
    slots += [(proof, a) for a in ("initial_commitment", "initial_ood_answers", "initial_sumcheck", "rounds",
                                   "final_poly", "final_pow_witness", "final_queries", "final_sumcheck")]
    for owner in [proof.initial_sumcheck, proof.final_sumcheck] + [r.sumcheck for r in proof.rounds]:
        slots += [(owner, "evaluations"), (owner, "pow_witnesses")]
    for r in proof.rounds:
        slots += [(r, a) for a in ("commitment", "ood_answers", "pow_witness", "queries", "sumcheck")]
        slots += [(r.queries[0], a) for a in ("kind", "values", "siblings")]
    slots += [(proof.final_queries[-1], a) for a in ("kind", "values", "siblings")]
    return slots


@pytest.mark.parametrize("first", range(0, N_OBJECT_CASES, CHUNK))
def test_proof_object_mutations(first):
    verifier = MetalWhirVerifier(WhirConfig.from_params(_base().params))
    for seed in range(first, first + CHUNK):
        rng = random.Random(20_000 + seed)
        pf = copy.deepcopy(_base())
        owner, attr = rng.choice(_object_slots(pf))
        junk = _object_junk(rng)
        setattr(owner, attr, junk)
        where = f"object seed {seed}: {type(owner).__name__}.{attr} = {junk!r:.60}"
        try:
            verifier.verify(pf.proof, pf.statement)
        except (ProofFormatError, VerificationError) as err:
            assert str(err), where
        except Exception as err:  # noqa: BLE001
            pytest.fail(f"{where}: verify raised {type(err).__name__}: {err!r:.300}")
        else:  # only a replacement by an equal value (an empty array for an empty one) may pass
            assert _fingerprint(pf) == _fingerprint(_base()), f"{where}: a changed proof was accepted"


def test_verifier_rejects_non_proof_arguments():
    pf = _base()
    verifier = MetalWhirVerifier(WhirConfig.from_params(pf.params))
    for proof, statement in [(None, pf.statement), (pf.proof, None), ("proof", pf.statement),
                             (pf.proof, (pf.statement.points, pf.statement.values))]:
        with pytest.raises(ProofFormatError):
            verifier.verify(proof, statement)
    with pytest.raises(ProofFormatError):
        api.verify(b"")
