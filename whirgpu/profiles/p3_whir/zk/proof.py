"""The hiding PCS's proof object (upstream ``whir/src/pcs/zk/proof.rs`` and ``p3_sumcheck::zk::ZkSumcheckData``),
as plain data mirroring the Rust types member for member (so both encodings in ``format`` are a walk over it):

    ZkWhirProof { evals: Vec<EF>, sumchecks: Vec<ZkSumcheckData>, sumcheck_mask_commitments: Vec<MerkleCap>,
                  rounds: Vec<ZkRoundProof>, base_case: BaseCaseZkProof }
    ZkSumcheckData { mu_tilde: EF, ell_zk: usize, round_coefficients: Vec<Vec<EF>>, pow_witnesses: Vec<F> }
    ZkRoundProof { commitment: MerkleCap, mask_commitment: MerkleCap, ood_answers: Vec<EF>, pow_witness: F,
                   openings: QueryOpenings }
    BaseCaseZkProof { fresh_main_commitment: MerkleCap, fresh_mask_commitments: Vec<MerkleCap>, masked_claim: EF,
                      blinded_message: Vec<EF>, blinded_randomness: Vec<EF>, blinded_masks: Vec<BlindedMask>,
                      pow_witness: F, source_openings: QueryOpenings,
                      fresh_main_openings: SharedProofOpening<EF>, mask_openings: Vec<MaskOpeningPair> }
    BlindedMask { message: Vec<EF>, randomness: Vec<EF> }
    MaskOpeningPair { carried: SharedProofOpening<EF>, fresh: SharedProofOpening<EF> }

Field elements are Montgomery words in uint32 arrays (EF: a trailing axis of 4); a PoW witness is an int. A
``SharedProofOpening<EF>`` (no Base/Extension tag on the wire) is held as a ``QueryOpenings`` of kind
'extension'. ``round_coefficients`` is (k, c, 4): every round's wire has max(ell_zk, 3) - 1 coefficients.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..proof import MerkleCap, QueryOpenings


@dataclass(frozen=True, eq=False)
class ZkSumcheckData:
    mu_tilde: np.ndarray
    ell_zk: int
    round_coefficients: np.ndarray
    pow_witnesses: np.ndarray


@dataclass(frozen=True, eq=False)
class ZkRoundProof:
    commitment: MerkleCap
    mask_commitment: MerkleCap
    ood_answers: np.ndarray
    pow_witness: int
    openings: QueryOpenings


@dataclass(frozen=True, eq=False)
class BlindedMask:
    message: np.ndarray
    randomness: np.ndarray


@dataclass(frozen=True, eq=False)
class MaskOpeningPair:
    carried: QueryOpenings
    fresh: QueryOpenings


@dataclass(frozen=True, eq=False)
class BaseCaseZkProof:
    fresh_main_commitment: MerkleCap
    fresh_mask_commitments: tuple[MerkleCap, ...]
    masked_claim: np.ndarray
    blinded_message: np.ndarray
    blinded_randomness: np.ndarray
    blinded_masks: tuple[BlindedMask, ...]
    pow_witness: int
    source_openings: QueryOpenings
    fresh_main_openings: QueryOpenings
    mask_openings: tuple[MaskOpeningPair, ...]


@dataclass(frozen=True, eq=False)
class ZkWhirProof:
    evals: np.ndarray
    sumchecks: tuple[ZkSumcheckData, ...]
    sumcheck_mask_commitments: tuple[MerkleCap, ...]
    rounds: tuple[ZkRoundProof, ...]
    base_case: BaseCaseZkProof
