"""Commitment kernels on split arrays (``kernels/split.py``) against the numpy reference, word for word, on every
runtime: binding and buffer limits lowered (through a ``GpuBackend``'s ``binding_limit`` / ``buffer_limit``, as
the backend lays arrays out) so that small sizes cross every seam: table and matrix windows of transpose_pad,
NTT stages inside a window and across windows (ntt_cross), leaf and compression launches per window, levels in
several buffers, and the openings' per-window gathers."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import DeviceLimitError
from whirgpu.field import P
from whirgpu.kernels import merkle, ntt, split
from whirgpu.ref.merkle import MerkleTree

GARBAGE = 0xDEADBEEF


def _drivers(runtime, binding: int, buffer: int):
    """The runtime as the kernel drivers see it under a backend with these limits; its buffers start dirty."""
    backend = GpuBackend(runtime)
    backend.binding_limit, backend.buffer_limit = binding, buffer
    rt = backend.state.drivers
    plain_alloc = rt.alloc

    def alloc(nbytes, *args, **kwargs):
        b = plain_alloc(nbytes, *args, **kwargs)
        runtime.write(b, np.full(b.nbytes // 4, GARBAGE, np.uint32))
        return b

    rt.alloc = alloc
    return rt


def _upload(rt, array):
    array = np.ascontiguousarray(array, np.uint32).reshape(-1)
    buffer = rt.alloc(max(array.nbytes, 16))
    rt.write(buffer, array)
    return buffer


def _table(seed: int, nv: int, is_ext: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    table = rng.integers(0, P, (1 << nv, 4) if is_ext else (1 << nv,), dtype=np.uint64).astype(np.uint32)
    table.reshape(-1)[:2] = (0, P - 1)
    return table


def test_layout_unsplit_is_one_buffer_bound_whole():
    assert split.layout(1 << 10, 32, 1 << 15, 1 << 20, 256) == (1 << 10, 1 << 10)
    assert split.layout(1 << 10, 32, 1 << 12, 1 << 20, 256) == (1 << 10, 1 << 7)
    assert split.layout(1 << 10, 32, 1 << 12, 1 << 13, 256) == (1 << 8, 1 << 7)
    assert split.layout(1 << 26, 32, (1 << 31) - 4, 1 << 40, 256) == (1 << 26, 1 << 25)  # 24:1:3 leaves on an H100
    with pytest.raises(DeviceLimitError, match="offset_alignment 256"):
        split.layout(1 << 10, 32, 100, 1 << 20, 256)
    with pytest.raises(DeviceLimitError, match="max_storage_binding_size 16"):
        split.layout(4, 32, 16, 1 << 20, 16)


# (nv, log_folding, rate, is_ext, binding bytes, buffer bytes)
SPLITS = [
    (10, 2, 2, False, 256, 1 << 20),  # 16-byte rows: 16-row windows; 9 stages across windows; table in 4 windows
    (9, 1, 3, False, 512, 2048),  # codeword in 16 buffers, leaves in 64
    (7, 2, 2, True, 1024, 4096),  # EF rows of 64 bytes: 16-row windows, 4 rows per tile column
    (6, 3, 1, True, 128, 1 << 20),  # one 128-byte row per window: every stage crosses windows
    (10, 4, 1, False, 1 << 20, 4096),  # whole bindings, several buffers
    (8, 2, 1, False, 1 << 20, 1 << 20),  # nothing split: today's layout
]


@pytest.mark.parametrize("nv,log_folding,rate,is_ext,binding,buffer", SPLITS)
def test_split_codeword_and_tree(gpu_runtime, nv, log_folding, rate, is_ext, binding, buffer):
    rt = _drivers(gpu_runtime, binding, buffer)
    table = _table(nv * 7 + rate, nv, is_ext)
    log_height = nv - log_folding + rate
    cpu = CpuBackend()
    codeword, tree = cpu.commit(cpu.upload(table), log_folding, log_height).handle
    width = codeword.shape[1]
    batch = rt.batch()
    out = ntt.encode_codeword(rt, batch, _upload(rt, table), nv, is_ext, log_folding, log_height)
    levels = merkle.build_tree(rt, out, 1 << log_height, width, batch)
    batch.submit()
    assert all(b.nbytes <= max(buffer, 16) for a in [out, *levels] for b in a.buffers)
    assert out.split == (codeword.nbytes > min(binding, buffer))
    assert np.array_equal(split.read_rows(rt, out).reshape(codeword.shape), codeword)
    ref = MerkleTree.build(codeword)
    for d, level in enumerate(levels):
        assert np.array_equal(split.read_rows(rt, level).reshape(-1, 8), ref.levels[d]), f"level {d}"
    indices = [0, (1 << log_height) - 1, 5 % (1 << log_height), 3]
    assert np.array_equal(merkle.open_paths(rt, levels, indices), ref.open(indices))


@pytest.mark.parametrize("nv,log_folding,log_height,is_ext,binding", [(9, 2, 9, False, 256), (6, 1, 7, True, 512)])
def test_split_transpose_natural_order(gpu_runtime, nv, log_folding, log_height, is_ext, binding):
    """Table windows x matrix windows, rows in natural order, padding written once."""
    rt = _drivers(gpu_runtime, binding, 1 << 20)
    table = _table(nv, nv, is_ext)
    batch = rt.batch()
    out = ntt.encode_commit_matrix(rt, batch, _upload(rt, table), nv, is_ext, log_folding, log_height)
    batch.submit()
    columns = table.reshape((1 << log_folding, -1) + table.shape[1:])
    expected = np.zeros((1 << log_height, 1 << log_folding) + table.shape[1:], np.uint32)
    expected[: columns.shape[1]] = np.swapaxes(columns, 0, 1)
    assert out.split
    assert np.array_equal(split.read_rows(rt, out).reshape(expected.size), expected.reshape(-1))


def test_split_in_place_bitrev_is_refused(gpu_runtime):
    rt = _drivers(gpu_runtime, 256, 1 << 20)
    with pytest.raises(DeviceLimitError, match="bit reversal"):
        ntt.ntt_columns(rt, rt.batch(), rt.alloc(4 << 10), 8, 4)


def test_unsplit_commit_launches(gpu_runtime):
    """The default layout launches exactly as before the split, less the fused bit reversal: transpose, the
    local stages, the radix passes, the leaves, the compressions and the top."""
    rt = _drivers(gpu_runtime, 1 << 30, 1 << 30)
    counts = []

    class Counting:
        def __init__(self, batch):
            self.batch = batch

        def dispatch(self, *args):
            counts.append(args[0])
            self.batch.dispatch(*args)

        def copy(self, *args):
            self.batch.copy(*args)

    nv, k, rate = 12, 2, 1
    batch = Counting(rt.batch())
    codeword = ntt.encode_codeword(rt, batch, _upload(rt, _table(1, nv, False)), nv, False, k, nv - k + rate)
    merkle.build_tree(rt, codeword, 1 << (nv - k + rate), 4, batch)
    batch.batch.submit()
    # 2^11 rows x 4 words: transpose; 10 local stages, then one radix-2 pass; the leaves; merkle_top from 1024
    # parents in subtrees of 64 (to 8 roots), then from 8 in one workgroup
    assert len(counts) == 1 + 2 + 1 + 2
