"""The GPU backend's part of stacked multi-table openings (the p3-whir profile's tables): the claims of a batch of
columns at one local point, from the stacked polynomial on the device, in four launches whatever the number of
columns (the point's eq table: ``factor_tables`` + ``weights``; then ``column_claims`` partial and finish); the
eq table is kept in the session for the batch's weights (``column_weights``: one launch), never built twice.
Next-row weights are ``Reductions.add_next_weights``."""

from __future__ import annotations

import numpy as np

from ...errors import DeviceLimitError
from ..base import DeviceBuffer, DeviceTables
from ..device_transcript import NOT_FOUND
from ..device_values import DeviceValue
from .device_memory import HostWords
from .geometry import EF_BYTES, MAX_REDUCE_GROUPS, workgroups


class TableClaims:
    """The GPU backend's stacked-table primitives (``stack_columns``, ``evaluate_columns``, ``column_weights``,
    ``adopt_root``) over its ``DeviceState``, its ``DeviceMemory`` and its ``Reductions`` (the eq tables)."""

    def __init__(self, state, memory, reductions):  # state: the backend's DeviceState
        self.state = state
        self.memory = memory
        self.reductions = reductions

    def evaluate_columns(self, table: DeviceBuffer, point, columns) -> DeviceValue | np.ndarray:
        """See ``Backend.evaluate_columns``: in a proof ``point`` a (m, 4) ``DeviceValue`` of the points region
        and the answer a (k, 4) ``DeviceValue`` of the proof region; outside one, host arrays."""
        columns = np.asarray(columns, np.int64).reshape(-1, 3)
        if self.state.session is None:
            point = np.asarray(point, np.uint32).reshape(-1, 4)
            with self.state.host_call(proof_words=4 * max(1, len(columns)), points_words=max(1, point.size)) as session:
                answer = self.evaluate_columns(table, self.state.put(session.regions.points, point), columns)
            return session.read(answer)
        m = point.shape[0]
        length, k = 1 << m, len(columns)
        answer = self.state.session.regions.proof.take((k, 4))
        if k == 0:
            return answer
        n_words = table.shape[0]
        if table.is_ext or len(table.handle.buffers) != 1 or 4 * n_words > self.state.window_limit or \
                length * EF_BYTES > self.state.window_limit:
            raise DeviceLimitError(f"column claims bind a base table of {4 * n_words} bytes and an eq table of "
                                   f"{length * EF_BYTES} bytes whole; max_storage_binding_size is "
                                   f"{self.state.window_limit}")
        last = columns[:, 0] + ((length - 1) << columns[:, 1])
        if columns.min() < 0 or int(last.max()) >= n_words or not set(columns[:, 2].tolist()) <= {0, 1}:
            raise ValueError(f"column descriptors (offset, log_stride, next) outside a table of {n_words} words")
        eq = self._eq_table(point)
        groups = min(workgroups(length), MAX_REDUCE_GROUPS, max(1, 65535 // k))
        partials = self.state.pool.alloc(k * groups * EF_BYTES)
        desc = np.zeros((k, 4), np.uint32)
        desc[:, :3] = columns
        params = np.array([k, groups, length, 0], np.uint32)
        batch = self.state.batch()
        batch.dispatch(self.state.drivers.kernel("column_claims", "column_claims_partial"),
                       [table.handle.buffers[0], eq.buffers[0], self.state.claim_descriptors(desc), partials], params,
                       k * groups)
        batch.dispatch(self.state.drivers.kernel("column_claims", "column_claims_finish"), [partials, answer.view()],
                       params, k)
        self.state.pool.free(partials)
        # kept for the batch's weights (``column_weights`` at the same point): its eq table is not built twice
        self.state.session.eq_tables[(id(point.buffer), point.offset, m)] = eq
        return answer

    def _eq_table(self, point: DeviceValue):
        """eq(., point) over 2^m entries for a (m, 4) point of the running session: the one ``evaluate_columns``
        kept for that point (taken out of the session's keep), or built now (two launches)."""
        m = point.shape[0]
        kept = self.state.session.eq_tables.pop((id(point.buffer), point.offset, m), None)
        if kept is not None:
            return kept
        eq = self.state.new_table(1 << m, EF_BYTES)
        self.reductions.accumulate(eq, m, False, DeviceValue(point.buffer, point.offset, (1, m, 4)), None, None, None)
        return eq

    def column_weights(self, num_variables: int, batches, coefficients) -> DeviceBuffer:
        """See ``Backend.column_weights``: the zero weights, then per batch its point's eq table (two launches) and
        one ``column_weights`` launch for all its claims. In a proof points are (m, 4) ``DeviceValue``s of the points
        region and ``coefficients`` one of scratch; outside one, host arrays."""
        if self.state.session is None:
            coefficients = np.asarray(coefficients, np.uint32).reshape(-1, 4)
            batches = [(np.asarray(p, np.uint32).reshape(-1, 4), c) for p, c in batches]
            words = sum(max(1, p.size) for p, _ in batches)
            with self.state.host_call(scratch_words=coefficients.size, points_words=max(1, words)) as session:
                regions = session.regions
                moved = [(self.state.put(regions.points, p), c) for p, c in batches]
                return self.column_weights(num_variables, moved, self.state.put(regions.scratch, coefficients))
        n = 1 << num_variables
        if n * EF_BYTES > self.state.window_limit:
            raise DeviceLimitError(f"column weights bind the {n * EF_BYTES}-byte weights whole; "
                                   f"max_storage_binding_size is {self.state.window_limit}")
        weights = self.state.new_table(n, EF_BYTES)
        self.reductions.accumulate(weights, num_variables, False, None, None, None, None)  # zero
        kernel = self.state.drivers.kernel("column_weights")
        for point, columns in batches:
            columns = np.asarray(columns, np.int64).reshape(-1, 4)
            m = point.shape[0]
            length = 1 << m
            if not len(columns):
                continue
            last = columns[:, 0] + ((length - 1) << columns[:, 1])
            if columns.min() < 0 or int(last.max()) >= n or int(columns[:, 3].max()) >= coefficients.shape[0]:
                raise ValueError(f"column descriptors outside weights of {n} entries or past "
                                 f"{coefficients.shape[0]} coefficients")
            eq = self._eq_table(point)
            desc = np.ascontiguousarray(columns, np.uint32)
            self.state.batch().dispatch(kernel, [weights.buffers[0], eq.buffers[0], self.state.claim_descriptors(desc),
                                            coefficients.view()],
                                   np.array([length, len(columns), 0, 0], np.uint32), workgroups(length))
            self.state.pool.free(*eq.buffers)
        return DeviceBuffer(weights, (n, 4), weights.mode)

    def stack_columns(self, num_variables: int, tables) -> DeviceBuffer:
        """See ``Backend.stack_columns``: each table's words uploaded as they are (a device table read in place),
        then one ``stack_columns`` launch per table (after one ``stack_zero``) range-checks, converts and places
        them on the device; the checks are read with the proof (``end_proof`` raises ``non_canonical``)."""
        if self.state.session is None:  # a range check's slot each, aligned as a binding window
            align = max(EF_BYTES, int(self.state.rt.offset_alignment))
            with self.state.host_call(proof_words=max(1, len(tables)) * align // 4) as session:
                stacked = self.stack_columns(num_variables, tables)
            self.memory.check_canonical(session)
            return stacked
        n = 1 << num_variables
        if 4 * n > self.state.window_limit:
            raise DeviceLimitError(f"stacking binds the {4 * n}-byte stacked polynomial whole; "
                                   f"max_storage_binding_size is {self.state.window_limit}")
        stacked = self.state.new_table(n, 4, host_facing=True)
        batch = self.state.batch()
        batch.dispatch(self.state.drivers.kernel("stack_columns", "stack_zero"), [stacked.buffers[0]],
                       np.array([n, 0, 0, 0, 0, 0, 0, 0], np.uint32), workgroups(n))
        # every table's range check (a slot each: a binding window), set to NOT_FOUND in one write over their span
        checks = [self.state.session.regions.proof.take((1,)) for _ in tables]
        if checks:
            span = (checks[-1].offset - checks[0].offset) // 4 + 1
            self.state.drivers.write(checks[0].buffer, np.full(span, NOT_FOUND, np.uint32), checks[0].offset)
        for t, (array, first_slot, m, prefix, col_major, *name) in enumerate(tables):
            on_device = isinstance(array, DeviceTables)
            if not on_device:
                array = np.ascontiguousarray(array, np.uint32)
            rows, cols = (array.shape[1], array.shape[0]) if col_major else array.shape
            if rows & (rows - 1) or rows > 1 << m or (first_slot + cols) << m > n:
                raise ValueError(f"a table of {rows} rows x {cols} columns from slot {first_slot} does not fit "
                                 f"2^{m}-row slots of a 2^{num_variables} stack")
            size = rows * cols
            if not size:
                continue
            if on_device:  # the caller's buffer, read in place, never written
                source, words = array.table.buffer, array.table
            else:  # a proof input ("stack:T", the T-th table given) for a recording
                flat = array.reshape(-1)
                source = self.state.upload_words(flat, source=(f"stack:{t}", 0, flat.shape[0]))
                self.state.session.after_submit.append(source)  # read by this batch: pooled once it is submitted
                words = HostWords(flat, name[0] if name else "columns", f"stack:{t}")
            check = checks[t]
            self.state.session.canonical.append((check, words))
            params = [size, cols, rows.bit_length() - 1, int(bool(col_major)), first_slot, m,
                      num_variables - m, int(bool(prefix))]
            batch.dispatch(self.state.drivers.kernel("stack_columns"), [source, stacked.buffers[0], check.view()],
                           np.array(params, np.uint32), workgroups(size))
        return DeviceBuffer(stacked, (n,), stacked.mode)

    def adopt_root(self, commitment, root):
        """In a proof, ``root`` is written into a slot of the proof region (a transcript observes proof values);
        outside one, the host array."""
        root = np.asarray(root, np.uint32).reshape(8)
        if self.state.session is None:
            commitment.root = root
            return commitment
        value = self.state.session.regions.proof.take((8,))
        self.state.drivers.write(value.buffer, root, value.offset, source=("root",))
        commitment.root = value
        return commitment
