"""WGSL Merkle tree launch paths against the numpy reference, bit for bit, on every runtime and multiply variant: the
thread-per-parent and cooperative level kernels and the fused top levels (merkle_top), each below and above its
threshold, with the fixture's lowered workgroup limit forcing 2-D grids (> 7 workgroups)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import P
from whirgpu.kernels.split import read_rows
from whirgpu.kernels import merkle
from whirgpu.runtime.base import RtView
from whirgpu.ref.merkle import MerkleTree

SHAPES = [(1, 8), (2, 0), (2, 17), (4, 1), (8, 9), (64, 7), (256, 16), (512, 8)]


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, P, shape, dtype=np.uint64).astype(np.uint32)


def _check_tree(rt, height: int, width: int, seed: int) -> None:
    rows = _random((height, width), seed)
    buf = rt.alloc(max(rows.nbytes, 4))
    if rows.size:
        rt.write(buf, rows)
    ref = MerkleTree.build(rows)
    levels = merkle.build_tree(rt, buf, height, width)
    assert len(levels) == ref.depth + 1
    for d, level in enumerate(levels):
        assert level.nbytes == (height >> d) * 32
        assert np.array_equal(read_rows(rt, level).reshape(-1, 8), ref.levels[d]), f"level {d}"
    assert np.array_equal(merkle.read_root(rt, levels), ref.root)
    indices = sorted({0, height // 3, height - 1})
    assert np.array_equal(merkle.open_paths(rt, levels, indices), ref.open(indices))


@pytest.mark.parametrize("top,subtree", [(0, 32), (1, 32), (32, 32), (128, 32), (256, 4), (8192, 1), (8192, 64),
                                         (8192, 256)], ids=lambda t: str(t))
@pytest.mark.parametrize("coop", [0, 1 << 20], ids=["thread", "coop"])
@pytest.mark.parametrize("height,width", SHAPES)
def test_tree_paths(gpu_runtime, monkeypatch, top, subtree, coop, height, width):
    """Top launches of one workgroup, of many (2-D grids past 7 workgroups with subtrees of 1 or 4 parents), and
    chains of them (256 parents in subtrees of 4: 256 -> 64, 32 -> 8, 4 -> 1); a subtree of 256 parents takes 16
    rounds of merkle_top's 16 permutations for its first level."""
    monkeypatch.setattr(merkle, "TOP_MAX_PARENTS", top)
    monkeypatch.setattr(merkle, "TOP_SUBTREE", subtree)
    monkeypatch.setattr(merkle, "COOP_MAX_STATES", coop)
    _check_tree(gpu_runtime, height, width, seed=height * 31 + width)


@pytest.mark.parametrize("width", [0, 1, 7, 8, 9, 16, 17])
def test_tree_defaults_all_widths(gpu_runtime, width):
    _check_tree(gpu_runtime, 1024, width, seed=width)


def test_trees_recorded_in_one_batch(gpu_runtime):
    """Each tree's top levels are made in its own buffer (no shared scratch): two trees in one batch."""
    rt = gpu_runtime
    rows = [_random((32, 8), seed=s) for s in (1, 2)]
    bufs = [rt.alloc(r.nbytes) for r in rows]
    for b, r in zip(bufs, rows):
        rt.write(b, r)
    batch = rt.batch()
    trees = [merkle.build_tree(rt, b, 32, 8, batch=batch) for b in bufs]
    batch.submit()
    for levels, r in zip(trees, rows):
        assert np.array_equal(merkle.read_root(rt, levels), MerkleTree.build(r).root)


def test_top_launches(monkeypatch):
    assert merkle.TOP_SUBTREE == 64
    assert merkle.top_launches(1) == [(1, 1)]
    assert merkle.top_launches(64) == [(64, 64)]
    assert merkle.top_launches(8192) == [(8192, 64), (64, 64)]
    assert merkle.top_launches(128) == [(128, 64), (1, 1)]
    monkeypatch.setattr(merkle, "TOP_SUBTREE", 32)
    assert merkle.top_launches(8192) == [(8192, 32), (128, 32), (2, 2)]
    assert merkle.top_parents(1 << 30) == merkle.TOP_MAX_PARENTS
    assert merkle.top_parents(256) == 4 and merkle.top_parents(63) == 0


def test_top_level():
    """merkle_top starts at the lowest level of at most top_parents nodes, never at the leaves."""
    big = 1 << 30
    assert merkle.top_level(1 << 17, big) == 4  # 8192 parents
    assert merkle.top_level(1 << 10, big) == 1 and merkle.top_level(2, big) == 1
    assert merkle.top_level(1 << 10, 4096) == 4  # 64 parents: their 128 children fill the 4 KiB binding
    assert merkle.top_level(1, big) == 1  # a lone root: none (depth + 1)
    assert merkle.top_level(1 << 10, 63) == 11  # no level fits


def test_the_last_top_launch_is_returned_for_the_caller(gpu_runtime):
    """record_tree records all but the last merkle_top launch (one workgroup), which copies the root to word
    ROOT_AT of its proof binding when the caller records it; without merkle_top levels it returns None."""
    rt = gpu_runtime
    rows = _random((512, 8), seed=3)  # 256 parents: launches (256, 64), (2, 2)
    buf = rt.alloc(rows.nbytes)
    rt.write(buf, rows)
    batch = rt.batch()
    levels, last = merkle.record_tree(rt, batch, buf, 512, 8)
    assert last.groups == 1 and last.head[0] == last.head[3] == 2
    out = rt.alloc(3 * 256)
    io = [RtView(out, 0, 32), RtView(out, 256, 64), RtView(out, 512, 32), merkle.round_constants(rt)]
    batch.dispatch(last.kernel, last.buffers(io), np.array(last.head[:merkle.ROOT_AT] + (8,) + last.head[5:],
                                                           np.uint32), 1)
    batch.submit()
    root = MerkleTree.build(rows).root
    assert np.array_equal(rt.read(out, 32, 256 + 32), root)
    assert np.array_equal(merkle.read_root(rt, levels), root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(merkle, "TOP_MAX_PARENTS", 0)
        assert merkle.record_tree(rt, rt.batch(), buf, 512, 8)[1] is None
