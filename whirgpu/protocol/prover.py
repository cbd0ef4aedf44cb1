"""The WHIR prover (commit + open) as the reference runs it, over any ``Backend``.

The transcript is driven here, on the host; every bulk operation (encode, Merkle, evaluate, weights, sumcheck,
fold, grind) is a backend call, so tables, weights and trees stay on the backend's device for the whole proof.
The operation order is the reference's, step for step (whir-spec.md §4); any change breaks compatibility.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..backends.base import Backend, Commitment, DeviceBuffer, StorageMode, TransferStats
from ..errors import ConfigError
from ..field import P, TWO_ADIC_GENERATORS
from ..ref import field_np as F
from ..ref.multilinear import evaluate_rows, expand_from_univariate
from ..ref.sumcheck import evaluate_round_polynomial
from .domain_separator import domain_separator
from .params import WhirConfig
from .proof import QueryOpening, RoundProof, Statement, SumcheckData, WhirProof
from .query_indices import sample_query_indices
from .transcript import DuplexChallenger


@dataclass
class PhaseTimer:
    """Wall-clock seconds per prover phase (host view: includes waiting for the device)."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


@dataclass
class _State:
    table: DeviceBuffer
    weights: DeviceBuffer | None
    claimed_sum: np.ndarray
    commitment: Commitment
    folding_randomness: np.ndarray  # (k, 4): the challenges of the last sumcheck, first = index MSB


def new_challenger(config: WhirConfig) -> DuplexChallenger:
    """A challenger that has absorbed the domain separator (digest 8), as every proof starts."""
    challenger = DuplexChallenger()
    challenger.observe_many(F.to_monty(np.asarray(domain_separator(config), dtype=np.uint64)))
    return challenger


def check_polynomial(config: WhirConfig, polynomial: np.ndarray) -> np.ndarray:
    """Validate a Montgomery base table of 2^n words and return it as a contiguous uint32 array."""
    polynomial = np.asarray(polynomial)
    n = config.num_variables
    if polynomial.shape != (1 << n,):
        raise ConfigError(f"the polynomial must have 2^{n} = {1 << n} evaluations, got shape {polynomial.shape}")
    polynomial = np.ascontiguousarray(polynomial, dtype=np.uint32)
    if np.any(polynomial >= P):
        raise ConfigError("polynomial values must be field elements below p = 2013265921")
    return polynomial


