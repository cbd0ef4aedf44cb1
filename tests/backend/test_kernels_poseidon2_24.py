"""The width-24 Poseidon2 permutation and p3-whir's width-24 leaf sponge (``merkle_leaves24``) on every runtime, for
BabyBear and KoalaBear, bit for bit against the numpy reference (``ref.poseidon2.permute`` / ``hash_rows_24`` with
``Poseidon2Constants.smallrng_16_24(field)[1]``), and whole Merkle trees with width-24 leaves against
``ref.p3_codeword.merkle_levels``, one binding per level and with the limits lowered so that levels and the
matrix are bound in windows (and split over buffers). The fixture lowers the per-dimension workgroup limit to 7,
so launches of more than 448 threads take 2-D grids."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from whirgpu.field import field_by_name
from whirgpu.kernels import merkle
from whirgpu.kernels.compose import compose
from whirgpu.kernels.constants import (poseidon2_rc_table, rc_layout, render_poseidon2_24_constants,
                                       render_poseidon2_constants)
from whirgpu.kernels.split import read_rows
from whirgpu.ref.field_np import field_ops
from whirgpu.ref.p3_codeword import merkle_levels
from whirgpu.ref.poseidon2 import compress, hash_rows, hash_rows_24, permute
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

FIELDS = ["babybear", "koalabear"]
ROW_WIDTHS = [0, 1, 8, 15, 16, 17, 31, 32, 33, 64, 128]


def _perms(field: str) -> tuple[Poseidon2Constants, Poseidon2Constants]:
    return Poseidon2Constants.smallrng_16_24(field_by_name(field))


def _random(field: str, shape, seed: int) -> np.ndarray:
    p = field_by_name(field).P
    return np.random.default_rng(seed).integers(0, p, shape, dtype=np.uint64).astype(np.uint32)


def _upload(rt, words: np.ndarray):
    buf = rt.alloc(max(words.nbytes, 4))
    if words.size:
        rt.write(buf, np.ascontiguousarray(words).reshape(-1))
    return buf


class _Lowered:
    """A runtime seen with lower binding and buffer limits (as ``GpuBackend`` lowers them): trees laid out for it
    bind their matrix and levels in windows, and split levels over buffers."""

    def __init__(self, rt, binding_limit: int, buffer_limit: int):
        self._rt, self._binding, self._buffer = rt, binding_limit, buffer_limit

    def limits(self):
        return replace(self._rt.limits(), max_storage_binding_size=self._binding, max_buffer_size=self._buffer)

    def __getattr__(self, name):
        return getattr(self._rt, name)


# ---- constants (no device) ----------------------------------------------------------------------------------

@pytest.mark.parametrize("field", FIELDS)
def test_round_constant_table_24(field):
    perm24 = _perms(field)[1]
    params = perm24.params
    internal_at, diag_at, vec4s = rc_layout(field, 24)
    table = poseidon2_rc_table(field, 24).reshape(-1, 4)
    assert table.shape == (vec4s, 4) and internal_at == 6 * params.rounds_full
    assert diag_at == internal_at + params.rounds_partial and vec4s == diag_at + 6
    assert table[:internal_at // 2].reshape(-1).tolist() == perm24.external_initial.reshape(-1).tolist()
    assert table[internal_at // 2:internal_at].reshape(-1).tolist() == perm24.external_terminal.reshape(-1).tolist()
    assert table[internal_at:diag_at, 0].tolist() == perm24.internal.tolist()
    assert not table[internal_at:diag_at, 1:].any()
    diagonal = field_ops(params.field).from_monty(table[diag_at:].reshape(-1)).tolist()
    assert diagonal == list(params.diagonal)
    # the width-16 table is untouched by the width argument
    assert poseidon2_rc_table(field).tolist() == poseidon2_rc_table(field, 16).tolist()
    text = render_poseidon2_24_constants("wgsl", field)
    assert f"const P24_INTERNAL_ROUNDS: u32 = {params.rounds_partial}u;" in text
    assert f"const P24_RC_VEC4S: u32 = {vec4s}u;" in text
    assert f"constant constexpr uint P24_RC_DIAG_AT = {diag_at}u;" in render_poseidon2_24_constants("msl", field)
    assert "P24_" not in render_poseidon2_constants("wgsl", field)


@pytest.mark.parametrize("lang", ["wgsl", "msl"])
def test_width_24_kernel_composes_each_library_once(lang):
    source = compose(lang, "merkle_leaves24", (("bb_mul", "emulated"),), "koalabear")
    lines = source.text.splitlines()
    decl = "const P24_RC_VEC4S" if lang == "wgsl" else "constant constexpr uint P24_RC_VEC4S"
    at = [i for i, line in enumerate(lines) if line.startswith(decl)]
    assert len(at) == 1 and source.origin(at[0] + 1).startswith("<poseidon2_24_constants>:")
    assert not any("p2_rc" in line.split("//")[0] for line in lines)  # only the width-24 table is bound


# ---- the permutation ----------------------------------------------------------------------------------------

def _gpu_permute_24(rt, states: np.ndarray, field: str) -> np.ndarray:
    n = states.shape[0]
    src, dst = _upload(rt, states), rt.alloc(states.nbytes)
    batch = rt.batch()
    merkle.permute_states(rt, batch, src, dst, n, field=field, width=24)
    batch.submit()
    return rt.read(dst).reshape(n, 24)


@pytest.mark.parametrize("field", FIELDS)
def test_permutation_24_random_and_edge_states(gpu_runtime, field):
    f = field_by_name(field)
    edges = np.array([[0] * 24, [f.P - 1] * 24, [1] * 24, [f.R] * 24, [12345] * 24, list(range(f.P - 24, f.P)),
                      list(range(24))], dtype=np.uint32)
    # 507 states: 8 workgroups of 64, a 2-D grid with the fixture's limit of 7 per dimension, the last part-filled
    states = np.concatenate([edges, _random(field, (500, 24), seed=24)])
    out = _gpu_permute_24(gpu_runtime, states, field)
    np.testing.assert_array_equal(out, permute(states, _perms(field)[1]))


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("n", [1, 3])
def test_permutation_24_few_states(gpu_runtime, field, n):
    states = _random(field, (n, 24), seed=n)
    np.testing.assert_array_equal(_gpu_permute_24(gpu_runtime, states, field), permute(states, _perms(field)[1]))


def test_permutation_24_has_no_cooperative_kernel(gpu_runtime):
    buf = gpu_runtime.alloc(96)
    with pytest.raises(ValueError, match="no cooperative kernel"):
        merkle.permute_states(gpu_runtime, gpu_runtime.batch(), buf, buf, 1, coop=True, width=24)
    with pytest.raises(ValueError, match="width 20"):
        merkle.permute_states(gpu_runtime, gpu_runtime.batch(), buf, buf, 1, width=20)


# ---- the leaf sponge ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("width", ROW_WIDTHS)
def test_leaf_hashing_24(gpu_runtime, field, width):
    # 130 rows: three workgroups of 64, the last part-filled; width 17 also over 500 rows (a 2-D grid)
    height = 500 if width == 17 else 130
    p = field_by_name(field).P
    rows = _random(field, (height, width), seed=width)
    if width:
        rows[0] = 0
        rows[1] = p - 1
        rows[2] = rows[2, 0]  # all equal
    rt = gpu_runtime
    matrix, digests = _upload(rt, rows), rt.alloc(height * 32)
    batch = rt.batch()
    merkle.hash_leaves(rt, batch, matrix, digests, height, width, leaf_width=24, field=field)
    batch.submit()
    np.testing.assert_array_equal(rt.read(digests).reshape(height, 8), hash_rows_24(rows, _perms(field)[1]))


def test_bad_leaf_width(gpu_runtime):
    buf = gpu_runtime.alloc(4 * 8 * 4)
    with pytest.raises(ValueError, match="leaf width 20"):
        merkle.build_tree(gpu_runtime, buf, 4, 8, leaf_width=20)


# ---- whole trees --------------------------------------------------------------------------------------------

def _check_tree(rt, codeword: np.ndarray, field: str) -> None:
    """The tree with width-24 leaves over ``codeword`` (H, w) or (H, w, 4) against merkle_levels: every level,
    the root and a few opening paths."""
    height = codeword.shape[0]
    width = int(np.prod(codeword.shape[1:]))
    ref = merkle_levels(codeword, field_by_name(field))
    levels = merkle.build_tree(rt, _upload(rt, codeword), height, width, leaf_width=24, field=field)
    assert len(levels) == len(ref)
    for d, level in enumerate(levels):
        assert level.nbytes == (height >> d) * 32
        np.testing.assert_array_equal(read_rows(rt, level).reshape(-1, 8), ref[d], err_msg=f"level {d}")
    np.testing.assert_array_equal(merkle.read_root(rt, levels), ref[-1][0])
    indices = sorted({0, height // 3, height - 1})
    expected = np.stack([np.stack([ref[d][(i >> d) ^ 1] for d in range(len(ref) - 1)]) if len(ref) > 1 else
                         np.zeros((0, 8), np.uint32) for i in indices])
    np.testing.assert_array_equal(merkle.open_paths(rt, levels, indices), expected)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("height,width", [(1, 16), (2, 0), (4, 1), (8, 33), (64, 17), (256, 32), (1024, 8)])
def test_tree_24(gpu_runtime, field, height, width):
    _check_tree(gpu_runtime, _random(field, (height, width), seed=height + width), field)


@pytest.mark.parametrize("field", FIELDS)
def test_tree_24_extension_rows(gpu_runtime, field):
    """An EF codeword (H, 2^k, 4): each leaf hashes its row's 4 * 2^k base words, element by element."""
    _check_tree(gpu_runtime, _random(field, (128, 8, 4), seed=7), field)


