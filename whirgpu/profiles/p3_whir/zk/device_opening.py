"""The hiding PCS's proof in ONE device session on a GPU backend (``DeviceOpening``): commitment, statement, every
masked sumcheck batch, every code switch, the base case, with the transcript on the device and the field steps
between its ops as ``EfAlgebra`` ops (``backends/gpu/algebra.py``); the proof region read back once.

Contract: ``DeviceOpening(backend, config, field).prove(polynomial, points, rng, canonical)`` -> (``MerkleCap``,
``ZkWhirProof``) equal to ``prover.zk_prove``'s byte for byte, ``rng`` left where that leaves it; or None, with
``rng`` left there too, where the device run met what it leaves to the step-by-step prover
(``backend_prover.ZkBackendProver``'s other path, which the caller then runs from a clone of the generator taken
before): a proof-of-work search that found no witness in its range (odds below e^-32), an eps challenge of 0 or an
OOD point with 1 + z^(2^j) = 0 (odds about 2^-100 each). Called under ``P3_WHIR_LAYOUT(field, "prefix")`` and
the backend's proof lock (the caller's).

What stays on the host: the mask draws (all made first, ``draws.draw_opening``) and the oracles they alone fix
(each batch's and the base case's fresh groups, committed in place before the session); their roots go up as
proof words, and their openings are made on the host from the query positions read back.
Everything that depends on the transcript runs on the device in transcript order (docs/ZK-PROTOCOL.md §15).
"""

from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field

import numpy as np

from ....backends.base import DeviceBuffer
from ....backends.device_transcript import NOT_FOUND
from ....backends.device_values import POW_MAX_COUNTERS, STATE_WORDS, resolve_value
from ....backends.gpu.algebra import DeviceAlgebra
from ....backends.gpu.geometry import EF_BYTES
from ....backends.gpu.transcript import from_host_challenger
from ....backends.code_switch import CodeSwitchPlan
from ....field import Field
from ....ref.field_np import field_ops
from ....ref.rng import random_base
from ..proof import MerkleCap, QueryOpenings
from .config import ZkWhirConfig
from .draws import OracleBuilder, draw_opening
from .proof import BaseCaseZkProof, BlindedMask, MaskOpeningPair, ZkRoundProof, ZkSumcheckData, ZkWhirProof
from .prover import zk_challenger
from .sumcheck import round_plan, endpoints

DIGEST = 8


def _log2(n: int) -> int:
    return int(n).bit_length() - 1


def _pow2_at_least(n: int) -> int:
    return 1 << (int(n) - 1).bit_length() if n > 1 else 1


def _rows(message_len: int, randomness_len: int, folding: int) -> int:
    return _pow2_at_least((message_len + randomness_len) >> folding)


@dataclass
class _Ledger:
    """The prover's masks (upstream ``ProverMasks``) with device covectors: per mask its message (host array or
    device value), randomness (host), covector (device); per group (k, its oracle: a host ``Committed`` or a
    device commitment); ``aux`` = sum <covector, message> (device)."""

    aux: object
    messages: list = dataclass_field(default_factory=list)
    randomness: list = dataclass_field(default_factory=list)
    covectors: list = dataclass_field(default_factory=list)
    groups: list = dataclass_field(default_factory=list)


@dataclass
class _Checks:
    """Device values read back to decide whether the run stands: witnesses (NOT_FOUND: none in range), eps
    challenges and OOD eq-form scales (0: left to the host path)."""

    witnesses: list = dataclass_field(default_factory=list)
    nonzero: list = dataclass_field(default_factory=list)


