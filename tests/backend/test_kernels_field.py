"""The WGSL field library against the numpy reference, bit for bit, on every runtime (wgpu-native with both
multiply variants, Dawn, msl-cpu)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import P
from whirgpu.ref import field_np as F

EDGES = np.array([0, 1, 2, P - 1, P - 2, (P - 1) // 2, 1 << 30, (1 << 30) + 1, 0xFFFF, 0x10000, 0x7800, 0x0FFFFFFE],
                 dtype=np.uint32)


def _inputs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, P, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, P, n, dtype=np.uint64).astype(np.uint32)
    grid_a, grid_b = np.meshgrid(EDGES, EDGES)  # every pair of edge values
    k = grid_a.size
    a[:k], b[:k] = grid_a.reshape(-1), grid_b.reshape(-1)
    return a, b


def _run(rt, op: int, a: np.ndarray, b: np.ndarray, n_elems: int) -> np.ndarray:
    bufs = [rt.alloc(a.nbytes), rt.alloc(b.nbytes), rt.alloc(a.nbytes)]
    rt.write(bufs[0], a)
    rt.write(bufs[1], b)
    batch = rt.batch()
    batch.dispatch(rt.kernel("field_selftest"), bufs, np.array([n_elems, op], np.uint32), -(-n_elems // 64))
    batch.submit()
    return rt.read(bufs[2])


@pytest.mark.parametrize("n", [1, 63, 64, 65, 5000])  # one thread, one workgroup, its edge, a 2-D grid
@pytest.mark.parametrize("op,reference", [(0, F.add), (1, F.sub), (2, F.mul)], ids=["add", "sub", "mul"])
def test_base_ops(gpu_runtime, n, op, reference):
    a, b = _inputs(max(n, EDGES.size ** 2), seed=n + op)
    a, b = a[:n], b[:n]
    assert np.array_equal(_run(gpu_runtime, op, a, b, n), reference(a, b))


def test_all_edge_pairs_multiply(gpu_runtime):
    a, b = _inputs(EDGES.size ** 2, seed=1)
    assert np.array_equal(_run(gpu_runtime, 2, a, b, a.size), F.mul(a, b))


@pytest.mark.parametrize("n", [1, 300, 1300])
@pytest.mark.parametrize("op,reference", [(3, F.ef_mul), (4, F.ef_add)], ids=["ef_mul", "ef_add"])
def test_extension_ops(gpu_runtime, n, op, reference):
    a, b = _inputs(4 * n if 4 * n >= EDGES.size ** 2 else EDGES.size ** 2, seed=7 * n + op)
    a, b = a[: 4 * n], b[: 4 * n]
    out = _run(gpu_runtime, op, a, b, n).reshape(-1, 4)
    assert np.array_equal(out, reference(a.reshape(-1, 4), b.reshape(-1, 4)))
