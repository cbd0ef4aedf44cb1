"""Merkle tree (spec §3): the golden 8x16 tree, openings, and rejection of tampered openings."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden
from whirgpu.field import P
from whirgpu.ref import field_np as fnp
from whirgpu.ref.merkle import MerkleTree, compute_root, compute_roots_batched, verify_path
from whirgpu.ref.poseidon2 import Poseidon2Constants, compress, hash_rows
from whirgpu.ref.rng import Xoshiro256PlusPlus, random_base


def _golden_matrix():
    m = load_golden("merkle_8x16_seed42_matrix.json")
    values = np.asarray(m["values_canonical"], dtype=np.uint64)
    assert values.shape == (m["rows"], m["width"])
    return m, fnp.to_monty(values)


def test_golden_matrix_is_smallrng42_draw():
    m, rows = _golden_matrix()
    drawn = random_base(Xoshiro256PlusPlus(m["seed"]), rows.size).reshape(rows.shape)
    assert (drawn == rows).all()


def test_golden_tree():
    kat = load_golden("kat_merkle_8x16_seed42.json")
    _, rows = _golden_matrix()
    tree = MerkleTree.build(rows)
    assert tree.depth == 3 and tree.height == 8
    assert fnp.from_monty(tree.levels[0]).tolist() == kat["leaf_digests_canonical"]
    assert fnp.from_monty(tree.root).tolist() == kat["root_canonical"]


def test_levels_are_pairwise_compressions():
    rows = random_base(Xoshiro256PlusPlus(1), 16 * 5).reshape(16, 5)
    tree = MerkleTree.build(rows)
    assert [lv.shape for lv in tree.levels] == [(16, 8), (8, 8), (4, 8), (2, 8), (1, 8)]
    assert (tree.levels[0] == hash_rows(rows)).all()
    for lo, hi in zip(tree.levels, tree.levels[1:]):
        for j in range(hi.shape[0]):
            assert (hi[j] == compress(lo[2 * j:2 * j + 1], lo[2 * j + 1:2 * j + 2])[0]).all()


@pytest.mark.parametrize("height", [0, 3, 6, 12])
def test_height_must_be_power_of_two(height):
    with pytest.raises(ValueError):
        MerkleTree.build(np.zeros((height, 4), dtype=np.uint32))


def test_height_one():
    rows = random_base(Xoshiro256PlusPlus(2), 10).reshape(1, 10)
    tree = MerkleTree.build(rows)
    assert tree.depth == 0 and (tree.root == hash_rows(rows)[0]).all()
    assert tree.open([0]).shape == (1, 0, 8)
    assert verify_path(tree.root, 0, rows[0], tree.open([0])[0])


def test_open_verify_round_trip_and_tampering():
    height, width = 64, 12
    rows = random_base(Xoshiro256PlusPlus(3), height * width).reshape(height, width)
    tree = MerkleTree.build(rows)
    indices = [0, 1, 31, 32, 62, 63]
    sibs = tree.open(indices)
    assert sibs.shape == (len(indices), 6, 8)
    for i, s in zip(indices, sibs):
        assert verify_path(tree.root, i, rows[i], s)
        assert verify_path(tree.root, i, tree.levels[0][i], s, leaf_is_digest=True)
        # tampered sibling (each level), index, value, root
        for d in range(tree.depth):
            bad = s.copy()
            bad[d, d % 8] = (int(bad[d, d % 8]) + 1) % P
            assert not verify_path(tree.root, i, rows[i], bad)
        assert not verify_path(tree.root, i ^ 1, rows[i], s)
        assert not verify_path(tree.root, i ^ 32, rows[i], s)
        bad_row = rows[i].copy()
        bad_row[-1] = (int(bad_row[-1]) + 1) % P
        assert not verify_path(tree.root, i, bad_row, s)
        bad_root = tree.root.copy()
        bad_root[0] ^= 1
        assert not verify_path(bad_root, i, rows[i], s)
        # malformed openings
        assert not verify_path(tree.root, i, rows[i], s[:-1])
        assert not verify_path(tree.root, i + 64, rows[i], s)
        assert not verify_path(tree.root, i, rows[i][:8], s, leaf_is_digest=True)


def test_compute_root_batched():
    rows = random_base(Xoshiro256PlusPlus(4), 32 * 16).reshape(32, 16)
    tree = MerkleTree.build(rows)
    idx = np.arange(32)
    roots = compute_root(idx, tree.levels[0], tree.open(idx))
    assert (roots == tree.root).all()
    sibs = tree.open(idx)
    sibs[5, 2, 0] ^= 1
    roots = compute_root(idx, tree.levels[0], sibs)
    assert (roots == tree.root).all(axis=1).tolist() == [i != 5 for i in range(32)]


def test_open_rejects_out_of_range():
    tree = MerkleTree.build(np.zeros((4, 2), dtype=np.uint32))
    with pytest.raises(ValueError):
        tree.open([4])
    with pytest.raises(ValueError):
        tree.open([-1])


def test_other_constants():
    rows = random_base(Xoshiro256PlusPlus(5), 8 * 4).reshape(8, 4)
    c = Poseidon2Constants.plonky3_default()
    tree = MerkleTree.build(rows, c)
    assert not (tree.root == MerkleTree.build(rows).root).all()
    assert verify_path(tree.root, 3, rows[3], tree.open([3])[0], c)
    assert not verify_path(tree.root, 3, rows[3], tree.open([3])[0])


def test_compute_roots_batched_equals_one_tree_at_a_time():
    """Openings of trees of different widths (1 to 3 sponge chunks, and none) and depths (0 to 6), advanced
    together, give the roots that hashing and climbing each tree separately gives; a changed value or sibling
    changes only its own opening's root."""
    rng = Xoshiro256PlusPlus(6)
    shapes = [(64, 16), (8, 20), (16, 3), (1, 8), (4, 0), (2, 24)]  # (height, width)
    trees, openings = [], []
    for k, (height, width) in enumerate(shapes):
        rows = random_base(rng, height * width).reshape(height, width)
        tree = MerkleTree.build(rows)
        idx = np.array(sorted({(7 * j + k) % height for j in range(5)}), np.int64)
        trees.append(tree)
        openings.append((rows[idx], idx, tree.open(idx)))
    rows, idx0, sibs = openings[0]
    bad_rows, bad_sibs = rows.copy(), sibs.copy()
    bad_rows[1, 15] ^= 1
    bad_sibs[3, 5, 7] ^= 1
    openings += [(bad_rows, idx0, sibs), (rows, idx0, bad_sibs), (rows[:0], idx0[:0], sibs[:0])]
    roots = compute_roots_batched(openings)
    assert len(roots) == len(openings)
    for (rows, idx, sibs), got in zip(openings, roots):
        assert got.shape == (idx.size, 8)
        np.testing.assert_array_equal(got, compute_root(idx, hash_rows(rows), sibs))
    for tree, got in zip(trees, roots):
        assert (got == tree.root).all()
    assert (roots[-3] == trees[0].root).all(axis=1).tolist() == [j != 1 for j in range(idx0.size)]
    assert (roots[-2] == trees[0].root).all(axis=1).tolist() == [j != 3 for j in range(idx0.size)]


def test_compute_roots_batched_with_shared_and_repeated_openings():
    """Identical inputs are permuted once: openings of one leaf repeated, neighbours sharing their upper nodes,
    and a repeated opening whose path differs only near the root all keep their own, correct, roots."""
    rows = random_base(Xoshiro256PlusPlus(8), 32 * 4).reshape(32, 4)
    tree = MerkleTree.build(rows)
    idx = np.array([3, 3, 4, 5, 5, 5, 30, 3], np.int64)  # the last one repeats a non-neighbour
    sibs = tree.open(idx)
    sibs[4, 4, 0] ^= 1  # the second opening of 5 differs only at the top level
    got = compute_roots_batched([(rows[idx], idx, sibs)])[0]
    np.testing.assert_array_equal(got, compute_root(idx, hash_rows(rows[idx]), sibs))
    assert (got == tree.root).all(axis=1).tolist() == [j != 4 for j in range(len(idx))]
