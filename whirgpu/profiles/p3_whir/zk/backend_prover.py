"""The hiding PCS's prover with its size-2^n work on a ``Backend`` (``ZkBackendProver``): the same proof as the
numpy reference ``prover.zk_prove``, byte for byte, on ``CpuBackend`` or ``GpuBackend``.

Contract: ``ZkBackendProver(backend, config, field).prove(polynomial, points, rng)`` -> (commitment ``MerkleCap``,
``ZkWhirProof``), equal to ``zk_prove(config, field, polynomial, points, rng)`` and leaving ``rng`` at the same word
position. ``polynomial``: 2^n base Montgomery words; ``points``: (E, n, 4) EF (point[0] the index's most
significant bit). The backend is called with host values only (no ``begin_proof``), under
``P3_WHIR_LAYOUT(field, "prefix")``, which ``prove`` sets for its duration (restoring the backend's layout
after); it holds ``backend.proof_lock`` meanwhile.

On a GPU backend that ``DeviceOpening.supported`` accepts the proof is ``device_opening``'s instead (one launch
program, every mask drawn on the device); the steps below are then its fallback. What runs where on the steps
(docs/ZK-PROTOCOL.md §15):
- backend: the interleaved encodings' tables (``interleave_columns``: 2^k columns of message ‖ randomness ‖
  zeros, next_pow2(m + t) entries each, from the uploaded polynomial and from each round's folded residual) and
  their commitments at the oracle's height (``commit``: NTT + Merkle tree, ``commit_interleaved``), the claimed
  values (``evaluate_points``), the eq weights (``eq_weights``), each masked sumcheck batch
  (``masked_rounds``, through ``DeviceResidual``; else ``sumcheck_round`` / ``fold_and_sum`` under the host
  loop), each code switch's device part (``code_switch``: commitment, OOD answers, proof of work, queries,
  openings, combination; else ``code_switch_steps``: the same as separate calls), the code switch's weight
  update (``add_constraint_weights``: select weights for the query points, eq weights at the ``power_point`` form
  of each OOD point), the base case's fresh source oracle (its message uploaded, ``commit_interleaved`` at one
  column: ``prove_base_case``'s ``commit_source``);
- host: the mask RNG (every draw of the proof made first, ``draws.draw_opening``: none depends on the transcript),
  the masks (ell_zk or |rho| + |pad| EF values: their codewords and trees, ``oracles.Committed``; the batches' and
  the base case's fresh groups on a worker thread from the start, ``draws.OracleBuilder.thread``, the switches'
  when their carried randomness is known), the round messages' host
  part (``sumcheck.prove_batch``'s plan), the ledger (``prover.MaskLedger``), the eq-fold of the randomness
  rows, the claim's update by the code switch (from the opened rows: each folded row is padded_ood(x, M, rho),
  so sum_b M[b] x^b costs 2^k + |rho| operations), the transcript between the backend's steps, and the base case
  (2^final_nv values, ``base_case.prove_base_case`` on the downloaded residual and weights).
"""

from __future__ import annotations

import numpy as np

from ....backends.base import P3_WHIR_LAYOUT, Backend
from ....backends.code_switch import CodeSwitchPlan, CodeSwitchTrace
from ....field import Field
from ....protocol.query_indices import distinct_query_indices
from ....ref.chacha_rng import StdRng
from ....ref.field_np import field_ops
from ....ref.multilinear import evaluate_rows
from ....ref.rng import random_base
from ..proof import MerkleCap, QueryOpenings
from .base_case import prove_base_case
from .config import ZkWhirConfig
from .device_opening import DeviceOpening
from .device_residual import DeviceResidual
from .draws import OracleBuilder, draw_opening
from .oracles import Committed, mask_matrix
from .proof import ZkRoundProof, ZkWhirProof
from .prover import MaskLedger, fold_limbs, zk_challenger
from .sumcheck import base_powers_each, horner, prove_batch, switch_covector


def _log2(n: int) -> int:
    return int(n).bit_length() - 1


def _rows(message_len: int, randomness_len: int, folding: int) -> int:
    """P = next_pow2(m + t): the entries per column of the table ``Backend.interleave_columns`` builds."""
    return 1 << (((message_len + randomness_len) >> folding) - 1).bit_length()