class DeviceOpening:
    def __init__(self, backend, config: ZkWhirConfig, field: Field):
        self.backend, self.config, self.field = backend, config, field
        self.ops = field_ops(field)

    @staticmethod
    def supported(backend, config: ZkWhirConfig) -> bool:
        """Whether ``backend`` runs this configuration's proof as one session: a GPU backend with pruned openings
        in the running layout, whose bindings hold every randomness block an interleaved encoding reads."""
        state = getattr(backend, "state", None)
        if state is None or not hasattr(backend, "masked") or state.layout.openings != "pruned":
            return False
        rounds = len(config.inner.round_parameters)
        blocks = [4 * (config.oracle_randomness[0] << config.fold(0))]
        blocks += [16 * (config.oracle_randomness[r + 1] << config.fold(r + 1)) for r in range(rounds)]
        return max(blocks) <= state.window_limit and all(config.fold(r) > 0 for r in range(rounds + 1))

    # -- the proof --------------------------------------------------------------------------------------------
    def prove(self, polynomial, points, rng, canonical: bool = False):
        config, field, backend = self.config, self.field, self.backend
        n, k0 = config.num_variables, config.fold(0)
        polynomial = np.asarray(polynomial, np.uint32)
        if polynomial.shape != (1 << n,):
            raise ValueError(f"commit: expected 2^{n} evaluations, got shape {polynomial.shape}")
        points = np.asarray(points, np.uint32).reshape(-1, n, 4)
        randomness = random_base(rng.fork(), config.oracle_randomness[0] << k0, field)
        # In place: the recording keeps this thread busy until the session's one read, so a worker would only
        # contend with it for the GIL (measured: its oracles came seconds' worth of switch intervals late).
        draws = draw_opening(config, field, rng.fork(), OracleBuilder.now(field))
        table = backend.upload_canonical(polynomial) if canonical else backend.upload(polynomial)
        base = draws.base
        message_len, randomness_len, _ = config.source_code()
        coefficients = np.zeros((_pow2_at_least(message_len + randomness_len), 4), np.uint32)
        coefficients[:message_len], coefficients[message_len:message_len + randomness_len] = base.message, \
            base.randomness
        fresh_table = backend.upload(coefficients)
        zero_weights = None if len(points) else backend.upload(np.zeros((1 << n, 4), np.uint32))
        proof_words, scratch_words, points_words, arena = self._sizes(len(points))
        state = backend.state
        with state.host_call(proof_words=proof_words, scratch_words=scratch_words, points_words=points_words) \
                as session:
            from_host_challenger(state, session, zk_challenger(config, field))
            run = _Run(self, session, DeviceAlgebra(state, session, field, arena))
            run.record(table, randomness, points, draws, fresh_table, zero_weights)
        try:
            return run.resolve(session.words)
        finally:
            backend.release(*run.held)

    def _sizes(self, statements: int) -> tuple[int, int, int, int]:
        """Upper bounds of the session's proof, scratch and points words and of the algebra's arena (twice what
        the proof's values take, and an aligned slot for every value)."""
        config, n = self.config, self.config.num_variables
        inner = config.inner
        slot = self.backend.state.alignment() // 4
        ell, mask_q = config.sumcheck_mask.message_len, config.mask_queries
        w = max(ell, 3) - 1
        takes = 64 + 2 * statements
        data = 4 * statements * (n + 2)
        scratch_takes, arena, points, m = 64, 4096, statements * n * 4, n
        for r in range(len(inner.round_parameters) + 1):
            k = config.fold(r)
            takes += 8 + 4 * k
            data += 16 + k * (12 + 4 * w)
            arena += k * 12 * (w + ell + 4) + 4 * (1 << k) + 64
            scratch_takes += 3 * k + 8
            m -= k
            if r == len(inner.round_parameters):
                break
            params = inner.round_parameters[r]
            s, q, t = params.ood_samples, params.num_queries, config.oracle_randomness[r]
            depth = _log2(params.domain_size) + 1
            takes += 3 * s + 16
            data += 4 * s + 16 + q * ((4 << k) + DIGEST * depth + 2)
            arena += 4 * ((t << k) + 2 * q * (t + m + 8) + s * (4 * m + t + s + 16) + 4 * (t + s)
                          + 2 * config.switch_masks[r].randomness_len + q * (1 << k) + 256)
            scratch_takes += s + 16
            points += 8 * s * (m + k + 1)
        message_len, randomness_len, domain_size = config.source_code()
        groups = config.mask_groups()
        lens = sum(g.width * (g.shape.message_len + g.shape.randomness_len) for g in groups)
        final_depth = _log2(domain_size) + 1
        widest = max((4 << config.fold(r)) for r in range(len(inner.round_parameters) + 1))
        takes += 16 + 4 * sum(g.width for g in groups) + 4 * len(groups)
        data += (4 * (message_len + randomness_len + lens) + 64
                 + 2 * config.final_queries * (widest + 4 + DIGEST * (final_depth + 8) + 2)
                 + len(groups) * mask_q * (4 * max(g.width for g in groups) + DIGEST * 16 + 2))
        arena += 4 * (4 * (1 << m) + 2 * (message_len + randomness_len) + 3 * lens + 256)
        scratch_takes += 2 * len(groups) + 8
        queries = sum(p.num_queries for p in inner.round_parameters) + config.final_queries + len(groups) * mask_q
        arena *= 2
        proof_words = 2 * (takes * slot + data)
        scratch_words = arena + 2 * (scratch_takes * slot + 5 * queries + POW_MAX_COUNTERS) + STATE_WORDS
        return proof_words, scratch_words, points + 64, arena


