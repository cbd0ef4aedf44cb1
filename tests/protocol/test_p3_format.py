"""The p3-whir proof object and its two encodings, against upstream Plonky3's own bytes (tests/golden-p3).

Every golden proof must survive JSON -> object -> JSON and postcard -> object -> postcard unchanged, the two
decodings must agree, and so must the commitment's. Malformed input of every kind must raise
``ProofFormatError`` (never another exception), and random synthetic proofs of many shapes must round-trip in
both codecs.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from whirgpu.errors import ProofFormatError
from whirgpu.profiles.p3_whir import format as fmt
from whirgpu.profiles.p3_whir.proof import (
    MerkleCap, OpeningEvals, PcsProof, QueryOpenings, RoundProof, SumcheckData, WhirProof,
)
from whirgpu.profiles.p3_whir.postcard import PostcardReader, PostcardWriter

from ..conftest import SHARED_GOLDEN_P3, SHIPPED_GOLDEN_P3, golden_p3_bytes, golden_p3_names, load_golden_p3

PRIMES = {"koalabear": 2**31 - 2**24 + 1, "babybear": 2**31 - 2**27 + 1}
PROOFS = golden_p3_names("[kb]b_n*_seed*.json")
SMALL = "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json"
KOALABEAR = PRIMES["koalabear"]


def _compact(tree) -> str:
    return json.dumps(tree, sort_keys=True, separators=(",", ":"))


def _monty(canonical: int, prime: int) -> int:
    return canonical * (1 << 32) % prime


@pytest.fixture(scope="module")
def small():
    doc = load_golden_p3(SMALL)
    return doc, bytes.fromhex(doc["proof_postcard_hex"])


# ---- the shipped set -------------------------------------------------------------------------------------------

def test_the_shipped_p3_set_is_complete():
    assert len(PROOFS) == 6 and {"kb_n14_k3_r2_s100_p16_jb_e2_seed0.json", SMALL} <= set(PROOFS)
    assert all((SHIPPED_GOLDEN_P3 / f"{name}.xz").is_file() for name in PROOFS)
    assert (SHIPPED_GOLDEN_P3 / "README.md").is_file()


@pytest.mark.parametrize("name", PROOFS)
def test_shipped_p3_copy_equals_the_shared_file(name):
    shared = SHARED_GOLDEN_P3 / name
    if not shared.is_file():
        pytest.skip(f"{shared} is not here to compare with")
    assert golden_p3_bytes(name) == shared.read_bytes()


# ---- the golden proofs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", PROOFS)
def test_golden_proof_round_trips_in_both_codecs(name):
    text = golden_p3_bytes(name).decode()
    doc = json.loads(text)
    prime = PRIMES[doc["field"]]
    proof = fmt.pcs_proof_from_json(doc["proof"], prime)
    tree = fmt.pcs_proof_to_json(proof, prime)
    assert _compact(tree) == _compact(doc["proof"])
    assert '"proof":' + json.dumps(tree, separators=(",", ":")) in text  # keys already in the file's order

    data = bytes.fromhex(doc["proof_postcard_hex"])
    assert len(data) == doc["proof_postcard_len"]
    assert fmt.pcs_proof_from_postcard(data, prime) == proof
    assert fmt.pcs_proof_to_postcard(proof, prime) == data


@pytest.mark.parametrize("name", PROOFS)
def test_golden_commitment_round_trips_in_both_codecs(name):
    doc = load_golden_p3(name)
    prime = PRIMES[doc["field"]]
    cap = fmt.merkle_cap_from_json(doc["commitment"], prime)
    assert _compact(fmt.merkle_cap_to_json(cap, prime)) == _compact(doc["commitment"])
    data = bytes.fromhex(doc["commitment_postcard_hex"])
    assert fmt.merkle_cap_from_postcard(data, prime) == cap
    assert fmt.merkle_cap_to_postcard(cap, prime) == data
    assert cap.roots.shape == (1, 8)
    assert cap.roots[0].tolist() == [_monty(x, prime) for x in doc["commitment_root_canonical"]]


@pytest.mark.parametrize("name", PROOFS)
def test_golden_proof_shape_matches_its_config_and_claims(name):
    """The decoded object means what the oracle says: one Base opening then Extension ones, the configured
    query counts and sumcheck lengths, and ``evals`` = the claimed values."""
    doc = load_golden_p3(name)
    prime, config = PRIMES[doc["field"]], doc["config"]
    whir = fmt.pcs_proof_from_postcard(bytes.fromhex(doc["proof_postcard_hex"]), prime).whir
    assert len(whir.rounds) == config["n_rounds"]
    assert whir.initial_ood_answers.shape == (config["commitment_ood_samples"], 4)
    assert whir.initial_sumcheck.evaluations.shape == (config["folding_schedule"][0], 2, 4)
    for i, (r, rc) in enumerate(zip(whir.rounds, config["rounds"])):
        assert r.openings.kind == ("base" if i == 0 else "extension")
        assert r.commitment is not None and r.ood_answers.shape == (rc["ood_samples"], 4)
        assert r.openings.num_queries == rc["num_queries"]
    assert whir.final_openings.kind == ("base" if not whir.rounds else "extension")
    assert whir.final_openings.num_queries == config["final_queries"]
    assert whir.final_poly.shape == (1 << config["final_sumcheck_rounds"], 4)
    claims = [[_monty(x, prime) for x in value] for value in doc["claimed_values_canonical"]]
    proof = fmt.pcs_proof_from_json(doc["proof"], prime)
    assert [e.current.tolist() for e in proof.evals] == [[c] for c in claims]
    assert all(e.next.shape == (0, 4) for e in proof.evals)


# ---- malformed postcard ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("cut", [0, 1, 5, 17, 18, 33, 100, 1000, 4000, -33, -2, -1])
def test_truncated_postcard_is_malformed(small, cut):
    _, data = small
    with pytest.raises(ProofFormatError, match="proof postcard"):
        fmt.pcs_proof_from_postcard(data[:cut], KOALABEAR)


def test_every_truncation_of_a_commitment_is_malformed(small):
    doc, _ = small
    data = bytes.fromhex(doc["commitment_postcard_hex"])
    for cut in range(len(data)):
        with pytest.raises(ProofFormatError, match="commitment postcard"):
            fmt.merkle_cap_from_postcard(data[:cut])


@pytest.mark.parametrize("garbage", [b"\x00", b"\x01\x02\x03", bytes(64)])
def test_trailing_bytes_are_malformed(small, garbage):
    doc, data = small
    with pytest.raises(ProofFormatError, match="trailing byte"):
        fmt.pcs_proof_from_postcard(data + garbage)
    with pytest.raises(ProofFormatError, match="trailing byte"):
        fmt.merkle_cap_from_postcard(bytes.fromhex(doc["commitment_postcard_hex"]) + garbage)


@pytest.mark.parametrize("head, problem", [
    (b"\x81", "overflows|needs at least|truncated"),  # the length 1 with its continuation bit flipped on
    (b"\xff" * 10 + b"\x01", "overflows 64 bits"),
    (b"\xff" * 9 + b"\x02", "overflows 64 bits"),
    (b"\x81\x00", "not minimally encoded"),
    (b"\xff\xff\xff\xff\x0f", "needs at least"),  # a well-formed but absurd length
])
def test_bad_varints_are_malformed(small, head, problem):
    _, data = small
    with pytest.raises(ProofFormatError, match=f"initial_ood_answers length.*({problem})|"
                                               f"initial_ood_answers.*({problem})"):
        fmt.pcs_proof_from_postcard(head + data[1:])


def test_bad_option_tags_and_variants_are_malformed():
    proof = _random_proof(random.Random(5), n_rounds=1)
    data = fmt.pcs_proof_to_postcard(proof)
    # The first round's commitment tag sits after initial_ood_answers and initial_sumcheck.
    w = PostcardWriter()
    fmt._write_efs(w, proof.whir.initial_ood_answers)
    fmt._write_sumcheck(w, proof.whir.initial_sumcheck)
    at = len(w.getvalue()) + 1  # + the rounds length
    assert data[at] in (0, 1)
    with pytest.raises(ProofFormatError, match=r"rounds\[0\]\.commitment.*Option tag 2"):
        fmt.pcs_proof_from_postcard(data[:at] + b"\x02" + data[at + 1:])
    reader = PostcardReader(b"\x02")
    with pytest.raises(ProofFormatError, match=r"variant index 2"):
        reader.variant("openings", fmt.VARIANTS)


def test_a_word_not_below_the_prime_is_malformed_only_when_a_prime_is_given(small):
    _, data = small
    bad = data[:1] + (0xFFFFFFFF).to_bytes(4, "little") + data[5:]  # initial_ood_answers[0].c0
    fmt.pcs_proof_from_postcard(bad)  # a u32 word is all the model checks without a field
    with pytest.raises(ProofFormatError, match=r"initial_ood_answers at byte 1: 4294967295 is not a field element"):
        fmt.pcs_proof_from_postcard(bad, KOALABEAR)
    proof = fmt.pcs_proof_from_postcard(bad)
    with pytest.raises(ProofFormatError, match=r"proof\.whir\.initial_ood_answers\[0, 0\]|"
                                               r"initial_ood_answers\[0, 0\]"):
        fmt.pcs_proof_to_postcard(proof, KOALABEAR)
    with pytest.raises(ProofFormatError, match="not a field element"):
        fmt.pcs_proof_to_json(proof, KOALABEAR)


def test_random_byte_corruptions_raise_only_proof_format_errors(small):
    """A corrupted proof either decodes (and then re-encodes to the same bytes) or is a ProofFormatError."""
    _, data = small
    rng = random.Random(1)
    decoded = 0
    for _ in range(150):
        corrupt = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            corrupt[rng.randrange(len(corrupt))] = rng.randrange(256)
        try:
            proof = fmt.pcs_proof_from_postcard(bytes(corrupt), KOALABEAR)
        except ProofFormatError:
            continue
        decoded += 1
        assert fmt.pcs_proof_to_postcard(proof) == bytes(corrupt)
    assert decoded  # most single-byte changes hit a word and stay well formed


# ---- malformed JSON --------------------------------------------------------------------------------------------

def _mutations():
    """(name, edit of a proof tree, what the message must name)."""
    def at(tree, path):
        for key in path:
            tree = tree[key]
        return tree

    def set_at(path, value):
        def edit(tree):
            at(tree, path[:-1])[path[-1]] = value
        return edit

    def delete(path):
        def edit(tree):
            del at(tree, path[:-1])[path[-1]]
        return edit

    r0 = ["whir", "rounds", 0]
    rows = r0 + ["openings", "Base", "rows"]
    return [
        ("another object", lambda t: t.clear() or t.update(x=1), r"proof: missing key\(s\) evals, whir"),
        ("missing whir", delete(["whir"]), "missing key"),
        ("extra key", set_at(["whir", "extra"], 1), r"proof\.whir: unexpected key\(s\) extra"),
        ("bool word", set_at(r0 + ["pow_witness"], True), r"rounds\[0\]\.pow_witness"),
        ("float word", set_at(["whir", "final_pow_witness"], 1.0), r"final_pow_witness"),
        ("string word", set_at(rows + [3, 1], "7"), r"rows\[3\]\[1\]"),
        ("negative word", set_at(rows + [3, 1], -1), r"rows\[3\]\[1\]: -1 is not a u32"),
        ("word over u32", set_at(rows + [0, 0], 1 << 32), r"rows\[0\]\[0\]: 4294967296 is not a u32"),
        ("word over p", set_at(rows + [0, 0], KOALABEAR), r"rows\[0\]\[0\]: .* not a field element"),
        ("ragged rows", lambda t: at(t, rows)[2].pop(), r"Base\.rows\[2\]: a row of 3"),
        ("ef of 3", lambda t: at(t, ["whir", "initial_ood_answers", 0, "value"]).pop(),
         r"initial_ood_answers\[0\]\.value: expected 4 entries"),
        ("phantom not null", set_at(["whir", "initial_ood_answers", 0, "_phantom"], 0), r"_phantom: expected null"),
        ("marker not null", set_at(r0 + ["commitment", "_marker"], []), r"commitment\._marker"),
        ("bad variant", lambda t: at(t, r0).update(openings={"Both": {}}), r"openings: expected"),
        ("two variants", lambda t: at(t, r0 + ["openings"]).update(Extension={}), r"openings: expected"),
        ("pair of 3", lambda t: at(t, r0 + ["sumcheck", "polynomial_evaluations", 0]).append(
            at(t, r0 + ["sumcheck", "polynomial_evaluations", 0, 0])), r"polynomial_evaluations\[0\]: expected 2"),
        ("final_poly not a tuple", lambda t: at(t, ["whir", "final_poly"]).pop(), r"final_poly: expected 2"),
        ("final_poly marker", set_at(["whir", "final_poly", 1], 0), r"final_poly\[1\]: expected null"),
        ("evals not a list", set_at(["evals"], {}), r"proof\.evals: expected an array"),
        ("digest of 7", lambda t: at(t, rows[:-1] + ["proof", "sibling_hashes", 5]).pop(),
         r"sibling_hashes\[5\]: expected 8 entries"),
    ]


@pytest.mark.parametrize("name, edit, where", _mutations(), ids=[m[0] for m in _mutations()])
def test_malformed_json_names_what_and_where(small, name, edit, where):
    doc, _ = small
    tree = json.loads(json.dumps(doc["proof"]))
    edit(tree)
    with pytest.raises(ProofFormatError, match=where):
        fmt.pcs_proof_from_json(tree, KOALABEAR)


@pytest.mark.parametrize("tree", [None, [], "proof", b"{}"])
def test_a_proof_tree_that_is_no_object_is_malformed(tree):
    with pytest.raises(ProofFormatError, match="proof: expected an object"):
        fmt.pcs_proof_from_json(tree)
    with pytest.raises(ProofFormatError, match="proof postcard: expected bytes|proof postcard"):
        fmt.pcs_proof_from_postcard(tree)


@pytest.mark.parametrize("tree", [None, [], 3, {"cap": [[0] * 8]}, {"_marker": None, "cap": [[0] * 9]},
                                  {"_marker": None, "cap": [[0] * 8], "x": 1}])
def test_malformed_commitment_json(tree):
    with pytest.raises(ProofFormatError, match="commitment"):
        fmt.merkle_cap_from_json(tree)


# ---- the object model ------------------------------------------------------------------------------------------

def test_the_model_checks_shapes_and_freezes_its_words():
    cap = MerkleCap([[1] * 8])
    assert cap.roots.dtype == np.uint32 and not cap.roots.flags.writeable
    with pytest.raises(ValueError):
        cap.roots[0, 0] = 2
    with pytest.raises(ProofFormatError, match=r"MerkleCap\.roots: expected an array of shape \(n, 8\)"):
        MerkleCap([[1] * 7])
    with pytest.raises(ProofFormatError, match="QueryOpenings.kind"):
        QueryOpenings("Base", [], [])
    with pytest.raises(ProofFormatError, match="QueryOpenings.rows"):
        QueryOpenings("base", [[1, 2], [3]], [])
    with pytest.raises(ProofFormatError, match=r"u32 word"):
        RoundProof(None, [], -1, QueryOpenings("base", [], []), SumcheckData([], []))
    with pytest.raises(ProofFormatError, match=r"PcsProof\.evals\[0\]: expected OpeningEvals"):
        PcsProof(_random_proof(random.Random(0)).whir, [1])
    with pytest.raises(ProofFormatError, match=r"expected a PcsProof"):
        fmt.pcs_proof_to_postcard("proof")
    assert QueryOpenings("extension", [], []).rows.shape == (0, 0, 4)
    assert QueryOpenings("base", np.zeros((0, 5), np.uint32), []).rows.shape == (0, 0)  # as it decodes
    a, b = _random_proof(random.Random(3)), _random_proof(random.Random(3))
    assert a == b and a != _random_proof(random.Random(4))


# ---- random synthetic proofs -----------------------------------------------------------------------------------

def _random_proof(rng: random.Random, n_rounds: int | None = None, prime: int = KOALABEAR) -> PcsProof:
    """A proof of random shape: 0..3 rounds, Base or Extension openings in any round, empty vectors, absent
    options, words anywhere in [0, prime)."""
    def words(*shape):
        return np.array([rng.randrange(prime) for _ in range(int(np.prod(shape)))], dtype=np.uint32).reshape(shape)

    def count(high=4):
        return rng.choice([0, 0, 1, rng.randint(1, high)])

    def sumcheck():
        return SumcheckData(words(count(), 2, 4), words(count()))

    def openings():
        kind = rng.choice(["base", "extension"])
        q, width = count(6), count(9)
        rows = words(q, width) if kind == "base" else words(q, width, 4)
        return QueryOpenings(kind, rows, words(count(12), 8))

    rounds = [
        RoundProof(MerkleCap(words(rng.choice([1, 1, 0, 2]), 8)) if rng.random() < 0.8 else None,
                   words(count(), 4), rng.randrange(prime), openings(), sumcheck())
        for _ in range(rng.randint(0, 3) if n_rounds is None else n_rounds)
    ]
    whir = WhirProof(words(count(), 4), sumcheck(), rounds, words(count(8), 4) if rng.random() < 0.8 else None,
                     rng.randrange(prime), openings(), sumcheck() if rng.random() < 0.7 else None)
    return PcsProof(whir, [OpeningEvals(words(count(), 4), words(count(), 4)) for _ in range(count())])


def _frozen(array) -> np.ndarray:
    array = np.array(array, np.uint32)
    array.setflags(write=False)
    return array


@pytest.mark.parametrize("kind, rows", [("base", [[1, 2, 3], [4, 5, 6]]),
                                        ("extension", [[[1, 2, 3, 4]], [[5, 6, 7, 8]]])])
def test_openings_of_a_provers_words_equal_the_checked_ones(kind, rows):
    """``QueryOpenings.of_words`` keeps a prover's read-only uint32 arrays of the checked shapes as they are (the
    same value as the checked constructor's) and sends anything else through the checks."""
    siblings = [[7] * 8, [9] * 8]
    fast = QueryOpenings.of_words(kind, _frozen(rows), _frozen(siblings))
    checked = QueryOpenings(kind, rows, siblings)
    assert fast == checked and fast.kind == kind
    assert not fast.rows.flags.writeable and not fast.sibling_hashes.flags.writeable
    for odd in (np.array(rows, np.uint32), np.array(rows, np.int64), _frozen(rows)[:0]):  # writable, wide, empty
        opened = QueryOpenings.of_words(kind, odd, _frozen(siblings))
        assert opened == QueryOpenings(kind, odd, siblings) and opened.rows.dtype == np.uint32
        assert not opened.rows.flags.writeable
    with pytest.raises(ProofFormatError, match="QueryOpenings.kind"):
        QueryOpenings.of_words("Base", _frozen(rows), _frozen(siblings))
    with pytest.raises(ProofFormatError, match="QueryOpenings.sibling_hashes"):
        QueryOpenings.of_words(kind, _frozen(rows), _frozen([[1] * 7]))


