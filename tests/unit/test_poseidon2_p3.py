"""Poseidon2 of the p3-whir profile (BabyBear and KoalaBear, widths 16 and 24; constants from one SmallRng(1)
stream) against the known-answer files in tests/golden-p3, and the width-24 sponge against a slow model written
here from the definitions (not ``whirgpu.ref``'s code)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.ref import poseidon2 as p2
from whirgpu.ref.field_np import field_ops
from whirgpu.ref.poseidon2 import Poseidon2Constants, compress, hash_rows, hash_rows_24, permute, permute_ints
from whirgpu.ref.poseidon2_params import poseidon2_params
from whirgpu.ref.rng import Xoroshiro128Plus, Xoshiro256PlusPlus, random_base

CASES = [(f, w) for f in (BABYBEAR, KOALABEAR) for w in (16, 24)]
IDS = [f"{f.name}-{w}" for f, w in CASES]


def _kat(field, width) -> dict:
    return load_golden_p3(f"kat_perm_{field.name}_{width}.json")


def _pair_member(field, width) -> Poseidon2Constants:
    return Poseidon2Constants.smallrng_16_24(field)[0 if width == 16 else 1]


# ---- the slow model: canonical Python ints, each layer written out ----------------------------------------------

# Plonky3's internal diagonals read off its ``internal_layer_mat_mul`` bodies: an int is itself, (sign, k) is
# sign / 2^k. Entries 0..8 are the same everywhere.
_HEAD = [-2, 1, 2, (1, 1), 3, 4, (-1, 1), -3, -4]
V_SPEC = {
    ("babybear", 16): _HEAD + [(1, 8), (1, 2), (1, 3), (1, 27), (-1, 8), (-1, 4), (-1, 27)],
    ("babybear", 24): _HEAD + [(1, 8), (1, 2), (1, 3), (1, 4), (1, 7), (1, 9), (1, 27), (-1, 8), (-1, 2), (-1, 3),
                               (-1, 4), (-1, 5), (-1, 6), (-1, 7), (-1, 27)],
    ("koalabear", 16): _HEAD + [(1, 8), (1, 3), (1, 24), (-1, 8), (-1, 3), (-1, 4), (-1, 24)],
    ("koalabear", 24): _HEAD + [(1, 8), (1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (1, 24), (-1, 8), (-1, 3), (-1, 4),
                                (-1, 5), (-1, 6), (-1, 7), (-1, 9), (-1, 24)],
}
SBOX = {"babybear": 7, "koalabear": 3}


def _v(entry, p):
    if isinstance(entry, int):
        return entry % p
    sign, k = entry
    return sign * pow(2, -k, p) % p


def slow_external(s, p):
    """M4 on each 4-chunk, then each value plus the sum over chunks of the values at its position."""
    y = []
    for c in range(0, len(s), 4):
        a, b, c2, d = s[c:c + 4]
        y += [2 * a + 3 * b + c2 + d, a + 2 * b + 3 * c2 + d, a + b + 2 * c2 + 3 * d, 3 * a + b + c2 + 2 * d]
    sums = [sum(y[j] for j in range(i, len(s), 4)) for i in range(4)]
    return [(y[i] + sums[i % 4]) % p for i in range(len(s))]


def slow_permute(state, field, consts):
    """One state of canonical ints; ``consts`` = (initial rows, terminal rows, internal), canonical."""
    p, d = field.P, SBOX[field.name]
    v = [_v(e, p) for e in V_SPEC[field.name, len(state)]]
    initial, terminal, internal = consts
    s = slow_external(list(state), p)
    for rc in initial:
        s = slow_external([pow(x + c, d, p) for x, c in zip(s, rc)], p)
    for c in internal:
        s[0] = pow(s[0] + c, d, p)
        total = sum(s)
        s = [(total + vi * x) % p for vi, x in zip(v, s)]
    for rc in terminal:
        s = slow_external([pow(x + c, d, p) for x, c in zip(s, rc)], p)
    return s


def slow_sponge(row, field, consts, width=24, rate=16, out=8):
    """PaddingFreeSponge: zero state; absorb element by element into lanes 0..rate, permuting after every full
    block; when the input runs out inside a block (not at its start), permute once more; squeeze lanes 0..out."""
    state = [0] * width
    i = 0
    for x in row:
        state[i] = x
        i += 1
        if i == rate:
            state = slow_permute(state, field, consts)
            i = 0
    if i:
        state = slow_permute(state, field, consts)
    return state[:out]


# ---- known answers ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("field,width", CASES, ids=IDS)
def test_instance_matches_the_kat_header(field, width):
    kat, params = _kat(field, width), poseidon2_params(field, width)
    assert (kat["field"], kat["width"]) == (field.name, width)
    assert (params.sbox_degree, params.rounds_full, params.rounds_partial) == \
        (kat["sbox_degree"], kat["rounds_full"], kat["rounds_partial"])
    assert list(params.diagonal) == [_v(e, field.P) for e in V_SPEC[field.name, width]]


@pytest.mark.parametrize("field,width", CASES, ids=IDS)
def test_smallrng_stream_constants(field, width):
    kat, consts = _kat(field, width), _pair_member(field, width)
    assert consts.params is poseidon2_params(field, width)
    ops = field_ops(field)
    assert ops.from_monty(consts.external_initial).tolist() == kat["external_initial_canonical"]
    assert ops.from_monty(consts.external_terminal).tolist() == kat["external_terminal_canonical"]
    assert ops.from_monty(consts.internal).tolist() == kat["internal_canonical"]
    assert Poseidon2Constants.smallrng_16_24(field)[width == 24] is consts  # cached


def test_the_babybear_pair_starts_with_the_whir_p3_constants():
    first = Poseidon2Constants.smallrng_16_24(BABYBEAR)[0]
    default = Poseidon2Constants.smallrng(1)
    for name in ("external_initial", "external_terminal", "internal"):
        np.testing.assert_array_equal(getattr(first, name), getattr(default, name))


@pytest.mark.parametrize("field,width", CASES, ids=IDS)
def test_permutation_kats(field, width, monkeypatch):
    kat, consts, ops = _kat(field, width), _pair_member(field, width), field_ops(field)
    inputs, outputs = [kat["input_0_to_w"], kat["input_random"]], [kat["output_0_to_w"], kat["output_random"]]
    for x, y in zip(inputs, outputs):
        assert permute_ints(x, consts) == y
        assert slow_permute(x, field, consts.canonical) == y
    # the random input is SmallRng(7)'s first W draws
    assert ops.from_monty(random_base(Xoshiro256PlusPlus(7), width, field)).tolist() == kat["input_random"]
    # vectorised, Montgomery in and out: a few states (Python-int path) and a batch (lane-major blocks) that
    # mixes both inputs, with several blocks
    batch = [inputs[i % 2] for i in range(2 * p2._SCALAR_MAX + 3)]
    want = [outputs[i % 2] for i in range(len(batch))]
    states = ops.to_monty(np.asarray(batch, dtype=np.uint64))
    before = states.copy()
    assert ops.from_monty(permute(states[:2], consts)).tolist() == want[:2]
    monkeypatch.setattr(p2, "_BLOCK", 4)
    out = permute(states, consts)
    assert out.dtype == np.uint32 and out.shape == (len(batch), width)
    assert ops.from_monty(out).tolist() == want
    assert (states == before).all()
    # the constants rebuilt from the listed canonical values give the same permutation
    rebuilt = Poseidon2Constants.from_canonical(kat["external_initial_canonical"], kat["external_terminal_canonical"],
                                                kat["internal_canonical"], consts.params)
    assert permute_ints(inputs[1], rebuilt) == outputs[1]


@pytest.mark.parametrize("field,width", CASES, ids=IDS)
def test_plonky3_xoroshiro_vector(field, width):
    """Plonky3's own test_poseidon2_width_{16,24}_random: constants from Xoroshiro128Plus(1)."""
    selftest = _kat(field, width)["selftest_plonky3_xoroshiro128plus_kat"]
    consts = Poseidon2Constants.from_rng(Xoroshiro128Plus(1), poseidon2_params(field, width))
    assert permute_ints(selftest["input"], consts) == selftest["expected"]