@pytest.mark.parametrize("mode", ["windows", "buffers"])
@pytest.mark.parametrize("field", FIELDS)
def test_tree_24_windowed(gpu_runtime, field, mode):
    """Bindings of 1 KiB: the (256, 32) matrix is hashed in windows of 8 rows and the lower levels are bound in
    windows; "buffers" also caps buffers at 4 KiB, so the leaf level is split over two buffers."""
    rt = _Lowered(gpu_runtime, 1024, 4096 if mode == "buffers" else gpu_runtime.limits().max_buffer_size)
    levels_before = merkle.alloc_tree(rt, 256)
    assert levels_before[0].split and (mode == "windows" or len(levels_before[0].buffers) == 2)
    _check_tree(rt, _random(field, (256, 32), seed=11), field)


@pytest.mark.parametrize("field", FIELDS)
def test_tree_24_recorded_into_callers_batch(gpu_runtime, field):
    """record_tree with width-24 leaves: the last merkle_top launch is the caller's to record (TopLaunch.record
    binds the field's width-16 table)."""
    rt = gpu_runtime
    rows = _random(field, (512, 16), seed=3)
    batch = rt.batch()
    levels, last = merkle.record_tree(rt, batch, _upload(rt, rows), 512, 16, leaf_width=24, field=field)
    assert last is not None and last.field == field
    last.record(rt, batch)
    batch.submit()
    np.testing.assert_array_equal(merkle.read_root(rt, levels), merkle_levels(rows, field_by_name(field))[-1][0])


def test_koalabear_tree_with_width_16_leaves(gpu_runtime):
    """The field argument alone: KoalaBear's width-16 sponge at the leaves and its compression at the nodes."""
    rt = gpu_runtime
    perm16 = _perms("koalabear")[0]
    rows = _random("koalabear", (64, 9), seed=9)
    ref = [hash_rows(rows, perm16)]
    while len(ref[-1]) > 1:
        ref.append(compress(ref[-1][0::2], ref[-1][1::2], perm16))
    levels = merkle.build_tree(rt, _upload(rt, rows), 64, 9, field="koalabear")
    for d, level in enumerate(levels):
        np.testing.assert_array_equal(read_rows(rt, level).reshape(-1, 8), ref[d], err_msg=f"level {d}")