class WhirProver:
    """Proves evaluation claims about a committed multilinear polynomial (values in Montgomery form)."""

    def __init__(self, config: WhirConfig, backend: Backend):
        self.config = config
        self.backend = backend
        self.timer = PhaseTimer()
        backend.timer = self.timer  # the backend reports its own sub-phases (ntt, merkle) into the same timer
        self.stats = TransferStats()  # bytes uploaded / downloaded / copied by the last ``prove``

    # -- public ----------------------------------------------------------------------------------------------
    def prove(self, polynomial: np.ndarray, statement: Statement) -> WhirProof:
        """Commit to ``polynomial`` (2^n Montgomery base words) and prove ``statement`` about it."""
        config = self.config
        polynomial = check_polynomial(config, polynomial)
        if statement.points.ndim != 3 or statement.points.shape[1:] != (config.num_variables, 4):
            raise ConfigError(
                f"statement points must have shape (m, {config.num_variables}, 4), got {statement.points.shape}"
            )
        challenger = new_challenger(config)
        self.stats = self.backend.stats = TransferStats()  # the backend counts this proof's transfers afresh
        proof, state = self._commit(polynomial, statement, challenger)
        for round_index in range(config.n_rounds):
            self._round(round_index, proof, state, challenger)
        self._final_round(proof, state, challenger)
        self.backend.release(state.table, state.weights, state.commitment)
        return proof

    # -- commit ----------------------------------------------------------------------------------------------
    def _commit(self, polynomial, statement, challenger):
        config, backend = self.config, self.backend
        n = config.num_variables
        k0 = config.fold(0)
        with self.timer.phase("upload"):
            table = backend.upload(polynomial, StorageMode.SHARED)
        commitment = backend.commit(table, k0, n + config.starting_log_inv_rate - k0)
        challenger.observe_many(commitment.root)
        ood_points, ood_answers = [], []
        with self.timer.phase("ood"):
            for _ in range(config.commitment_ood_samples):
                point = expand_from_univariate(challenger.sample_ef(), n)
                answer = backend.evaluate(table, point)
                challenger.observe_ef(answer)
                ood_points.append(point)
                ood_answers.append(answer)
        ood_answers = np.asarray(ood_answers, dtype=np.uint32).reshape(-1, 4)
        proof = WhirProof(
            initial_commitment=commitment.root,
            initial_ood_answers=ood_answers,
            initial_sumcheck=SumcheckData(np.zeros((0, 2, 4), np.uint32), np.zeros(0, np.uint32)),
        )
        # Initial constraint: user claims first, then the commitment's OOD claims, combined with powers of alpha.
        points = np.concatenate([statement.points, np.asarray(ood_points, np.uint32).reshape(-1, n, 4)])
        values = np.concatenate([statement.values.reshape(-1, 4), ood_answers])
        alpha = challenger.sample_ef()
        coefficients = F.ef_powers(alpha, len(points))
        with self.timer.phase("weights"):
            weights = backend.eq_weights(points, coefficients) if len(points) else backend.upload(
                np.zeros((1 << n, 4), np.uint32), StorageMode.PRIVATE
            )
        claimed_sum = F.ef_sum(F.ef_mul(coefficients, values)) if len(points) else np.zeros(4, np.uint32)
        state = _State(table, weights, claimed_sum, commitment, np.zeros((0, 4), np.uint32))
        proof.initial_sumcheck = self._sumcheck(state, challenger, k0, config.starting_folding_pow_bits)
        return proof, state

    # -- sumcheck --------------------------------------------------------------------------------------------
    def _sumcheck(self, state: _State, challenger: DuplexChallenger, n_rounds: int, pow_bits: int) -> SumcheckData:
        evaluations, witnesses, challenges = [], [], []
        for _ in range(n_rounds):
            with self.timer.phase("sumcheck"):
                h0, h2 = self.backend.sumcheck_round(state.table, state.weights)
            challenger.observe_ef(h0)
            challenger.observe_ef(h2)
            if pow_bits > 0:
                with self.timer.phase("pow"):
                    witnesses.append(self.backend.grind(challenger, pow_bits))
            r = challenger.sample_ef()
            with self.timer.phase("fold"):
                old = (state.table, state.weights)
                state.table, state.weights = self.backend.fold(state.table, state.weights, r)
                self.backend.release(*old)
            state.claimed_sum = evaluate_round_polynomial(state.claimed_sum, h0, h2, r)
            evaluations.append((h0, h2))
            challenges.append(r)
        state.folding_randomness = np.asarray(challenges, np.uint32).reshape(-1, 4)
        return SumcheckData(
            np.asarray(evaluations, np.uint32).reshape(-1, 2, 4), np.asarray(witnesses, np.uint32).reshape(-1)
        )

    # -- intermediate rounds ---------------------------------------------------------------------------------
    def _round(self, i: int, proof: WhirProof, state: _State, challenger: DuplexChallenger) -> None:
        config, backend = self.config, self.backend
        round_config = config.rounds[i]
        nv = round_config.num_variables
        k_next = config.fold(i + 1)
        log_height = nv - k_next + config.round_log_inv_rate(i)
        commitment = backend.commit(state.table, k_next, log_height)
        challenger.observe_many(commitment.root)

        ood_points, ood_answers = [], []
        with self.timer.phase("ood"):
            for _ in range(round_config.ood_samples):
                point = expand_from_univariate(challenger.sample_ef(), nv)
                answer = backend.evaluate(state.table, point)
                challenger.observe_ef(answer)
                ood_points.append(point)
                ood_answers.append(answer)

        pow_witness = np.uint32(0)
        if round_config.pow_bits > 0:
            with self.timer.phase("pow"):
                pow_witness = backend.grind(challenger, round_config.pow_bits)
        challenger.sample()  # checkpoint: one base element, discarded

        indices = sample_query_indices(
            challenger, round_config.domain_size, round_config.folding_factor, round_config.num_queries
        )
        # the most distinct indices the round can draw: backends size the query buffers for it (see open_rows)
        capacity = min(round_config.num_queries, round_config.domain_size >> round_config.folding_factor)
        with self.timer.phase("openings"):
            queries, select_vars, select_values = self._open(state, indices, round_config.domain_size,
                                                             round_config.folding_factor, capacity)
        gamma = challenger.sample_ef()
        n_constraints = len(ood_points) + len(indices)
        coefficients = F.ef_powers(gamma, n_constraints)
        ood_answers = np.asarray(ood_answers, np.uint32).reshape(-1, 4)
        with self.timer.phase("weights"):
            state.weights = backend.add_constraint_weights(
                state.weights,
                np.asarray(ood_points, np.uint32).reshape(-1, nv, 4),
                coefficients[: len(ood_points)],
                select_vars,
                coefficients[len(ood_points):],
                select_capacity=capacity,
            )
        all_values = np.concatenate([ood_answers, select_values.reshape(-1, 4)])
        if n_constraints:
            state.claimed_sum = F.ef_add(state.claimed_sum, F.ef_sum(F.ef_mul(coefficients, all_values)))
        self.backend.release(state.commitment)
        state.commitment = commitment
        sumcheck = self._sumcheck(state, challenger, k_next, round_config.folding_pow_bits)
        proof.rounds.append(RoundProof(commitment.root, ood_answers, pow_witness, queries, sumcheck))

    def _open(self, state: _State, indices: list[int], domain_size: int, folding_factor: int, capacity: int):
        """Open ``indices`` in the current commitment; return openings, their domain points and folded values."""
        rows, siblings = self.backend.open_rows(state.commitment, indices, capacity)
        kind = "extension" if state.commitment.is_ext else "base"
        queries = [QueryOpening(kind, rows[j], siblings[j]) for j in range(len(indices))]
        log_folded = domain_size.bit_length() - 1 - folding_factor
        generator = F.constant(TWO_ADIC_GENERATORS[log_folded])
        select_vars = F.power_each(generator, np.asarray(indices, np.int64)).reshape(-1)
        values = evaluate_rows(rows, state.folding_randomness).reshape(-1, 4) if len(indices) else \
            np.zeros((0, 4), np.uint32)
        return queries, select_vars, values

    # -- final round -----------------------------------------------------------------------------------------
    def _final_round(self, proof: WhirProof, state: _State, challenger: DuplexChallenger) -> None:
        config, backend = self.config, self.backend
        with self.timer.phase("download"):
            final_poly = backend.download(state.table)
        final_poly = np.asarray(final_poly, np.uint32).reshape(-1, 4) if final_poly.ndim == 2 else F.ef_from_base(
            final_poly
        )
        challenger.observe_many(final_poly.reshape(-1))
        proof.final_poly = final_poly
        if config.final_pow_bits > 0:
            with self.timer.phase("pow"):
                proof.final_pow_witness = backend.grind(challenger, config.final_pow_bits)
        indices = sample_query_indices(
            challenger, config.final_domain_size, config.fold(config.n_rounds), config.final_queries
        )
        capacity = min(config.final_queries, config.final_domain_size >> config.fold(config.n_rounds))
        with self.timer.phase("openings"):
            rows, siblings = backend.open_rows(state.commitment, indices, capacity)
        kind = "extension" if state.commitment.is_ext else "base"
        proof.final_queries = [QueryOpening(kind, rows[j], siblings[j]) for j in range(len(indices))]
        if config.final_sumcheck_rounds > 0:
            proof.final_sumcheck = self._sumcheck(
                state, challenger, config.final_sumcheck_rounds, config.final_folding_pow_bits
            )


