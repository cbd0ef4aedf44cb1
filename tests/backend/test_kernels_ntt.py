"""Commit encoding on wgpu (transpose_pad, batched column NTT) against the numpy reference, word for word,
on every runtime and multiply variant, with 2-D grids forced by the fixture."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.field import P, TWO_ADIC_GENERATORS
from whirgpu.kernels import ntt as K
from whirgpu.kernels.split import read_rows
from whirgpu.ref import field_np as F
from whirgpu.ref.ntt import dft_batch

GARBAGE = 0xDEADBEEF


def _random(rng, shape) -> np.ndarray:
    return rng.integers(0, P, shape, dtype=np.uint64).astype(np.uint32)


@pytest.fixture
def dirty_alloc(gpu_runtime, monkeypatch):
    """Every buffer the drivers allocate starts full of garbage, so no kernel can lean on zeroed memory."""
    rt = gpu_runtime
    plain_alloc = type(rt).alloc

    def alloc(nbytes, *args, **kwargs):
        buffer = plain_alloc(rt, nbytes, *args, **kwargs)
        rt.write(buffer, np.full(buffer.nbytes // 4, GARBAGE, np.uint32))
        return buffer

    monkeypatch.setattr(rt, "alloc", alloc)
    return rt


def _upload(rt, array: np.ndarray):
    buffer = rt.alloc(max(array.nbytes, 4))
    rt.write(buffer, np.ascontiguousarray(array, np.uint32).reshape(-1))
    return buffer


def _gpu_ntt(rt, matrix: np.ndarray, max_local_log=None) -> np.ndarray:
    h, w = matrix.shape
    buffer = _upload(rt, matrix)
    batch = rt.batch()
    K.ntt_columns(rt, batch, buffer, h.bit_length() - 1, w, max_local_log=max_local_log)
    batch.submit()
    return rt.read(buffer, 4 * h * w).reshape(h, w)


def _reference_matrix(table: np.ndarray, log_folding: int, log_height: int) -> np.ndarray:
    """CpuBackend.commit's construction: column j = chunk j of the table, zero rows below."""
    n_columns = 1 << log_folding
    columns = table.reshape((n_columns, -1) + table.shape[1:])
    matrix = np.zeros((1 << log_height, n_columns) + table.shape[1:], np.uint32)
    matrix[: columns.shape[1]] = np.swapaxes(columns, 0, 1)
    return matrix.reshape(1 << log_height, -1)


@pytest.mark.parametrize("nv,log_folding,log_height,is_ext", [
    (0, 0, 0, False), (4, 2, 2, False), (6, 2, 6, False), (9, 0, 10, False),
    (0, 0, 1, True), (5, 1, 7, True), (10, 4, 7, True),
])
def test_transpose_pad(dirty_alloc, nv, log_folding, log_height, is_ext):
    rt = dirty_alloc
    rng = np.random.default_rng(nv * 100 + log_height)
    table = _random(rng, (1 << nv, 4) if is_ext else (1 << nv,))
    batch = rt.batch()
    out = K.encode_commit_matrix(rt, batch, _upload(rt, table), nv, is_ext, log_folding, log_height)
    batch.submit()
    expected = _reference_matrix(table, log_folding, log_height)
    assert np.array_equal(read_rows(rt, out).reshape(expected.shape), expected)


def test_transpose_pad_rejects_short_columns(gpu_runtime):
    rt = gpu_runtime
    with pytest.raises(ValueError):
        K.encode_commit_matrix(rt, rt.batch(), rt.alloc(4 << 6), 6, False, 1, 4)  # 2^5 coefficients > 2^4 rows


@pytest.mark.parametrize("width", [1, 2, 16, 64])
@pytest.mark.parametrize("log_height", range(13))
def test_ntt_random(gpu_runtime, log_height, width):
    rng = np.random.default_rng(log_height * 131 + width)
    matrix = _random(rng, (1 << log_height, width))
    assert np.array_equal(_gpu_ntt(gpu_runtime, matrix), dft_batch(matrix))


# (log_height, width, max_local_log): the paths of the plan. T = stages in workgroup memory, g = global stages.
PATHS = [
    (12, 1, None),  # T = 12 (whole tile of 4096 words), no global pass
    (3, 4, None),  # T = 3, tile smaller than a workgroup
    (8, 1, 0),  # global only, g = 8: radix-4 passes only
    (7, 2, 0),  # global only, g = 7: radix-2 then radix-4
    (1, 8, 0),  # global only, one radix-2 stage
    (10, 64, None),  # T = 9, g = 1
    (11, 16, None),  # T = 9, g = 2
    (12, 8, None),  # T = 9, g = 3
    (9, 4, 4),  # T = 4 with 4 columns per tile, g = 5
    (6, 128, 1),  # T = 1, many column tiles, g = 5
]


@pytest.mark.parametrize("log_height,width,max_local_log", PATHS)
def test_ntt_paths(gpu_runtime, log_height, width, max_local_log):
    rng = np.random.default_rng(log_height + 7 * width)
    matrix = _random(rng, (1 << log_height, width))
    assert np.array_equal(_gpu_ntt(gpu_runtime, matrix, max_local_log), dft_batch(matrix))


@pytest.mark.parametrize("kind", ["zero", "p_minus_1", "delta"])
@pytest.mark.parametrize("log_height,width,max_local_log", [(10, 16, None), (7, 4, 0), (11, 2, 5)])
def test_ntt_edges(dirty_alloc, kind, log_height, width, max_local_log):
    shape = (1 << log_height, width)
    if kind == "zero":
        matrix = np.zeros(shape, np.uint32)
    elif kind == "p_minus_1":
        matrix = np.full(shape, P - 1, np.uint32)
    else:
        matrix = np.zeros(shape, np.uint32)
        matrix[1, 0] = F.ONE  # x^1 in column 0: output = the powers of omega_H
        matrix[0, width - 1] = F.ONE  # constant 1 in the last column
    assert np.array_equal(_gpu_ntt(dirty_alloc, matrix, max_local_log), dft_batch(matrix))


@pytest.mark.parametrize("nv,log_folding,rate,is_ext", [
    (10, 4, 1, False), (12, 2, 3, False), (1, 1, 0, False), (8, 2, 2, True), (7, 3, 1, True),
])
def test_commit_codeword(dirty_alloc, nv, log_folding, rate, is_ext):
    rt = dirty_alloc
    rng = np.random.default_rng(nv * 10 + log_folding)
    table = _random(rng, (1 << nv, 4) if is_ext else (1 << nv,))
    log_height = nv - log_folding + rate
    cpu = CpuBackend()
    expected = cpu.commit(cpu.upload(table), log_folding, log_height).handle[0]
    batch = rt.batch()
    out = K.encode_codeword(rt, batch, _upload(rt, table), nv, is_ext, log_folding, log_height)
    batch.submit()
    assert np.array_equal(read_rows(rt, out).reshape(expected.shape), expected)


def test_stage_twiddles_layout():
    table = K.stage_twiddles(5)
    assert table.size == 32 and table[0] == F.ONE
    for s in range(5):
        omega = F.constant(TWO_ADIC_GENERATORS[s + 1])
        assert np.array_equal(table[1 << s: 2 << s], F.powers(omega, 1 << s))


def test_ntt_rejects_bad_width(gpu_runtime):
    with pytest.raises(ValueError):
        K.ntt_columns(gpu_runtime, gpu_runtime.batch(), gpu_runtime.alloc(4 * 12), 2, 3)
