"""Query index sampling (whir-spec.md §6.3) against a scripted challenger."""

from __future__ import annotations

import random

import numpy as np
import pytest

from whirgpu.errors import ConfigError
from whirgpu.protocol.query_indices import MAX_BITS_PER_CALL, distinct_query_indices, sample_query_indices
from whirgpu.protocol.transcript import DuplexChallenger


class ScriptedChallenger:
    """Returns the scripted raw values masked to the requested bits (as sample_bits does with a canonical
    element), and records every request."""

    def __init__(self, values):
        self.values = list(values)
        self.calls: list[int] = []

    def sample_bits(self, bits: int) -> int:
        self.calls.append(bits)
        return self.values.pop(0) & ((1 << bits) - 1)


def pack(chunks, width):
    """LSB-first packing of width-bit chunks."""
    return sum(c << (i * width) for i, c in enumerate(chunks))


def test_single_call_lsb_first():
    # D = 2^10, k = 4 -> L = 6; q = 3 -> 18 bits <= 20: one call, chunks LSB-first.
    ch = ScriptedChallenger([pack([5, 63, 17], 6)])
    assert sample_query_indices(ch, 1 << 10, 4, 3) == [5, 17, 63]
    assert ch.calls == [18]


def test_single_call_dedups_and_sorts():
    ch = ScriptedChallenger([pack([9, 2, 9, 2, 0], 4)])
    assert sample_query_indices(ch, 1 << 6, 2, 5) == [0, 2, 9]
    assert ch.calls == [20]


def test_single_call_exactly_twenty_bits():
    ch = ScriptedChallenger([pack([1, 2, 3, 4], 5)])
    assert sample_query_indices(ch, 1 << 7, 2, 4) == [1, 2, 3, 4]
    assert ch.calls == [20]


def test_batches_of_floor_20_over_l():
    # L = 6 -> 3 queries per call; q = 8 -> batches 3, 3, 2 (the last one smaller).
    chunks = [10, 20, 30, 40, 50, 60, 1, 2]
    ch = ScriptedChallenger([pack(chunks[0:3], 6), pack(chunks[3:6], 6), pack(chunks[6:8], 6)])
    assert sample_query_indices(ch, 1 << 9, 3, 8) == sorted(chunks)
    assert ch.calls == [18, 18, 12]


def test_batches_ignore_high_bits_of_each_call():
    # L = 9 -> 2 per call (18 bits of the 20 available); a batch call asks exactly batch·L bits.
    ch = ScriptedChallenger([(0b11 << 18) | pack([300, 7], 9), pack([511, 0], 9)])
    assert sample_query_indices(ch, 1 << 13, 4, 4) == [0, 7, 300, 511]
    assert ch.calls == [18, 18]


@pytest.mark.parametrize("log_size", [11, 13, 16, 20])
def test_one_call_per_query_when_fewer_than_two_fit(log_size):
    # L >= 11 -> floor(20 / L) <= 1: one sample_bits(L) per query.
    values = [(i * 2654435761) % (1 << log_size) for i in range(1, 6)]
    ch = ScriptedChallenger(values)
    assert sample_query_indices(ch, 1 << (log_size + 2), 2, 5) == sorted(set(values))
    assert ch.calls == [log_size] * 5


def test_l10_batches_two():
    # L = 10: q·L > 20, floor(20/10) = 2 -> batches of two.
    ch = ScriptedChallenger([pack([1, 2], 10), pack([3, 4], 10), pack([1023], 10)])
    assert sample_query_indices(ch, 1 << 14, 4, 5) == [1, 2, 3, 4, 1023]
    assert ch.calls == [20, 20, 10]


def test_l_zero_consumes_one_sample():
    # Folded domain of one point: one sample_bits(0) call (it still consumes a challenger element).
    ch = ScriptedChallenger([12345])
    assert sample_query_indices(ch, 1 << 4, 4, 7) == [0]
    assert ch.calls == [0]


