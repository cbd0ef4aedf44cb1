"""The GPU backend's multilinear algebra: evaluations, sumcheck rounds (one launch per phase for small tables),
folds (fused with the next round's sums), and eq / select weights built from factor tables on the device."""

from __future__ import annotations

import numpy as np

from ...kernels.split import SplitArray
from ...ref.field_np import field_ops
from ...runtime.base import RtView
from ..base import DeviceBuffer
from ..device_transcript import MAX_OPS, OP_OBSERVE, OP_SAMPLE, TailLaunch
from ..device_values import DeviceValue
from .device_memory import table_view
from .geometry import (EF_BYTES, MAX_REDUCE_GROUPS, SUMCHECK_TAIL_MAX, WG, factor_layout, factor_parts, factor_sizes,
                       log2, workgroups)


class Reductions:
    """The GPU backend's ``evaluate``, sumcheck rounds, folds and weights over its ``DeviceState``; ``memory``: its
    ``DeviceMemory`` (tables a round consumes go back through it)."""

    def __init__(self, state, memory):  # state: the backend's DeviceState
        self.state = state
        self.memory = memory

    def _order_constants(self) -> dict[str, int] | None:
        """The specialisation of the sumcheck and fold kernels for the layout's variable order and round message
        (variable_order.wgsl): suffix order; prefix order with [h(0), c_inf] messages (p3-whir's PrefixProver,
        C_INF: the second sum's factors are hi - lo instead of 2 hi - lo); or the default, prefix with h(2)."""
        if self.state.layout.suffix:
            return {"SUFFIX": 1}
        return {"C_INF": 1} if self.state.layout.round_message == "c_inf" else None

    def _pair_window(self, n: int) -> int:
        """Pairs per window of a round over a table of ``n`` entries: prefix pairs (i, i + n/2) bind two windows
        of this many entries, suffix pairs (2i, 2i + 1) one window of twice as many."""
        if self.state.layout.suffix:
            return max(1, self.state.window_len(n, EF_BYTES) // 2)
        return self.state.window_len(n // 2, EF_BYTES)

    def _pairs(self, table: SplitArray, half: int, window: int):
        """(lo binding, hi binding, lo_off, hi_off, start, len) per window over the halves of ``table``. The
        choice between one whole binding and windows is made for EF entries, so a base table and its EF weights
        always get the same offsets (a table bound whole is one buffer: its EF twin fits one). Under a suffix
        layout pair i is entries (2i, 2i + 1): one binding holds both halves of a window (offsets 0 and 1)."""
        if self.state.layout.suffix:
            if window == half and 2 * half * EF_BYTES <= self.state.window_limit:
                yield table.buffers[0], table.buffers[0], 0, 1, 0, half
                return
            for start in range(0, half, window):
                length = min(window, half - start)
                view = table_view(table, 2 * start, 2 * length, False)
                yield view, view, 0, 1, start, length
            return
        if window == half and 2 * half * EF_BYTES <= self.state.window_limit:
            buffer = table.buffers[0]
            yield buffer, buffer, 0, half, 0, half
            return
        for start in range(0, half, window):
            length = min(window, half - start)
            yield (table_view(table, start, length, False), table_view(table, half + start, length, False),
                   0, 0, start, length)

    # -- reductions --------------------------------------------------------------------------------------------
    def evaluate(self, table: DeviceBuffer, point, powers: bool = False):
        """The table's multilinear extension at ``point`` (nv, 4): in a proof a ``DeviceValue`` of the points
        region, giving an EF ``DeviceValue`` in the proof region; called with a host point, a host (4,) array.
        ``powers``: the kernel's powers mode (MLE_POWERS, mle_eval.wgsl), sum_b T[b] prod_s (bit ? z_s : 1), which
        at the expansion of y (z_s = y^(2^(nv-1-s))) is sum_b T[b] y^b."""
        if self.state.session is None:
            point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
            with self.state.host_call(proof_words=4, points_words=point.size) as session:
                answer = self.evaluate(table, self.state.put(session.regions.points, point), powers)
            return session.read(answer)
        n = table.shape[0]
        nv = point.shape[0]
        if n != 1 << nv:
            raise ValueError(f"table of {n} entries does not match a point of {nv} coordinates")
        rt = self.state.drivers
        elem = EF_BYTES if table.is_ext else 4
        window = self.state.window_len(n, elem)
        groups = min(workgroups(window), MAX_REDUCE_GROUPS)
        log_s = min(log2(groups * WG), log2(window))  # the low bits a thread keeps (mle_eval.wgsl)
        n_windows = -(-n // window)
        total = n_windows * groups
        work = self.state.workspace(total)
        answer = self.state.session.regions.proof.take((4,))
        kernel = rt.kernel("mle_eval", "mle_eval_ext" if table.is_ext else "mle_eval_base",
                           constants={"MLE_POWERS": 1} if powers else None)
        io = [work] + self.state.tail_io(points=True)
        dispatches = []
        for w, start in enumerate(range(0, n, window)):
            length = min(window, n - start)
            view = table_view(table.handle, start, length, n_windows == 1)
            dispatches.append(([view] + io, [length, start, log_s, w * groups, groups, total, 0,
                                             point.offset // EF_BYTES, nv, 0, 0, 0], groups))
        self.state.session.transcript.defer(TailLaunch(kernel, dispatches, (answer.word, answer.word + 4), 6))
        return answer

    def univariate(self, table: DeviceBuffer, z) -> np.ndarray:
        """sum_b table[b] z^b (b the table's index) for a host EF point z (4,) -> host (4,): the kernel's powers
        mode at z's expansion (z^(2^(m-1)), ..., z^2, z), squared on the host, in one host-valued session."""
        ops = field_ops(self.state.layout.field)
        m = log2(table.shape[0])
        squares = [np.asarray(z, np.uint32).reshape(4)]
        for _ in range(m - 1):
            squares.append(ops.ef_square(squares[-1]))
        point = np.array(squares[::-1][:m], np.uint32).reshape(m, 4)  # y_0 = z^(2^(m-1)) ... y_{m-1} = z
        return np.asarray(self.evaluate(table, point, powers=True), np.uint32).reshape(4)

    def evaluate_points(self, table: DeviceBuffer, points) -> np.ndarray:
        """Host points (E, nv, 4) -> host (E, 4): every evaluation in one host-valued session."""
        points = np.asarray(points, dtype=np.uint32)
        count, nv = len(points), log2(table.shape[0])
        if count == 0:
            return np.zeros((0, 4), np.uint32)
        points = points.reshape(count, nv, 4)
        with self.state.host_call(proof_words=4 * count, points_words=points.size) as session:
            answers = [self.evaluate(table, self.state.put(session.regions.points, p)) for p in points]
        return np.array([np.asarray(session.read(a), np.uint32).reshape(4) for a in answers], np.uint32)

    def sumcheck_round(self, table: DeviceBuffer, weights: DeviceBuffer):
        """[h(0), h(2)]: in a proof a (2, 4) ``DeviceValue`` of the proof region, else a (2, 4) host array. In a
        proof, the sums of a table the last fold summed as it folded (``fold_and_sum``) are returned as they are."""
        if self.state.session is None:
            with self.state.host_call(proof_words=8) as session:
                h = self.sumcheck_round(table, weights)
            return session.read(h)
        pending, self.state.session.pending_sums = self.state.session.pending_sums, None
        if pending is not None and pending[0] is table and pending[1] is weights:
            return pending[2]
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"sumcheck_round: table of {n} entries with weights of shape {weights.shape}")
        rt = self.state.drivers
        half = n // 2
        window = self._pair_window(n)
        groups = min(workgroups(window), MAX_REDUCE_GROUPS)
        n_windows = -(-half // window)
        total = n_windows * groups
        work = self.state.workspace(total)
        h = self.state.session.regions.proof.take((2, 4))
        kernel = rt.kernel("sumcheck", "sumcheck_ext" if table.is_ext else "sumcheck_base",
                           constants=self._order_constants())
        io = [work] + self.state.tail_io()
        pairs = zip(self._pairs(table.handle, half, window), self._pairs(weights.handle, half, window))
        dispatches = []
        for w, (t, wt) in enumerate(pairs):
            t_lo, t_hi, lo_off, hi_off, _, length = t
            dispatches.append(([t_lo, t_hi, wt[0], wt[1]] + io, [length, lo_off, hi_off, w * groups, groups, total, 0, 0],
                               groups))
        self.state.session.transcript.defer(TailLaunch(kernel, dispatches, (h.word, h.word + 8), 6, points=False))
        return h

    def sumcheck_rounds(self, table: DeviceBuffer, weights: DeviceBuffer, transcript, rounds: int):
        """In a proof, a phase's rounds without proof of work on an EF table of at most ``SUMCHECK_TAIL_MAX``
        entries run in one ``sumcheck_tail`` launch (sums, observation, challenge and fold of every round, by one
        workgroup); else None (the prover's loop)."""
        session = self.state.session
        n = table.shape[0]
        if (session is None or not table.is_ext or n > SUMCHECK_TAIL_MAX or not 1 <= rounds <= log2(n)
                or 2 * rounds > MAX_OPS or weights.shape != (n, 4) or n * EF_BYTES > self.state.window_limit
                or session.pending_sums is not None):
            return None
        del session.fold_fuses[:rounds]  # the folds this launch makes
        half, left = n // 2, n >> rounds
        outs = [self.state.new_table(half, EF_BYTES) for _ in range(2)]
        h = session.regions.proof.take((rounds, 2, 4))
        challenges = session.regions.scratch.take((rounds, 4))
        # each round's program: observe its sums, sample its challenge (what the prover's loop records)
        ops = sum((((OP_OBSERVE, h.word + 8 * r, 8, 0), (OP_SAMPLE, challenges.word + 4 * r, 4, 0))
                   for r in range(rounds)), ())
        buffers = [table.handle.buffers[0], weights.handle.buffers[0], outs[0].buffers[0], outs[1].buffers[0]]
        scratch, proof_window, rc = self.state.tail_io()
        launch = TailLaunch(self.state.drivers.kernel("sumcheck_tail", constants=self._order_constants()),
                            [(buffers + [scratch, proof_window, rc], [n, rounds, 0, challenges.word], 1)],
                            (h.word, h.word + 8 * rounds), 2, points=False, ops=ops)
        session.transcript.defer(launch)
        self.memory.release(table, weights)
        evaluations = [DeviceValue(h.buffer, h.offset + 32 * r, (2, 4)) for r in range(rounds)]
        folded = [DeviceBuffer(SplitArray(out.buffers, left, EF_BYTES, left, left), (left, 4), out.mode)
                  for out in outs]
        return evaluations, folded[0], folded[1]

    # -- fold ----------------------------------------------------------------------------------------------------
    def fold(self, table: DeviceBuffer, weights: DeviceBuffer, r) -> tuple[DeviceBuffer, DeviceBuffer]:
        """Bind x_0 := r; ``r`` a scratch ``DeviceValue`` in a proof (where the transcript drew it), else host.
        In a proof, when a sumcheck round of the folded table comes next (the proof's ``sumcheck_phases``), the
        fold also sums that round (``fold_and_sum``) and the next ``sumcheck_round`` returns those sums."""
        if self.state.session is None:
            with self.state.host_call(scratch_words=4) as session:
                out = self.fold(table, weights, self.state.put(session.regions.scratch, np.asarray(r).reshape(4)))
            return out
        fuses = self.state.session.fold_fuses
        if fuses and fuses.pop(0) and self._fusable(table, weights):
            new_table, new_weights, h = self._fold_and_sum(table, weights, r)
            self.state.session.pending_sums = (new_table, new_weights, h)
            return new_table, new_weights
        return self._fold(table, weights, r)

    def fold_and_sum(self, table: DeviceBuffer, weights: DeviceBuffer, r):
        """``fold(table, weights, r)`` and the ``sumcheck_round`` of the folded tables: (table', weights', [h(0),
        h(2)]), the sums a (2, 4) ``DeviceValue`` of the proof region in a proof (``r`` a scratch value), else a
        (2, 4) host array. One launch when the tables fit one binding and the folded table has 2 entries or more;
        else the two primitives' launches."""
        if self.state.session is None:
            with self.state.host_call(proof_words=8, scratch_words=4) as session:
                out = self.fold_and_sum(table, weights, self.state.put(session.regions.scratch, np.asarray(r).reshape(4)))
            return out[0], out[1], session.read(out[2])
        if self._fusable(table, weights):
            return self._fold_and_sum(table, weights, r)
        new_table, new_weights = self._fold(table, weights, r)
        return new_table, new_weights, self.sumcheck_round(new_table, new_weights)

    def _fusable(self, table: DeviceBuffer, weights: DeviceBuffer) -> bool:
        """The fused kernel binds the input tables whole and needs a next round (4 entries or more)."""
        n = table.shape[0]
        return n >= 4 and weights.shape == (n, 4) and n * EF_BYTES <= self.state.window_limit

    def _fold_and_sum(self, table: DeviceBuffer, weights: DeviceBuffer, r: DeviceValue):
        """Record the fused launch (``sumcheck_fold``); the tables must be ``_fusable``."""
        half = table.shape[0] // 2
        quarter = half // 2
        new_table = self.state.new_table(half, EF_BYTES)
        new_weights = self.state.new_table(half, EF_BYTES)
        groups = min(workgroups(quarter), MAX_REDUCE_GROUPS)
        work = self.state.workspace(groups)
        h = self.state.session.regions.proof.take((2, 4))
        kernel = self.state.drivers.kernel("sumcheck_fold", "sumcheck_fold_ext" if table.is_ext else "sumcheck_fold_base",
                                      constants=self._order_constants())
        buffers = [table.handle.buffers[0], weights.handle.buffers[0], new_table.buffers[0], new_weights.buffers[0],
                   work] + self.state.tail_io()
        head = [quarter, half, groups, groups, r.word, 0, 0, 0]
        self.state.session.transcript.defer(TailLaunch(kernel, [(buffers, head, groups)], (h.word, h.word + 8), 5,
                                                  points=False))
        return (DeviceBuffer(new_table, (half, 4), new_table.mode), DeviceBuffer(new_weights, (half, 4),
                                                                                 new_weights.mode), h)

    def _fold(self, table: DeviceBuffer, weights: DeviceBuffer, r: DeviceValue) -> tuple[DeviceBuffer, DeviceBuffer]:
        """Record the plain fold, one launch per window."""
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"fold: table of {n} entries with weights of shape {weights.shape}")
        rt = self.state.drivers
        half = n // 2
        window = self._pair_window(n)
        new_table = self.state.new_table(half, EF_BYTES)
        new_weights = self.state.new_table(half, EF_BYTES)
        kernel = rt.kernel("fold", "fold_ext" if table.is_ext else "fold_base", constants=self._order_constants())
        whole_out = window == half
        batch = self.state.batch()
        challenge = r.view()
        pairs = zip(self._pairs(table.handle, half, window), self._pairs(weights.handle, half, window))
        for t, wt in pairs:
            t_lo, t_hi, lo_off, hi_off, start, length = t
            out_t = table_view(new_table, start, length, whole_out)
            out_w = table_view(new_weights, start, length, whole_out)
            batch.dispatch(kernel, [t_lo, t_hi, wt[0], wt[1], out_t, out_w, challenge],
                           np.array([length, lo_off, hi_off, 0], np.uint32), workgroups(length))
        return (DeviceBuffer(new_table, (half, 4), new_table.mode),
                DeviceBuffer(new_weights, (half, 4), new_weights.mode))

    # -- weights -------------------------------------------------------------------------------------------------
    def _record_factors(self, batch, nv: int, log_lo: int, eq_points: DeviceValue | None,
                        eq_coefficients: DeviceValue | None, select_vars: DeviceValue | None = None,
                        select_coefficients: DeviceValue | None = None):
        """Record every factor table of a weights call in one launch (``factor_tables``) into one new buffer:
        eq lo (n_eq, 2^log_lo) unscaled and hi (n_eq, 2^(nv - log_lo)) scaled by ``eq_coefficients`` (or not), of
        the points (n_eq, nv, 4) of the points region; select lo[m][j] = v_m^j (base) and hi[m][j] =
        c_m v_m^(j 2^log_lo) (EF). Returns (buffer, [eq_lo, eq_hi, sel_lo, sel_hi] bindings; the placeholder for
        an empty table)."""
        n_eq = eq_points.shape[0] if eq_points is not None else 0
        n_sel = select_vars.shape[0] if select_vars is not None else 0
        offsets, total = factor_layout(n_eq, n_sel, nv, log_lo, self.state.alignment())
        sizes = factor_sizes(n_eq, n_sel, nv, log_lo)
        out = self.state.pool.alloc(total)
        off = lambda value, elem: value.offset // elem if value is not None else 0  # noqa: E731
        buffer = lambda value: value.buffer if value is not None else self.state.dummy  # noqa: E731
        inputs = [buffer(eq_points), buffer(eq_coefficients), buffer(select_vars), buffer(select_coefficients)]
        head = [n_eq, n_sel, nv, log_lo, int(eq_coefficients is not None), off(eq_points, EF_BYTES),
                off(eq_coefficients, EF_BYTES), off(select_vars, 4), off(select_coefficients, EF_BYTES)]
        kernel = self.state.drivers.kernel("factor_tables")
        for binding, ats, first, end in factor_parts(n_eq, n_sel, nv, log_lo, self.state.alignment(), self.state.window_limit):
            params = np.array(head + [at // 4 for at in ats] + [first, end], np.uint32)
            target = out if binding is None else RtView(out, *binding)
            batch.dispatch(kernel, inputs + [target], params, workgroups(end - first))
        views = [RtView(out, at, size) if size else self.state.dummy for at, size in zip(offsets, sizes)]
        return out, views

    def accumulate(self, weights: SplitArray, nv: int, accumulate: bool, eq_points, eq_coefficients, select_vars,
                    select_coefficients) -> None:
        rt = self.state.drivers
        n_eq = eq_points.shape[0] if eq_points is not None else 0
        n_sel = select_vars.shape[0] if select_vars is not None else 0
        log_lo = (nv + 1) // 2
        hi_len = 1 << (nv - log_lo)
        batch = self.state.batch()
        tables, factors = self._record_factors(batch, nv, log_lo, eq_points if n_eq else None,
                                               eq_coefficients if n_eq else None, select_vars if n_sel else None,
                                               select_coefficients if n_sel else None)
        n = 1 << nv
        window = self.state.window_len(n, EF_BYTES)
        for start in range(0, n, window):
            length = min(window, n - start)
            view = table_view(weights, start, length, window == n)
            params = np.array([length, start, log_lo, int(accumulate), n_eq, n_sel, hi_len, 0], np.uint32)
            batch.dispatch(rt.kernel("weights"), [view] + factors, params, workgroups(length))
        self.state.pool.free(tables)

    def eq_weights(self, points, coefficients) -> DeviceBuffer:
        """W[b] = Σ_i coefficients[i] eq(b, points[i]); device values in a proof (points of the points region,
        coefficients of scratch), host arrays outside one."""
        if self.state.session is None:
            points = np.asarray(points, np.uint32)
            coefficients = np.asarray(coefficients, np.uint32).reshape(-1, 4)
            with self.state.host_call(scratch_words=coefficients.size, points_words=points.size) as session:
                regions = session.regions
                weights = self.eq_weights(self.state.put(regions.points, points), self.state.put(regions.scratch, coefficients))
            return weights
        nv = points.shape[1]
        weights = self.state.new_table(1 << nv, EF_BYTES)
        self.accumulate(weights, nv, False, points, coefficients, None, None)
        return DeviceBuffer(weights, (1 << nv, 4), weights.mode)

    def add_constraint_weights(self, weights, eq_points, eq_coefficients, select_vars, select_coefficients,
                               select_capacity=None):
        """In place; device values in a proof (``select_vars`` the query slots' domain points, their
        coefficients 0 past the drawn count), host arrays outside one (``select_capacity`` then ignored)."""
        if self.state.session is None:
            eq_coefficients = np.asarray(eq_coefficients, np.uint32).reshape(-1, 4)
            eq_points = np.asarray(eq_points, np.uint32).reshape(len(eq_coefficients), log2(weights.shape[0]), 4)
            select_vars = np.asarray(select_vars, np.uint32).reshape(-1)
            select_coefficients = np.asarray(select_coefficients, np.uint32).reshape(-1, 4)
            if len(select_vars) != len(select_coefficients):
                raise ValueError("each select constraint needs exactly one coefficient")
            words = eq_coefficients.size + select_vars.size + select_coefficients.size
            with self.state.host_call(scratch_words=words, points_words=eq_points.size) as session:
                regions = session.regions
                self.add_constraint_weights(weights, self.state.put(regions.points, eq_points),
                                            self.state.put(regions.scratch, eq_coefficients),
                                            self.state.put(regions.scratch, select_vars),
                                            self.state.put(regions.scratch, select_coefficients))
            return weights
        nv = log2(weights.shape[0])
        self.accumulate(weights.handle, nv, True, eq_points, eq_coefficients, select_vars, select_coefficients)
        return weights

    def add_next_weights(self, weights, points, windows, coefficients):
        """In place. Next-row weights as the eq sum S of a run of claims sharing one window, shifted by one local
        row (``next_weights``): three launches (factors, S, shift) per run of consecutive claims with equal
        windows, whatever their number. Device values in a proof (points of the points region, coefficients of
        scratch, ``windows`` host ints), host arrays outside one."""
        windows = np.asarray(windows, np.int64).reshape(-1, 2)
        if self.state.session is None:
            coefficients = np.asarray(coefficients, np.uint32).reshape(-1, 4)
            points = np.asarray(points, np.uint32).reshape(len(coefficients), log2(weights.shape[0]), 4)
            with self.state.host_call(scratch_words=coefficients.size, points_words=points.size) as session:
                regions = session.regions
                self.add_next_weights(weights, self.state.put(regions.points, points), windows,
                                      self.state.put(regions.scratch, coefficients))
            return weights
        nv = log2(weights.shape[0])
        if len(windows) != points.shape[0] or len(windows) != coefficients.shape[0]:
            raise ValueError(f"add_next_weights: {points.shape[0]} points, {len(windows)} windows and "
                             f"{coefficients.shape[0]} coefficients")
        at = 0
        while at < len(windows):
            end = at + 1
            while end < len(windows) and tuple(windows[end]) == tuple(windows[at]):
                end += 1
            start, m = (int(v) for v in windows[at])
            if not (0 <= start and 0 <= m and start + m <= nv):
                raise ValueError(f"window ({start}, {m}) does not fit a point of {nv} coordinates")
            self._shift_eq_sum(weights.handle, nv, points[at:end], coefficients[at:end], nv - start - m, m)
            at = end
        return weights

    def _shift_eq_sum(self, weights: SplitArray, nv: int, points, coefficients, log_low: int, m: int) -> None:
        """W += next-row shift of S = Σ coefficients[j] eq(., points[j]) over the window of m variables above the
        low ``log_low`` bits (``next_weights``)."""
        n = 1 << nv
        eq_sum = self.state.new_table(n, EF_BYTES)
        self.accumulate(eq_sum, nv, False, points, coefficients, None, None)
        window = self.state.window_len(n, EF_BYTES)
        step = 1 << log_low
        back = max(step, window)  # prev window starts this far below the current one
        kernel = self.state.drivers.kernel("next_weights")
        batch = self.state.batch()
        for start in range(0, n, window):
            length = min(window, n - start)
            whole = window == n
            out = table_view(weights, start, length, whole)
            cur = table_view(eq_sum, start, length, whole)
            # below back no thread reads prev (its local row is 0 there): bind cur in its place
            prev = table_view(eq_sum, start - back, length, False) if start >= back else cur
            params = np.array([length, start, log_low, (1 << m) - 1, back - step, window, 0, 0], np.uint32)
            batch.dispatch(kernel, [out, prev, cur], params, workgroups(length))
        self.state.pool.free(*eq_sum.buffers)