def test_constants_validation_per_instance():
    kb16 = Poseidon2Constants.smallrng_16_24(KOALABEAR)[0]
    bad = kb16.internal.copy()
    bad[0] = KOALABEAR.P
    with pytest.raises(ValueError, match="word >= P"):
        Poseidon2Constants(kb16.external_initial, kb16.external_terminal, bad, kb16.params)
    with pytest.raises(ValueError, match="shape"):
        Poseidon2Constants(kb16.external_initial, kb16.external_terminal, kb16.internal,
                           poseidon2_params(KOALABEAR, 24))
    with pytest.raises(KeyError):
        poseidon2_params(KOALABEAR, 32)


# ---- sponge and compression ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("length", [0, 1, 8, 15, 16, 17, 31, 32, 33, 50])
def test_hash_rows_24_matches_the_slow_sponge(field, length):
    consts, ops = _pair_member(field, 24), field_ops(field)
    rows = random_base(Xoshiro256PlusPlus(200 + length), 6 * length, field).reshape(6, length)
    if length:
        rows[0] = 0
        rows[1] = ops.constant(field.P - 1)
    out = hash_rows_24(rows, consts)
    assert out.shape == (6, 8) and out.dtype == np.uint32
    for row, digest in zip(ops.from_monty(rows).tolist(), ops.from_monty(out).tolist()):
        assert digest == slow_sponge(row, field, consts.canonical)
    np.testing.assert_array_equal(hash_rows_24(rows[2:3], consts), out[2:3])  # one row: the Python-int path


