"""Packed Merkle trees (``merkle.alloc_tree``) and one openings launch per round, on every runtime.

A tree's top levels share one buffer (merkle_top's back to back, in place, the others each at an aligned offset),
so a round's openings (rows and every sibling of every query slot) bind the tree once, with word offsets per
level: one ``openings`` launch whenever the codeword fits a binding and no level
is split, whatever the depth (ceil(depth / 5) launches before). Counted by wrapping the backend batch's dispatch,
and checked word for word against the numpy reference (``CpuBackend``: ``ref.merkle.MerkleTree``) at depths past
the old five levels a launch, with lowered binding and buffer limits that split the lower levels (one launch per
window there) or leave a whole level too large to share the binding with the rest.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.gpu.drivers import CountingBatch
from whirgpu.backends.gpu.geometry import level_jobs, opening_launches
from whirgpu.field import P
from whirgpu.kernels import merkle, split
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.serialize import proof_to_json_tree
from whirgpu.ref.merkle import MerkleTree

CPU = CpuBackend()


@contextmanager
def _counting(backend: GpuBackend, monkeypatch):
    """Yields the list of ``openings`` launches each ``open_rows`` call records (nested calls count once)."""
    calls, depth = [], [0]
    kernel = backend.state.drivers.kernel("openings")
    real_dispatch, real_open = CountingBatch.dispatch, GpuBackend.open_rows

    def dispatch(self, k, *args):
        if depth[0] and k is kernel:
            calls[-1] += 1
        real_dispatch(self, k, *args)

    def open_rows(self, *args, **kwargs):
        if not depth[0]:
            calls.append(0)
        depth[0] += 1
        try:
            return real_open(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    with monkeypatch.context() as patch:
        patch.setattr(CountingBatch, "dispatch", dispatch)
        patch.setattr(GpuBackend, "open_rows", open_rows)
        yield calls


def test_packed_levels(monkeypatch):
    """The longest top run that fits one binding (min of both limits) shares a buffer; at least two levels. The
    levels merkle_top makes (8192 parents and up by default) are back to back, the others at aligned offsets."""
    big = 1 << 30
    assert merkle.packed_levels(1 << 17, big, big, 256) == (0, (8 << 20) - 32)  # no padding: levels 0-3 are aligned
    assert merkle.packed_levels(1 << 17, big, big, 4) == (0, (8 << 20) - 32)
    # 2^17 leaves are 4 MiB; levels 1.. end at 4 MiB - 32
    assert merkle.packed_levels(1 << 17, 4 << 20, big, 256)[0] == 1
    assert merkle.packed_levels(1 << 17, big, 4 << 20, 256)[0] == 1
    assert merkle.packed_levels(1 << 17, (4 << 20) - 32, big, 4)[0] == 1
    assert merkle.packed_levels(1 << 17, (4 << 20) - 36, big, 4)[0] == 2
    # 8 leaves, a 256-byte binding: merkle_top makes levels 1.. (4 parents), 224 bytes; the leaves would pass it
    assert merkle.packed_levels(8, 256, big, 256) == (1, 224)
    assert merkle.packed_levels(8, 480, big, 256) == (0, 480)  # 256 bytes of leaves, then the top at 256
    assert merkle.packed_levels(1, big, big, 256) == (1, 0)  # a lone root owns its buffer
    # merkle_top from 2 parents: levels 0-15 aligned (the 128-byte level 15 padded to 256), then 64 + 32 glued
    monkeypatch.setattr(merkle, "TOP_MAX_PARENTS", 2)
    assert merkle.packed_levels(1 << 17, big, big, 256) == (0, (8 << 20) + 96)
    monkeypatch.setattr(merkle, "TOP_MAX_PARENTS", 0)  # no merkle_top: every packed level aligned
    assert merkle.packed_levels(1 << 17, big, big, 256) == (0, (8 << 20) + 288)
    assert merkle.packed_levels(8, 256, big, 256) == (4, 0)  # root + 32 bytes padded to 256: over; none packed


def test_level_jobs():
    """Runs of whole levels bound once each (own) or together (packed); split levels one part per window."""
    assert level_jobs([1] * 17, 0) == [(0, 17, 0, -1)]
    assert level_jobs([1] * 17) == [(0, 5, 5, -1), (5, 5, 5, -1), (10, 5, 5, -1), (15, 2, 2, -1)]
    assert level_jobs([1] * 17, 4) == [(0, 17, 4, -1)]
    assert level_jobs([1] * 17, 5) == [(0, 5, 5, -1), (5, 12, 0, -1)]
    assert level_jobs([4, 2, 1, 1, 1], 3) == [(0, 1, 1, 0), (0, 1, 1, 1), (0, 1, 1, 2), (0, 1, 1, 3), (1, 1, 1, 0),
                                                   (1, 1, 1, 1), (2, 3, 1, -1)]
    assert level_jobs([1] * 40, 0) == [(0, 32, 0, -1), (32, 8, 0, -1)]
    assert level_jobs([], 0) == []
    assert opening_launches(1, [1] * 17, 0) == 1 and opening_launches(3, [1] * 17, 0) == 3


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, P, shape, dtype=np.uint64).astype(np.uint32)


# (log_n, log_folding, extra rate, ext, binding limit, buffer limit): depths 9-13, all levels packed; leaves and
# level 1 split in windows (or buffers), level 2 whole but too large to share the binding, the rest packed
CASES = [(10, 2, 1, False, None, None), (12, 1, 2, False, None, None), (9, 2, 2, True, None, None),
         (11, 2, 0, False, 4096, None), (10, 1, 1, True, 8192, 4096), (8, 1, 1, False, 1024, 1024)]


@pytest.mark.parametrize("log_n,log_folding,rate,ext,binding,buffer", CASES)
def test_round_openings_are_one_launch_when_the_tree_fits(gpu_runtime, monkeypatch, log_n, log_folding, rate, ext,
                                                          binding, buffer):
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit = binding or backend.binding_limit
    backend.buffer_limit = buffer or backend.buffer_limit
    table = _random((1 << log_n, 4) if ext else (1 << log_n,), seed=log_n * 10 + rate)
    log_height = log_n - log_folding + rate
    got, want = backend.commit(backend.upload(table), log_folding, log_height), CPU.commit(CPU.upload(table),
                                                                                          log_folding, log_height)
    np.testing.assert_array_equal(got.root, want.root)
    codeword, levels = got.handle
    ref = MerkleTree.build(want.handle[0].reshape(1 << log_height, -1))
    for d, level in enumerate(levels):
        np.testing.assert_array_equal(split.read_rows(backend.state.drivers, level).reshape(-1, 8), ref.levels[d])

    # the layout: the top levels in one buffer within one binding, merkle_top's back to back as it writes them and
    # the others at aligned offsets; the levels below own their buffers
    first, packed = merkle.packed_run(levels)
    binding_limit, buffer_limit, alignment = split.runtime_limits(backend.state.drivers)
    top = merkle.top_level(1 << log_height, min(binding_limit, buffer_limit))
    assert first < len(levels) - 1 and packed.nbytes <= min(backend.binding_limit, backend.buffer_limit)
    assert first <= top < len(levels)
    assert all(len(level.buffers) == 1 and level.buffers[0] is packed.buffer for level in levels[first:])
    assert all(level.offset % alignment == 0 for level in levels[first:top + 1])
    assert all(up.offset == level.offset + level.nbytes for level, up in zip(levels[top:], levels[top + 1:]))
    assert all(level.offset is None and all(b is not packed.buffer for b in level.buffers) for level in levels[:first])
    split_levels = [level.rows // level.window_rows for level in levels[:-1]]
    expected = opening_launches(codeword.rows // codeword.window_rows, split_levels, first)
    if binding is None:
        assert first == 0 and expected == 1 and len(levels) - 1 > 5

    indices = sorted(set(_random(20, seed=log_n).astype(np.int64) % (1 << log_height))) + [0, (1 << log_height) - 1]
    with _counting(backend, monkeypatch) as launches:
        rows, paths = backend.open_rows(got, indices)
    assert launches == [expected]
    want_rows, want_paths = CPU.open_rows(want, indices)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(paths, want_paths)
    np.testing.assert_array_equal(paths, ref.open(indices))

    # releasing returns the packed buffer once, and the next commitment of that shape reuses every buffer
    buffers = split.release_buffers([codeword, *levels])
    assert sum(b is packed.buffer for b in buffers) == 1
    backend.release(got)
    assert sum(b is packed.buffer for free in backend.state.pool.free_lists.values() for b in free) == 1
    again = backend.commit(backend.upload(table), log_folding, log_height)
    assert {id(b) for b in split.release_buffers([again.handle[0], *again.handle[1]])} == {id(b) for b in buffers}
    np.testing.assert_array_equal(again.root, want.root)


def test_a_proofs_round_openings_are_one_launch_each(gpu_runtime, monkeypatch):
    """Every round's openings in one launch (trees of depth 11, 9 and 7 here), and the proof is the CPU's."""
    config = WhirConfig.from_params(ProtocolParameters.default(num_variables=12, folding_factor=2,
                                                               starting_log_inv_rate=1))
    poly, statement = random_instance(12, 3)
    backend = GpuBackend(gpu_runtime)
    with _counting(backend, monkeypatch) as launches:
        proof = MetalWhirProver(config, backend).prove(poly, statement)
    assert launches == [1] * (config.n_rounds + 1)
    want = MetalWhirProver(config, CPU).prove(poly, statement)
    assert json.dumps(proof_to_json_tree(proof)) == json.dumps(proof_to_json_tree(want))
