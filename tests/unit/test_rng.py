"""The reference's generators and field sampler: seeding, streams, and the golden proofs' random inputs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import GOLDEN_PROOFS, load_golden
from whirgpu.field import P, from_monty_int
from whirgpu.ref import field_np as fnp
from whirgpu.ref.rng import (LANES_MIN_DRAWS, Xoroshiro128Plus, Xoshiro256PlusPlus, random_base, random_ef,
                             splitmix64)


def test_splitmix64_known_first_output():
    # Vigna's splitmix64.c from state 0: first output 0xe220a8397b1dcdaf, second 0x6e789e6aa1b965f4.
    state, z0 = splitmix64(0)
    _, z1 = splitmix64(state)
    assert (z0, z1) == (0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4)


@pytest.mark.parametrize("cls", [Xoshiro256PlusPlus, Xoroshiro128Plus])
def test_streams_agree(cls):
    a, b, c = cls(5), cls(5), cls(5)
    u64 = [a.next_u64() for _ in range(50)]
    assert b.next_u64_list(50) == u64
    assert [c.next_u32() for _ in range(50)] == [x >> 32 for x in u64]
    assert all(0 <= x < 1 << 64 for x in u64)
    d = cls(5)
    assert d.next_u32_array(50).tolist() == [x >> 32 for x in u64]
    assert cls(6).next_u64() != u64[0]


@pytest.mark.parametrize("n", [LANES_MIN_DRAWS - 1, LANES_MIN_DRAWS, LANES_MIN_DRAWS + 77, 100_003, 1 << 17])
@pytest.mark.parametrize("seed", [0, 1, 2**64 - 1])
def test_lane_parallel_runs_are_the_scalar_stream(n, seed):
    """Long runs step numpy lanes jumped ahead over GF(2): the outputs, and the state left behind, are the
    scalar loop's (remainders past a whole number of lane steps included)."""
    fast, slow = Xoshiro256PlusPlus(seed), Xoshiro256PlusPlus(seed)
    fast.next_u64()  # start from an arbitrary state, not just a fresh seed
    slow.next_u64()
    out = fast.next_u64_array(n)
    assert out.dtype == np.uint64 and out.tolist() == slow.next_u64_list(n)
    assert fast.s == slow.s
    assert fast.next_u64() == slow.next_u64()


def test_clone_is_independent():
    a = Xoshiro256PlusPlus(3)
    a.next_u64()
    b = a.clone()
    assert a.next_u64_list(10) == b.next_u64_list(10)
    a.next_u64()
    assert a.s != b.s


def _random_base_scalar(rng, n):
    out = []
    while len(out) < n:
        u = rng.next_u32() >> 1
        if u < P:
            out.append(u)
    return out


@pytest.mark.parametrize("cls", [Xoshiro256PlusPlus, Xoroshiro128Plus])
def test_random_base_matches_scalar_definition(cls):
    fast, slow = cls(11), cls(11)
    words = random_base(fast, 5000)
    assert words.dtype == np.uint32 and words.shape == (5000,)
    assert words.tolist() == _random_base_scalar(slow, 5000)
    assert fast.s == slow.s  # never draws past the last accepted sample
    assert int(words.max()) < P


def test_random_base_consumes_like_the_reference():
    # split requests draw the same stream as one request; ef = 4 consecutive base samples
    one = random_base(Xoshiro256PlusPlus(9), 300)
    r = Xoshiro256PlusPlus(9)
    parts = np.concatenate([random_base(r, 1), random_base(r, 0), random_base(r, 99), random_base(r, 200)])
    assert (parts == one).all()
    ef = random_ef(Xoshiro256PlusPlus(9), 75)
    assert ef.shape == (75, 4) and (ef.reshape(-1) == one).all()


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_golden_polynomial_and_points(name):
    g = load_golden(name)
    assert g["params"]["seed"] == 0
    evals = np.asarray(g["polynomial_evals_canonical"], dtype=np.int64)
    points = np.asarray(g["points_canonical"], dtype=np.int64)  # (n_points, n, 4)
    n_vars = g["params"]["num_variables"]
    assert evals.shape == (1 << n_vars,) and points.shape[1:] == (n_vars, 4)
    rng = Xoshiro256PlusPlus(0)
    drawn = random_base(rng, evals.size)
    # The sampler's word is the Montgomery form: canonical = u * R^-1.
    assert (fnp.from_monty(drawn) == evals).all()
    assert from_monty_int(int(drawn[0])) == int(evals[0])
    for point in points:
        assert (fnp.from_monty(random_ef(rng, n_vars)) == point).all()


def test_golden_prefix_property():
    # all proofs draw from seed 0, so the smaller polynomial is a prefix of the larger one
    small = [load_golden(n)["polynomial_evals_canonical"] for n in GOLDEN_PROOFS]
    small.sort(key=len)
    for a, b in zip(small, small[1:]):
        assert b[:len(a)] == a