def test_hash_rows_24_partial_block_keeps_the_other_lanes():
    # 20 inputs: block 2 overwrites lanes 0..4 only; lanes 4..24 keep the first permutation's output
    consts = _pair_member(KOALABEAR, 24)
    rows = random_base(Xoshiro256PlusPlus(9), 20, KOALABEAR).reshape(1, 20)
    state = np.zeros((1, 24), np.uint32)
    state[:, :16] = rows[:, :16]
    state = permute(state, consts)
    state[:, :4] = rows[:, 16:]
    np.testing.assert_array_equal(hash_rows_24(rows, consts), permute(state, consts)[:, :8])
    assert (hash_rows_24(np.zeros((2, 0), np.uint32), consts) == 0).all()


def test_width_checks():
    kb16, kb24 = Poseidon2Constants.smallrng_16_24(KOALABEAR)
    with pytest.raises(ValueError, match="width-24"):
        hash_rows_24(np.zeros((1, 4), np.uint32), kb16)
    with pytest.raises(ValueError, match="width-16"):
        hash_rows(np.zeros((1, 4), np.uint32), kb24)
    with pytest.raises(ValueError, match=r"\(N, 24\)"):
        permute(np.zeros((2, 16), np.uint32), kb24)


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
def test_compress_and_hash_rows_with_a_p3_width_16_permutation(field):
    consts, ops = _pair_member(field, 16), field_ops(field)
    left = random_base(Xoshiro256PlusPlus(1), 40, field).reshape(5, 8)
    right = random_base(Xoshiro256PlusPlus(2), 40, field).reshape(5, 8)
    out = compress(left, right, consts)
    for a, b, o in zip(ops.from_monty(left).tolist(), ops.from_monty(right).tolist(), ops.from_monty(out).tolist()):
        assert o == slow_permute(a + b, field, consts.canonical)[:8]
    digests = hash_rows(np.concatenate([left, right], axis=1)[:, :13], consts)
    for row, digest in zip(ops.from_monty(np.concatenate([left, right], axis=1)[:, :13]).tolist(),
                           ops.from_monty(digests).tolist()):
        assert digest == slow_sponge(row, field, consts.canonical, width=16, rate=8)
