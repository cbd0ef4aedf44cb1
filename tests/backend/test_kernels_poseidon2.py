"""WGSL Poseidon2 permutation, leaf sponge and Merkle trees against the numpy reference, bit for bit, for both
multiply variants (the fixture lowers the per-dimension workgroup limit to 7, so > 448 threads take 2-D grids)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden
from whirgpu.field import P
from whirgpu.kernels.split import read_rows
from whirgpu.kernels import merkle
from whirgpu.kernels.compose import compose
from whirgpu.kernels.constants import (P2_RC_DIAG_AT, P2_RC_INTERNAL_AT, P2_RC_VEC4S, poseidon2_rc_table,
                                       render_poseidon2_constants)
from whirgpu.ref import field_np as fnp
from whirgpu.ref.merkle import MerkleTree
from whirgpu.ref.poseidon2 import INTERNAL_DIAGONAL, Poseidon2Constants, hash_rows, permute


def _random(shape, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, P, shape, dtype=np.uint64).astype(np.uint32)


def _upload(rt, words: np.ndarray):
    buf = rt.alloc(max(words.nbytes, 4))
    if words.size:
        rt.write(buf, words)
    return buf


def _gpu_permute(rt, states: np.ndarray, coop: bool | None = None) -> np.ndarray:
    n = states.shape[0]
    src, dst = _upload(rt, states), rt.alloc(states.nbytes)
    batch = rt.batch()
    merkle.permute_states(rt, batch, src, dst, n, coop=coop)
    batch.submit()
    return rt.read(dst).reshape(n, 16)


def test_round_constant_table_is_the_reference_constants():
    consts = Poseidon2Constants.smallrng(1)
    table = poseidon2_rc_table().reshape(-1, 4)
    assert table.shape == (P2_RC_VEC4S, 4)
    assert table[:16].reshape(-1).tolist() == consts.external_initial.reshape(-1).tolist()
    assert table[16:P2_RC_INTERNAL_AT].reshape(-1).tolist() == consts.external_terminal.reshape(-1).tolist()
    assert table[P2_RC_INTERNAL_AT:P2_RC_DIAG_AT, 0].tolist() == consts.internal.tolist()
    assert not table[P2_RC_INTERNAL_AT:P2_RC_DIAG_AT, 1:].any()
    assert fnp.from_monty(table[P2_RC_DIAG_AT:].reshape(-1)).tolist() == INTERNAL_DIAGONAL
    for lang, line in (("wgsl", "const P2_RC_INTERNAL_AT: u32 = 32u;"),
                       ("msl", "constant constexpr uint P2_RC_INTERNAL_AT = 32u;")):
        text = render_poseidon2_constants(lang)
        assert line in text and "P2_RC_EXTERNAL" not in text  # the tables come from a binding in both languages
    source = compose("wgsl", "merkle_compress", (("bb_mul", "u64"),))
    lines = source.text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("const P2_RC_VEC4S"))
    assert source.origin(at + 1).startswith("<poseidon2_constants>:")
    assert sum(line.startswith("const P2_RC_VEC4S") for line in lines) == 1  # included once


@pytest.mark.parametrize("coop", [False, True], ids=["thread", "coop"])
def test_permutation_random_and_edge_states(gpu_runtime, coop):
    kat = load_golden("kat_perm.json")
    inputs = [kat["input_0_to_15"], kat["input_plonky3_kat"]]
    golden = fnp.to_monty(np.asarray(inputs, dtype=np.uint64))
    edges = np.array([[0] * 16, [P - 1] * 16, [1] * 16, list(range(P - 16, P))], dtype=np.uint32)
    # 506 states: a 2-D grid either way (coop: 32 workgroups of 16 states, the last one part-filled)
    states = np.concatenate([golden, edges, _random((500, 16), seed=3)])
    out = _gpu_permute(gpu_runtime, states, coop)
    assert np.array_equal(out, permute(states))
    got = fnp.from_monty(out[:2]).tolist()
    assert got == [kat["output_0_to_15"], kat["output_plonky3_kat_input"]]


@pytest.mark.parametrize("n", [1, 3, 17])
def test_cooperative_permutation_partial_workgroups(gpu_runtime, n):
    states = _random((n, 16), seed=n)
    assert np.array_equal(_gpu_permute(gpu_runtime, states, coop=True), permute(states))


@pytest.mark.parametrize("width", [0, 1, 7, 8, 9, 16, 17, 64])
def test_leaf_hashing(gpu_runtime, width):
    height = 70 if width > 17 else 500  # one or two workgroups; 500 rows take the 2-D grid
    rows = _random((height, width), seed=width)
    rows[0] = 0
    rows[1] = P - 1
    rt = gpu_runtime
    matrix, digests = _upload(rt, rows), rt.alloc(height * 32)
    batch = rt.batch()
    merkle.hash_leaves(rt, batch, matrix, digests, height, width)
    batch.submit()
    assert np.array_equal(rt.read(digests).reshape(height, 8), hash_rows(rows))


@pytest.mark.parametrize("height,width", [(1, 8), (2, 16), (8, 9), (256, 16), (4096, 8)])
def test_tree(gpu_runtime, height, width):
    rt = gpu_runtime
    rows = _random((height, width), seed=height)
    ref = MerkleTree.build(rows)
    levels = merkle.build_tree(rt, _upload(rt, rows), height, width)
    assert len(levels) == ref.depth + 1
    assert np.array_equal(merkle.read_root(rt, levels), ref.root)
    for d, level in enumerate(levels):
        assert np.array_equal(read_rows(rt, level).reshape(-1, 8), ref.levels[d]), f"level {d}"
    indices = [0, min(1, height - 1), height // 2, height - 1]
    assert np.array_equal(merkle.open_paths(rt, levels, indices), ref.open(indices))


@pytest.mark.parametrize("coop_max", [0, 1, 2, 64])
def test_tree_cooperative_threshold(gpu_runtime, monkeypatch, coop_max):
    # levels of <= coop_max parents take the cooperative kernel; 0 means none, 64 means every level here
    monkeypatch.setattr(merkle, "COOP_MAX_STATES", coop_max)
    rt = gpu_runtime
    rows = _random((128, 9), seed=coop_max)
    ref = MerkleTree.build(rows)
    levels = merkle.build_tree(rt, _upload(rt, rows), 128, 9)
    for d, level in enumerate(levels):
        assert np.array_equal(read_rows(rt, level).reshape(-1, 8), ref.levels[d]), f"level {d}"


def test_tree_recorded_into_callers_batch(gpu_runtime):
    rt = gpu_runtime
    rows = _random((64, 16), seed=5)
    batch = rt.batch()
    levels = merkle.build_tree(rt, _upload(rt, rows), 64, 16, batch=batch)
    batch.submit()
    assert np.array_equal(merkle.read_root(rt, levels), MerkleTree.build(rows).root)


def test_bad_arguments(gpu_runtime):
    rt = gpu_runtime
    buf = rt.alloc(4 * 6 * 8)
    with pytest.raises(ValueError, match="height 6 is not a power of two"):
        merkle.build_tree(rt, buf, 6, 8)
    with pytest.raises(ValueError, match="needs 512 bytes; the buffer has 192"):
        merkle.build_tree(rt, buf, 8, 16)
    levels = merkle.build_tree(rt, buf, 4, 8)
    with pytest.raises(ValueError, match="index 4 outside"):
        merkle.open_paths(rt, levels, [0, 4])
    assert merkle.open_paths(rt, levels, []).shape == (0, 2, 8)


# ---- KoalaBear (the p3-whir profile's width-16 permutation), kernels composed for the field -------------------

@pytest.mark.parametrize("coop", [False, True], ids=["plain", "coop"])
@pytest.mark.parametrize("n", [1, 5, 300])
def test_koalabear_permutation(gpu_runtime, coop, n):
    """x^3, 20 internal rounds, the diagonal by products (p2_internal_round_diag): the kernels composed for
    KoalaBear against the reference permutation with p3-whir's SmallRng(1) constants."""
    from whirgpu.field import KOALABEAR
    from whirgpu.ref.poseidon2_constants import Poseidon2Constants

    consts = Poseidon2Constants.smallrng_16_24(KOALABEAR)[0]
    rng = np.random.default_rng(n)
    states = rng.integers(0, KOALABEAR.P, (n, 16), dtype=np.uint64).astype(np.uint32)
    states[0] = [0, 1, KOALABEAR.P - 1, KOALABEAR.R, *range(2, 14)]
    src, dst = _upload(gpu_runtime, states), gpu_runtime.alloc(states.nbytes)
    batch = gpu_runtime.batch()
    merkle.permute_states(gpu_runtime, batch, src, dst, n, coop=coop, field="koalabear")
    batch.submit()
    np.testing.assert_array_equal(gpu_runtime.read(dst).reshape(n, 16), permute(states, consts))


def test_koalabear_round_constant_table():
    from whirgpu.field import KOALABEAR
    from whirgpu.kernels.constants import rc_layout
    from whirgpu.ref.field_np import field_ops
    from whirgpu.ref.poseidon2_constants import Poseidon2Constants
    from whirgpu.ref.poseidon2_params import poseidon2_params

    consts = Poseidon2Constants.smallrng_16_24(KOALABEAR)[0]
    internal_at, diag_at, vec4s = rc_layout("koalabear")
    table = poseidon2_rc_table("koalabear").reshape(-1, 4)
    assert (internal_at, diag_at, vec4s) == (32, 52, 56) and table.shape == (vec4s, 4)
    assert table[internal_at:diag_at, 0].tolist() == consts.internal.tolist()
    diagonal = field_ops(KOALABEAR).from_monty(table[diag_at:].reshape(-1)).tolist()
    assert diagonal == list(poseidon2_params(KOALABEAR, 16).diagonal)
    assert poseidon2_rc_table().tolist() == poseidon2_rc_table("babybear").tolist()
    assert "const P2_SBOX_DEGREE: u32 = 3u;" in render_poseidon2_constants("wgsl", "koalabear")
