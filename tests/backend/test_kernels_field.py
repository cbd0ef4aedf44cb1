"""The field library (bb_field, the multiply variants, bb_ext4) against the numpy reference, bit for bit, for
both fields (BabyBear and KoalaBear: the kernel composed with the field's constants) on every runtime
(wgpu-native with both multiply variants, Dawn, msl-cpu)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR, Field
from whirgpu.ref.field_np import field_ops

FIELDS = [BABYBEAR, KOALABEAR]


def _edges(f: Field) -> np.ndarray:
    p = f.P
    return np.array([0, 1, 2, p - 1, p - 2, (p - 1) // 2, 1 << 30, (1 << 30) + 1, 0xFFFF, 0x10000, p >> 16, f.R,
                     f.R2, p - (1 << f.TWO_ADICITY)], dtype=np.uint32)


def _inputs(f: Field, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    edges = _edges(f)
    rng = np.random.default_rng(seed)
    n = max(n, edges.size ** 2)
    a = rng.integers(0, f.P, n, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, f.P, n, dtype=np.uint64).astype(np.uint32)
    grid_a, grid_b = np.meshgrid(edges, edges)  # every pair of edge values
    k = grid_a.size
    a[:k], b[:k] = grid_a.reshape(-1), grid_b.reshape(-1)
    return a, b


def _run(rt, f: Field, op: int, a: np.ndarray, b: np.ndarray, n_elems: int) -> np.ndarray:
    bufs = [rt.alloc(a.nbytes), rt.alloc(b.nbytes), rt.alloc(a.nbytes)]
    rt.write(bufs[0], a)
    rt.write(bufs[1], b)
    batch = rt.batch()
    batch.dispatch(rt.kernel("field_selftest", field=f.name), bufs, np.array([n_elems, op], np.uint32),
                   -(-n_elems // 64))
    batch.submit()
    return rt.read(bufs[2])


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("n", [1, 63, 64, 65, 5000])  # one thread, one workgroup, its edge, a 2-D grid
@pytest.mark.parametrize("op,name", [(0, "add"), (1, "sub"), (2, "mul")], ids=["add", "sub", "mul"])
def test_base_ops(gpu_runtime, f, n, op, name):
    a, b = _inputs(f, n, seed=n + op)
    a, b = a[:n], b[:n]
    assert np.array_equal(_run(gpu_runtime, f, op, a, b, n), getattr(field_ops(f), name)(a, b))


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.name)
def test_all_edge_pairs_multiply(gpu_runtime, f):
    a, b = _inputs(f, 0, seed=1)
    assert np.array_equal(_run(gpu_runtime, f, 2, a, b, a.size), field_ops(f).mul(a, b))


@pytest.mark.parametrize("f", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("n", [1, 300, 1300])
@pytest.mark.parametrize("op,name", [(3, "ef_mul"), (4, "ef_add")], ids=["ef_mul", "ef_add"])
def test_extension_ops(gpu_runtime, f, n, op, name):
    a, b = _inputs(f, 4 * n, seed=7 * n + op)
    a, b = a[: 4 * n], b[: 4 * n]
    out = _run(gpu_runtime, f, op, a, b, n).reshape(-1, 4)
    assert np.array_equal(out, getattr(field_ops(f), name)(a.reshape(-1, 4), b.reshape(-1, 4)))


def test_the_fields_differ_on_the_device(gpu_runtime):
    """The same words multiply differently under the two fields' constants: the field reaches the kernel."""
    a, b = _inputs(BABYBEAR, 64, seed=3)
    a, b = a % KOALABEAR.P, b % KOALABEAR.P
    assert not np.array_equal(_run(gpu_runtime, BABYBEAR, 2, a, b, a.size), _run(gpu_runtime, KOALABEAR, 2, a, b,
                                                                                  a.size))
