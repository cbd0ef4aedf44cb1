"""The opening gathers on their own (gather_rows, openings) against numpy, word for word, on every runtime;
the fixture's lowered group limit puts the larger launches on the 2-D grid. Output words outside the written
range must keep their garbage (the kernels write at out_off and nowhere else). Split levels and codewords: one
launch per window of rows, each writing only the slots whose row lies in it. Packed levels (one buffer, each level
at its own aligned offset): bound once, read at the word offsets of the params' table."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.gpu import geometry
from whirgpu.kernels import split
from whirgpu.runtime.base import RtView

WG = 256  # both kernels' fixed workgroup size
GARBAGE = 0xDEADBEEF
DIGEST = 8
LEVEL_BINDINGS = 5  # the openings kernel's level slots (geometry.OPEN_SLOTS, which the test lowers)


def _upload(rt, array: np.ndarray):
    array = np.ascontiguousarray(array, np.uint32).reshape(-1)
    buffer = rt.alloc(max(array.nbytes, 4))
    rt.write(buffer, array)
    return buffer


def _windows(buffer, rows: int, row_bytes: int, log_window: int | None):
    """(binding, first row, rows) per window of 2^log_window rows (None: the whole buffer, once)."""
    if log_window is None:
        return [(buffer, 0, rows)]
    size = 1 << log_window
    return [(RtView(buffer, first * row_bytes, size * row_bytes), first, size) for first in range(0, rows, size)]


@pytest.mark.parametrize("log_h,log_w,n_rows,out_off,log_window", [
    (0, 0, 1, 0, None), (4, 2, 5, 3, None), (10, 4, 300, 17, None), (6, 6, 40, 0, None),
    (10, 4, 300, 17, 2), (6, 6, 40, 5, 0), (8, 3, 64, 0, 5)])
def test_gather_rows(gpu_runtime, log_h, log_w, n_rows, out_off, log_window):
    rt = gpu_runtime
    rng = np.random.default_rng(log_h * 31 + log_w + n_rows)
    matrix = rng.integers(0, 1 << 32, (1 << log_h, 1 << log_w), dtype=np.uint64).astype(np.uint32)
    indices = rng.integers(0, 1 << log_h, n_rows).astype(np.uint32)
    n_words = n_rows << log_w
    out = _upload(rt, np.full(out_off + n_words + 5, GARBAGE, np.uint32))
    batch = rt.batch()
    index_buffer = _upload(rt, indices)
    for window, first, count in _windows(_upload(rt, matrix), 1 << log_h, 4 << log_w, log_window):
        batch.dispatch(rt.kernel("gather_rows"), [window, index_buffer, out],
                       np.array([n_words, log_w, out_off, first, count], np.uint32), -(-n_words // WG))
    batch.submit()
    got = rt.read(out)
    np.testing.assert_array_equal(got[out_off:out_off + n_words].reshape(n_rows, -1), matrix[indices])
    assert (got[:out_off] == GARBAGE).all() and (got[out_off + n_words:] == GARBAGE).all()


@pytest.mark.parametrize("depth,n_slots,log_w,slots,packed_from,log_window", [
    (0, 3, 2, 5, None, None), (1, 1, 0, 5, None, None), (3, 7, 3, 5, None, None), (9, 300, 4, 5, None, None),
    (9, 300, 4, 2, None, None), (9, 300, 4, 5, 0, None), (9, 300, 4, 5, 3, None), (9, 40, 2, 2, 6, None),
    (12, 50, 3, 5, 4, None), (6, 40, 6, 5, None, 2), (4, 9, 3, 3, None, 0)])
def test_openings(gpu_runtime, monkeypatch, depth, n_slots, log_w, slots, packed_from, log_window):
    """Rows and paths in the launches of ``geometry.level_jobs`` with ``slots`` level bindings per launch: levels below
    ``packed_from`` in buffers of their own, the others packed in one buffer at aligned offsets, bound once with
    their word offsets (rows with the first launch); or, with ``log_window``, one launch per window of the
    codeword and of each level (node windows)."""
    monkeypatch.setattr(geometry, "OPEN_SLOTS", slots)
    rt = gpu_runtime
    rng = np.random.default_rng(depth * 1000 + n_slots + log_w)
    height = 1 << depth
    matrix = rng.integers(0, 1 << 32, (height, 1 << log_w), dtype=np.uint64).astype(np.uint32)
    levels = [rng.integers(0, 1 << 32, (height >> d, DIGEST), dtype=np.uint64).astype(np.uint32)
              for d in range(depth)]
    indices = rng.integers(0, height, n_slots).astype(np.uint32)
    row_words, path_words = n_slots << log_w, n_slots * depth * DIGEST
    out = _upload(rt, np.full(row_words + path_words + 3, GARBAGE, np.uint32))
    index_buffer = _upload(rt, indices)
    matrix_windows = _windows(_upload(rt, matrix), height, 4 << log_w, log_window)
    first_packed = depth if packed_from is None else packed_from
    bindings = [_upload(rt, level) for level in levels[:first_packed]]  # (binding, word offset) per level
    offsets = [0] * first_packed
    if first_packed < depth:
        at, end = split.pack([level.nbytes for level in levels[first_packed:]], max(4, rt.offset_alignment))
        packed = np.full(end // 4, GARBAGE, np.uint32)
        for level, byte in zip(levels[first_packed:], at):
            packed[byte // 4:byte // 4 + level.size] = level.reshape(-1)
        bindings.append(_upload(rt, packed))
        offsets += [byte // 4 for byte in at]
    jobs = []  # (bindings, first level, levels, own, node_first, node_count)
    if log_window is None:
        for level, n_levels, own, _ in geometry.level_jobs([1] * depth, packed_from):
            bound = bindings[level:level + own] + ([bindings[-1]] if n_levels > own else [])
            jobs.append((bound, level, n_levels, own, 0, geometry.ALL_NODES))
        assert len(jobs) <= max(1, -(-depth // slots)), "packed levels take one binding"
    else:
        for d in range(depth):
            for window, first, count in _windows(bindings[d], height >> d, 4 * DIGEST, min(log_window, depth - d)):
                jobs.append(([window], d, 1, 1, first, count))
    batch = rt.batch()
    for k in range(max(len(matrix_windows), len(jobs), 1)):
        window, first, count = matrix_windows[k] if k < len(matrix_windows) else (matrix_windows[0][0], 0, 0)
        bound, level, n_levels, own, node_first, node_count = jobs[k] if k < len(jobs) else ([], 0, 0, 0, 0, 0)
        table = np.zeros(geometry.OPEN_TABLE, np.uint32)
        table[:n_levels] = offsets[level:level + n_levels]
        bound = bound + [bound[0] if bound else window] * (LEVEL_BINDINGS - len(bound))
        per = ((1 << log_w) if count else 0) + DIGEST * n_levels
        params = np.array([n_slots, log_w, depth, row_words, first, count, level, n_levels, node_first, node_count,
                           own, 0], np.uint32)
        batch.dispatch(rt.kernel("openings"), [window, index_buffer, out] + bound, np.concatenate([params, table]),
                       max(1, -(-(n_slots * per) // WG)))
    batch.submit()
    got = rt.read(out)
    np.testing.assert_array_equal(got[:row_words].reshape(n_slots, -1), matrix[indices])
    want = np.stack([np.stack([levels[d][(int(i) >> d) ^ 1] for d in range(depth)]) if depth else
                     np.zeros((0, DIGEST), np.uint32) for i in indices])
    np.testing.assert_array_equal(got[row_words:row_words + path_words].reshape(n_slots, depth, DIGEST), want)
    assert (got[row_words + path_words:] == GARBAGE).all()