def test_a_cap_of_a_provers_words_equals_the_checked_one():
    """``MerkleCap.of_words`` keeps a read-only uint32 (n, 8) array as it is, the checked constructor's value;
    anything else goes through the checks."""
    roots = [[3] * 8]
    fast = MerkleCap.of_words(_frozen(roots))
    assert fast == MerkleCap(roots) and not fast.roots.flags.writeable
    for odd in (np.array(roots, np.uint32), np.array(roots, np.int64), _frozen(roots)[:0]):  # writable, wide, empty
        cap = MerkleCap.of_words(odd)
        assert cap == MerkleCap(odd) and cap.roots.dtype == np.uint32 and not cap.roots.flags.writeable
    with pytest.raises(ProofFormatError, match="MerkleCap.roots"):
        MerkleCap.of_words(_frozen([[1] * 7]))


@pytest.mark.parametrize("seed", range(40))
def test_random_proofs_round_trip_in_both_codecs(seed):
    rng = random.Random(seed)
    prime = rng.choice(list(PRIMES.values()))
    proof = _random_proof(rng, prime=prime)
    text = json.dumps(fmt.pcs_proof_to_json(proof, prime))
    assert fmt.pcs_proof_from_json(json.loads(text), prime) == proof
    data = fmt.pcs_proof_to_postcard(proof, prime)
    assert fmt.pcs_proof_from_postcard(data, prime) == proof
    for cut in sorted({rng.randrange(len(data)) for _ in range(5)}):
        with pytest.raises(ProofFormatError):
            fmt.pcs_proof_from_postcard(data[:cut], prime)
    cap = proof.whir.rounds[0].commitment if proof.whir.rounds and proof.whir.rounds[0].commitment else \
        MerkleCap(np.zeros((0, 8), np.uint32))
    assert fmt.merkle_cap_from_postcard(fmt.merkle_cap_to_postcard(cap)) == cap
    assert fmt.merkle_cap_from_json(json.loads(json.dumps(fmt.merkle_cap_to_json(cap)))) == cap


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**32 - 1, 2**63, 2**64 - 1])
def test_varints_round_trip_minimally(value):
    w = PostcardWriter()
    w.varint(value)
    data = w.getvalue()
    assert len(data) == max(1, -(-value.bit_length() // 7))
    reader = PostcardReader(data)
    assert reader.varint("v") == value
    reader.finish("v")
