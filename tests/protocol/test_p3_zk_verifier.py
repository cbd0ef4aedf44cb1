"""The hiding PCS's numpy verifier and proof codecs on the oracle's zk golden files: it accepts every golden proof
(read from its serde JSON and from its postcard bytes), the codecs round-trip them exactly, and a flipped byte
anywhere in a proof part is rejected with a ``VerificationError`` or ``ProofFormatError``, never anything else."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance
from whirgpu.profiles.p3_whir.zk.format import (
    zk_commitment_from_json,
    zk_proof_from_json,
    zk_proof_from_postcard,
    zk_proof_to_json,
    zk_proof_to_postcard,
)
from whirgpu.profiles.p3_whir.zk.verifier import zk_verify

ZK_GOLDEN = golden_p3_names("z0*.json")


def _golden(name):
    doc = load_golden_p3(name)
    inst = read_zk_instance(doc)
    return doc, inst, zk_commitment_from_json(doc["commitment"], inst.field)


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_codecs_round_trip_the_golden_proof(name):
    doc, inst, _ = _golden(name)
    proof = zk_proof_from_json(doc["proof"], inst.field)
    assert zk_proof_to_json(proof) == doc["proof"]
    data = bytes.fromhex(doc["proof_postcard_hex"])
    assert zk_proof_to_postcard(proof) == data
    assert zk_proof_to_json(zk_proof_from_postcard(data, inst.field)) == doc["proof"]


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_verifier_accepts_the_golden_proof(name):
    doc, inst, commitment = _golden(name)
    proof = zk_proof_from_postcard(bytes.fromhex(doc["proof_postcard_hex"]), inst.field)
    assert np.array_equal(proof.evals, inst.values)
    zk_verify(inst.config, inst.field, commitment, proof, inst.points)


def _rejected(inst, commitment, data: bytes, points=None) -> str:
    """The verdict on a (tampered) postcard proof: 'format' or 'reject:<check>'; anything else fails the test."""
    try:
        proof = zk_proof_from_postcard(data, inst.field)
        zk_verify(inst.config, inst.field, commitment, proof, inst.points if points is None else points)
    except ProofFormatError:
        return "format"
    except VerificationError as exc:
        assert exc.check and exc.round
        return f"reject:{exc.check}"
    return "accept"


def _part_offsets(data_len: int, proof, field) -> dict[str, int]:
    """One byte offset inside each proof part (found by re-encoding prefixes of the proof)."""
    from whirgpu.profiles.p3_whir.postcard import PostcardWriter
    evals_end = 1 + 16 * len(proof.evals)
    parts = {"evals": 5, "sumcheck mu_tilde": evals_end + 2, "sumcheck wire": evals_end + 24}
    enc = zk_proof_to_postcard(proof)
    base = proof.base_case
    w = PostcardWriter()
    w.words(base.blinded_message[:1])
    needle = w.getvalue()
    parts["base-case blinded message"] = enc.index(needle) + 1
    for what, arr in (("round commitment", proof.rounds[0].commitment.roots),
                      ("round mask commitment", proof.rounds[0].mask_commitment.roots),
                      ("round OOD answer", proof.rounds[0].ood_answers),
                      ("round opening row", proof.rounds[0].openings.rows[0]),
                      ("round sibling", proof.rounds[0].openings.sibling_hashes),
                      ("sumcheck mask commitment", proof.sumcheck_mask_commitments[1].roots),
                      ("base-case fresh main commitment", base.fresh_main_commitment.roots),
                      ("base-case masked claim", base.masked_claim),
                      ("base-case blinded randomness", base.blinded_randomness[:1]),
                      ("base-case blinded mask", base.blinded_masks[-1].randomness[-1:]),
                      ("base-case source row", base.source_openings.rows[-1]),
                      ("base-case fresh main sibling", base.fresh_main_openings.sibling_hashes[-1:]),
                      ("base-case carried mask row", base.mask_openings[0].carried.rows[3]),
                      ("base-case fresh mask sibling", base.mask_openings[-1].fresh.sibling_hashes[-1:])):
        w = PostcardWriter()
        w.words(np.asarray(arr, np.uint32).reshape(-1)[:4])
        parts[what] = enc.index(w.getvalue()) + 2
    parts["last byte"] = data_len - 1
    return parts


@pytest.mark.parametrize("name", ZK_GOLDEN[:2])
def test_a_flipped_byte_in_each_part_is_rejected(name):
    doc, inst, commitment = _golden(name)
    data = bytes.fromhex(doc["proof_postcard_hex"])
    proof = zk_proof_from_postcard(data, inst.field)
    verdicts = {}
    for part, offset in _part_offsets(len(data), proof, inst.field).items():
        for flip in (0x01, 0x80):
            tampered = bytearray(data)
            tampered[offset] ^= flip
            verdicts[(part, flip)] = _rejected(inst, commitment, bytes(tampered))
    assert "accept" not in verdicts.values(), verdicts


def test_a_changed_point_or_commitment_is_rejected():
    doc, inst, commitment = _golden(ZK_GOLDEN[0])
    data = bytes.fromhex(doc["proof_postcard_hex"])
    points = inst.points.copy()
    points[0, 0, 0] ^= 1
    assert _rejected(inst, commitment, data, points).startswith("reject:")
    other = zk_commitment_from_json(load_golden_p3(ZK_GOLDEN[1])["commitment"], inst.field)
    assert _rejected(inst, other, data).startswith("reject:")
    assert _rejected(inst, commitment, data[:-1]) == "format"
    assert _rejected(inst, commitment, data + b"\x00") == "format"


@pytest.mark.parametrize("mutate", ["ell_zk", "drop_round", "drop_mask", "wire_len", "evals"])
def test_structural_tampering_is_rejected_cleanly(mutate):
    from dataclasses import replace
    doc, inst, commitment = _golden(ZK_GOLDEN[0])
    proof = zk_proof_from_json(doc["proof"], inst.field)
    if mutate == "ell_zk":
        proof = replace(proof, sumchecks=(replace(proof.sumchecks[0], ell_zk=5),) + proof.sumchecks[1:])
    elif mutate == "drop_round":
        proof = replace(proof, rounds=())
    elif mutate == "drop_mask":
        proof = replace(proof, base_case=replace(proof.base_case, blinded_masks=proof.base_case.blinded_masks[:-1]))
    elif mutate == "wire_len":
        s = proof.sumchecks[1]
        s = replace(s, round_coefficients=s.round_coefficients[:, :2])
        proof = replace(proof, sumchecks=(proof.sumchecks[0], s))
    else:
        proof = replace(proof, evals=proof.evals[:1])
    with pytest.raises(VerificationError):
        zk_verify(inst.config, inst.field, commitment, proof, inst.points)


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_whole_documents_verify(name):
    from whirgpu.profiles.p3_whir.zk.document import verify_zk_document
    verify_zk_document(load_golden_p3(name))


def test_inconsistent_documents_are_format_errors():
    import copy

    from whirgpu.profiles.p3_whir.zk.document import verify_zk_document
    doc = load_golden_p3(ZK_GOLDEN[0])
    for key, change in (("proof_postcard_hex", lambda d: d.__setitem__("proof_postcard_hex", "00")),
                        ("zk_config", lambda d: d["zk_config"].__setitem__("mask_queries", 1)),
                        ("domain_separator_canonical", lambda d: d["domain_separator_canonical"].pop()),
                        ("claimed_values_canonical", lambda d: d["claimed_values_canonical"][0].__setitem__(0, 5)),
                        ("proof", lambda d: d["proof"].pop("base_case")),
                        ("commitment", lambda d: d.__setitem__("commitment", [])),
                        ("field", lambda d: d.__setitem__("field", "goldilocks"))):
        bad = copy.deepcopy(doc)
        change(bad)
        with pytest.raises(ProofFormatError):
            verify_zk_document(bad)


@pytest.mark.parametrize("seed", range(3))
def test_random_byte_flips_are_rejected_cleanly(seed):
    """Random single-byte changes anywhere in a proof's postcard bytes: a ProofFormatError or a VerificationError,
    never an acceptance or another exception."""
    doc, inst, commitment = _golden(ZK_GOLDEN[0])
    data = bytes.fromhex(doc["proof_postcard_hex"])
    rng = np.random.default_rng(seed)
    for offset in rng.choice(len(data), size=12, replace=False):
        tampered = bytearray(data)
        tampered[offset] ^= int(rng.integers(1, 256))
        assert _rejected(inst, commitment, bytes(tampered)) != "accept", offset


def test_unused_pow_witnesses_are_not_checked_as_upstream():
    """With 0 PoW bits the witness word is never read (upstream's verifier accepts z01 with them changed; see
    docs/ZK-PROTOCOL.md, traps): the reference agrees rather than being stricter than upstream."""
    from dataclasses import replace
    doc, inst, commitment = _golden(ZK_GOLDEN[0])
    assert inst.config.final_pow_bits == 0 and all(r.pow_bits == 0 for r in inst.config.inner.round_parameters)
    proof = zk_proof_from_json(doc["proof"], inst.field)
    proof = replace(proof, rounds=(replace(proof.rounds[0], pow_witness=7),),
                    base_case=replace(proof.base_case, pow_witness=9))
    zk_verify(inst.config, inst.field, commitment, proof, inst.points)


@pytest.mark.parametrize("mutate", ["evals_dtype", "wire_shape", "cap_roots", "witness", "opening_kind", "big_word",
                                    "not_a_proof", "points"])
def test_malformed_in_memory_proofs_are_format_errors(mutate):
    from dataclasses import replace

    from whirgpu.profiles.p3_whir.proof import MerkleCap, QueryOpenings
    doc, inst, commitment = _golden(ZK_GOLDEN[0])
    proof = zk_proof_from_json(doc["proof"], inst.field)
    points = inst.points
    b = proof.base_case
    if mutate == "evals_dtype":
        proof = replace(proof, evals=proof.evals.astype(np.int64))
    elif mutate == "wire_shape":
        proof = replace(proof, sumchecks=(replace(proof.sumchecks[0], round_coefficients=np.zeros((4, 3, 0),
                                                                                                  np.uint32)),)
                        + proof.sumchecks[1:])
    elif mutate == "cap_roots":
        proof = replace(proof, sumcheck_mask_commitments=(MerkleCap(np.zeros((2, 8), np.uint32)),) * 2)
    elif mutate == "witness":
        proof = replace(proof, base_case=replace(b, pow_witness=-1))
    elif mutate == "opening_kind":
        o = b.fresh_main_openings
        proof = replace(proof, base_case=replace(b, fresh_main_openings=QueryOpenings("base", o.rows[:, :, 0],
                                                                                      o.sibling_hashes)))
    elif mutate == "big_word":
        proof = replace(proof, base_case=replace(b, masked_claim=np.full(4, inst.field.P, np.uint32)))
    elif mutate == "not_a_proof":
        proof = doc["proof"]
    else:
        points = points[:, :-1]
    with pytest.raises(ProofFormatError):
        zk_verify(inst.config, inst.field, commitment, proof, points)
