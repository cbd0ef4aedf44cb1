"""The GPU backend's commitments: the codeword (``kernels/ntt.py``) and Merkle tree (``kernels/merkle.py``) of a
table, the root's launch as a transcript tail, and the openings of queried rows gathered into the proof region."""

from __future__ import annotations

import numpy as np

from ...kernels import merkle, ntt, split
from ...runtime.base import RtView
from ..base import Commitment, DeviceBuffer
from ..device_transcript import TailLaunch
from ..device_values import DeviceOpenings, DeviceQueries, DeviceValue, resolve_value
from .device_memory import table_view
from .geometry import ALL_NODES, OPEN_SLOTS, OPEN_TABLE, level_jobs, log2, workgroups


class Commitments:
    """The GPU backend's ``commit`` and ``open_rows`` over its ``DeviceState``; ``phase(name)`` times a sub-phase
    (``Backend.phase``)."""

    def __init__(self, state, phase):  # state: the backend's DeviceState
        self.state = state
        self.phase = phase

    def _tree_options(self) -> dict:
        """How ``merkle.record_tree`` hashes the layout's leaves (nothing to say for the default layout)."""
        layout = self.state.layout
        if layout.leaf_width == 16 and layout.field.name == "babybear":
            return {}
        return {"field": layout.field.name, "leaf_width": layout.leaf_width}

    # -- commitment --------------------------------------------------------------------------------------------
    def commit(self, table: DeviceBuffer, log_folding: int, log_height: int) -> Commitment:
        state = self.state
        if state.session is None:
            with state.host_call(proof_words=8) as session:
                commitment = self.commit(table, log_folding, log_height)
            commitment.root = session.read(commitment.root)
            return commitment
        rt = state.drivers
        n_entries = table.shape[0]
        nv = log2(n_entries)
        if n_entries != 1 << nv or nv < log_folding or nv - log_folding > log_height:
            raise ValueError(f"cannot commit {n_entries} entries as 2^{log_folding} columns of height 2^{log_height}")
        width = (1 << log_folding) * (4 if table.is_ext else 1)
        height = 1 << log_height
        batch = state.batch()
        with self.phase("ntt"):
            # One buffer goes in as today (ntt windows it); a split table is already a SplitArray.
            source = table.handle.buffers[0] if len(table.handle.buffers) == 1 else table.handle
            codeword = ntt.encode_codeword(rt, batch, source, nv, table.is_ext, log_folding, log_height,
                                           row_major=state.layout.suffix, field=state.layout.field.name)
        with self.phase("merkle"):
            levels, last = merkle.record_tree(rt, batch, codeword, height, width, **self._tree_options())
            root = state.session.regions.proof.take((merkle.DIGEST,))
            if last is None:  # no merkle_top level (a lone root, or merkle_top off): the root is copied
                batch.copy(*levels[-1].locate(0), root.buffer, root.offset, root.nbytes)
            state.submit()
            if last is not None:
                state.session.transcript.defer(self._root_launch(last, root))
        return Commitment(root, height, width, table.is_ext, handle=(codeword, levels))

    def commit_matrix(self, matrix, log_height: int, columns: int) -> Commitment:
        """Commit, in the running proof, a host-written EF coefficient matrix: ``matrix`` (an ``RtBuffer``) holds
        2^log_height rows of P = next_pow2(``columns``) EF coefficients (4 P words), row g the coefficients of row
        rev(g) (bit-reversed, the column NTT's input order), columns past ``columns`` zero. Its codeword (the
        columns evaluated on the subgroup of order 2^log_height, in place) is committed as ``commit`` commits, its
        leaves the rows cut to ``columns`` EF entries (``compact_rows`` when P > ``columns``), the root observed
        by what is recorded next (a transcript tail): ``oracles.mask_matrix`` committed. The matrix must fit one
        binding and becomes the commitment's: ``open_rows`` gathers rows of P entries, the opened rows being their
        first ``columns``."""
        state = self.state
        rt, batch = state.drivers, state.batch()
        padded, width = 4 * (1 << (columns - 1).bit_length()), 4 * columns
        height = 1 << log_height
        if 4 * padded * height > state.window_limit:
            raise ValueError(f"commit_matrix: a {height} x {padded}-word matrix exceeds one binding")
        field = state.layout.field.name
        ntt.ntt_columns(rt, batch, matrix, log_height, padded, rows_reversed=True, field=field)
        leaves = self._leaves(batch, matrix, height, padded, width)
        levels, last = merkle.record_tree(rt, batch, leaves, height, width, **self._tree_options())
        root = state.session.regions.proof.take((merkle.DIGEST,))
        if last is None:
            batch.copy(*levels[-1].locate(0), root.buffer, root.offset, root.nbytes)
        state.submit()
        if last is not None:
            state.session.transcript.defer(self._root_launch(last, root))
        return Commitment(root, height, padded, True, handle=(split.wrap(rt, matrix, height, 4 * padded), levels))

    def _leaves(self, batch, matrix, rows: int, padded: int, width: int):
        """The rows of ``matrix`` (``rows`` of ``padded`` words) as leaves of ``width`` words: ``matrix`` itself
        where they are the same, else a pooled copy cut by ``compact_rows`` (back to the pool once the session is
        submitted)."""
        if padded == width:
            return matrix
        state = self.state
        leaves = state.pool.alloc(4 * width * rows)
        state.session.after_submit.append(leaves)
        batch.dispatch(state.drivers.kernel("compact_rows"), [matrix, leaves],
                       np.array([width * rows, padded, width, 0], np.uint32), workgroups(width * rows))
        return leaves

    def forest_fits(self, count: int, log_height: int, columns: int) -> bool:
        """Whether ``commit_matrices`` can commit ``count`` matrices of this shape at once on this runtime
        (``forest_fits_shapes``)."""
        return self.forest_fits_shapes([(count, log_height, columns)])

    def forest_fits_shapes(self, shapes) -> bool:
        """Whether ``commit_forest`` can commit matrices of ``shapes`` ((count, log_height, columns) each) at once on
        this runtime: two trees or more, every level of the shared tree in one buffer, each shape's matrices in one
        binding at aligned offsets, and each tree's leaves at an aligned offset of the shared leaf level."""
        binding_limit, buffer_limit, alignment = split.runtime_limits(self.state.drivers)
        if sum(count for count, _, _ in shapes) < 2:
            return False
        for count, log_height, columns in shapes:
            matrix_bytes = 16 * (1 << (columns - 1).bit_length()) << log_height
            if (matrix_bytes % alignment or count * matrix_bytes > self.state.window_limit
                    or (4 * merkle.DIGEST << log_height) % alignment):
                return False
        rows = forest_size(sum(count << log_height for count, log_height, _ in shapes))
        return merkle.packed_levels(rows, binding_limit, buffer_limit, alignment)[0] == 0

    def commit_matrices(self, matrix, count: int, log_height: int, columns: int) -> list[Commitment]:
        """``commit_forest`` of ``count`` matrices of one shape, back to back in ``matrix``: their commitments."""
        return self.commit_forest([(matrix, count, log_height, columns)])[0]

    def commit_forest(self, parts) -> list[list[Commitment]]:
        """Commit, in the running proof, every coefficient matrix of ``parts`` as ``commit_matrix`` commits it, in
        one set of launches (the hiding proof's mask oracles, fixed by the draws alone, are several small trees, and
        each launch costs its latency). A part (matrix, count, log_height, columns) is ``count`` matrices of one
        shape back to back in ``matrix`` (an ``RtBuffer``; matrix t at byte t 16 P 2^log_height, P =
        next_pow2(columns)). Each matrix gets its own column NTT and each part's leaves one launch; then one tree
        over all their rows, the taller trees first (so each tree starts at a multiple of its height): each
        matrix's tree is the subtree whose root is node first >> log_height of level log_height, first its first
        row. The rows past the last tree, up to a power of two, are never written and their nodes never read.
        The roots are copied into the proof region; each commitment's root is its digest there, its codeword and
        levels views of the shared ones (released with any of them; hold them all until the last is opened).
        Returns the commitments per part, in order. Nothing is observed: the caller observes each root where the
        protocol does. ``forest_fits_shapes`` must hold."""
        state = self.state
        shapes = [(count, log_height, columns) for _, count, log_height, columns in parts]
        if not self.forest_fits_shapes(shapes):
            raise ValueError(f"commit_forest: matrices of shapes {shapes} (count, log2 rows, EF columns) do not share "
                             f"one tree on this runtime")
        rt, batch = state.drivers, state.batch()
        field, options = state.layout.field.name, self._tree_options()
        firsts, at = {}, 0
        for p in sorted(range(len(parts)), key=lambda p: -parts[p][2]):
            firsts[p] = at
            at += parts[p][1] << parts[p][2]
        levels = merkle.alloc_tree(rt, forest_size(at))
        leaf_level, leaf_offset = levels[0].buffers[0], levels[0].offset
        for p, (matrix, count, log_height, columns) in enumerate(parts):
            padded, width = 4 * (1 << (columns - 1).bit_length()), 4 * columns
            rows, matrix_bytes = count << log_height, 4 * padded << log_height
            for t in range(count):
                ntt.ntt_columns(rt, batch, RtView(matrix, t * matrix_bytes, matrix_bytes), log_height, padded,
                                rows_reversed=True, field=field)
            leaves = self._leaves(batch, matrix, rows, padded, width)
            digests = RtView(leaf_level, leaf_offset + 4 * merkle.DIGEST * firsts[p], 4 * merkle.DIGEST * rows)
            merkle.hash_leaves(rt, batch, leaves, digests, rows, width, **options)
        last = merkle.record_levels(rt, batch, levels, options.get("field", "babybear"))
        if last is not None:
            last.record(rt, batch)
        roots = state.session.regions.proof.take((sum(shape[0] for shape in shapes), merkle.DIGEST))
        out, k = [], 0
        for p, (matrix, count, log_height, columns) in enumerate(parts):
            height, padded = 1 << log_height, 1 << (columns - 1).bit_length()
            matrix_bytes = 16 * padded * height
            out.append([])
            for t in range(count):
                first = firsts[p] + t * height
                batch.copy(*levels[log_height].locate(first >> log_height), roots.buffer,
                           roots.offset + 4 * merkle.DIGEST * k, 4 * merkle.DIGEST)
                codeword = split.SplitArray([matrix], height, 16 * padded, height, height, t * matrix_bytes)
                own = [split.SplitArray(level.buffers, height >> d, merkle.DIGEST * 4, height >> d, height >> d,
                                        level.offset + (first >> d) * merkle.DIGEST * 4)
                       for d, level in enumerate(levels[:log_height + 1])]
                out[-1].append(Commitment(roots[k], height, 4 * padded, True, handle=(codeword, own)))
                k += 1
        state.submit()
        return out

    def interleave_columns(self, table: DeviceBuffer, randomness, log_folding: int, rows: int,
                           source: tuple | None = None):
        """``Backend.interleave_columns`` on the device (``interleave_columns`` kernel, one launch per window of
        the new table, each binding the one window of ``table`` it reads); None when the randomness does not fit
        one binding (the caller then takes the host path). Called outside a proof, it runs in a session of its
        own; in a proof it is recorded into the running batch (the randomness is written at once; ``source``
        names it as the proof's input for a recording, ``Drivers.write``). In a proof ``randomness`` may be a
        ``DeviceValue`` (base words or EF entries, as the table's) in the session's scratch: bound where it lies,
        read by the launches recorded after whatever wrote it."""
        state = self.state
        on_device = isinstance(randomness, DeviceValue)
        if on_device and state.session is None:
            raise ValueError("interleave_columns: device randomness is read in a proof's session only")
        if not on_device:
            randomness = np.ascontiguousarray(randomness, dtype=np.uint32)
        n = table.shape[0]
        m, t = n >> log_folding, randomness.shape[0] >> log_folding
        if m << log_folding != n or t << log_folding != randomness.shape[0] or m + t > rows \
                or rows & (rows - 1) or randomness.shape[1:] != table.shape[1:]:
            raise ValueError(f"interleave_columns: {n} entries and {randomness.shape[0]} randomness entries of shape "
                             f"{randomness.shape[1:]} do not make 2^{log_folding} columns of {rows}")
        if randomness.nbytes > state.window_limit:
            return None
        if state.session is None:
            with state.host_call():
                out, scratch = self._interleave(table, randomness, log_folding, rows, m, t)
            state.pool.free(scratch)
            return out
        out, scratch = self._interleave(table, randomness, log_folding, rows, m, t, source)
        if scratch is not None:
            state.session.after_submit.append(scratch)  # the randomness rows back to the pool once submitted
        return out

    def _interleave(self, table: DeviceBuffer, randomness: np.ndarray, log_folding: int, rows: int, m: int, t: int,
                    input_source: tuple | None = None):
        state = self.state
        elem, log_elem = (16, 2) if table.is_ext else (4, 0)
        source = table.handle
        out = state.new_table(rows << log_folding, elem)
        scratch, rnd_base = None, 0
        if isinstance(randomness, DeviceValue):  # bound from an aligned offset at or before it
            lo = randomness.offset // state.alignment() * state.alignment()
            rnd_binding = RtView(randomness.buffer, lo, max(elem, -(-(randomness.offset + randomness.nbytes - lo)
                                                                     // 16) * 16))
            rnd_base = (randomness.offset - lo) // elem
        else:  # a randomness buffer of at least one entry (t = 0 reads none)
            scratch = rnd_binding = state.upload_words(
                randomness.reshape(-1) if t else np.zeros(1 << log_elem, np.uint32), source=input_source if t else None)
        kernel, batch = state.drivers.kernel("interleave_columns"), state.batch()
        n, n_out = source.rows, rows << log_folding
        window, window_in = state.window_len(n_out, elem), state.window_len(n, elem)
        for first in range(0, n_out, window):
            count = min(window, n_out - first)
            if count <= rows:  # inside column b: its message rows [r0, min(r0 + count, m))
                b, r0 = first // rows, first % rows
                lo, hi = b * m + min(r0, m), b * m + min(r0 + count, m)
            else:  # whole columns b0 .. b0 + count / rows - 1
                lo, hi = (first // rows) * m, (first // rows + count // rows) * m
            # [lo, hi) is an aligned power-of-two run (in one column, or whole columns) no longer than an output
            # window, and both tables have windows of min(size, the same power of two) entries: one window holds it
            if hi <= lo:  # randomness and zeros only: any window of the table (none of it is read)
                lo = hi = 0
            base = 0 if window_in == n else lo - lo % window_in
            if hi > base + window_in:
                raise AssertionError(f"interleave_columns: entries [{lo}, {hi}) cross a window of {window_in}")
            table_binding = table_view(source, base, min(window_in, n - base), window_in == n)
            params = np.array([count << log_elem, log_elem, first, log2(rows), m, t, base, rnd_base], np.uint32)
            batch.dispatch(kernel, [table_binding, rnd_binding, table_view(out, first, count, window == n_out)], params,
                           workgroups(count << log_elem))
        return DeviceBuffer(out, (rows << log_folding,) + table.shape[1:], out.mode), scratch

    def _root_launch(self, last: merkle.TopLaunch, root: DeviceValue) -> TailLaunch:
        """A tree's last merkle_top launch (one workgroup) as a transcript tail: it copies the root into ``root``
        (proof words) and runs the ops recorded next (the root observed, the first OOD point sampled and expanded),
        so a commitment needs no transcript launch. Recorded after the rest of the commitment is submitted."""
        dispatch = (last.buffers(self.state.tail_io(points=True)), list(last.head), last.groups)
        return TailLaunch(last.kernel, [dispatch], (root.word, root.word + merkle.DIGEST), merkle.ROOT_AT)

    def open_rows(self, commitment: Commitment, indices, capacity: int | None = None):
        """Rows and sibling paths of the queried indices, gathered on the device into the proof region. In a
        proof ``indices`` is a ``DeviceQueries`` and the result a ``DeviceOpenings``; called with host indices it
        returns (rows, siblings) as host arrays (``capacity`` is then ignored)."""
        state = self.state
        if state.session is None:
            idx = np.asarray(indices, dtype=np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= commitment.height):
                raise ValueError(f"open_rows: an index lies outside [0, {commitment.height})")
            depth = len(commitment.handle[1]) - 1
            pruned = state.layout.openings == "pruned"  # the indices are copied beside the rows then
            with state.host_call(proof_words=1 + idx.size * (commitment.width + depth * merkle.DIGEST + pruned),
                                 scratch_words=2 * idx.size + 1) as session:
                regions = session.regions
                queries = DeviceQueries(state.put(regions.scratch, idx.astype(np.uint32)), None,
                                        state.put(regions.proof, np.array([idx.size], np.uint32)), None, idx.size)
                openings = self.open_rows(commitment, queries)
            return resolve_value(session.words, openings)
        codeword, levels = commitment.handle
        width, depth, slots = commitment.width, len(levels) - 1, indices.slots
        rt = state.drivers
        out = state.session.regions.proof.take((slots * (width + depth * merkle.DIGEST),))
        row_words = slots * width
        rows = DeviceValue(out.buffer, out.offset, (slots, width // 4, 4) if commitment.is_ext else (slots, width))
        siblings = DeviceValue(out.buffer, out.offset + 4 * row_words, (slots, depth, merkle.DIGEST))
        openings = DeviceOpenings("extension" if commitment.is_ext else "base", rows, siblings, indices.proof_count)
        if slots == 0:
            return openings
        batch = state.batch()
        if state.layout.openings == "pruned" and indices.on_host:
            openings.indices = indices.indices  # the host has them: no copy (DeviceOpenings)
        elif state.layout.openings == "pruned":
            openings.indices = state.session.regions.proof.take((slots,))
            batch.copy(indices.indices.buffer, indices.indices.offset, openings.indices.buffer,
                       openings.indices.offset, 4 * slots)
        index_view = indices.indices.view()
        # Each launch writes the rows of one codeword window and the siblings of one part of ``level_jobs``: the
        # whole levels of a run (the packed ones bound once, their word offsets in the params' table), or one
        # window of a split level; one launch in all for a packed tree whose codeword fits a binding. Slots whose
        # row or sibling lies in another window are written by that window's launch.
        row_parts = list(codeword.windows())
        packed_from, packed = merkle.packed_run(levels)
        jobs = level_jobs([level.rows // level.window_rows for level in levels[:-1]], packed_from)
        kernel = rt.kernel("openings")
        for k in range(max(len(row_parts), len(jobs), 1)):
            window, first, count = row_parts[k] if k < len(row_parts) else (row_parts[0][0], 0, 0)
            level, n_levels, own, part = jobs[k] if k < len(jobs) else (0, 0, 0, -1)
            offsets = np.zeros(OPEN_TABLE, np.uint32)
            node_first, node_count = 0, ALL_NODES
            if part >= 0:
                binding, node_first, node_count = list(levels[level].windows())[part]
                bound = [binding]
            else:
                bound = [levels[d].binding(0, levels[d].rows)[0] for d in range(level, level + own)]
                if n_levels > own:
                    bound.append(packed)
                    offsets[own:n_levels] = [levels[d].offset // 4 for d in range(level + own, level + n_levels)]
            bound += [bound[0] if bound else window] * (OPEN_SLOTS - len(bound))
            head = [slots, log2(width), depth, row_words, first, count, level, n_levels, node_first, node_count,
                    own, 0]
            per = (width if count else 0) + merkle.DIGEST * n_levels
            batch.dispatch(kernel, [window, index_view, out.view()] + bound,
                           np.concatenate([np.array(head, np.uint32), offsets]), workgroups(slots * per))
        return openings


def forest_size(count: int) -> int:
    """The trees ``Commitments.commit_matrices`` builds for ``count`` matrices: the power of two at least it."""
    return 1 << max(0, count - 1).bit_length()