class _Oracle:
    """A backend commitment as the reference's ``Committed`` is used: ``cap``, ``root`` and ``open(indices)``."""

    def __init__(self, backend: Backend, commitment):
        self.backend, self.commitment = backend, commitment
        self.root = np.asarray(commitment.root, np.uint32).reshape(8)
        self.cap = MerkleCap(self.root[None])

    def open(self, indices) -> QueryOpenings:
        indices = [int(i) for i in indices]
        return self.openings(*self.backend.open_rows(self.commitment, indices, len(indices)))

    def openings(self, rows, siblings) -> QueryOpenings:
        kind = "extension" if self.commitment.is_ext else "base"
        return QueryOpenings(kind, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32).reshape(-1, 8))


class _BackendGrinding:
    """The challenger with its proof-of-work searches on the backend (``Backend.grind``, which absorbs the witness
    as the challenger's own ``grind`` does): a GPU searches a 20-bit budget in a launch where the host's numpy
    search takes seconds. Every other call is the challenger's."""

    def __init__(self, challenger, backend):
        self.challenger = challenger
        self.backend = backend

    def grind(self, bits: int) -> np.uint32:
        return self.backend.grind(self.challenger, bits)

    def __getattr__(self, name):
        return getattr(self.challenger, name)


def commit_interleaved(backend: Backend, message, randomness: np.ndarray, folding: int, height: int) -> _Oracle:
    """Commit the interleaved encoding of ``message`` (a backend table) and ``randomness`` (host) at ``height``."""
    rows = _rows(message.shape[0], randomness.shape[0], folding)
    table = backend.interleave_columns(message, randomness, folding, rows)
    commitment = backend.commit(table, folding, _log2(height))
    backend.release(table)
    return _Oracle(backend, commitment)


def code_switch_steps(backend: Backend, residual: DeviceResidual, source: _Oracle, plan: CodeSwitchPlan,
                      challenger) -> CodeSwitchTrace:
    """``Backend.code_switch``'s contract (``backends.code_switch``) as separate backend calls and the host
    transcript (``challenger``): what a backend without that step runs."""
    ops = residual.ops
    n_msg = residual.evals.shape[0]
    oracle = commit_interleaved(backend, residual.evals, plan.fresh, plan.log_folding, 1 << plan.log_height)
    challenger.observe_many(oracle.root)
    challenger.observe_many(plan.mask_root)
    zs, evaluations, answers = [], [], []
    for _ in range(plan.ood_samples):
        z = challenger.sample_ef()
        at_z = residual.univariate(z)
        answer = ops.ef_add(at_z, ops.ef_mul(ops.ef_power(z, n_msg), horner(ops, plan.mask_message, z)))
        challenger.observe_many(answer)
        zs.append(z)
        evaluations.append(at_z)
        answers.append(answer)
    witness = int(challenger.grind(plan.pow_bits)) if plan.pow_bits > 0 else 0
    challenger.sample()
    indices = distinct_query_indices(challenger, plan.domain_size, plan.folding, plan.num_queries)
    openings = source.open(indices)
    combination = challenger.sample_ef()
    as_ef = lambda values: np.asarray(values, np.uint32).reshape(-1, 4)  # noqa: E731
    return CodeSwitchTrace(oracle.commitment, as_ef(zs), as_ef(evaluations), as_ef(answers), witness,
                           np.asarray(indices, np.int64), openings.rows, openings.sibling_hashes, combination)


