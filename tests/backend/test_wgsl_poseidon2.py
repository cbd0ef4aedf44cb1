"""WGSL Poseidon2 permutation, leaf sponge and Merkle trees against the numpy reference, bit for bit, for both
multiply variants (the fixture lowers the per-dimension workgroup limit to 7, so > 448 threads take 2-D grids)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import load_golden
from whirgpu.field import P
from whirgpu.kernels import merkle
from whirgpu.kernels.compose import compose
from whirgpu.kernels.constants import render_poseidon2_constants
from whirgpu.ref import field_np as fnp
from whirgpu.ref.merkle import MerkleTree
from whirgpu.ref.poseidon2 import Poseidon2Constants, hash_rows, permute


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, P, shape, dtype=np.uint64).astype(np.uint32)


def _upload(rt, words: np.ndarray):
    buf = rt.alloc(max(words.nbytes, 4))
    if words.size:
        rt.write(buf, words)
    return buf


def _gpu_permute(rt, states: np.ndarray) -> np.ndarray:
    n = states.shape[0]
    src, dst = _upload(rt, states), rt.alloc(states.nbytes)
    batch = rt.batch()
    merkle.permute_states(rt, batch, src, dst, n)
    batch.submit()
    return rt.read(dst).reshape(n, 16)


def test_rendered_constants_are_the_reference_constants():
    consts = Poseidon2Constants.smallrng(1)
    text = render_poseidon2_constants("wgsl")
    arrays = {name: [int(x) for x in re.findall(r"(\d+)u", body)]
              for name, body in re.findall(r"var<private> (P2_RC_\w+): array<u32, \d+> = array<u32, \d+>\((.*)\);", text)}
    assert arrays["P2_RC_EXTERNAL_INITIAL"] == consts.external_initial.reshape(-1).tolist()
    assert arrays["P2_RC_EXTERNAL_TERMINAL"] == consts.external_terminal.reshape(-1).tolist()
    assert arrays["P2_RC_INTERNAL"] == consts.internal.tolist()
    assert "constant constexpr uint P2_RC_INTERNAL[13]" in render_poseidon2_constants("msl")
    source = compose("wgsl", "merkle_compress", (("bb_mul", "u64"),))
    lines = source.text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("var<private> P2_RC_INTERNAL"))
    assert source.origin(at + 1).startswith("<poseidon2_constants>:")
    assert sum(line.startswith("var<private> P2_RC_INTERNAL") for line in lines) == 1  # included once


def test_permutation_random_and_edge_states(wgpu_runtime):
    kat = load_golden("kat_perm.json")
    inputs = [kat["input_0_to_15"], kat["input_plonky3_kat"]]
    golden = fnp.to_monty(np.asarray(inputs, dtype=np.uint64))
    edges = np.array([[0] * 16, [P - 1] * 16, [1] * 16, list(range(P - 16, P))], dtype=np.uint32)
    states = np.concatenate([golden, edges, _random((500, 16), seed=3)])  # 506 states: a 2-D grid
    out = _gpu_permute(wgpu_runtime, states)
    assert np.array_equal(out, permute(states))
    got = fnp.from_monty(out[:2]).tolist()
    assert got == [kat["output_0_to_15"], kat["output_plonky3_kat_input"]]


@pytest.mark.parametrize("width", [0, 1, 7, 8, 9, 16, 17, 64])
def test_leaf_hashing(wgpu_runtime, width):
    height = 70 if width > 17 else 500  # one or two workgroups; 500 rows take the 2-D grid
    rows = _random((height, width), seed=width)
    rows[0] = 0
    rows[1] = P - 1
    rt = wgpu_runtime
    matrix, digests = _upload(rt, rows), rt.alloc(height * 32)
    batch = rt.batch()
    merkle.hash_leaves(rt, batch, matrix, digests, height, width)
    batch.submit()
    assert np.array_equal(rt.read(digests).reshape(height, 8), hash_rows(rows))


@pytest.mark.parametrize("height,width", [(1, 8), (2, 16), (8, 9), (256, 16), (4096, 8)])
def test_tree(wgpu_runtime, height, width):
    rt = wgpu_runtime
    rows = _random((height, width), seed=height)
    ref = MerkleTree.build(rows)
    levels = merkle.build_tree(rt, _upload(rt, rows), height, width)
    assert len(levels) == ref.depth + 1
    assert np.array_equal(merkle.read_root(rt, levels), ref.root)
    for d, level in enumerate(levels):
        assert np.array_equal(rt.read(level).reshape(-1, 8), ref.levels[d]), f"level {d}"
    indices = [0, min(1, height - 1), height // 2, height - 1]
    assert np.array_equal(merkle.open_paths(rt, levels, indices), ref.open(indices))


def test_tree_recorded_into_callers_batch(wgpu_runtime):
    rt = wgpu_runtime
    rows = _random((64, 16), seed=5)
    batch = rt.batch()
    levels = merkle.build_tree(rt, _upload(rt, rows), 64, 16, batch=batch)
    batch.submit()
    assert np.array_equal(merkle.read_root(rt, levels), MerkleTree.build(rows).root)


def test_bad_arguments(wgpu_runtime):
    rt = wgpu_runtime
    buf = rt.alloc(4 * 6 * 8)
    with pytest.raises(ValueError, match="height 6 is not a power of two"):
        merkle.build_tree(rt, buf, 6, 8)
    with pytest.raises(ValueError, match="needs 512 bytes; the buffer has 192"):
        merkle.build_tree(rt, buf, 8, 16)
    levels = merkle.build_tree(rt, buf, 4, 8)
    with pytest.raises(ValueError, match="index 4 outside"):
        merkle.open_paths(rt, levels, [0, 4])
    assert merkle.open_paths(rt, levels, []).shape == (0, 2, 8)
