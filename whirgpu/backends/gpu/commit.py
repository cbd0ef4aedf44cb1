"""The GPU backend's commitments: the codeword (``kernels/ntt.py``) and Merkle tree (``kernels/merkle.py``) of a
table, the root's launch as a transcript tail, and the openings of queried rows gathered into the proof region."""

from __future__ import annotations

import numpy as np

from ...kernels import merkle, ntt
from ..base import Commitment, DeviceBuffer
from ..device_transcript import TailLaunch
from ..device_values import DeviceOpenings, DeviceQueries, DeviceValue, resolve_value
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
        if state.layout.openings == "pruned":
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
