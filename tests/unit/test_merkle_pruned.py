"""Pruned multiproofs (``ref.merkle_pruned``) and the p3-whir tree: upstream's example (leaves 1, 2, 5 of 8:
siblings 0, 3, 4 and F), the golden-p3 known answers of both fields (``kat_merkle_*_8x16_seed42``: the rows'
width-24 sponge digests, the root, the pruned proof and the root recomputed from it), and random trees."""

from __future__ import annotations


import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.field import P, field_by_name
from whirgpu.ref.merkle_pruned import (boundary_arrays, boundary_nodes, prune, prune_many, prune_paths,
                                       root_from_pruned)
from whirgpu.ref.poseidon2 import compress, hash_rows_24
from whirgpu.ref.poseidon2_constants import Poseidon2Constants



def _levels(leaves: np.ndarray) -> list[np.ndarray]:
    levels = [leaves]
    while levels[-1].shape[0] > 1:
        level = levels[-1]
        levels.append(compress(level[0::2], level[1::2]))
    return levels


def test_upstreams_example():
    """Leaves 1, 2, 5 of 8: siblings 0, 3, 4 at level 0, then F (node 3 of level 1), nothing at level 2."""
    assert boundary_nodes([5, 1, 2, 2], 3) == [(0, 0), (0, 3), (0, 4), (1, 3)]
    levels, nodes = boundary_arrays([5, 1, 2, 2], 3)
    assert list(zip(levels.tolist(), nodes.tolist())) == [(0, 0), (0, 3), (0, 4), (1, 3)]


@pytest.mark.parametrize("depth", [0, 1, 2, 5, 8, 9])
def test_vectorised_boundary_is_the_loops(depth):
    """``boundary_arrays`` (what ``prune`` uses) against ``boundary_nodes``, over empty, single, dense, full and
    sparse query sets with repeats."""
    rng = np.random.default_rng(depth)
    size = 1 << depth
    cases = [[], [0], [size - 1], list(range(size)), list(range(0, size, 3)) or [0]]
    cases += [rng.integers(0, size, count).tolist() for count in (1, 2, 7, 101, 3 * size)]
    for indices in cases:
        levels, nodes = boundary_arrays(indices, depth)
        assert list(zip(levels.tolist(), nodes.tolist())) == boundary_nodes(indices, depth), indices


@pytest.mark.parametrize("field_name", ["babybear", "koalabear"])
def test_known_answers(field_name):
    kat = load_golden_p3(f"kat_merkle_{field_name}_8x16_seed42.json")
    field = field_by_name(field_name)
    perm16, perm24 = Poseidon2Constants.smallrng_16_24(field)
    monty = np.vectorize(field.to_monty_int, otypes=[np.uint32])
    canonical = np.vectorize(field.from_monty_int, otypes=[np.int64])
    rows = monty(np.asarray(kat["values_canonical"], np.int64))
    assert rows.shape == (kat["rows"], kat["width"])
    leaves = hash_rows_24(rows, perm24)
    assert canonical(leaves).tolist() == kat["leaf_digests_canonical"]
    levels = [leaves]
    while levels[-1].shape[0] > 1:
        levels.append(compress(levels[-1][0::2], levels[-1][1::2], perm16))
    assert canonical(levels[-1][0]).tolist() == kat["root_canonical"]
    multiproof = kat["multiproof"]
    indices = multiproof["indices"]
    siblings = prune(levels, indices)
    assert canonical(siblings).tolist() == multiproof["pruned_proof_canonical"]["sibling_hashes"]
    opened = monty(np.asarray(multiproof["rows_canonical"], np.int64))
    np.testing.assert_array_equal(opened, rows[sorted(indices)])
    root = root_from_pruned(indices, hash_rows_24(opened, perm24), siblings, 3,
                            lambda a, b: compress(a, b, perm16))
    assert canonical(root).tolist() == kat["root_canonical"]


@pytest.mark.parametrize("depth, count, seed", [(1, 1, 0), (1, 2, 1), (4, 3, 2), (6, 20, 3), (7, 128, 4), (9, 1, 5)])
def test_random_trees(depth, count, seed):
    rng = np.random.default_rng(seed)
    leaves = rng.integers(0, P, size=(1 << depth, 8), dtype=np.uint64).astype(np.uint32)
    levels = _levels(leaves)
    indices = rng.integers(0, 1 << depth, size=count).tolist()
    siblings = prune(levels, indices)
    distinct = sorted(set(indices))
    # never more than the full paths, and no digest the verifier can recompute
    assert siblings.shape[0] <= depth * len(distinct)
    root = root_from_pruned(indices, leaves[distinct], siblings, depth, compress)
    np.testing.assert_array_equal(root, levels[-1][0])
    # the same proof from the queried leaves' full paths (what a GPU prover gathers), in any order of the paths
    paths = np.stack([np.stack([levels[d][(i >> d) ^ 1] for d in range(depth)]) for i in distinct])
    reorder = rng.permutation(len(distinct))
    np.testing.assert_array_equal(prune_paths(np.asarray(distinct)[reorder], paths[reorder]), siblings)


def test_prune_many_is_each_prune():
    """Several jobs at once (pairs at the same positions, sets of one size and depth walked together, other sizes
    and depths, repeated indices, empty jobs): each exactly ``prune_paths`` of its own, and each the proof
    ``prune`` makes from its tree's levels."""
    rng = np.random.default_rng(11)
    jobs, trees = [], []
    for depth, count in [(8, 40), (8, 40), (8, 40), (9, 40), (8, 13), (3, 8), (1, 2), (5, 0), (0, 1)]:
        leaves = rng.integers(0, P, size=(1 << depth, 8), dtype=np.uint64).astype(np.uint32)
        levels = _levels(leaves)
        indices = rng.integers(0, 1 << depth, size=count)
        if count > 2:
            indices[1] = indices[0]  # a repeat
        for _ in range(2):  # two trees opened at the same positions
            paths = np.stack([np.stack([levels[d][(i >> d) ^ 1] for d in range(depth)]) if depth else
                              np.zeros((0, 8), np.uint32) for i in indices]) if count else np.zeros((0, depth, 8),
                                                                                                     np.uint32)
            jobs.append((indices, paths))
            trees.append(levels)
            levels = _levels(rng.integers(0, P, size=(1 << depth, 8), dtype=np.uint64).astype(np.uint32))
    for (indices, paths), got, levels in zip(jobs, prune_many(jobs), trees):
        np.testing.assert_array_equal(got, prune_paths(indices, paths))
        if indices.size:
            np.testing.assert_array_equal(got, prune(levels, indices.tolist()).reshape(-1, 8))


def test_a_wrong_proof_is_refused_or_gives_another_root():
    rng = np.random.default_rng(9)
    leaves = rng.integers(0, P, size=(16, 8), dtype=np.uint64).astype(np.uint32)
    levels = _levels(leaves)
    siblings = prune(levels, [3, 9])
    with pytest.raises(ValueError, match="the multiproof has 5 sibling digests; 2 queried leaves of a depth-4 "
                                         "tree need 6"):
        root_from_pruned([3, 9], leaves[[3, 9]], siblings[:-1], 4, compress)
    tampered = siblings.copy()
    tampered[2, 0] ^= 1
    assert not np.array_equal(root_from_pruned([3, 9], leaves[[3, 9]], tampered, 4, compress), levels[-1][0])
    with pytest.raises(ValueError, match="outside a tree of 2\\^4 leaves"):
        boundary_nodes([16], 4)
