"""GpuBackend primitives against CpuBackend (the numpy reference), word for word.

Every primitive runs on every runtime (the ``gpu_runtime`` fixture: wgpu-native with both multiply variants, Dawn,
msl-cpu; its 2-D grid threshold is lowered to 7 workgroups), at sizes from one entry to several workgroups and grid-stride passes, on random and edge values
(0, 1, P - 1), with the storage-binding limit lowered so that the windowed (split-binding) path runs, and with the
buffer limit lowered too so that tables, weights and folded tables are stored as several buffers.
"""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT, StorageMode
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import MAX_REDUCE_GROUPS, WG, GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR, P
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import field_np as F

CPU = CpuBackend()
EDGE = np.array([0, F.ONE, P - 1, F.constant(P - 1), 1], np.uint32)

# Sizes (log2 entries): 0-1 (degenerate), 3 (< one workgroup), 9 (two workgroups), 12 (many groups; 2-D grid
# with the lowered limit), and one large enough that the reduction's grid-stride loop runs more than once.
LOG_SIZES = [0, 1, 3, 9, 12, (MAX_REDUCE_GROUPS * WG).bit_length()]


@pytest.fixture(scope="module", params=["whole", "windows", "buffers"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param in ("windows", "buffers"):
        backend.binding_limit = 256  # 16 EF entries per binding: every array above that is split
    if request.param == "buffers":
        backend.buffer_limit = 4096  # 256 EF (1024 base) entries per buffer: larger tables are several buffers
    return backend


def _random(rng, shape, edge_fraction=0.1):
    values = rng.integers(0, P, size=shape, dtype=np.uint64).astype(np.uint32)
    mask = rng.random(shape) < edge_fraction
    values[mask] = rng.choice(EDGE, size=int(mask.sum()))
    return values


def _table(rng, log_n, ext):
    return _random(rng, (1 << log_n, 4) if ext else (1 << log_n,))


def _pair(backend_a, backend_b, array):
    return backend_a.upload(array), backend_b.upload(array)


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n", LOG_SIZES)
def test_evaluate(gpu, log_n, ext):
    if log_n > 16 and ext:
        pytest.skip("one large size per table kind is enough")
    rng = np.random.default_rng(100 + log_n)
    table = _table(rng, log_n, ext)
    point = _random(rng, (log_n, 4))
    got = gpu.evaluate(gpu.upload(table), point)
    want = CPU.evaluate(CPU.upload(table), point)
    np.testing.assert_array_equal(got, want)


def _univariate_reference(field, table, z):
    """sum_b table[b] z^b, b the table's index, straight from the field's numpy operations."""
    ops = F.field_ops(field)
    values = table if table.ndim == 2 else ops.ef_from_base(table)
    return ops.ef_sum(ops.ef_mul(values, ops.ef_powers(np.asarray(z, np.uint32), len(values))))


def _univariate_points(field, rng):
    """Random EF points, and the edges: 0, 1, the raw word P - 1, -1 and i (i^2 = -1: 1 + z^(2^j) = 0 for z = -1,
    j = 0, and for z = i, j = 1, where the eq form of z's powers does not exist), as base points."""
    ops = F.field_ops(field)
    minus_one = int(ops.constant(field.P - 1))
    i = ops.constant(pow(field.generator, (field.P - 1) // 4, field.P))
    assert np.array_equal(ops.ef_mul(ops.ef_from_base(i), ops.ef_from_base(i)), ops.ef_from_base(minus_one))
    points = [rng.integers(0, field.P, size=4, dtype=np.uint64).astype(np.uint32) for _ in range(2)]
    return points + [np.array([c, 0, 0, 0], np.uint32) for c in (0, ops.ONE, field.P - 1, minus_one, i)]


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n", LOG_SIZES)
def test_univariate(gpu, log_n, ext, field):
    """The evaluation kernel's powers mode (MLE_POWERS) at z's expansion is sum_b T[b] z^b, for every z."""
    if log_n > 16 and (ext or field is BABYBEAR or gpu.binding_limit < 1 << 20):
        pytest.skip("the grid-stride size once: base, one field, bound whole (the mode changes no indexing)")
    rng = np.random.default_rng(700 + log_n)
    table = rng.integers(0, field.P, size=(1 << log_n, 4) if ext else (1 << log_n,), dtype=np.uint64)
    table = table.astype(np.uint32)
    points = _univariate_points(field, rng)
    points = points if log_n <= 12 else points[:1] + points[-2:]
    gpu.layout = P3_WHIR_LAYOUT(field, "prefix") if field is KOALABEAR else CpuBackend.layout
    try:
        handle = gpu.upload(table)
        for z in points:
            np.testing.assert_array_equal(gpu.univariate(handle, z), _univariate_reference(field, table, z),
                                          err_msg=f"z = {z}")
        cpu, point = CpuBackend(), points[0][None].repeat(log_n, 0)  # the default mode after the powers mode
        cpu.layout = gpu.layout
        np.testing.assert_array_equal(gpu.evaluate(handle, point), cpu.evaluate(cpu.upload(table), point))
    finally:
        gpu.layout = CpuBackend.layout


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
def test_cpu_univariate(ext, field):
    cpu = CpuBackend()
    cpu.layout = P3_WHIR_LAYOUT(field, "prefix") if field is KOALABEAR else CpuBackend.layout
    rng = np.random.default_rng(800)
    for log_n in (0, 1, 5):
        table = rng.integers(0, field.P, size=(1 << log_n, 4) if ext else (1 << log_n,), dtype=np.uint64)
        table = table.astype(np.uint32)
        handle = cpu.upload(table)
        for z in _univariate_points(field, rng):
            np.testing.assert_array_equal(cpu.univariate(handle, z), _univariate_reference(field, table, z))


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n,count", [(0, 1), (3, 3), (12, 2)])
def test_evaluate_points(gpu, log_n, count, ext):
    """Several points in one session: each answer is the reference's, in order (and none for no point)."""
    rng = np.random.default_rng(150 + log_n)
    table = _table(rng, log_n, ext)
    points = _random(rng, (count, log_n, 4))
    got = gpu.evaluate_points(gpu.upload(table), points)
    want = np.array([CPU.evaluate(CPU.upload(table), p) for p in points], np.uint32).reshape(count, 4)
    np.testing.assert_array_equal(got, want)
    assert gpu.evaluate_points(gpu.upload(table), np.zeros((0, log_n, 4), np.uint32)).shape == (0, 4)


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n", [1, 2, 5, 9, 13])
def test_sumcheck_round_and_fold(gpu, log_n, ext):
    rng = np.random.default_rng(200 + log_n)
    table = _table(rng, log_n, ext)
    weights = _random(rng, (1 << log_n, 4))
    g_table, g_weights = gpu.upload(table), gpu.upload(weights)
    c_table, c_weights = CPU.upload(table), CPU.upload(weights)
    for r_seed in range(min(log_n, 3)):  # a few rounds: base -> EF -> EF
        h_gpu = gpu.sumcheck_round(g_table, g_weights)
        h_cpu = CPU.sumcheck_round(c_table, c_weights)
        np.testing.assert_array_equal(np.stack(h_gpu), np.stack(h_cpu))
        r = _random(np.random.default_rng(r_seed), (4,))
        g_table, g_weights = gpu.fold(g_table, g_weights, r)
        c_table, c_weights = CPU.fold(c_table, c_weights, r)
        np.testing.assert_array_equal(gpu.download(g_table), CPU.download(c_table))
        np.testing.assert_array_equal(gpu.download(g_weights), CPU.download(c_weights))


# (log2 entries, values, workgroups a reduction may use): 4 entries (one pair per half of the next round), one
# workgroup, several, the 2-D grid (7 workgroups per dimension), and a grid-stride loop of several passes (the
# reduction's workgroups capped at 3); random values, and 0, 1, p - 1 alone
FOLD_AND_SUM = [(2, "random", None), (2, "edge", None), (3, "random", None), (5, "random", None),
                (10, "random", None), (10, "edge", None), (13, "random", None), (13, "random", 3)]


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n,values,max_groups", FOLD_AND_SUM)
def test_fold_and_sum(gpu, log_n, ext, values, max_groups, monkeypatch):
    """The fused fold with the next round's sums (one launch where the tables fit one binding; the windowed and
    split modes take the plain launches) equals the CPU's fold then sumcheck round."""
    if max_groups is not None:
        monkeypatch.setattr("whirgpu.backends.gpu.sumcheck.MAX_REDUCE_GROUPS", max_groups)  # the reductions' own
    rng = np.random.default_rng(400 + log_n)
    fraction = 1.0 if values == "edge" else 0.1
    table = _random(rng, (1 << log_n, 4) if ext else (1 << log_n,), fraction)
    weights, r = _random(rng, (1 << log_n, 4), fraction), _random(rng, (4,), fraction)
    g_table, g_weights, h = gpu.fold_and_sum(gpu.upload(table), gpu.upload(weights), r)
    c_table, c_weights = CPU.fold(CPU.upload(table), CPU.upload(weights), r)
    np.testing.assert_array_equal(gpu.download(g_table), CPU.download(c_table))
    np.testing.assert_array_equal(gpu.download(g_weights), CPU.download(c_weights))
    np.testing.assert_array_equal(np.stack(h), np.stack(CPU.sumcheck_round(c_table, c_weights)))
    # The reduction left its ticket at 0: a plain round afterwards is right too.
    np.testing.assert_array_equal(np.stack(gpu.sumcheck_round(g_table, g_weights)),
                                  np.stack(CPU.sumcheck_round(c_table, c_weights)))


@pytest.mark.parametrize("log_n", [0, 1, 4, 9, 13])
@pytest.mark.parametrize("n_eq,n_sel", [(1, 0), (3, 0), (0, 5), (2, 7), (0, 0)])
def test_weights(gpu, log_n, n_eq, n_sel):
    rng = np.random.default_rng(300 + 10 * log_n + n_eq + n_sel)
    points = _random(rng, (max(n_eq, 1), log_n, 4))
    coefficients = _random(rng, (max(n_eq, 1), 4))
    got = gpu.download(gpu.eq_weights(points, coefficients))
    want = CPU.download(CPU.eq_weights(points, coefficients))
    np.testing.assert_array_equal(got, want)

    start = _random(rng, (1 << log_n, 4))
    eq_points, eq_coefficients = _random(rng, (n_eq, log_n, 4)), _random(rng, (n_eq, 4))
    select_vars, select_coefficients = _random(rng, (n_sel,)), _random(rng, (n_sel, 4))
    args = (eq_points, eq_coefficients, select_vars, select_coefficients)
    got = gpu.download(gpu.add_constraint_weights(gpu.upload(start), *args))
    want = CPU.download(CPU.add_constraint_weights(CPU.upload(start), *args))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("ext", [False, True], ids=["base", "ext"])
@pytest.mark.parametrize("log_n,log_folding,extra_rate", [(0, 0, 0), (3, 1, 1), (6, 2, 1), (10, 4, 2), (9, 0, 1)])
def test_commit_and_open(gpu, log_n, log_folding, extra_rate, ext):
    rng = np.random.default_rng(400 + log_n)
    table = _table(rng, log_n, ext)
    log_height = log_n - log_folding + extra_rate
    got = gpu.commit(gpu.upload(table), log_folding, log_height)
    want = CPU.commit(CPU.upload(table), log_folding, log_height)
    np.testing.assert_array_equal(got.root, want.root)
    assert (got.height, got.width, got.is_ext) == (want.height, want.width, want.is_ext)
    indices = sorted(set(rng.integers(0, 1 << log_height, size=7).tolist())) + [0, (1 << log_height) - 1]
    for g, c in zip(gpu.open_rows(got, indices), CPU.open_rows(want, indices)):
        np.testing.assert_array_equal(g, c)
    rows, paths = gpu.open_rows(got, [])
    assert rows.shape[0] == 0 and paths.shape[0] == 0


@pytest.mark.parametrize("bits", [1, 4, 9, 13])
@pytest.mark.parametrize("absorbed", [0, 3, 7, 8])
def test_grind_smallest_nonce(gpu_runtime, bits, absorbed):
    gpu = GpuBackend(gpu_runtime)
    host = DuplexChallenger()
    host.observe_many(np.arange(absorbed, dtype=np.uint32) * 7919 + 3)
    device_side = host.clone()
    want = host.grind(bits)
    got = gpu.grind(device_side, bits)
    assert got == want
    assert device_side.same_state(host)


def test_grind_zero_bits_leaves_the_transcript(gpu_runtime):
    gpu = GpuBackend(gpu_runtime)
    challenger = DuplexChallenger()
    before = challenger.clone()
    assert gpu.grind(challenger, 0) == 0
    assert challenger.same_state(before)


@pytest.mark.parametrize("shape", [(1 << 12,), (1 << 11, 4), (1 << 8, 4), (3,)], ids=["base", "ext", "fits", "odd"])
def test_split_tables_upload_download_release(gpu_runtime, shape):
    """A table past buffer_limit is several buffers of a power-of-two number of whole entries, each inside the
    limit; one that fits is exactly one buffer. Download gives the words back; release pools every buffer, and
    the next upload of that size reuses them."""
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit, backend.buffer_limit = 1024, 4096
    array = _random(np.random.default_rng(7), shape)
    table = backend.upload(array)
    buffers = table.handle.buffers
    if array.nbytes > backend.buffer_limit:
        assert len(buffers) == array.nbytes // backend.buffer_limit
        assert all(b.nbytes == backend.buffer_limit for b in buffers)
        assert table.handle.buffer_rows & (table.handle.buffer_rows - 1) == 0
    else:
        assert len(buffers) == 1
    np.testing.assert_array_equal(backend.download(table), array)
    backend.release(table)
    again = backend.upload(array)
    assert {id(b) for b in again.handle.buffers} == {id(b) for b in buffers}
    np.testing.assert_array_equal(backend.download(again), array)


def test_split_weights_sumcheck_fold_evaluate(gpu_runtime):
    """Eq weights, constraint weights and folds of split tables (base and EF, windows inside buffers) equal the
    CPU's; the folded tables stay split until they fit one buffer."""
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit, backend.buffer_limit = 1024, 4096
    rng = np.random.default_rng(11)
    nv = 11
    table = _table(rng, nv, False)
    points, coefficients = _random(rng, (2, nv, 4)), _random(rng, (2, 4))
    g_weights, c_weights = backend.eq_weights(points, coefficients), CPU.eq_weights(points, coefficients)
    assert len(g_weights.handle.buffers) == (16 << nv) // 4096
    select_vars, select_coefficients = _random(rng, (3,)), _random(rng, (3, 4))
    eq_points, eq_coefficients = _random(rng, (1, nv, 4)), _random(rng, (1, 4))
    args = (eq_points, eq_coefficients, select_vars, select_coefficients)
    g_weights = backend.add_constraint_weights(g_weights, *args)
    c_weights = CPU.add_constraint_weights(c_weights, *args)
    np.testing.assert_array_equal(backend.download(g_weights), CPU.download(c_weights))
    g_table, c_table = backend.upload(table), CPU.upload(table)
    assert len(g_table.handle.buffers) == 2
    point = _random(rng, (nv, 4))
    np.testing.assert_array_equal(backend.evaluate(g_table, point), CPU.evaluate(c_table, point))
    for r_seed in range(nv - 2):
        np.testing.assert_array_equal(np.stack(backend.sumcheck_round(g_table, g_weights)),
                                      np.stack(CPU.sumcheck_round(c_table, c_weights)))
        r = _random(np.random.default_rng(r_seed), (4,))
        g_table, g_weights = backend.fold(g_table, g_weights, r)
        c_table, c_weights = CPU.fold(c_table, c_weights, r)
        assert len(g_table.handle.buffers) == max(1, g_table.nbytes // 4096)
        np.testing.assert_array_equal(backend.download(g_table), CPU.download(c_table))
        np.testing.assert_array_equal(backend.download(g_weights), CPU.download(c_weights))
        point = _random(rng, (nv - 1 - r_seed, 4))
        np.testing.assert_array_equal(backend.evaluate(g_table, point), CPU.evaluate(c_table, point))


def test_split_final_poly(gpu_runtime):
    """The final polynomial of a split EF table reaches the proof region whole, copied buffer by buffer."""
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit, backend.buffer_limit = 1024, 4096
    array = _random(np.random.default_rng(13), (1 << 10, 4))
    table = backend.upload(array, StorageMode.PRIVATE)
    assert len(table.handle.buffers) == 4
    with backend.state.host_call(proof_words=array.size) as session:
        out = backend.final_poly(table)
    np.testing.assert_array_equal(session.read(out), array)
