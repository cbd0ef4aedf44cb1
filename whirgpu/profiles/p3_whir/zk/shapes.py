"""Type and word checks of an in-memory ``ZkWhirProof`` before the verifier reads it: every member has its Rust
type's form (EF vectors (m, 4), caps of one (8,) root, openings ``QueryOpenings``, PoW witnesses ints) and every
word is a field element. ``check_proof_types(proof, field)`` raises ``ProofFormatError`` naming the member; counts
and lengths are the verifier's checks (upstream rejects them as verifier errors)."""

from __future__ import annotations

import numpy as np

from ....errors import ProofFormatError
from ....field import Field
from ..proof import MerkleCap, QueryOpenings
from .proof import (
    BaseCaseZkProof,
    BlindedMask,
    MaskOpeningPair,
    ZkRoundProof,
    ZkSumcheckData,
    ZkWhirProof,
)


def _typed(value, kind, what: str):
    if not isinstance(value, kind):
        raise ProofFormatError(f"{what}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _seq(values, kind, what: str) -> tuple:
    if not isinstance(values, (tuple, list)):
        raise ProofFormatError(f"{what}: expected a sequence of {kind.__name__}")
    return tuple(_typed(v, kind, f"{what}[{i}]") for i, v in enumerate(values))


def _words(value, tail: tuple, what: str, p: int) -> None:
    if not isinstance(value, np.ndarray) or value.dtype != np.uint32 or value.ndim != 1 + len(tail) or \
            value.shape[1:] != tail:
        shape = getattr(value, "shape", None)
        raise ProofFormatError(f"{what}: expected a uint32 array (m{''.join(f', {t}' for t in tail)}), got {shape}")
    if value.size and int(value.max()) >= p:
        raise ProofFormatError(f"{what}: a word is not a field element (>= {p})")


def _ef(value, what: str, p: int) -> None:
    if not isinstance(value, np.ndarray) or value.dtype != np.uint32 or value.shape != (4,):
        raise ProofFormatError(f"{what}: expected one extension element (4,)")
    if int(value.max()) >= p:
        raise ProofFormatError(f"{what}: a word is not a field element (>= {p})")


def _witness(value, what: str, p: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < p:
        raise ProofFormatError(f"{what}: expected a field element word")


def _cap(cap, what: str, p: int) -> None:
    _typed(cap, MerkleCap, what)
    if cap.roots.shape != (1, 8) or int(cap.roots.max()) >= p:
        raise ProofFormatError(f"{what}: expected a cap of one root of field elements")


def _openings(o, what: str, p: int) -> None:
    _typed(o, QueryOpenings, what)
    for name in ("rows", "sibling_hashes"):
        array = getattr(o, name)
        if array.size and int(array.max()) >= p:
            raise ProofFormatError(f"{what}.{name}: a word is not a field element (>= {p})")


def check_proof_types(proof, field: Field) -> None:
    p = field.P
    _typed(proof, ZkWhirProof, "proof")
    _words(proof.evals, (4,), "proof.evals", p)
    for i, s in enumerate(_seq(proof.sumchecks, ZkSumcheckData, "proof.sumchecks")):
        where = f"proof.sumchecks[{i}]"
        _ef(s.mu_tilde, f"{where}.mu_tilde", p)
        if isinstance(s.ell_zk, bool) or not isinstance(s.ell_zk, int):
            raise ProofFormatError(f"{where}.ell_zk: expected an int")
        wires = s.round_coefficients
        if not isinstance(wires, np.ndarray) or wires.ndim != 3 or wires.shape[2] != 4:
            raise ProofFormatError(f"{where}.round_coefficients: expected (k, c, 4) words")
        _words(wires.reshape(-1, 4), (4,), f"{where}.round_coefficients", p)
        _words(s.pow_witnesses, (), f"{where}.pow_witnesses", p)
    for i, cap in enumerate(_seq(proof.sumcheck_mask_commitments, MerkleCap, "proof.sumcheck_mask_commitments")):
        _cap(cap, f"proof.sumcheck_mask_commitments[{i}]", p)
    for i, r in enumerate(_seq(proof.rounds, ZkRoundProof, "proof.rounds")):
        where = f"proof.rounds[{i}]"
        _cap(r.commitment, f"{where}.commitment", p)
        _cap(r.mask_commitment, f"{where}.mask_commitment", p)
        _words(r.ood_answers, (4,), f"{where}.ood_answers", p)
        _witness(r.pow_witness, f"{where}.pow_witness", p)
        _openings(r.openings, f"{where}.openings", p)
    b = _typed(proof.base_case, BaseCaseZkProof, "proof.base_case")
    _cap(b.fresh_main_commitment, "base_case.fresh_main_commitment", p)
    for i, cap in enumerate(_seq(b.fresh_mask_commitments, MerkleCap, "base_case.fresh_mask_commitments")):
        _cap(cap, f"base_case.fresh_mask_commitments[{i}]", p)
    _ef(b.masked_claim, "base_case.masked_claim", p)
    _words(b.blinded_message, (4,), "base_case.blinded_message", p)
    _words(b.blinded_randomness, (4,), "base_case.blinded_randomness", p)
    for i, m in enumerate(_seq(b.blinded_masks, BlindedMask, "base_case.blinded_masks")):
        _words(m.message, (4,), f"base_case.blinded_masks[{i}].message", p)
        _words(m.randomness, (4,), f"base_case.blinded_masks[{i}].randomness", p)
    _witness(b.pow_witness, "base_case.pow_witness", p)
    _openings(b.source_openings, "base_case.source_openings", p)
    _openings(b.fresh_main_openings, "base_case.fresh_main_openings", p)
    if b.fresh_main_openings.kind != "extension":
        raise ProofFormatError("base_case.fresh_main_openings: a SharedProofOpening of extension rows")
    for i, pair in enumerate(_seq(b.mask_openings, MaskOpeningPair, "base_case.mask_openings")):
        for name in ("carried", "fresh"):
            o = getattr(pair, name)
            _openings(o, f"base_case.mask_openings[{i}].{name}", p)
            if o.kind != "extension":
                raise ProofFormatError(f"base_case.mask_openings[{i}].{name}: a SharedProofOpening of extension rows")
