"""``Backend.interleave_columns`` (the hiding PCS's interleaved encoding table: 2^k columns of message ‖
randomness ‖ zeros) on the GPU backend against the host (``interleave_columns_host``, what ``CpuBackend`` runs),
word for word, on every runtime: base and EF tables, one column to many, randomness of one to many rows, columns
padded to next_pow2(m + t) and further, tables bound whole, in windows (256-byte bindings: windows of 16 EF
entries, smaller than a column, and of several columns) and split over buffers; the result committed as the
zk encoding. The kernel itself with its randomness at entry rnd_base of a binding (a buffer or a view) holding
other entries around it."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT, interleave_columns_host
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.runtime.base import RtView

from .field_inputs import random_monty

# (log2 table entries, log_folding, randomness rows per column)
SHAPES = [(0, 0, 1), (4, 2, 3), (6, 3, 5), (8, 0, 100), (10, 2, 11), (12, 4, 9), (13, 2, 11)]


@pytest.fixture(scope="module", params=["whole", "windows", "buffers"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param in ("windows", "buffers"):
        backend.binding_limit = 256  # 16 EF (64 base) entries per binding
    if request.param == "buffers":
        backend.buffer_limit = 4096  # 256 EF (1024 base) entries per buffer
    return backend


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n,log_folding,t", SHAPES)
@pytest.mark.parametrize("extra", [0, 1])
def test_interleave_columns(gpu, log_n, log_folding, t, ext, extra):
    rng = np.random.default_rng(log_n * 31 + t + ext)
    tail = (4,) if ext else ()
    table = random_monty(rng, KOALABEAR, (1 << log_n,) + tail)
    randomness = random_monty(rng, KOALABEAR, (t << log_folding,) + tail)
    m = (1 << log_n) >> log_folding
    rows = (1 << (m + t - 1).bit_length()) << extra
    want = interleave_columns_host(table, randomness, log_folding, rows)
    got = gpu.download(gpu.interleave_columns(gpu.upload(table), randomness, log_folding, rows))
    assert np.array_equal(got, want)
    cpu = CpuBackend()
    assert np.array_equal(cpu.download(cpu.interleave_columns(cpu.upload(table), randomness, log_folding, rows)),
                          want)


def test_too_much_randomness_for_a_binding_takes_the_host_path(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit = 256
    rng = np.random.default_rng(5)
    table, randomness = random_monty(rng, KOALABEAR, (64, 4)), random_monty(rng, KOALABEAR, (4 * 20, 4))
    got = backend.download(backend.interleave_columns(backend.upload(table), randomness, 2, 64))
    assert np.array_equal(got, interleave_columns_host(table, randomness, 2, 64))


def test_bad_shapes_are_refused(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    table = backend.upload(np.zeros(16, np.uint32))
    with pytest.raises(ValueError, match="interleave_columns"):
        backend.interleave_columns(table, np.zeros(12, np.uint32), 2, 4)  # m + t = 7 > 4
    with pytest.raises(ValueError, match="interleave_columns"):
        backend.interleave_columns(table, np.zeros(6, np.uint32), 2, 8)  # not whole rows
    with pytest.raises(ValueError, match="interleave_columns"):
        interleave_columns_host(np.zeros(16, np.uint32), np.zeros((4, 4), np.uint32), 2, 8)  # kinds differ


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
def test_committed_as_the_zk_encoding(gpu, ext):
    """Committed at the oracle's height, the table is ``oracles.zk_padded_matrix``'s encoding (same root)."""
    from whirgpu.profiles.p3_whir.zk.oracles import Committed, encode, zk_padded_matrix
    rng = np.random.default_rng(7)
    tail = (4,) if ext else ()
    message = random_monty(rng, KOALABEAR, (1 << 10,) + tail)
    randomness = random_monty(rng, KOALABEAR, (4 * 11,) + tail)
    gpu.layout = P3_WHIR_LAYOUT(KOALABEAR, "prefix")
    try:
        table = gpu.interleave_columns(gpu.upload(message), randomness, 2, 512)
        root = gpu.commit(table, 2, 10).root
    finally:
        gpu.layout = CpuBackend.layout
    want = Committed(encode(zk_padded_matrix(message, randomness, 2, 1024), KOALABEAR), KOALABEAR).root
    assert np.array_equal(np.asarray(root).reshape(8), want)


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n,log_folding,t,rnd_base", [(4, 2, 3, 1), (10, 2, 9, 37), (8, 0, 100, 5),
                                                         (6, 3, 0, 2), (10, 2, 9, 0)])
@pytest.mark.parametrize("bound", ["buffer", "view"])
def test_kernel_reads_randomness_from_rnd_base(gpu_runtime, log_n, log_folding, t, rnd_base, ext, bound):
    """The ``interleave_columns`` kernel with the randomness at entry ``rnd_base`` of its binding (junk entries
    before it, and after it; the binding a whole buffer or a view past more junk): the host's table, every
    output word written (the output's garbage past it kept). Outputs of 2048+ words take the lowered 2-D grid."""
    rt = gpu_runtime
    rng = np.random.default_rng(log_n * 7 + t + rnd_base + ext)
    tail, log_elem = ((4,), 2) if ext else ((), 0)
    elem = 1 << log_elem
    table = random_monty(rng, KOALABEAR, (1 << log_n,) + tail)
    randomness = random_monty(rng, KOALABEAR, (t << log_folding,) + tail)
    m = (1 << log_n) >> log_folding
    rows = 1 << (m + t - 1).bit_length()
    want = interleave_columns_host(table, randomness, log_folding, rows).reshape(-1)
    align = max(4, int(rt.offset_alignment)) // 4  # words
    lead = align if bound == "view" else 0  # words before the view
    junk = rng.integers(0, 2**32, lead + (rnd_base + 3) * elem + randomness.size, dtype=np.uint64).astype(np.uint32)
    junk[lead + rnd_base * elem:lead + rnd_base * elem + randomness.size] = randomness.reshape(-1)
    rnd_buffer = rt.alloc(4 * junk.size)
    rt.write(rnd_buffer, junk)
    rnd_binding = RtView(rnd_buffer, 4 * lead, 4 * (junk.size - lead)) if bound == "view" else rnd_buffer
    tbl, out = rt.alloc(table.nbytes), rt.alloc(4 * want.size + 64)
    rt.write(tbl, table.reshape(-1))
    rt.write(out, np.full(want.size + 16, 0xDEADBEEF, np.uint32))
    n = want.size
    params = np.array([n, log_elem, 0, rows.bit_length() - 1, m, t, 0, rnd_base], np.uint32)
    batch = rt.batch()
    batch.dispatch(rt.kernel("interleave_columns"), [tbl, rnd_binding, out], params, -(-n // 256))
    batch.submit()
    got = rt.read(out)
    np.testing.assert_array_equal(got[:n], want)
    assert (got[n:n + 16] == 0xDEADBEEF).all()
    for buffer in (rnd_buffer, tbl, out):
        rt.free(buffer)