class _Run:
    """One device run's recording (``record``) and what it reads back (``resolve``)."""

    def __init__(self, opening: DeviceOpening, session, alg: DeviceAlgebra):
        self.opening, self.session, self.alg = opening, session, alg
        self.backend, self.config, self.field = opening.backend, opening.config, opening.field
        self.state = self.backend.state
        self.ops = opening.ops
        self.transcript = session.transcript
        self.checks = _Checks()
        self.held: list = []  # tables and commitments to release after the read
        self.host_later: list = []  # (queries indices value in proof, host oracle) opened after the read
        one = self.ops.ef_from_base(self.ops.ONE)
        self.one = alg.const(one)
        self.zero = alg.const(np.zeros(4, np.uint32))

    # -- helpers ----------------------------------------------------------------------------------------------
    def _put(self, words) -> object:
        """Host words into the proof region (what the transcript observes there)."""
        return self.state.put(self.session.regions.proof, np.asarray(words, np.uint32))

    def _witness(self, bits: int):
        if bits <= 0:
            return None
        witness = self.transcript.grind(bits)
        self.checks.witnesses.append(witness)
        return witness

    def _indices_to_proof(self, queries):
        """The drawn indices copied into the proof region (read back for a host oracle's openings)."""
        out = self.session.regions.proof.take((queries.slots,))
        if queries.slots:
            self.state.batch().copy(queries.indices.buffer, queries.indices.offset, out.buffer, out.offset,
                                    4 * queries.slots)
        return out

    # -- recording --------------------------------------------------------------------------------------------
    def record(self, table, randomness, points, draws, fresh_table, zero_weights) -> None:
        config, backend, alg, transcript = self.config, self.backend, self.alg, self.transcript
        inner, n, k0 = config.inner, config.num_variables, config.fold(0)
        regions = self.session.regions
        height = ((1 << n) >> k0) << inner.starting_log_inv_rate
        interleaved = backend.commitments.interleave_columns(table, randomness, k0,
                                                              _rows(1 << n, randomness.shape[0], k0))
        source = backend.commitments.commit(interleaved, k0, _log2(height))
        backend.memory.release(interleaved)
        self.held.append(source)
        self.commitment_root = source.root
        transcript.observe(source.root)
        values = []
        if len(points):
            device_points = self.state.put(regions.points, points)
            values = [backend.reductions.evaluate(table, device_points[i]) for i in range(len(points))]
            observed = [self._put(p) for p in points]
            for point, value in zip(observed, values):
                transcript.observe(point)
                transcript.observe(value)
        self.values = values
        alpha = transcript.sample_ef()
        if values:
            coefficients = alg.powers(alpha, len(values))
            self.claim = alg.dot(coefficients, alg.concat(values))
            weights = backend.reductions.eq_weights(device_points, coefficients)
        else:
            self.claim, weights = self.zero, zero_weights
        self.evals, self.weights, self.factor = table, weights, self.one
        self.ledger = _Ledger(self.zero)
        self.batches, self.rounds = [], []
        gammas = self._batch(draws.batches[0], inner.starting_folding_pow_bits)
        carried, eq = self._fold_limbs(self.ops.ef_from_base(randomness), config.oracle_randomness[0], gammas)
        for r, params in enumerate(inner.round_parameters):
            oracle = self._switch(r, params, carried, eq, source, draws.switches[r])
            source = oracle
            gammas = self._batch(draws.batches[r + 1], params.folding_pow_bits)
            carried, eq = self._fold_limbs(draws.switches[r].fresh, config.oracle_randomness[r + 1], gammas)
        self._base_case(draws.base, carried, source, fresh_table)

    def _batch(self, draw, pow_bits: int) -> list:
        """One masked sumcheck batch (``sumcheck.prove_batch``) over the residual: its gammas."""
        ops, alg, transcript, backend = self.ops, self.alg, self.transcript, self.backend
        masks, k = draw.masks, draw.masks.shape[0]
        ell = masks.shape[1]
        size = max(ell, 3)
        ledger = self.ledger
        transcript.observe(alg.publish(alg.add(self.claim, ledger.aux)))
        oracle = draw.oracle.get()
        transcript.observe(self._put(oracle.root))
        future = ops.ef_sum(np.stack([endpoints(ops, m) for m in masks]))
        mu_tilde = ops.ef_mul(ops.ef_from_base(ops.constant(pow(2, k - 1, ops.P))), future)
        transcript.observe(self._put(mu_tilde))
        eps = transcript.sample_ef()
        self.checks.nonzero.append(alg.publish(eps))
        zero = ops.ef_from_base(ops.ZERO)
        plan = round_plan(ops, k, pow_bits, zero, future, zero, masks, size)  # the eps * aux terms added below
        e = alg.mul(eps, self.factor)
        consts = []
        for j in range(k):
            template = plan.templates[j]
            half_j = ops.ef_from_base(ops.constant(pow(2, -(j + 1), ops.P)))
            first = alg.linear(eps, alg.scale(ledger.aux, alg.const(half_j)), alg.const(template[0]))
            previous = masks[j - 1] if j else np.zeros((ell, 4), np.uint32)
            consts.append(alg.concat([first, alg.const(template[1:]), alg.const(plan.lives[j]), e,
                                      alg.const(previous)]))
        recorded = backend.masked.record(self.evals, self.weights, consts, size - 1, ell, pow_bits)
        self.checks.witnesses.extend(recorded.witnesses)
        backend.memory.release(self.evals, self.weights)
        self.evals, self.weights = recorded.tables
        self.state.submit()  # what the batch released may be written again by the host only after this
        claim = self.claim
        for h, gamma in zip(recorded.sums, recorded.gammas):
            c0, c_inf = alg.mul(h[0], self.factor), alg.mul(h[1], self.factor)
            claim = self._extrapolate(c0, alg.sub(claim, c0), c_inf, gamma)
        self.claim = alg.mul(claim, eps)
        self.factor = alg.mul(self.factor, eps)
        scale = alg.mul(eps, alg.const(ops.ef_from_base(ops.inv(ops.power(ops.constant(2), k)))))
        ledger.covectors = [alg.scale(c, scale) for c in ledger.covectors]
        ledger.aux = alg.mul(ledger.aux, scale)
        for gamma, message, randomness in zip(recorded.gammas, masks, draw.randomness):
            covector = alg.powers(gamma, message.shape[0])
            ledger.aux = alg.add(ledger.aux, alg.dot(covector, alg.const(message)))
            ledger.covectors.append(covector)
            ledger.messages.append(message)
            ledger.randomness.append(randomness)
        ledger.groups.append((k, oracle))
        self.batches.append((mu_tilde, ell, recorded, oracle))
        return recorded.gammas

    def _extrapolate(self, h0, h1, c_inf, g):
        alg = self.alg
        g_minus_1 = alg.sub(g, self.one)
        out = alg.add(alg.mul(h0, alg.sub(self.one, g)), alg.mul(h1, g))
        return alg.add(out, alg.mul(c_inf, alg.mul(g, g_minus_1)))

    def _fold_limbs(self, values: np.ndarray, chunk: int, gammas: list):
        """(sum_b eq(gammas, b) values[b chunk .. b chunk + chunk - 1], the eq table) on the device."""
        alg = self.alg
        eq = alg.eq(alg.concat(gammas))
        return alg.vecmat(eq, alg.const(np.asarray(values, np.uint32).reshape(-1, 4))), eq

    def _switch(self, r: int, params, carried, eq, source, drawn):
        """Code-switching round r (``backend_prover.ZkBackendProver._switch``): the new oracle."""
        config, ops, alg, backend, state = self.config, self.ops, self.alg, self.backend, self.state
        k, k_next = config.fold(r), config.fold(r + 1)
        n_msg = self.evals.shape[0]
        m = _log2(n_msg)
        fresh, pad, mask_randomness = drawn.fresh, drawn.pad, drawn.mask_randomness
        shape = config.switch_masks[r]
        t, s = carried.shape[0], pad.shape[0]
        mask_message = alg.concat([carried, alg.const(pad)]) if s else carried
        mask_commitment = self._commit_mask(mask_message, mask_randomness, shape.domain_size)
        plan = CodeSwitchPlan(fresh, k_next, _rows(n_msg, fresh.shape[0], k_next),
                              _log2(config.inv_rate(r) * (n_msg >> k_next)), None, None, params.ood_samples,
                              params.pow_bits, params.domain_size, k, params.num_queries)
        switch = backend.switch.record(self.evals, source, plan, mask_commitment.root, mask_message)
        self.held.append(switch.commitment)
        if switch.witness is not None:
            self.checks.witnesses.append(switch.witness)
        q = switch.queries.slots
        xs_base = switch.queries.domain_points
        coefficients = alg.powers(switch.combination, s + q, start=switch.combination)
        ood_coefficients, query_coefficients = coefficients[:s], coefficients[s:]
        inverse = alg.inv(self.factor)
        ones = alg.const(np.tile(self.ops.ef_from_base(ops.ONE), (m, 1)))
        eq_points, eq_coefficients, top_squares = [], [], []
        for i, z in enumerate(switch.zs):
            ys = alg.squares(z, m, reverse=True)  # y_0 = z^(2^(m-1)) ... y_{m-1} = z
            denominators = alg.add(ys, ones)
            eq_points.append(alg.mul(ys, alg.inv(denominators)))
            scale = self.one
            for j in range(m):
                scale = alg.mul(scale, denominators[j])
            self.checks.nonzero.append(alg.publish(scale))
            eq_coefficients.append(alg.mul(alg.mul(ood_coefficients[i], scale), inverse))
            top_squares.append(alg.mul(ys[0], ys[0]) if m else z)  # z^(2^m)
        device_points = self.session.regions.points.take((s, m, 4))
        if s and m:
            alg.flush()
            batch = state.batch()
            for i, point in enumerate(eq_points):
                batch.copy(point.buffer, point.offset, device_points.buffer, device_points.offset + i * m * EF_BYTES,
                           m * EF_BYTES)
        backend.reductions.add_constraint_weights(self.weights, device_points,
                                                  alg.concat(eq_coefficients) if s else self.zero, xs_base,
                                                  alg.scale(query_coefficients, inverse) if q else self.zero)
        terms = list(switch.evaluations)
        covector = alg.const(np.zeros((t + s, 4), np.uint32))
        for i, (z, top) in enumerate(zip(switch.zs, top_squares)):
            coefficient = ood_coefficients[i]
            covector = alg.add(covector, alg.powers(z, t + s, start=alg.mul(coefficient, top)))
        if q:
            xs = alg.lift(xs_base)
            rows = switch.openings.rows
            rows = alg.lift(rows) if not source.is_ext else rows
            folded = alg.matvec(rows, q, eq)
            powers = alg.powers_each(xs, t)
            x_top = alg.column(alg.squares_each(xs, m + 1), m + 1, m)  # x^(2^m)
            tails = alg.mul(alg.matvec(powers, q, carried), x_top)
            terms.append(alg.sub(folded, tails))
            if t:
                spread = alg.vecmat(alg.mul(query_coefficients, x_top), powers)
                covector = alg.concat([alg.add(covector[:t], spread), covector[t:]]) if s else \
                    alg.add(covector, spread)
        if terms:
            self.claim = alg.add(self.claim, alg.dot(coefficients, alg.concat(terms)))
        ledger = self.ledger
        ledger.aux = alg.add(ledger.aux, alg.dot(covector, mask_message))
        ledger.covectors.append(covector)
        ledger.messages.append(mask_message)
        ledger.randomness.append(mask_randomness)
        ledger.groups.append((1, mask_commitment))
        self.rounds.append((switch, mask_commitment, "extension" if source.is_ext else "base"))
        return switch.commitment

    def _commit_mask(self, message, randomness: np.ndarray, domain_size: int):
        """The switch mask oracle (``oracles.mask_matrix`` of one column, committed) from its device message."""
        alg, state, backend = self.alg, self.state, self.backend
        used = message.shape[0] + randomness.shape[0]
        rows = _pow2_at_least(used)
        parts = [message, alg.const(randomness)]
        if rows > used:
            parts.append(alg.const(np.zeros((rows - used, 4), np.uint32)))
        coefficients = alg.concat(parts)
        alg.flush()
        handle = state.new_table(rows, EF_BYTES)
        batch = state.batch()
        per = handle.buffer_rows * handle.row_bytes
        for i, buffer in enumerate(handle.buffers):
            batch.copy(coefficients.buffer, coefficients.offset + i * per, buffer, 0,
                       min(per, rows * EF_BYTES - i * per))
        table = DeviceBuffer(handle, (rows, 4), handle.mode)
        commitment = backend.commitments.commit(table, 0, _log2(domain_size))
        backend.memory.release(table)
        self.held.append(commitment)
        return commitment

    def _base_case(self, draw, carried, source, fresh_table) -> None:
        """The masked base case (``base_case.prove_base_case``)."""
        config, alg, backend, transcript = self.config, self.alg, self.backend, self.transcript
        _, _, domain_size = config.source_code()
        fresh_main = backend.commitments.commit(fresh_table, 0, _log2(domain_size))
        backend.memory.release(fresh_table)
        self.held.append(fresh_main)
        transcript.observe(fresh_main.root)
        fresh_groups = []
        for messages, randomness, pending in draw.groups:
            oracle = pending.get()
            transcript.observe(self._put(oracle.root))
            fresh_groups.append((messages, randomness, oracle))
        ledger = self.ledger
        source_covector = alg.scale(alg.from_table(self.weights), self.factor)
        masked = alg.dot(alg.const(draw.message), source_covector)
        fresh_messages = [m for messages, _, _ in fresh_groups for m in messages]
        fresh_randomness = [t for _, randomness, _ in fresh_groups for t in randomness]
        for message, covector in zip(fresh_messages, ledger.covectors):
            masked = alg.add(masked, alg.dot(alg.const(message), covector))
        self.masked_claim = alg.publish(masked)
        transcript.observe(self.masked_claim)
        gamma = transcript.sample_ef()

        def blind(fresh, hidden):
            hidden = hidden if not isinstance(hidden, np.ndarray) else alg.const(hidden)
            value = alg.publish(alg.linear(gamma, hidden, alg.const(fresh)))
            transcript.observe(value)
            return value

        self.blinded_message = blind(draw.message, alg.from_table(self.evals))
        self.blinded_randomness = blind(draw.randomness, carried)
        self.blinded_masks = []
        for fresh_m, fresh_t, hidden_m, hidden_t in zip(fresh_messages, fresh_randomness, ledger.messages,
                                                        ledger.randomness):
            self.blinded_masks.append((blind(fresh_m, hidden_m), blind(fresh_t, hidden_t)))
        self.final_witness = self._witness(config.final_pow_bits)
        positions = transcript.sample_queries(domain_size, 0, config.final_queries)
        self.source_openings = (backend.commitments.open_rows(source, positions), "extension" if source.is_ext
                                else "base")
        self.fresh_openings = backend.commitments.open_rows(fresh_main, positions)
        self.fresh_main = fresh_main
        self.group_openings = []
        for group, (_, carried_oracle), (_, _, fresh_oracle) in zip(config.mask_groups(), ledger.groups,
                                                                     fresh_groups):
            queries = transcript.sample_queries(group.shape.domain_size, 0, config.mask_queries)
            indices = self._indices_to_proof(queries)
            carried_open = carried_oracle if not hasattr(carried_oracle, "handle") else \
                backend.commitments.open_rows(carried_oracle, queries)
            self.group_openings.append((indices, carried_open, fresh_oracle))
        self.fresh_group_caps = [oracle.cap for _, _, oracle in fresh_groups]
        self.evals_weights = (self.evals, self.weights)
        self.held.extend([self.evals, self.weights])

    # -- the read ---------------------------------------------------------------------------------------------
    def resolve(self, words: np.ndarray):
        """The proof from the proof region's words, or None (``DeviceOpening.prove``'s contract)."""
        read = lambda value: np.asarray(value.read(words), np.uint32).copy()  # noqa: E731
        if any(int(read(w).reshape(-1)[0]) == NOT_FOUND for w in self.checks.witnesses):
            return None
        if any(not read(v).any() for v in self.checks.nonzero):
            return None
        root = read(self.commitment_root).reshape(DIGEST)
        values = np.array([read(v).reshape(4) for v in self.values], np.uint32).reshape(-1, 4)
        sumchecks, mask_roots = [], []
        for mu_tilde, ell, recorded, oracle in self.batches:
            k = len(recorded.wires)
            wires = np.stack([read(x) for x in recorded.wires]).reshape(k, -1, 4)
            witnesses = np.array([int(read(x).reshape(-1)[0]) for x in recorded.witnesses], np.uint32)
            sumchecks.append(ZkSumcheckData(np.asarray(mu_tilde, np.uint32), ell, wires, witnesses))
            mask_roots.append(oracle.cap)
        rounds = []
        for switch, mask_commitment, kind in self.rounds:
            rows, siblings = resolve_value(words, switch.openings)
            witness = int(read(switch.witness).reshape(-1)[0]) if switch.witness is not None else 0
            rounds.append(ZkRoundProof(self._cap(read(switch.commitment.root)), self._cap(read(mask_commitment.root)),
                                       np.array([read(a).reshape(4) for a in switch.answers],
                                                np.uint32).reshape(-1, 4), witness,
                                       _openings(kind, rows, siblings)))
        opened, kind = self.source_openings
        source_openings = _openings(kind, *resolve_value(words, opened))
        fresh_openings = _openings("extension", *resolve_value(words, self.fresh_openings))
        mask_openings = []
        for indices, carried, fresh in self.group_openings:
            positions = read(indices).astype(np.int64).tolist()
            if hasattr(carried, "open"):
                carried_openings = carried.open(positions)
            else:
                carried_openings = _openings("extension", *resolve_value(words, carried))
            mask_openings.append(MaskOpeningPair(carried_openings, fresh.open(positions)))
        witness = int(read(self.final_witness).reshape(-1)[0]) if self.final_witness is not None else 0
        base_case = BaseCaseZkProof(self._cap(read(self.fresh_main.root)), tuple(self.fresh_group_caps),
                                    read(self.masked_claim).reshape(4), read(self.blinded_message).reshape(-1, 4),
                                    read(self.blinded_randomness).reshape(-1, 4),
                                    tuple(BlindedMask(read(m).reshape(-1, 4), read(t).reshape(-1, 4))
                                          for m, t in self.blinded_masks),
                                    witness, source_openings, fresh_openings, tuple(mask_openings))
        proof = ZkWhirProof(values, tuple(sumchecks), tuple(mask_roots), tuple(rounds), base_case)
        return MerkleCap(root[None]), proof

    @staticmethod
    def _cap(root: np.ndarray) -> MerkleCap:
        return MerkleCap(np.asarray(root, np.uint32).reshape(1, DIGEST))


def _openings(kind: str, rows, siblings) -> QueryOpenings:
    return QueryOpenings(kind, np.asarray(rows, np.uint32), np.asarray(siblings, np.uint32).reshape(-1, DIGEST))
