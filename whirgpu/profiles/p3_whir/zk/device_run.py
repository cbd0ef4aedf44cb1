"""One hiding proof recorded into two GPU sessions (``OpeningRun``). ``record(canonical)`` makes every launch of
the proof in transcript order into the first (the mask draws from the forks' keys, ``device_draws``; commitment,
statement, each masked batch, each code switch, the base case up to its blinded vectors, computed and put in the
proof region but not observed), every per-proof host word written as a named input of
``device_inputs.DeviceInputs``; the host observes the blinded vectors (``blinded``, in transcript order: a few
thousand words, which the host's compiled sponge absorbs in about a millisecond and a one-thread device sponge in
tens); ``record_queries()`` makes the second (the proof of work, the final positions, the openings).
``resolve(words, query_words)`` turns the two proof regions into the ``ZkWhirProof``. The steps follow
``backend_prover.ZkBackendProver`` (docs/ZK-PROTOCOL.md §15); the field steps between transcript ops are
``DeviceAlgebra`` ops.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field

import numpy as np

from ....backends.base import DeviceBuffer
from ....backends.code_switch import CodeSwitchPlan
from ....backends.device_values import DeviceQueries, DeviceValue
from ....backends.gpu.geometry import EF_BYTES, log2
from ....runtime.base import RtView
from .device_draws import DeviceDraws
from .device_reads import OpeningReads
from .host_draws import HostDraws, set_starts


def pow2_at_least(n: int) -> int:
    return 1 << (int(n) - 1).bit_length() if n > 1 else 1


def tree(values: list, combine):
    """``combine`` over ``values`` (an associative, commutative field operation: add, mul) as a balanced tree, so a
    device program makes it in log2(len) levels rather than a chain of len - 1: the same value."""
    values = list(values)
    while len(values) > 1:
        values = [combine(values[i], values[i + 1]) if i + 1 < len(values) else values[i]
                  for i in range(0, len(values), 2)]
    return values[0]


def interleaved_rows(message_len: int, randomness_len: int, folding: int) -> int:
    return pow2_at_least((message_len + randomness_len) >> folding)


@dataclass
class _Ledger:
    """The prover's masks (upstream ``ProverMasks``) as device values: per mask its message, randomness and
    covector; per group (k, its oracle's commitment); ``aux`` = sum <covector, message>."""

    aux: object
    messages: list = dataclass_field(default_factory=list)
    randomness: list = dataclass_field(default_factory=list)
    covectors: list = dataclass_field(default_factory=list)
    groups: list = dataclass_field(default_factory=list)


class OpeningRun(OpeningReads):
    """``record(canonical)`` into ``session`` (a ``ProofSession`` of ``backend``) with ``alg`` over it; the
    polynomial, points and keys come from ``inputs`` (a ``DeviceInputs``), written as named inputs."""

    def __init__(self, backend, config, field, session, alg, inputs):
        self.backend, self.config, self.field = backend, config, field
        self.session, self.alg, self.inputs = session, alg, inputs
        self.state = backend.state
        self.ops = alg.ops
        self.transcript = session.transcript
        self.witnesses: list = []  # NOT_FOUND read back: a search without a witness in range
        self.nonzero: list = []  # 0 read back: eps = 0 or no eq form for an OOD point (left to the steps)
        self.held: list = []  # tables and commitments to release once the first session is submitted
        self.held_queries: list = []  # the commitments the second session opens: released after it
        self.host_challenger = None  # DeviceOpening's host challenger, copied for each proof's blinded vectors
        self._first_reads = None  # resolve_first's gather indices, made at its first call
        self.rows_plans: dict = {}  # the second session's rows' gather indices by position counts (_rows_plan)
        self.prune_keys: tuple = ()  # (position set, depth) of its openings' multiproofs, once record_queries ran
        self.first_wait = 0.0  # seconds a replay last waited for the first session's words (DeviceOpening)
        self.one = alg.const(self.ops.ef_from_base(self.ops.ONE))
        self.zero = alg.const(np.zeros(4, np.uint32))

    # -- inputs -----------------------------------------------------------------------------------------------
    def _put(self, source: tuple):
        """A named input into the proof region (where the transcript observes it)."""
        words = np.ascontiguousarray(self.inputs.words(source), np.uint32)
        value = self.session.regions.proof.take(words.shape)
        self.state.drivers.write(value.buffer, words.reshape(-1), value.offset, source=source)
        return value

    # -- recording --------------------------------------------------------------------------------------------
    def record(self, canonical: bool) -> None:
        config, backend, alg, transcript, inputs = self.config, self.backend, self.alg, self.transcript, self.inputs
        inner, n, k0 = config.inner, config.num_variables, config.fold(0)
        statements = inputs.points.size // (4 * n)
        # the polynomial's storage before any launch (no launch of the session has used it when the host writes
        # it), its write after the masks and their oracles are submitted: the device makes those (about 0.4 ms at
        # n = 20 on the H200) while the host copies the polynomial (0.6 ms for 4 MiB). The upload's staging slot is
        # mapped again with the last proof's readback (wgpu_rt), so the write does not wait for the device.
        polynomial_storage = backend.memory.reserve(inputs.polynomial.shape)
        weights = None if statements else backend.memory.upload(np.zeros((1 << n, 4), np.uint32))
        self.draws = draws = DeviceDraws(self.state, self.session, alg, config, self.field)
        layout = draws.layout
        # storage for every mask oracle's coefficients: those of one shape together, made on the device and
        # committed at once after the draws; each other one made just before its commitment
        forests, self.matrices = self._oracle_storage(layout)
        draws.record(lambda name: inputs.words(("key", name)))
        self.oracles = self._commit_forests(forests)
        self.fresh_main = self._fresh_main()  # fixed by the draws alone too: made with the masks, observed at the end
        self.state.submit()
        if canonical:
            table = backend.memory.upload_canonical(inputs.polynomial, polynomial_storage)
        else:
            table = backend.memory.upload(inputs.polynomial, source="table", into=polynomial_storage)
        height = ((1 << n) >> k0) << inner.starting_log_inv_rate
        randomness = draws.randomness
        interleaved = backend.commitments.interleave_columns(
            table, randomness, k0, interleaved_rows(1 << n, randomness.shape[0], k0))
        source = backend.commitments.commit(interleaved, k0, log2(height))
        backend.memory.release(interleaved)
        self.held.append(source)
        self.commitment_root = source.root
        transcript.observe(source.root)
        self.values = []
        if statements:
            points = self.session.regions.points.take((statements, n, 4))
            self.state.drivers.write(points.buffer, inputs.points, points.offset, source=("points",))
            self.values = [backend.reductions.evaluate(table, points[i]) for i in range(statements)]
            for i, value in enumerate(self.values):
                transcript.observe(self._put(("points", 4 * n * i, 4 * n * (i + 1))))
                transcript.observe(value)
        alpha = transcript.sample_ef()
        if statements:
            coefficients = alg.powers(alpha, statements)
            self.claim = alg.dot(coefficients, alg.concat(self.values))
            weights = backend.reductions.eq_weights(points, coefficients)
        else:
            self.claim = self.zero
        self.evals, self.weights, self.factor = table, weights, self.one
        self.ledger = _Ledger(self.zero)
        self.batches, self.rounds = [], []
        gammas = self._batch(0, inner.starting_folding_pow_bits)
        carried, eq = self._fold_limbs(alg.lift(draws.randomness), gammas)
        for r, params in enumerate(inner.round_parameters):
            source = self._switch(r, params, carried, eq, source)
            gammas = self._batch(r + 1, params.folding_pow_bits)
            carried, eq = self._fold_limbs(draws.fresh(r), gammas)
        self._base_case(carried, source)

    def _batch(self, b: int, pow_bits: int) -> list:
        """Masked sumcheck batch b (``sumcheck.prove_batch``) over the residual: its gammas."""
        ops, alg, transcript, backend, draws = self.ops, self.alg, self.transcript, self.backend, self.draws
        slot = draws.layout.batches[b]
        k, ell = slot.k, slot.ell
        size = max(ell, 3)
        ledger = self.ledger
        mu, heads, tails = draws.batch_parts(b)
        transcript.observe(alg.publish(alg.add(self.claim, ledger.aux)))
        oracle = self._oracle(("batch", b))
        transcript.observe(oracle.root)
        mu = alg.publish(mu)
        transcript.observe(mu)
        eps = transcript.sample_ef()
        self.nonzero.append(alg.publish(eps))
        e = alg.mul(eps, self.factor)
        consts = []
        for j in range(k):
            half_j = ops.ef_from_base(ops.constant(pow(2, -(j + 1), ops.P)))
            first = alg.linear(eps, alg.scale(ledger.aux, alg.const(half_j)), heads[j])
            live = ops.ef_from_base(ops.constant(pow(2, k - j - 1, ops.P)))
            previous = draws.mask(b, j - 1) if j else alg.const(np.zeros((ell, 4), np.uint32))
            consts.append(alg.concat([first, *tails[j], alg.const(live), e, previous]))
        recorded = backend.masked.record(self.evals, self.weights, consts, size - 1, ell, pow_bits)
        self.witnesses.extend(recorded.witnesses)
        backend.memory.release(self.evals, self.weights)
        self.evals, self.weights = recorded.tables
        self.state.submit()  # what the batch released may be written by the host again only after this
        claim = self.claim
        for h, gamma in zip(recorded.sums, recorded.gammas):
            claim = self._extrapolate(claim, alg.mul(h[0], self.factor), alg.mul(h[1], self.factor), gamma)
        self.claim = alg.mul(claim, eps)
        self.factor = alg.mul(self.factor, eps)
        scale = alg.mul(eps, alg.const(ops.ef_from_base(ops.inv(ops.power(ops.constant(2), k)))))
        ledger.covectors = [alg.scale(c, scale) for c in ledger.covectors]
        terms = [alg.mul(ledger.aux, scale)]
        for j, gamma in enumerate(recorded.gammas):
            covector = alg.powers(gamma, ell)
            terms.append(alg.dot(covector, draws.mask(b, j)))
            ledger.covectors.append(covector)
            ledger.messages.append(draws.mask(b, j))
            ledger.randomness.append(draws.mask_randomness(b, j))
        ledger.aux = tree(terms, alg.add)
        ledger.groups.append((k, oracle))
        self.batches.append((ell, recorded, oracle, mu))
        return recorded.gammas

    def _oracle_shapes(self, layout) -> dict:
        """The mask oracles fixed by the draws alone, by shape: {(log2 rows, columns): [("batch", b) or
        ("group", g), ...]} in transcript order."""
        shapes: dict = {}
        log_rows = log2(self.config.sumcheck_mask.domain_size)
        for b, slot in enumerate(layout.batches):
            shapes.setdefault((log_rows, slot.k), []).append(("batch", b))
        for g, group in enumerate(self.config.mask_groups()):
            shapes.setdefault((log2(group.shape.domain_size), group.width), []).append(("group", g))
        return shapes

    def _oracle_storage(self, layout) -> tuple[list, dict]:
        """(forests: each a list of (shape, members, one buffer for their matrices), committed together
        (``Commitments.commit_forest``): every oracle in one forest where ``forest_fits_shapes`` allows it, else a
        forest per shape where ``forest_fits`` does; the other oracles' matrices: {member: (shape, buffer)})."""
        shapes = self._oracle_shapes(layout)
        commitments, pool = self.backend.commitments, self.state.pool

        def storage(count: int, log_rows: int, columns: int):
            return pool.alloc(count * EF_BYTES * pow2_at_least(columns) << log_rows, False)

        if commitments.forest_fits_shapes([(len(members), *shape) for shape, members in shapes.items()]):
            return [[(shape, members, storage(len(members), *shape)) for shape, members in shapes.items()]], {}
        forests, lone = [], {}
        for shape, members in shapes.items():
            if commitments.forest_fits(len(members), *shape):
                forests.append([(shape, members, storage(len(members), *shape))])
            else:
                lone.update((member, (shape, storage(1, *shape))) for member in members)
        return forests, lone

    def _record_matrix(self, member: tuple, matrix, log_rows: int) -> None:
        kind, index = member
        (self.draws.batch_matrix if kind == "batch" else self.draws.group_matrix)(index, matrix, log_rows)

    def _commit_forests(self, forests: list) -> dict:
        """The forests' oracles made and committed (``Commitments.commit_forest``): {member: commitment}, each
        held until the second session (which opens it) is submitted."""
        oracles = {}
        for forest in forests:
            for (log_rows, columns), members, matrix in forest:
                matrix_bytes = EF_BYTES * pow2_at_least(columns) << log_rows
                for t, member in enumerate(members):
                    self._record_matrix(member, RtView(matrix, t * matrix_bytes, matrix_bytes), log_rows)
            committed = self.backend.commitments.commit_forest(
                [(matrix, len(members), *shape) for shape, members, matrix in forest])
            for (_, members, _), commitments in zip(forest, committed):
                oracles.update(zip(members, commitments))
        return oracles

    def _oracle(self, member: tuple):
        """A mask oracle fixed by the draws alone: committed with its forest, or now from its coefficients
        (recorded from the draws just before)."""
        if member in self.oracles:
            return self.oracles[member]
        (log_rows, columns), matrix = self.matrices[member]
        self._record_matrix(member, matrix, log_rows)
        commitment = self.backend.commitments.commit_matrix(matrix, log_rows, columns)
        self.held.append(commitment)
        return commitment

    def _extrapolate(self, claim, h0, c_inf, g):
        """h(g) for the quadratic with h(0) = h0, h(1) = claim - h0 and X^2 coefficient c_inf, as
        claim g + (h0 (1 - 2 g) + c_inf g (g - 1)): one op after ``claim``, so a batch's rounds chain one level each
        (the rest is made beside the chain)."""
        alg = self.alg
        rest = alg.add(alg.mul(h0, alg.sub(self.one, alg.add(g, g))), alg.mul(c_inf, alg.mul(g, alg.sub(g, self.one))))
        return alg.linear(g, claim, rest)

    def _fold_limbs(self, rows, gammas: list):
        """(sum_b eq(gammas, b) rows[b], the eq table): the randomness ``rows`` (EF, a device value) folded."""
        alg = self.alg
        eq = alg.eq(alg.concat(gammas))
        return alg.vecmat(eq, rows), eq

    def _switch(self, r: int, params, carried, eq, source):
        """Code-switching round r (``backend_prover.ZkBackendProver._switch``): the new oracle."""
        config, ops, alg, backend, state = self.config, self.ops, self.alg, self.backend, self.state
        k, k_next = config.fold(r), config.fold(r + 1)
        n_msg = self.evals.shape[0]
        m = log2(n_msg)
        draws = self.draws
        fresh = draws.fresh(r)
        t, s = carried.shape[0], draws.layout.switches[r].pad_len
        mask_message = alg.concat([carried, draws.pad(r)]) if s else carried
        mask_randomness = draws.switch_randomness(r)
        mask_commitment = self._commit_mask(mask_message, mask_randomness, config.switch_masks[r].domain_size)
        plan = CodeSwitchPlan(fresh, k_next, interleaved_rows(n_msg, fresh.shape[0], k_next),
                              log2(config.inv_rate(r) * (n_msg >> k_next)), None, None, params.ood_samples,
                              params.pow_bits, params.domain_size, k, params.num_queries)
        switch = backend.switch.record(self.evals, source, plan, mask_commitment.root, mask_message)
        self.held.append(switch.commitment)
        if switch.witness is not None:
            self.witnesses.append(switch.witness)
        q = switch.queries.slots
        xs_base = switch.queries.domain_points
        coefficients = alg.powers(switch.combination, s + q, start=switch.combination)
        ood_coefficients, query_coefficients = coefficients[:s], coefficients[s:]
        inverse = alg.inv(self.factor)
        ones = alg.const(np.tile(ops.ef_from_base(ops.ONE), (m, 1)))
        eq_points, eq_coefficients, tops = [], [], []
        for i, z in enumerate(switch.zs):
            ys = alg.squares(z, m, reverse=True)  # y_0 = z^(2^(m-1)) ... y_{m-1} = z: power_point's eq form
            denominators = alg.add(ys, ones)
            eq_points.append(alg.mul(ys, alg.inv(denominators)))
            scale = tree([denominators[j] for j in range(m)], alg.mul) if m else self.one
            self.nonzero.append(alg.publish(scale))
            eq_coefficients.append(alg.mul(alg.mul(ood_coefficients[i], scale), inverse))
            tops.append(alg.mul(ys[0], ys[0]) if m else z)  # z^(2^m)
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
        for i, (z, top) in enumerate(zip(switch.zs, tops)):
            covector = alg.add(covector, alg.powers(z, t + s, start=alg.mul(ood_coefficients[i], top)))
        if q:
            # each folded row is padded_ood(x, M, carried): sum_b M[b] x^b is what is left of it
            xs = alg.lift(xs_base)
            rows = switch.openings.rows if source.is_ext else alg.lift(switch.openings.rows)
            powers = alg.powers_each(xs, t)
            x_top = alg.column(alg.squares_each(xs, m + 1), m + 1, m)  # x^(2^m)
            tails = alg.mul(alg.matvec(powers, q, carried), x_top)
            terms.append(alg.sub(alg.matvec(rows, q, eq), tails))
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

    def _commit_mask(self, message, randomness, domain_size: int):
        """The switch mask oracle (``oracles.mask_matrix`` of one column, committed) from its message and
        randomness (device values): the coefficients message ‖ randomness ‖ zeros copied into a table."""
        backend = self.backend
        table = self._coefficients_table([message, randomness])
        commitment = backend.commitments.commit(table, 0, log2(domain_size))
        backend.memory.release(table)
        self.held.append(commitment)
        return commitment

    def _coefficients_table(self, parts: list, handle=None) -> DeviceBuffer:
        """A one-column EF table of the device values ``parts`` then zeros to a power of two of rows (into
        ``handle``'s storage when given, else a new table's)."""
        alg, state = self.alg, self.state
        used = sum(part.shape[0] for part in parts)
        rows = pow2_at_least(used)
        if rows > used:
            parts = parts + [alg.const(np.zeros((rows - used, 4), np.uint32))]
        coefficients = alg.concat(parts)
        alg.flush()
        handle = state.new_table(rows, EF_BYTES) if handle is None else handle
        batch = state.batch()
        per = handle.buffer_rows * handle.row_bytes
        for i, buffer in enumerate(handle.buffers):
            batch.copy(coefficients.buffer, coefficients.offset + i * per, buffer, 0,
                       min(per, rows * EF_BYTES - i * per))
        return DeviceBuffer(handle, (rows, 4), handle.mode)

    def _fresh_main(self):
        """The base case's fresh source oracle (10.1: its message ‖ randomness drawn, one column), committed."""
        rows, (_, _, domain_size) = pow2_at_least(sum(self.config.source_code()[:2])), self.config.source_code()
        handle = self.state.new_table(rows, EF_BYTES)  # one buffer (DeviceOpening.supported)
        table = self._coefficients_table([self.draws.base_coefficients()], handle)
        fresh_main = self.backend.commitments.commit(table, 0, log2(domain_size))
        self.backend.memory.release(table)
        self.held.append(fresh_main)
        return fresh_main

    def _base_case(self, carried, source) -> None:
        """The masked base case (``base_case.prove_base_case``), its fresh source oracle made (``_fresh_main``)."""
        config, alg, transcript, draws, fresh_main = self.config, self.alg, self.transcript, self.draws, self.fresh_main
        transcript.observe(fresh_main.root)
        self.fresh_groups = []
        for g, group in enumerate(config.mask_groups()):
            oracle = self._oracle(("group", g))
            transcript.observe(oracle.root)
            self.fresh_groups.append(oracle)
        ledger = self.ledger
        source_covector = alg.scale(alg.from_table(self.weights), self.factor)
        fresh = [(draws.group_message(g, i), draws.group_randomness(g, i))
                 for g, group in enumerate(config.mask_groups()) for i in range(group.width)]
        masked = tree([alg.dot(draws.base_message(), source_covector)]
                      + [alg.dot(message, covector) for (message, _), covector in zip(fresh, ledger.covectors)], alg.add)
        self.masked_claim = alg.publish(masked)
        transcript.observe(self.masked_claim)
        gamma = transcript.sample_ef()

        def blind(fresh_value, hidden):
            return alg.publish(alg.linear(gamma, hidden, fresh_value))  # observed by the host

        self.blinded_message = blind(draws.base_message(), alg.from_table(self.evals))
        self.blinded_randomness = blind(draws.base_randomness(), carried)
        self.blinded_masks = [(blind(fm, hm), blind(ft, ht))
                              for (fm, ft), hm, ht in zip(fresh, ledger.messages, ledger.randomness)]
        masks = [v for pair in self.blinded_masks for v in pair]  # their words, in observation order: one read
        self.blinded = [self.blinded_message, self.blinded_randomness, *masks]
        blinded = np.concatenate([np.arange(v.word, v.word + v.words) for v in self.blinded])
        together = blinded.size and np.array_equal(blinded, np.arange(blinded[0], blinded[0] + blinded.size))
        self.blinded_words = slice(int(blinded[0]), int(blinded[0] + blinded.size)) if together else blinded  # view
        self.source = source
        # what the second session opens stays alive until it is submitted
        self.held_queries = [fresh_main, source] + [o for _, o in ledger.groups] + self.fresh_groups
        self.held = [h for h in self.held if all(h is not q for q in self.held_queries)]
        self.held.extend([self.evals, self.weights])

    def record_queries(self, session, drawn: "HostDraws | None" = None) -> None:
        """The base case's proof of work, final positions and openings, then each mask group's positions and
        openings, into ``session`` (the second). ``drawn`` None: the witness and positions found on the device
        (its challenger the host's after the blinded vectors, written there); else the host's (``HostDraws``):
        the positions written as the named input ("positions",), the witness kept for ``resolve_queries``, and
        only the openings run here."""
        config, backend = self.config, self.backend
        transcript = session.transcript
        _, _, domain_size = config.source_code()
        self.query_witnesses = []
        self.final_witness = None
        if drawn is not None:
            positions, *group_queries = self._host_queries(session, drawn)
        else:
            if config.final_pow_bits > 0:
                self.final_witness = transcript.grind(config.final_pow_bits)
                self.query_witnesses.append(self.final_witness)
            # every draw first, in the transcript's order, then every opening: the draws share transcript launches
            # (two a launch), where a draw between openings was a launch of its own
            positions = transcript.sample_queries(domain_size, 0, config.final_queries)
            group_queries = [transcript.sample_queries(group.shape.domain_size, 0, config.mask_queries)
                             for group in config.mask_groups()]
        source = self.source
        self.source_openings = (backend.commitments.open_rows(source, positions),
                                "extension" if source.is_ext else "base")
        self.fresh_openings = backend.commitments.open_rows(self.fresh_main, positions)
        self.group_openings = []
        for group, (_, carried), fresh, queries in zip(config.mask_groups(), self.ledger.groups, self.fresh_groups,
                                                       group_queries):
            self.group_openings.append((group.width, backend.commitments.open_rows(carried, queries),
                                        backend.commitments.open_rows(fresh, queries)))
        self.prune_keys = self.second_prune_keys()

    def _host_queries(self, session, drawn: "HostDraws") -> list:
        """``drawn``'s position sets as the one named input ("positions",) in a scratch slot, each set at an aligned
        start (``set_starts``): the final positions' ``DeviceQueries``, then each mask group's (their counts are the
        configuration's, constant words). The witness stays on the host: the second session does not read it."""
        regions = session.regions
        align = max(1, int(self.state.rt.offset_alignment) // 4)
        counts = [len(x) for x in drawn.sets]
        starts = set_starts(counts, align)
        slot = regions.scratch.take((starts[-1],))
        self.state.drivers.write(slot.buffer, drawn.inputs[("positions",)], slot.offset, source=("positions",))
        proof_counts = self.state.put(regions.proof, np.array(counts, np.uint32))  # one write for every set's
        queries = []
        for i, (start, count) in enumerate(zip(starts, counts)):
            indices = DeviceValue(slot.buffer, slot.offset + 4 * start, (count,))
            queries.append(DeviceQueries(indices, None, proof_counts[i:i + 1], None, count, on_host=True))
        return queries
