"""The opening gathers on their own (gather_rows, merkle_paths) against numpy, word for word, on every runtime;
the fixture's lowered group limit puts the larger launches on the 2-D grid. Output words outside the written
range must keep their garbage (the kernels write at out_off and nowhere else)."""

from __future__ import annotations

import numpy as np
import pytest

WG = 256  # both kernels' fixed workgroup size
GARBAGE = 0xDEADBEEF
DIGEST = 8


def _upload(rt, array: np.ndarray):
    array = np.ascontiguousarray(array, np.uint32).reshape(-1)
    buffer = rt.alloc(max(array.nbytes, 4))
    rt.write(buffer, array)
    return buffer


@pytest.mark.parametrize("log_h,log_w,n_rows,out_off", [(0, 0, 1, 0), (4, 2, 5, 3), (10, 4, 300, 17),
                                                        (6, 6, 40, 0)])
def test_gather_rows(gpu_runtime, log_h, log_w, n_rows, out_off):
    rt = gpu_runtime
    rng = np.random.default_rng(log_h * 31 + log_w + n_rows)
    matrix = rng.integers(0, 1 << 32, (1 << log_h, 1 << log_w), dtype=np.uint64).astype(np.uint32)
    indices = rng.integers(0, 1 << log_h, n_rows).astype(np.uint32)
    n_words = n_rows << log_w
    out = _upload(rt, np.full(out_off + n_words + 5, GARBAGE, np.uint32))
    batch = rt.batch()
    batch.dispatch(rt.kernel("gather_rows"), [_upload(rt, matrix), _upload(rt, indices), out],
                   np.array([n_words, log_w, out_off, 0], np.uint32), -(-n_words // WG))
    batch.submit()
    got = rt.read(out)
    np.testing.assert_array_equal(got[out_off:out_off + n_words].reshape(n_rows, -1), matrix[indices])
    assert (got[:out_off] == GARBAGE).all() and (got[out_off + n_words:] == GARBAGE).all()


@pytest.mark.parametrize("depth,n_queries,out_off", [(1, 1, 0), (3, 7, 11), (9, 300, 40)])
def test_merkle_paths(gpu_runtime, depth, n_queries, out_off):
    rt = gpu_runtime
    rng = np.random.default_rng(depth * 1000 + n_queries)
    levels = [rng.integers(0, 1 << 32, ((1 << (depth - level)), DIGEST), dtype=np.uint64).astype(np.uint32)
              for level in range(depth)]
    indices = rng.integers(0, 1 << depth, n_queries).astype(np.uint32)
    path_words = n_queries * depth * DIGEST
    out = _upload(rt, np.full(out_off + path_words + 3, GARBAGE, np.uint32))
    index_buffer = _upload(rt, indices)
    batch = rt.batch()
    for level in range(depth):
        batch.dispatch(rt.kernel("merkle_paths"), [_upload(rt, levels[level]), index_buffer, out],
                       np.array([n_queries, level, depth, out_off], np.uint32), -(-(n_queries * DIGEST) // WG))
    batch.submit()
    got = rt.read(out)
    want = np.stack([np.stack([levels[level][(int(i) >> level) ^ 1] for level in range(depth)]) for i in indices])
    np.testing.assert_array_equal(got[out_off:out_off + path_words].reshape(n_queries, depth, DIGEST), want)
    assert (got[:out_off] == GARBAGE).all() and (got[out_off + path_words:] == GARBAGE).all()
