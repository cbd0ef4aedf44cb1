"""The whir-p3-metal profile's prover: ``MetalWhirProver``, the core's ``WhirProver`` step order with this profile's
hooks.

Contract: ``MetalWhirProver(config, backend)`` proves as the Rust reference whir-p3-metal does, byte for byte:
its transcript is the duplex challenger after this profile's domain separator (``verifier.new_challenger``), the
statement is the caller's (claims evaluated before the commitment, or given, and never observed), its points take
alpha^0.. and the OOD points the powers after them in one batch, the tables follow ``DEFAULT_LAYOUT`` and the
proof is a ``WhirProof``. It shares every step (``WhirProver._prove`` .. ``_final_round``) with the other profiles.
``planned_proof`` is the device planner's proof of a ``WhirConfig``, registered when this module is imported.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...backends.base import DeviceBuffer, ProofShape
from ...backends.memory import register_planned_proof
from ...protocol.proof import OpeningList, QueryOpening, RoundProof, SumcheckData, WhirProof
from ...protocol.proof_shape import proof_shape
from ...protocol.prover import PolynomialSource, WhirProver
from ...protocol.transcript import HostTranscript
from .config import WhirConfig
from .verifier import new_challenger


class MetalWhirProver(WhirProver):
    """Proves evaluation claims about a committed multilinear polynomial (values in Montgomery form) under one
    ``WhirConfig``, as whir-p3-metal does."""

    claims_after_commitment = False

    def new_transcript(self) -> HostTranscript:
        return HostTranscript(new_challenger(self.config))

    def _shape(self, n_points: int) -> ProofShape:
        return proof_shape(self.config, n_points)

    def _statement(self, transcript, table: DeviceBuffer, statement_points, claims):
        return statement_points, claims

    def _materialize(self, proof: WhirProof, read: Callable[[Any], Any], claimed: np.ndarray):
        return materialize(proof, read)

    def _initial_weights(self, statement_points, ood_points: list, alpha):
        """alpha^0.. to the statement's points, then to the OOD points (one batch: here the statement's points
        precede the OOD points in a backend's memory)."""
        backend = self.backend
        points = backend.concat_points([statement_points] + ood_points)
        coefficients = backend.challenge_powers(alpha, len(points))
        return backend.eq_weights(points, coefficients)


def materialize(proof: WhirProof, read: Callable[[Any], Any]) -> WhirProof:
    """The proof with every handle replaced by ``read(handle)``'s host array, in ``WhirProof``'s shapes."""

    def ef_list(values, shape) -> np.ndarray:
        return np.asarray([read(v) for v in values], np.uint32).reshape(shape)

    def witness(value) -> np.uint32:
        return np.uint32(np.asarray(read(value)).reshape(-1)[0]) if value is not None else np.uint32(0)

    def sumcheck(data: SumcheckData | None) -> SumcheckData | None:
        if data is None:
            return None
        return SumcheckData(ef_list(data.evaluations, (-1, 2, 4)),
                            np.asarray([witness(w) for w in data.pow_witnesses], np.uint32).reshape(-1))

    def openings(opened) -> list[QueryOpening]:
        rows, siblings = read(opened.openings)  # one block each: the verifier takes them as they are
        return OpeningList(opened.kind, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32))

    return WhirProof(
        initial_commitment=np.asarray(read(proof.initial_commitment), np.uint32).reshape(8),
        initial_ood_answers=ef_list(proof.initial_ood_answers, (-1, 4)),
        initial_sumcheck=sumcheck(proof.initial_sumcheck),
        rounds=[RoundProof(np.asarray(read(r.commitment), np.uint32).reshape(8), ef_list(r.ood_answers, (-1, 4)),
                           witness(r.pow_witness), openings(r.queries), sumcheck(r.sumcheck)) for r in proof.rounds],
        final_poly=np.asarray(read(proof.final_poly), np.uint32).reshape(-1, 4),
        final_pow_witness=witness(proof.final_pow_witness),
        final_queries=openings(proof.final_queries),
        final_sumcheck=sumcheck(proof.final_sumcheck),
    )


def planned_proof(config: WhirConfig, backend, words: np.ndarray, statement_points: int, timer) -> None:
    """``whirgpu.Prover.prove``'s path for the device planner (``backends.memory.PLANNED_PROOFS``): canonical
    ``words`` converted and checked on the device, ``statement_points`` claims evaluated there."""
    prover = MetalWhirProver(config, backend)
    prover.timer = backend.timer = timer
    points = np.zeros((statement_points, config.num_variables, 4), np.uint32)
    prover.prove_points(PolynomialSource(words, canonical=True), points)


register_planned_proof(WhirConfig, planned_proof)
