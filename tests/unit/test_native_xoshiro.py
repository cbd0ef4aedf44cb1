"""The random instances' sampler (``native.xoshiro``), compiled and numpy, against the scalar definition of
Plonky3's ``StandardUniform`` over rand's ``SmallRng`` (one ``next_u32() >> 1`` at a time, rejected at P): the
same words and the same generator state after, for both fields, sizes on both sides of the numpy lanes' threshold."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.errors import BackendUnavailable
from whirgpu.field import FIELDS
from whirgpu.native import xoshiro
from whirgpu.ref.rng import LANES_MIN_DRAWS, Xoshiro256PlusPlus, random_base

SEEDS = [0, 1, 0x9E3779B97F4A7C15, 2**64 - 1]
SIZES = [0, 1, 5, 1000, LANES_MIN_DRAWS - 1, LANES_MIN_DRAWS, LANES_MIN_DRAWS + 3]


@pytest.fixture(scope="module")
def compiled():
    try:
        xoshiro.build_now()
    except BackendUnavailable:
        pytest.skip("no C compiler here (random instances use the numpy sampler)")
    samples = xoshiro.compiled_samples()
    assert samples is not None
    return samples


def _scalar(rng: Xoshiro256PlusPlus, n: int, p: int) -> list[int]:
    out = []
    while len(out) < n:
        u = rng.next_u64_list(1)[0] >> 33  # next_u32() >> 1
        if u < p:
            out.append(u)
    return out


@pytest.fixture(params=["numpy", "compiled"])
def sampler(request, monkeypatch):
    """``sample_monty`` with the compiled function loaded (and numpy refused) or unloaded."""
    if request.param == "compiled":
        request.getfixturevalue("compiled")

        def refused(*_):
            raise AssertionError("the numpy sampler ran although the compiled one is loaded")

        monkeypatch.setattr(xoshiro, "random_base", refused)
    else:
        monkeypatch.setattr(xoshiro, "compiled_samples", lambda: None)
    return xoshiro.sample_monty


@pytest.mark.parametrize("field_name", sorted(FIELDS))
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_samples_equal_the_scalar_definition(sampler, field_name, seed, n):
    field = FIELDS[field_name]
    rng, oracle = Xoshiro256PlusPlus(seed), Xoshiro256PlusPlus(seed)
    got = sampler(rng, n, field)
    assert got.dtype == np.uint32 and got.shape == (n,)
    assert got.tolist() == _scalar(oracle, n, field.P)
    assert rng.s == oracle.s  # never draws past the last accepted sample


@pytest.mark.parametrize("field_name", sorted(FIELDS))
def test_a_large_draw_equals_the_numpy_lanes_and_goes_on_alike(sampler, field_name):
    field = FIELDS[field_name]
    rng, reference = Xoshiro256PlusPlus(7), Xoshiro256PlusPlus(7)
    assert np.array_equal(sampler(rng, 1 << 18, field), random_base(reference, 1 << 18, field))
    assert rng.s == reference.s
    assert xoshiro.sample_ef(rng, 3, field).tolist() == random_base(reference, 12, field).reshape(3, 4).tolist()


def test_rejections_are_redrawn(compiled):
    """A state whose next outputs are rejected: BabyBear rejects u >= P, about 6% of draws; find one and check."""
    p = FIELDS["babybear"].P
    for seed in range(200):
        probe = Xoshiro256PlusPlus(seed)
        if probe.next_u64_list(1)[0] >> 33 >= p:
            break
    else:
        pytest.fail("no rejected first draw in 200 seeds")
    state = np.array(Xoshiro256PlusPlus(seed).s, dtype=np.uint64)
    assert compiled(state, p, 4).tolist() == _scalar(Xoshiro256PlusPlus(seed), 4, p)


def test_a_bad_state_is_refused(compiled):
    with pytest.raises(ValueError, match="a writable"):
        compiled(np.zeros(3, np.uint64), 5, 1)
    with pytest.raises(ValueError, match="n >= 0"):
        compiled(np.zeros(4, np.uint64), 5, -1)


def test_the_cli_instance_is_the_sampler(compiled):
    """``random_points`` (the CLI's and ``random_instance``'s draw) is ``random_base`` then ``random_ef``."""
    from whirgpu.proving import random_points

    poly, point = random_points(12, 3)
    rng = Xoshiro256PlusPlus(3)
    assert np.array_equal(poly, random_base(rng, 1 << 12))
    assert np.array_equal(point, random_base(rng, 48).reshape(1, 12, 4))
