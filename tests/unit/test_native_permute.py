"""The compiled single-state and lane permutations the host transcript and the verifier's Merkle batch use are
word for word the numpy reference's (both fields, widths 16 and 24, random and edge states); without a C
compiler there is none, and the challenger falls back to the reference (same transcript)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.protocol import native_permute as native
from whirgpu.protocol.transcript import DuplexChallenger, _single_permutation
from whirgpu.ref.poseidon2 import permute_ints, permute_lanes
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

INSTANCES = [(field, i) for field in (BABYBEAR, KOALABEAR) for i in (0, 1)]


@pytest.mark.parametrize("field,which", INSTANCES, ids=lambda x: getattr(x, "name", str(x)))
def test_compiled_permutations_equal_the_reference(field, which):
    constants = Poseidon2Constants.smallrng_16_24(field)[which]
    single, lanes = native.native_permute(constants), native.native_permute_lanes(constants)
    if single is None:
        pytest.skip("no C compiler here (the challenger uses the reference permutation)")
    width = constants.params.width
    rng = random.Random(width)
    states = [[0] * width, [field.P - 1] * width, [1] * width] + \
        [[rng.randrange(field.P) for _ in range(width)] for _ in range(100)]
    for state in states:
        assert single(list(state)) == permute_ints(list(state), constants)
    block = np.asarray(states, dtype=np.uint64).T.copy()
    assert np.array_equal(lanes(block.copy()), permute_lanes(block.copy(), constants))


def test_without_a_compiler_the_reference_runs(monkeypatch):
    monkeypatch.setenv("CC", "no-such-compiler-here")
    native._library.cache_clear()
    _single_permutation.cache_clear()
    try:
        assert native.native_permute(Poseidon2Constants.smallrng(1)) is None
        fallback = DuplexChallenger()
        fallback.observe_many(np.arange(1, 20, dtype=np.uint32))
        sample = fallback.sample_ef()
    finally:
        monkeypatch.delenv("CC")
        native._library.cache_clear()
        _single_permutation.cache_clear()
    fast = DuplexChallenger()
    fast.observe_many(np.arange(1, 20, dtype=np.uint32))
    assert np.array_equal(fast.sample_ef(), sample)
