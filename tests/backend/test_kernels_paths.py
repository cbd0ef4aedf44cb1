"""``merkle_paths`` (``kernels/paths.py``, ``backends.path_roots.compute_roots_on``): a verification batch's Merkle
roots on every runtime, bit for bit against ``ref.merkle.compute_roots_batched``: random trees of base (2^k words) and
extension (2^k x 4 words) rows with different depths in one call, edge values (0, p - 1, words >= p, index 0, all
ones, negative, bits past 32 and 64), depths 0 and 1, widths around the sponge's rate, empty batches and entries,
and batches split into several launches (the fixture's 7 workgroups per dimension, a lowered launch cap) and into
several bindings (the backend's binding limit lowered)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.path_roots import compute_roots_on
from whirgpu.errors import ConfigError, DeviceLimitError
from whirgpu.field import P
from whirgpu.kernels import paths
from whirgpu.ref import merkle
from whirgpu.ref.merkle import MerkleTree
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

WORDS = np.array([0, 1, P - 1, P, 2 * P - 1, 2 * P, 0xFFFFFFFF], np.uint32)  # canonical and non-canonical words


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


@pytest.fixture
def launches(monkeypatch):
    """The (first, end) chunks of every batch computed while the test runs: one launch each."""
    seen: list[list[tuple[int, int]]] = []
    original = paths.chunks

    def spy(batch, rt):
        seen.append(original(batch, rt))
        return seen[-1]

    monkeypatch.setattr(paths, "chunks", spy)
    return seen


def _random_opening(rng, n: int, width: int, depth: int, edge: float = 0.0):
    rows = rng.integers(0, P, (n, width), dtype=np.uint64).astype(np.uint32)
    siblings = rng.integers(0, P, (n, depth, 8), dtype=np.uint64).astype(np.uint32)
    for array in (rows, siblings):
        mask = rng.random(array.shape) < edge
        array[mask] = rng.choice(WORDS, size=int(mask.sum()))
    index = np.sort(rng.integers(0, 1 << depth, n)) if depth < 63 else rng.integers(-(1 << 62), 1 << 62, n)
    return rows, index, siblings


def _check(backend, openings) -> list[np.ndarray]:
    want = merkle.compute_roots_batched(openings)
    got = compute_roots_on(backend, openings)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == np.uint32 and g.shape == w.shape, (i, g.shape, w.shape)
        np.testing.assert_array_equal(g, w, err_msg=f"entry {i}")
    return got


def test_trees_of_several_widths_and_depths_in_one_call(gpu, launches):
    """A proof's rounds: base rows of 2^k words, extension rows of 2^k x 4, each tree its own depth (0 and 1
    included), in one call and one launch."""
    rng = np.random.default_rng(1)
    shapes = [(9, 16, 7), (6, 64, 5), (5, 8, 3), (3, 4, 0), (4, 32, 1), (2, 128, 9), (1, 2, 2)]
    _check(gpu, [_random_opening(rng, n, w, d, edge=0.1) for n, w, d in shapes])
    assert launches == [[(0, sum(n for n, _, _ in shapes))]]
    assert gpu.stats.uploaded > 0  # it ran on the device


def test_real_trees_reach_their_roots(gpu):
    """Openings of trees built by the reference climb to those trees' roots."""
    rng = np.random.default_rng(2)
    openings, roots = [], []
    for height, width in ((16, 16), (32, 64), (1, 8), (2, 4)):
        matrix = rng.integers(0, P, (height, width), dtype=np.uint64).astype(np.uint32)
        tree = MerkleTree.build(matrix)
        index = np.array(sorted({0, height // 2, height - 1}))
        openings.append((matrix[index], index, tree.open(index)))
        roots.append(tree.root)
    for got, root in zip(_check(gpu, openings), roots):
        assert (got == root).all()


@pytest.mark.parametrize("width", [0, 1, 7, 8, 9, 15, 16, 17, 64])
def test_widths_around_the_rate(gpu, width):
    rng = np.random.default_rng(10 + width)
    _check(gpu, [_random_opening(rng, 5, width, 3, edge=0.2)])


def test_edge_values_and_indices(gpu):
    depth = 6
    openings = []
    for word in (0, P - 1, P, 0xFFFFFFFF):
        rows = np.full((4, 16), word, np.uint32)
        siblings = np.full((4, depth, 8), word, np.uint32)
        openings.append((rows, np.array([0, (1 << depth) - 1, 1, 1 << (depth - 1)]), siblings))
    rng = np.random.default_rng(3)
    # Indices as int64 bits: all ones at every depth (-1), bits past 32 (depth 40) and past 64 (the sign, depth 66).
    for depth, index in ((1, [0, 1, -1]), (40, [-1, (1 << 39) | 5, (1 << 32) + 1]), (66, [-1, 1 << 62, -(1 << 40)])):
        rows, _, siblings = _random_opening(rng, len(index), 8, depth, edge=0.2)
        openings.append((rows, np.array(index, np.int64), siblings))
    openings.append((np.zeros((2, 0), np.uint32), [0, 0], np.zeros((2, 0, 8), np.uint32)))  # depth 0, width 0
    _check(gpu, openings)


def test_empty_batches_and_entries(gpu, launches):
    assert compute_roots_on(gpu, []) == []
    got = _check(gpu, [(np.zeros((0, 16), np.uint32), [], np.zeros((0, 4, 8), np.uint32))])
    assert got[0].shape == (0, 8)
    rng = np.random.default_rng(4)
    _check(gpu, [(np.zeros((0, 16), np.uint32), [], np.zeros((0, 4, 8), np.uint32)), _random_opening(rng, 3, 16, 4),
                 (np.zeros((0, 64), np.uint32), np.zeros(0, np.int64), np.zeros((0, 2, 8), np.uint32))])
    assert launches == [[(0, 3)]]  # the empty calls launch nothing


def test_batch_past_the_grid_is_several_launches(gpu, launches):
    """The fixture's 7 workgroups per dimension hold 7 * 7 * 64 openings a launch: a larger batch is two."""
    per_launch = paths.launch_openings(gpu.state.drivers)
    assert per_launch == 7 * 7 * paths.WORKGROUP
    rng = np.random.default_rng(5)
    _check(gpu, [_random_opening(rng, per_launch - 100, 8, 2), _random_opening(rng, 300, 16, 1)])
    assert launches == [[(0, per_launch), (per_launch, per_launch + 200)]]


def test_lowered_launch_cap_splits_trees(gpu, launches, monkeypatch):
    monkeypatch.setattr(paths, "MAX_LAUNCH_OPENINGS", 5)
    rng = np.random.default_rng(6)
    _check(gpu, [_random_opening(rng, n, w, d, edge=0.1) for n, w, d in ((7, 16, 4), (3, 64, 2), (6, 4, 5))])
    assert [end - first for first, end in launches[0]] == [5, 5, 5, 1]


@pytest.mark.parametrize("binding", [256, 1024])
def test_lowered_binding_limit_splits_the_batch(gpu_runtime, launches, binding):
    """Rows, siblings, descriptors and roots each within the binding: a 64-word row (256 bytes) or 8 sibling digests
    take a launch of their own at 256 bytes."""
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit = binding
    rng = np.random.default_rng(7)
    openings = [_random_opening(rng, n, w, d, edge=0.1) for n, w, d in ((6, 64, 3), (5, 16, 8), (40, 4, 1))]
    _check(backend, openings)
    (chunks,) = launches
    assert len(chunks) > 2 and chunks[-1][1] == 51
    assert all(end > first for first, end in chunks)


def test_an_opening_larger_than_a_binding_names_the_limit(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit = 256
    rng = np.random.default_rng(8)
    with pytest.raises(DeviceLimitError, match=r"row of 65 words \(260 bytes\) > max_storage_binding_size 256 bytes"):
        compute_roots_on(backend, [_random_opening(rng, 2, 65, 1)])
    with pytest.raises(DeviceLimitError, match=r"9 sibling digests \(288 bytes\) > max_storage_binding_size 256"):
        compute_roots_on(backend, [_random_opening(rng, 2, 8, 9)])


def test_repeated_batches_reuse_the_pool(gpu):
    """Buffers go back to the backend's pool in power-of-two sizes: batches of similar sizes allocate nothing new."""
    rng = np.random.default_rng(9)
    _check(gpu, [_random_opening(rng, 20, 16, 5)])
    pooled = sum(len(free) for free in gpu.state.pool.free_lists.values())
    for n in (19, 18, 20):
        _check(gpu, [_random_opening(rng, n, 16, 5)])
    assert sum(len(free) for free in gpu.state.pool.free_lists.values()) == pooled


def test_contract_errors_match_the_reference(gpu):
    rng = np.random.default_rng(11)
    rows, index, siblings = _random_opening(rng, 3, 8, 2)
    for bad in ((rows[:2], index, siblings), (rows, index, siblings[:, :, :4]), (rows[0], index, siblings)):
        with pytest.raises(ValueError) as want:
            merkle.compute_roots_batched([bad])
        with pytest.raises(ValueError) as got:
            compute_roots_on(gpu, [bad])
        assert str(got.value) == str(want.value)
    compute_roots_on(gpu, [(rows, index, siblings)], constants=Poseidon2Constants.smallrng(1))
    with pytest.raises(ConfigError, match="SmallRng"):
        compute_roots_on(gpu, [(rows, index, siblings)], constants=Poseidon2Constants.plonky3_default())
    with pytest.raises(ConfigError, match="backend name or a Backend"):
        compute_roots_on(object(), [(rows, index, siblings)])


def test_the_cpu_backend_is_the_reference():
    rng = np.random.default_rng(12)
    openings = [_random_opening(rng, 4, 16, 3), _random_opening(rng, 2, 64, 1)]
    for backend in (CpuBackend(), "cpu"):
        for got, want in zip(compute_roots_on(backend, openings), merkle.compute_roots_batched(openings)):
            np.testing.assert_array_equal(got, want)