def test_zero_queries_still_samples():
    ch = ScriptedChallenger([99])
    assert sample_query_indices(ch, 1 << 8, 2, 0) == []
    assert ch.calls == [0]


def test_l_one():
    # L = 1: 20 queries fit one call; 25 need 20 + 5.
    ch = ScriptedChallenger([0b1011, 0b10])
    assert sample_query_indices(ch, 4, 1, 25) == [0, 1]
    assert ch.calls == [20, 5]


def test_call_plan_matches_spec_over_a_grid():
    rng = random.Random(7)
    for log_size in range(0, 25):
        for q in (1, 2, 3, 7, 20, 21, 91, 187):
            ch = ScriptedChallenger([rng.getrandbits(31) for _ in range(200)])
            out = sample_query_indices(ch, 1 << (log_size + 3), 3, q)
            total = q * log_size
            if total <= MAX_BITS_PER_CALL:
                expected = [total]
            elif MAX_BITS_PER_CALL // log_size >= 2:
                per = MAX_BITS_PER_CALL // log_size
                expected = [per * log_size] * (q // per) + ([(q % per) * log_size] if q % per else [])
            else:
                expected = [log_size] * q
            assert ch.calls == expected, (log_size, q)
            assert out == sorted(set(out)) and all(0 <= x < (1 << log_size) for x in out)
            assert 1 <= len(out) <= q


def test_works_with_the_golden_round_shapes():
    # n16 f4 r1 (golden): round 0 queries a 2^17 domain folded by 4 (L = 13): one call per query.
    ch = ScriptedChallenger(list(range(1000, 1187)))
    out = sample_query_indices(ch, 1 << 17, 4, 187)
    assert ch.calls == [13] * 187 and out == list(range(1000, 1187))


@pytest.mark.parametrize(
    "args,pattern",
    [
        ((0, 2, 3), "domain_size"),
        ((12, 2, 3), "power of two"),
        ((1 << 4, 5, 3), "power of two"),
        ((1 << 4, -1, 3), "folding_factor"),
        ((1 << 4, 1, -3), "num_queries"),
        ((16.0, 1, 3), "domain_size"),
    ],
)
def test_bad_arguments(args, pattern):
    with pytest.raises(ConfigError, match=pattern):
        sample_query_indices(ScriptedChallenger([0] * 10), *args)


# -- the p3-whir profile's sampler: distinct uniform draws -------------------------------------------------------

@pytest.mark.parametrize("domain_size, fold, q", [(1 << 12, 4, 30), (1 << 10, 2, 91), (1 << 8, 5, 20),
                                                  (1 << 6, 4, 75), (64, 3, 8), (1 << 20, 4, 200)])
def test_distinct_indices_replay_the_uniform_draws(domain_size, fold, q):
    """min(q, D >> k) distinct indices, ascending: the first distinct values of sample_uniform_bits(L) on the
    same transcript (a saturated domain, 4 folded points against 75 queries, draws until every point is hit)."""
    challenger = DuplexChallenger(length_tagged=True)
    challenger.observe_many(np.arange(1, 4, dtype=np.uint32) * 7)
    replay = challenger.clone()
    got = distinct_query_indices(challenger, domain_size, fold, q)
    size = domain_size >> fold
    want: list[int] = []
    while len(want) < min(q, size):
        v = replay.sample_uniform_bits(size.bit_length() - 1)
        if v not in want:
            want.append(v)
    assert got == sorted(want)
    assert replay.same_state(challenger)
    assert len(got) == min(q, size) and got == sorted(set(got)) and all(0 <= i < size for i in got)


def test_a_one_point_domain_takes_no_sample():
    challenger = DuplexChallenger(length_tagged=True)
    before = challenger.clone()
    assert distinct_query_indices(challenger, 16, 4, 5) == [0]
    assert challenger.same_state(before)