class ZkBackendProver:
    """``HidingWhirPcs::commit`` then ``open`` on one fresh transcript, its heavy work on ``backend``."""

    def __init__(self, backend: Backend, config: ZkWhirConfig, field: Field, one_session: bool = True):
        """``one_session``: on a backend that runs whole sessions (a GPU backend), the proof is one device session
        (``device_opening.DeviceOpening``); False: the step-by-step path below on every backend."""
        self.backend, self.config, self.field = backend, config, field
        self.ops = field_ops(field)
        self.one_session = one_session
        self.last_path = None  # "one session" or "steps": how the last proof ran (tests and benchmarks read it)
        self._opening = DeviceOpening(backend, config, field)  # its shape key made once
        self._supported: dict = {}  # DeviceOpening.supported by the backend's layout and limits

    def prove(self, polynomial, points, rng: StdRng, canonical: bool = False) -> tuple[MerkleCap, ZkWhirProof]:
        """``canonical``: ``polynomial`` holds canonical words (converted on the backend, ``upload_canonical``; a
        word >= P is a ``ConfigError``) rather than Montgomery words."""
        backend = self.backend
        with backend.proof_lock:
            saved = backend.layout
            backend.layout = P3_WHIR_LAYOUT(self.field, "prefix")
            try:
                if self.one_session and self._one_session_supported():
                    before = rng.clone()
                    out = self._opening.prove(polynomial, points, rng, canonical)
                    if out is not None:
                        self.last_path = "one session"
                        return out
                    # a case the device run leaves to the steps (DeviceOpening's contract): from the same draws;
                    # ``rng`` is already where these leave it
                    out = self._prove(polynomial, points, before, canonical)
                else:
                    out = self._prove(polynomial, points, rng, canonical)
                self.last_path = "steps"
                return out
            finally:
                backend.layout = saved

    def _one_session_supported(self) -> bool:
        """``DeviceOpening.supported`` for the backend as it is now (its layout and limits: tests lower them)."""
        state = getattr(self.backend, "state", None)
        if state is None:
            return False
        key = (state.layout.openings, state.window_limit, state.buffer_limit)
        if key not in self._supported:
            self._supported[key] = DeviceOpening.supported(self.backend, self.config)
        return self._supported[key]

    def _prove(self, polynomial, points, rng: StdRng, canonical: bool) -> tuple[MerkleCap, ZkWhirProof]:
        config, field, ops, backend = self.config, self.field, self.ops, self.backend
        inner, n = config.inner, config.num_variables
        polynomial = np.asarray(polynomial, np.uint32)
        if polynomial.shape != (1 << n,):
            raise ValueError(f"commit: expected 2^{n} evaluations, got shape {polynomial.shape}")
        challenger = _BackendGrinding(zk_challenger(config, field), backend)
        # commit (section 5)
        k = config.fold(0)
        randomness = random_base(rng.fork(), config.oracle_randomness[0] << k, field)
        # The opening's draws do not depend on the transcript: all made now, the oracles they fix committed on a
        # worker thread while the device works.
        draws = draw_opening(config, field, rng.fork(), OracleBuilder.thread(field))
        table = backend.upload_canonical(polynomial) if canonical else backend.upload(polynomial)
        source = commit_interleaved(backend, table, randomness, k, ((1 << n) >> k) << inner.starting_log_inv_rate)
        challenger.observe_many(source.root)
        commitment = source.cap
        # open (section 6)
        points = np.asarray(points, np.uint32).reshape(-1, n, 4)
        values = backend.evaluate_points(table, points)
        for point, value in zip(points, values):
            challenger.observe_many(point)
            challenger.observe_many(value)
        alpha = challenger.sample_ef()
        coeffs = ops.ef_powers(alpha, len(points))
        claim = ops.ef_sum(ops.ef_mul(coeffs, values))
        if len(points):
            weights = backend.eq_weights(points, coeffs)
        else:
            weights = backend.upload(np.zeros((1 << n, 4), np.uint32))
        residual = DeviceResidual(backend, table, weights, claim, field)
        masks = MaskLedger(field)
        last = len(inner.round_parameters)
        batch = prove_batch(residual, draws.batches[0], inner.starting_folding_pow_bits, ops.ef_from_base(ops.ZERO),
                            challenger, read_tables=last == 0)
        sumchecks, mask_roots, rounds = [batch.data], [batch.oracle.cap], []
        masks.record_batch(batch, k)
        carried = fold_limbs(randomness, config.oracle_randomness[0], batch.gammas, field)
        for r, params in enumerate(inner.round_parameters):
            k, k_next = config.fold(r), config.fold(r + 1)
            round_proof, oracle, fresh = self._switch(r, params, k, k_next, residual, carried, batch.gammas, source,
                                                      masks, challenger, draws.switches[r])
            rounds.append(round_proof)
            backend.release(source.commitment)
            batch = prove_batch(residual, draws.batches[r + 1], params.folding_pow_bits, masks.aux, challenger,
                                read_tables=r + 1 == last)
            sumchecks.append(batch.data)
            mask_roots.append(batch.oracle.cap)
            masks.record_batch(batch, k_next)
            carried = fold_limbs(fresh, config.oracle_randomness[r + 1], batch.gammas, field)
            source = oracle
        fresh_sources = []

        def commit_source(message, randomness, domain_size, _field):
            table = backend.upload(message)
            fresh_sources.append(commit_interleaved(backend, table, randomness, 0, domain_size))
            backend.release(table)
            return fresh_sources[-1]

        def open_queries(_challenger, pow_bits, domain_size, num_queries, fresh_main):
            # the proof of work, the final positions and both openings: one backend step where it has one
            out = backend.query_openings(challenger.challenger, pow_bits, domain_size, 0, num_queries,
                                         [source.commitment, fresh_main.commitment])
            if out is None:
                return None
            witness, _, ((rows, siblings), (fresh_rows, fresh_siblings)) = out
            return witness, source.openings(rows, siblings), fresh_main.openings(fresh_rows, fresh_siblings)

        base_case = prove_base_case(config, field, residual.host_evals(), carried, residual.host_weights(), masks,
                                    source.open, challenger, draws.base, commit_source, open_queries)
        backend.release(residual.evals, residual.weights, source.commitment,
                        *(oracle.commitment for oracle in fresh_sources))
        return commitment, ZkWhirProof(values, tuple(sumchecks), tuple(mask_roots), tuple(rounds), base_case)

    def _switch(self, r: int, params, k: int, k_next: int, residual: DeviceResidual, carried: np.ndarray,
                gammas: np.ndarray, source: _Oracle, masks: MaskLedger, challenger, drawn):
        """Code-switching round r (section 9) up to the next batch: (its ``ZkRoundProof``, the new oracle, the
        fresh randomness it hides). The device part runs as one backend step (``Backend.code_switch``) where the
        backend has it, else step by step (``code_switch_steps``)."""
        config, field, ops = self.config, self.field, self.ops
        n_msg = residual.evals.shape[0]
        fresh, pad, mask_randomness = drawn.fresh, drawn.pad, drawn.mask_randomness
        shape = config.switch_masks[r]
        mask_message = np.concatenate([carried, pad])
        mask_oracle = Committed(mask_matrix(mask_message[None], mask_randomness[None], shape.domain_size, field),
                                field)
        plan = CodeSwitchPlan(fresh, k_next, _rows(n_msg, fresh.shape[0], k_next),
                              _log2(config.inv_rate(r) * (n_msg >> k_next)), mask_oracle.root, mask_message,
                              params.ood_samples, params.pow_bits, params.domain_size, k, params.num_queries)
        trace = self.backend.code_switch(residual.evals, source.commitment, challenger.challenger, plan)
        if trace is None:
            trace = code_switch_steps(self.backend, residual, source, plan, challenger)
        oracle = _Oracle(self.backend, trace.commitment)
        openings = QueryOpenings("extension" if source.commitment.is_ext else "base", trace.rows, trace.siblings)
        xs = ops.power_each(ops.constant(params.folded_domain_gen), np.asarray(trace.indices, np.int64))
        ood_points = list(trace.zs)
        all_coeffs = ops.ef_mul(ops.ef_powers(trace.combination, len(ood_points) + len(xs)), trace.combination)
        ood_coeffs, query_coeffs = all_coeffs[:len(ood_points)], all_coeffs[len(ood_points):]
        # the weights' update first: the device works on it while the host makes the claim's delta and the covector
        residual.add_switch_weights(ood_points, ood_coeffs, xs, query_coeffs)
        claim_delta_terms = list(trace.evaluations)
        if xs.shape[0]:
            # each folded row is padded_ood(x, M, carried): sum_b M[b] x^b is what is left of it (all rows at once)
            folded = evaluate_rows(openings.rows, gammas, field)
            at_x = ops.ef_sum(ops.mul(carried[None], base_powers_each(ops, xs, carried.shape[0])[:, :, None]),
                              axis=1)
            tails = ops.mul(at_x, ops.power(xs, n_msg)[:, None])
            claim_delta_terms.extend(ops.ef_sub(folded, tails))
        ordered = list(ood_coeffs) + list(query_coeffs)  # claim_delta_terms: the OOD points', then the queries'
        if ordered:
            residual.accumulate_claim(ops.ef_sum(ops.ef_mul(np.asarray(ordered, np.uint32),
                                                            np.asarray(claim_delta_terms, np.uint32))))
        xs_ef = ops.ef_from_base(xs)
        covector = switch_covector(ops, n_msg, carried.shape[0], pad.shape[0], ood_points, ood_coeffs, xs_ef,
                                   query_coeffs)
        masks.push_switch_mask(covector, mask_message, mask_randomness, mask_oracle)
        round_proof = ZkRoundProof(oracle.cap, mask_oracle.cap, np.asarray(trace.answers, np.uint32).reshape(-1, 4),
                                   trace.witness, openings)
        return round_proof, oracle, fresh
