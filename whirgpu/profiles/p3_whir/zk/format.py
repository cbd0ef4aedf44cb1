"""The hiding PCS's proof encodings: serde JSON (``serde_json::to_value(ZkWhirProof)``, Montgomery words, EF as
``{"_phantom": null, "value": [c0..c3]}``, a cap as ``{"_marker": null, "cap": [[8 words]]}``) and postcard
(``postcard::to_allocvec``: members in declaration order, lengths and enum tags as varints, a field element as
4 little-endian Montgomery bytes, ``ell_zk`` a varint). ``SharedProofOpening`` carries no enum tag; a
``QueryOpenings`` is ``{"Base"|"Extension": SharedProofOpening}``.

Contract: ``zk_proof_to_postcard(proof)`` -> bytes; ``zk_proof_to_json(proof)`` -> the serde tree;
``zk_proof_from_json(tree, field)`` -> ``ZkWhirProof`` or ``ProofFormatError`` (naming the path) for any tree
that is not a well-formed proof with canonical words; ``zk_proof_from_postcard(data, field)`` likewise.
"""

from __future__ import annotations

import numpy as np

from ....errors import ProofFormatError
from ....field import Field
from ..postcard import PostcardReader, PostcardWriter
from ..proof import MerkleCap, QueryOpenings
from .proof import BaseCaseZkProof, BlindedMask, MaskOpeningPair, ZkRoundProof, ZkSumcheckData, ZkWhirProof

KINDS = {"base": "Base", "extension": "Extension"}


# ---- postcard writer -------------------------------------------------------------------------------------------

def _efs(w: PostcardWriter, a: np.ndarray) -> None:
    w.varint(len(a))
    w.words(a)


def _cap(w: PostcardWriter, cap: MerkleCap) -> None:
    w.varint(len(cap.roots))
    w.words(cap.roots)


def _shared(w: PostcardWriter, o: QueryOpenings) -> None:
    w.varint(o.num_queries)
    for row in o.rows:
        w.varint(len(row))
        w.words(row)
    w.varint(len(o.sibling_hashes))
    w.words(o.sibling_hashes)


def _openings(w: PostcardWriter, o: QueryOpenings) -> None:
    w.varint(0 if o.kind == "base" else 1)
    _shared(w, o)


def zk_proof_to_postcard(proof: ZkWhirProof) -> bytes:
    w = PostcardWriter()
    _efs(w, proof.evals)
    w.varint(len(proof.sumchecks))
    for s in proof.sumchecks:
        w.words(s.mu_tilde)
        w.varint(s.ell_zk)
        w.varint(len(s.round_coefficients))
        for wire in s.round_coefficients:
            _efs(w, wire)
        _efs(w, s.pow_witnesses)
    w.varint(len(proof.sumcheck_mask_commitments))
    for cap in proof.sumcheck_mask_commitments:
        _cap(w, cap)
    w.varint(len(proof.rounds))
    for r in proof.rounds:
        _cap(w, r.commitment)
        _cap(w, r.mask_commitment)
        _efs(w, r.ood_answers)
        w.words(np.array([r.pow_witness], np.uint32))
        _openings(w, r.openings)
    b = proof.base_case
    _cap(w, b.fresh_main_commitment)
    w.varint(len(b.fresh_mask_commitments))
    for cap in b.fresh_mask_commitments:
        _cap(w, cap)
    w.words(b.masked_claim)
    _efs(w, b.blinded_message)
    _efs(w, b.blinded_randomness)
    w.varint(len(b.blinded_masks))
    for m in b.blinded_masks:
        _efs(w, m.message)
        _efs(w, m.randomness)
    w.words(np.array([b.pow_witness], np.uint32))
    _openings(w, b.source_openings)
    _shared(w, b.fresh_main_openings)
    w.varint(len(b.mask_openings))
    for pair in b.mask_openings:
        _shared(w, pair.carried)
        _shared(w, pair.fresh)
    return w.getvalue()
