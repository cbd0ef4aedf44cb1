"""The p3-whir profile's kernels of the sumcheck and the commitment on every runtime, against the numpy reference
(``CpuBackend`` under the same ``TableLayout``): suffix-order round sums [h(0), c_inf], folds of the last
variable (plain, fused with the next round's sums), the prefix layout's [h(0), c_inf] rounds (the C_INF variant), and the row-major codeword (``ref.p3_codeword``), for both
fields, random and edge words, tables bound whole, in windows and split over buffers, sizes crossing one
workgroup, several workgroups and the reductions' grid-stride loop."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.kernels import ntt, split
from whirgpu.ref import p3_codeword
from .field_inputs import random_monty

FIELDS = [KOALABEAR, BABYBEAR]
# (log2 entries, workgroups a reduction may use): one pair, one workgroup, several, many (the 2-D grid), and a
# grid-stride loop of several passes (the reductions' workgroups capped at 3)
SIZES = [(1, None), (2, None), (3, None), (9, None), (13, None), (13, 3)]


@pytest.fixture(scope="module", params=["whole", "windows", "buffers"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param in ("windows", "buffers"):
        backend.binding_limit = 256  # 16 EF entries per binding: every array above that is split
    if request.param == "buffers":
        backend.buffer_limit = 4096  # 256 EF entries per buffer
    return backend


def _backends(gpu, field, order="suffix"):
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(field, order)
    return gpu, cpu


@pytest.fixture(autouse=True)
def _default_layout(gpu):
    yield
    gpu.layout = CpuBackend.layout  # the module's backend serves other layouts' tests after this one


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("log_n,max_groups", SIZES)
@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("order", ["suffix", "prefix"])
def test_p3_round_and_fold(gpu, field, log_n, max_groups, ext, order, monkeypatch):
    """[h(0), c_inf] and the fold in either variable order (prefix: ``ref.sumcheck.prefix_round_message``)."""
    if max_groups is not None:
        monkeypatch.setattr("whirgpu.backends.gpu.sumcheck.MAX_REDUCE_GROUPS", max_groups)  # the reductions' own
    gpu, cpu = _backends(gpu, field, order)
    rng = np.random.default_rng(log_n * 7 + ext)
    n = 1 << log_n
    table = random_monty(rng, field, (n, 4) if ext else (n,))
    weights = random_monty(rng, field, (n, 4))
    r = random_monty(rng, field, (4,))
    expected = cpu.sumcheck_round(cpu.upload(table), cpu.upload(weights))
    assert np.array_equal(gpu.sumcheck_round(gpu.upload(table), gpu.upload(weights)), expected)
    folded, folded_weights = cpu.fold(cpu.upload(table), cpu.upload(weights), r)
    got_table, got_weights = gpu.fold(gpu.upload(table), gpu.upload(weights), r)
    assert np.array_equal(gpu.download(got_table), folded.handle)
    assert np.array_equal(gpu.download(got_weights), folded_weights.handle)
    if log_n >= 2:
        fused_table, fused_weights, h = gpu.fold_and_sum(gpu.upload(table), gpu.upload(weights), r)
        assert np.array_equal(gpu.download(fused_table), folded.handle)
        assert np.array_equal(gpu.download(fused_weights), folded_weights.handle)
        assert np.array_equal(h, cpu.sumcheck_round(folded, folded_weights))


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("log_n,log_folding,rate", [(1, 1, 1), (4, 2, 1), (6, 3, 2), (9, 5, 1), (11, 4, 3)])
@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
def test_row_major_codeword(gpu_runtime, field, log_n, log_folding, rate, ext):
    """``encode_codeword(row_major=True)`` equals ``p3_codeword.encode_base`` / ``encode_ext`` word for word."""
    rng = np.random.default_rng(log_n * 13 + rate)
    table = random_monty(rng, field, (1 << log_n, 4) if ext else (1 << log_n,))
    encode = p3_codeword.encode_ext if ext else p3_codeword.encode_base
    expected = p3_codeword.leaf_rows(encode(table, log_folding, rate, field))
    buffer = gpu_runtime.alloc(table.nbytes)
    gpu_runtime.write(buffer, table.reshape(-1))
    batch = gpu_runtime.batch()
    codeword = ntt.encode_codeword(gpu_runtime, batch, buffer, log_n, ext, log_folding, log_n - log_folding + rate,
                                   row_major=True, field=field.name)
    batch.submit()
    words = np.concatenate([gpu_runtime.read(b) for b in split.release_buffers([codeword])])
    assert np.array_equal(words[:expected.size].reshape(expected.shape), expected)
