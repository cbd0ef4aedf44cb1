"""The compiled single-state and lane permutations the host transcript and the verifier's Merkle batch use are
word for word the numpy reference's: both fields, widths 16 and 24, random and edge states, every lane kernel this
CPU runs (and the per-state loop), lane counts on both sides of every block size, the generic C path (forced, and
chosen by itself for an instance the fast path does not cover: another width, a dense external matrix); without a
C compiler there is none, and the challenger falls back to the reference (same transcript)."""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.native import permute as native
from whirgpu.protocol.transcript import DuplexChallenger, absorber, single_permutation
from whirgpu.ref.poseidon2 import permute_ints, permute_lanes
from whirgpu.ref.poseidon2_constants import Poseidon2Constants
from whirgpu.ref.poseidon2_params import BABYBEAR_16, Poseidon2Params
from whirgpu.ref.rng import Xoshiro256PlusPlus

# (label, constants): whir-p3's BabyBear-16 and p3-whir's pairs (KoalaBear-16/24, BabyBear-16/24).
INSTANCES = [("babybear-16-whir-p3", lambda: Poseidon2Constants.smallrng(1))] + \
    [(f"{field.name}-{16 + 8 * i}", lambda field=field, i=i: Poseidon2Constants.smallrng_16_24(field)[i])
     for field in (KOALABEAR, BABYBEAR) for i in (0, 1)]
# Lane counts below, at and above every kernel's block (2 to 8 lanes) and a large batch.
COUNTS = [1, 7, 8, 9, 1000]


@dataclass(frozen=True)
class _DenseParams(Poseidon2Params):
    """An instance whose external matrix is dense (not circ(2 M4, M4, ...)): only the generic C path applies."""

    @functools.cached_property
    def external_matrix(self) -> np.ndarray:
        return np.random.default_rng(self.width).integers(1, 7, size=(self.width, self.width))


def _unusual_instances():
    """Instances outside the fast path's specialisations: width 8 (structured), and a dense width-16 matrix."""
    narrow = Poseidon2Params(BABYBEAR, 8, 7, 13, BABYBEAR_16.diagonal[:8])
    dense = _DenseParams(BABYBEAR, 16, 7, 13, BABYBEAR_16.diagonal)
    return [Poseidon2Constants.from_rng(Xoshiro256PlusPlus(7), params) for params in (narrow, dense)]


def _compiled_or_skip():
    if native._library() is None:
        pytest.skip("no C compiler here (the challenger and the verifier use the reference permutation)")


def _isas():
    """0 (the per-state loop) and every lane kernel this CPU runs."""
    loaded = native._library()
    mask = loaded[1].p2_isa_mask() if loaded is not None else 0
    return [0] + [bit for bit in (1, 2, 4) if mask & bit]


def _states(constants, count: int, seed: int) -> np.ndarray:
    """(width, count) lane-major canonical states: the edge states first (all 0, all p - 1, alternating 0 and
    p - 1, all 1, p - 1 in one word), then random ones, some words set to p - 1."""
    width, p = constants.params.width, constants.params.field.P
    rng = np.random.default_rng(seed)
    edges = [[0] * width, [p - 1] * width, [(p - 1) * (i % 2) for i in range(width)], [1] * width,
             [p - 1] + [0] * (width - 1)]
    states = rng.integers(0, p, size=(width, count), dtype=np.uint64)
    states[rng.random(size=states.shape) < 0.1] = p - 1
    for k, edge in enumerate(edges[:count]):
        states[:, k] = edge
    return states


@pytest.mark.parametrize("label,make", INSTANCES, ids=[label for label, _ in INSTANCES])
def test_compiled_single_state_equals_the_reference(label, make):
    _compiled_or_skip()
    constants = make()
    states = _states(constants, 60, seed=1).T.tolist()
    for generic in (False, True):
        single = native.native_permute(constants, _generic=generic)
        for state in states:
            assert single(list(state)) == permute_ints(list(state), constants), (label, generic, state)


@pytest.mark.parametrize("label,make", INSTANCES, ids=[label for label, _ in INSTANCES])
def test_every_lane_kernel_equals_the_reference(label, make):
    _compiled_or_skip()
    constants = make()
    for count in COUNTS:
        states = _states(constants, count, seed=count)
        expected = permute_lanes(states.copy(), constants)
        for isa in _isas():
            lanes = native.native_permute_lanes(constants, _isa=isa)
            kept = states.copy()
            assert np.array_equal(lanes(states), expected), (label, count, isa)
            assert np.array_equal(states, kept)  # the input is left as it was
        generic = native.native_permute_lanes(constants, _generic=True)
        assert np.array_equal(generic(states), expected), (label, count, "generic")


