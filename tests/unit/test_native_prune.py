"""The compiled multiproof pruning (``native.prune``) against the numpy reference (``ref.merkle_pruned``)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.errors import BackendUnavailable
from whirgpu.native import prune
from whirgpu.ref import merkle_pruned


@pytest.fixture(scope="module")
def compiled():
    try:
        prune.build_now()
    except BackendUnavailable:
        pytest.skip("no C compiler here (the provers use the numpy pruning)")
    walk = prune.compiled_prune_many()
    assert walk is not None
    return walk


def _job(rng, depth: int, q: int, order: str):
    indices = rng.integers(0, 1 << depth, q)
    if order == "sorted":
        indices = np.sort(indices)
    elif order == "distinct":
        indices = np.unique(indices)
    paths = rng.integers(0, 2**32, (indices.size, depth, 8), dtype=np.uint64).astype(np.uint32)
    return indices, paths


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("order", ["random", "sorted", "distinct"])
def test_compiled_pruning_equals_numpy(compiled, seed, order):
    """Several jobs of a call: depths 0-14, 0 to 300 queries (repeats, every index of a tiny tree, one query),
    indices in any order, some jobs at the same positions: each job's digests equal the reference's, same shape."""
    rng = np.random.default_rng(seed)
    jobs = [_job(rng, int(rng.integers(0, 15)), int(rng.integers(0, 300)), order) for _ in range(int(rng.integers(1, 7)))]
    jobs += [_job(rng, 2, 40, order), _job(rng, 9, 1, order), (jobs[0][0], jobs[0][1][:, :, ::-1].copy())]
    got, want = compiled(jobs), merkle_pruned.prune_many(jobs)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == np.uint32 and a.shape == b.shape and np.array_equal(a, b)


def test_jobs_of_another_digest_width_and_empty_jobs(compiled):
    """A job whose digests are not the first job's width, and jobs of no query or no level, as the reference."""
    rng = np.random.default_rng(3)
    wide = (np.array([5, 1, 9]), rng.integers(0, 2**32, (3, 4, 12), dtype=np.uint64).astype(np.uint32))
    jobs = [_job(rng, 5, 7, "random"), wide, (np.zeros(0, np.int64), np.zeros((0, 3, 8), np.uint32)),
            (np.array([1, 0]), np.zeros((2, 0, 8), np.uint32))]
    for a, b in zip(compiled(jobs), merkle_pruned.prune_many(jobs)):
        assert a.shape == b.shape and np.array_equal(a, b)


def test_bad_paths_are_refused_by_name(compiled):
    with pytest.raises(ValueError, match="3 indices with paths of shape"):
        compiled([(np.array([1, 2, 3]), np.zeros((2, 4, 8), np.uint32))])