def test_lanes_take_any_layout_and_check_the_width():
    _compiled_or_skip()
    constants = Poseidon2Constants.smallrng(1)
    lanes = native.native_permute_lanes(constants)
    states = _states(constants, 37, seed=3)
    expected = permute_lanes(states.copy(), constants)
    assert np.array_equal(lanes(np.asfortranarray(states)), expected)  # a transposed layout
    assert np.array_equal(lanes(states.astype(np.int64)), expected)  # another integer type
    assert lanes(states[:, :0]).shape == (16, 0)
    with pytest.raises(ValueError, match="expected"):
        lanes(states[:8])


def test_instances_outside_the_fast_path_take_the_generic_one():
    _compiled_or_skip()
    for constants in _unusual_instances():
        table = native._table(constants)
        assert table[native.HEADER.index("fast")] == 0, constants.params
        single, lanes = native.native_permute(constants), native.native_permute_lanes(constants)
        states = _states(constants, 20, seed=5)
        expected = permute_lanes(states.copy(), constants)
        assert np.array_equal(lanes(states), expected)
        for k in range(states.shape[1]):
            assert single(states[:, k].tolist()) == expected[:, k].tolist()
    for _, make in INSTANCES:  # and Plonky3's instances do take the fast one
        assert native._table(make())[native.HEADER.index("fast")] == 1


def test_an_unavailable_lane_kernel_is_refused():
    _compiled_or_skip()
    with pytest.raises(ValueError, match="not available"):
        native.native_permute_lanes(Poseidon2Constants.smallrng(1), _isa=3)


def test_without_a_compiler_the_reference_runs(monkeypatch):
    def forget_the_library():  # every cache that holds the library, or its absence
        for cached in (native._library, native._best_isa, single_permutation, absorber):
            cached.cache_clear()

    monkeypatch.setenv("CC", "no-such-compiler-here")
    forget_the_library()
    try:
        assert native.native_permute(Poseidon2Constants.smallrng(1)) is None
        assert native.native_permute_lanes(Poseidon2Constants.smallrng(1)) is None
        fallback = DuplexChallenger()
        fallback.observe_many(np.arange(1, 20, dtype=np.uint32))
        sample = fallback.sample_ef()
    finally:
        monkeypatch.delenv("CC")
        forget_the_library()
    if native._library() is not None:  # the compiled absorb is back: the comparison below is with it
        assert absorber(Poseidon2Constants.smallrng(1)) is not None
    fast = DuplexChallenger()
    fast.observe_many(np.arange(1, 20, dtype=np.uint32))
    assert np.array_equal(fast.sample_ef(), sample)


def test_a_random_walk_of_single_states_stays_equal():
    """Each output fed back as the next input: values the sponge actually meets, not only fresh uniform ones."""
    _compiled_or_skip()
    for _, make in INSTANCES:
        constants = make()
        single = native.native_permute(constants)
        state = [random.Random(9).randrange(constants.params.field.P) for _ in range(constants.params.width)]
        for _ in range(50):
            expected = permute_ints(list(state), constants)
            assert single(list(state)) == expected
            state = expected


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("height,words", [(1, 5), (4, 0), (2, 16), (8, 17), (64, 32), (512, 20), (2048, 8)])
def test_a_merkle_tree_on_compiled_lanes_equals_the_numpy_one(field, height, words):
    """``merkle_levels(..., lanes=...)`` (what the hiding PCS's host oracles use) gives the numpy tree's every
    level, across the scalar-path and block thresholds of ``poseidon2.permute`` and sponge rates 16 and beyond."""
    from whirgpu.profiles.p3_whir.zk.oracles import merkle_permutations
    from whirgpu.ref.p3_codeword import merkle_levels

    _compiled_or_skip()
    lanes = tuple(native.native_permute_lanes(c, _isa=0) for c in Poseidon2Constants.smallrng_16_24(field))
    assert None not in lanes
    rows = np.random.default_rng(height * words).integers(0, field.P, (height, words), dtype=np.uint32)
    expected = merkle_levels(rows, field)
    for permutations in (lanes, merkle_permutations(field)):
        got = merkle_levels(rows, field, permutations)
        assert len(got) == len(expected) and all(np.array_equal(a, b) for a, b in zip(got, expected))
