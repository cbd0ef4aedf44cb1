"""DuplexChallenger (spec §6.1) and proof of work (§6.2): golden KAT, buffer/pop order, grinding."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from tests.conftest import load_golden
from whirgpu.field import P
from whirgpu.protocol import transcript as tr
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import field_np as fnp
from whirgpu.ref.poseidon2 import Poseidon2Constants, permute


def _observe_canonical(c, values):
    for v in values:
        c.observe(fnp.constant(v))


def test_golden_kat():
    kat = load_golden("kat_challenger.json")
    c = DuplexChallenger()
    _observe_canonical(c, kat["observed"])
    assert [int(fnp.from_monty(c.sample())) for _ in range(5)] == kat["sampled_base_5"]
    assert [c.sample_bits(20) for _ in range(2)] == kat["sample_bits_20"]


def test_samples_pop_permuted_rate_in_reverse():
    c = DuplexChallenger()
    words = fnp.to_monty(np.arange(8, dtype=np.uint64))
    c.observe_many(words)  # the 8th observe duplexes
    assert c.input_buffer == [] and len(c.output_buffer) == 8
    state = np.zeros(16, dtype=np.uint32)
    state[:8] = words
    state = permute(state[None])[0]
    assert [int(c.sample()) for _ in range(8)] == state[:8][::-1].tolist()
    # output exhausted, input empty: the next sample permutes the state as it is
    state = permute(state[None])[0]
    assert int(c.sample()) == int(state[7])


def test_partial_input_overwrites_prefix_only():
    c = DuplexChallenger()
    c.observe_many(fnp.to_monty(np.arange(1, 11, dtype=np.uint64)))  # one duplex of 8, then 2 pending
    first = np.zeros(16, dtype=np.uint32)
    first[:8] = fnp.to_monty(np.arange(1, 9, dtype=np.uint64))
    first = permute(first[None])[0]
    second = first.copy()
    second[:2] = fnp.to_monty(np.array([9, 10], dtype=np.uint64))
    second = permute(second[None])[0]
    assert c.sample() == second[7] and c.sample() == second[6]


def test_observe_clears_output_and_sample_ef_order():
    a, b = DuplexChallenger(), DuplexChallenger()
    a.observe(fnp.constant(5))
    a.sample()
    a.observe(fnp.constant(6))  # discards the 7 remaining outputs
    b.observe(fnp.constant(5))
    b.sample()
    b.output_buffer = []
    b.observe(fnp.constant(6))
    assert a.same_state(b)
    e = a.sample_ef()
    assert e.shape == (4,) and e.dtype == np.uint32
    assert e.tolist() == [int(b.sample()) for _ in range(4)]
    a.observe_ef(e)
    b.observe_many(e)
    assert a.same_state(b)
    with pytest.raises(ValueError):
        a.observe_ef(e[:3])


def test_observe_rejects_non_field_words():
    c = DuplexChallenger()
    with pytest.raises(ValueError):
        c.observe(P)
    with pytest.raises(ValueError):
        c.observe(-1)


@pytest.mark.parametrize("bits", [-1, 31, 32])
def test_bits_range(bits):
    c = DuplexChallenger()
    for f in (c.sample_bits, c.grind):
        with pytest.raises(ValueError):
            f(bits)
    with pytest.raises(ValueError):
        c.check_witness(bits, 0)


def test_sample_bits_is_masked_canonical():
    a, b = DuplexChallenger(), DuplexChallenger()
    for bits in (0, 1, 5, 20, 30):
        s = int(fnp.from_monty(a.sample()))
        assert b.sample_bits(bits) == s & ((1 << bits) - 1)


def test_clone_is_independent():
    a = DuplexChallenger()
    a.observe(fnp.constant(1))
    b = a.clone()
    assert copy.copy(a).same_state(a) and copy.deepcopy(a).same_state(a)
    b.observe(fnp.constant(2))
    assert a.input_buffer == [int(fnp.constant(1))]
    assert not a.same_state(b)


# ---- proof of work -------------------------------------------------------------------------------------------

def _state_with(n_observed: int, n_sampled: int = 0) -> DuplexChallenger:
    c = DuplexChallenger()
    c.observe_many(fnp.to_monty(np.arange(100, 100 + n_observed, dtype=np.uint64)))
    for _ in range(n_sampled):
        c.sample()
    return c


# (observed, sampled): input buffer lengths 0 (fresh), 7, 0 after a full duplex, 3, and 0 with outputs pending
STATES = [(0, 0), (7, 0), (8, 0), (11, 0), (3, 2)]


def _brute_force(c: DuplexChallenger, bits: int) -> int:
    nonce = 0
    while not c.clone().check_witness(bits, fnp.constant(nonce)):
        nonce += 1
    return nonce


@pytest.mark.parametrize("observed,sampled", STATES)
def test_grind_finds_smallest_nonce(observed, sampled):
    base = _state_with(observed, sampled)
    assert len(base.input_buffer) == (0 if sampled else observed % 8)
    for bits in range(1, 9):
        expected = _brute_force(base, bits)
        c = base.clone()
        w = c.grind(bits)
        assert int(fnp.from_monty(w)) == expected
        ref = base.clone()
        assert ref.check_witness(bits, w)
        assert c.same_state(ref)


def test_grind_across_batches(monkeypatch):
    # tiny batches: the first hit lies beyond the first few of them
    monkeypatch.setattr(tr, "_GRIND_FIRST_BATCH", 8)
    monkeypatch.setattr(tr, "_GRIND_MAX_BATCH", 32)
    base = _state_with(7)
    expected = _brute_force(base, 7)
    assert expected >= 8
    assert int(fnp.from_monty(base.clone().grind(7))) == expected


def test_grind_larger_bits_verifies():
    c = _state_with(5)
    before = c.clone()
    w = c.grind(12)
    assert before.clone().check_witness(12, w)
    ref = before.clone()
    ref.check_witness(12, w)
    assert c.same_state(ref)


def test_zero_bits_touches_nothing():
    c = _state_with(5)
    before = c.clone()
    assert c.grind(0) == 0
    assert c.check_witness(0, fnp.constant(12345))
    assert c.same_state(before)


def test_other_constants_are_used():
    consts = Poseidon2Constants.plonky3_default()
    a, b = DuplexChallenger(consts), DuplexChallenger()
    a.observe(1)
    b.observe(1)
    assert a.sample() != b.sample()
    c = DuplexChallenger(consts)
    c.observe(3)
    assert int(fnp.from_monty(c.clone().grind(6))) == _brute_force(c, 6)


def test_sponge_state_reads_and_writes_montgomery_words():
    """The challenger keeps its sponge as canonical ints inside; ``sponge_state`` is the Montgomery view, and
    assigning it (e.g. a state computed elsewhere) continues the transcript from there."""
    a = DuplexChallenger()
    a.observe_many(fnp.to_monty(np.arange(1, 12, dtype=np.uint64)))
    b = DuplexChallenger()
    b.sponge_state = a.sponge_state
    b.input_buffer = list(a.input_buffer)
    assert b.same_state(a)
    state = a.sponge_state.copy()
    state[:len(a.input_buffer)] = a.input_buffer
    assert int(a.sample()) == int(permute(state[None])[0][7]) == int(b.sample())
    with pytest.raises(ValueError):
        b.sponge_state = np.zeros(15, np.uint32)
    with pytest.raises(ValueError):
        b.sponge_state = np.full(16, P, np.int64)


@pytest.mark.parametrize("pending", [0, 1, 7])
@pytest.mark.parametrize("count", [0, 1, 7, 8, 9, 16, 23, 40])
@pytest.mark.parametrize("sampled", [False, True])
@pytest.mark.parametrize("kind", ["whir-p3", "p3-whir-koalabear", "length-tagged"])
def test_observe_many_equals_observing_word_by_word(pending, count, sampled, kind):
    """``observe_many`` absorbs runs at a time (whole runs in one compiled call where built); its state (sponge,
    input and output buffers) is what observing each word in turn leaves, from a challenger with pending input or
    with outputs left, for whir-p3's challenger, p3-whir's KoalaBear one and a length-tagged one."""
    from whirgpu.field import KOALABEAR

    rng = np.random.default_rng(pending * 100 + count)
    if kind == "p3-whir-koalabear":
        one = DuplexChallenger(Poseidon2Constants.smallrng_16_24(KOALABEAR)[0])
    else:
        one = DuplexChallenger(length_tagged=kind == "length-tagged")
    P = one.field.P
    one.observe_many(rng.integers(0, P, pending))
    if sampled:
        one.sample()
    many = one.clone()
    words = rng.integers(0, P, count)
    for word in words:
        one.observe(int(word))
    many.observe_many(words)
    assert one.same_state(many)
    assert [one.sample() for _ in range(9)] == [many.sample() for _ in range(9)]


@pytest.mark.parametrize("count", [0, 9, 16, 17, 40])
def test_observe_many_calls_before_compiled_at_most_once_and_changes_nothing(count):
    """``before_compiled`` is called once, just before the compiled absorb of whole runs (two or more here, once
    the library is built), never otherwise; the state is the same as without it."""
    from whirgpu.errors import BackendUnavailable
    from whirgpu.native.permute import build_now

    try:
        build_now()
    except BackendUnavailable:
        pytest.skip("no C compiler: the compiled absorption is not built")
    words = np.random.default_rng(count).integers(0, P, count)
    plain, hooked, calls = DuplexChallenger(), DuplexChallenger(), []
    plain.observe_many(words)
    hooked.observe_many(words, lambda: calls.append(len(calls)))
    assert plain.same_state(hooked)
    assert calls == ([0] if count // 8 > 1 else [])


def test_observe_many_rejects_a_bad_word_by_name():
    with pytest.raises(ValueError, match=f"word {P} outside"):
        DuplexChallenger().observe_many([1, 2, P, 3])


@pytest.mark.parametrize("field_name", ["babybear", "koalabear"])
@pytest.mark.parametrize("tag", [0, 8])
def test_native_absorb_equals_the_python_loop(field_name, tag):
    """The compiled absorption (the 4-lane single-state kernel this CPU has, the scalar one, the generic C path)
    against the loop of ``permute_ints`` it replaces, edge words (0, p - 1) included."""
    from whirgpu.field import field_by_name
    from whirgpu.native.permute import native_absorb, single_isa
    from whirgpu.ref.poseidon2 import permute_ints

    constants = Poseidon2Constants.smallrng_16_24(field_by_name(field_name))[0]
    p = constants.params.field.P
    rng = np.random.default_rng(tag + len(field_name))
    state = [int(x) for x in rng.integers(0, p, 16)]
    words = rng.integers(0, p, 8 * 5).astype(np.uint64)
    state[3], state[15], words[0], words[9] = p - 1, 0, p - 1, 0
    expected = list(state)
    for run in range(5):
        expected[:8] = [int(w) for w in words[8 * run:8 * run + 8]]
        expected[8] = (expected[8] + tag) % p
        expected = permute_ints(expected, constants)
    for options in ({"_isa": single_isa()}, {"_isa": 0}, {"_generic": True}):
        absorb = native_absorb(constants, **options)
        if absorb is None:
            pytest.skip("no C compiler: the compiled absorption is not built")
        assert absorb(state, words, tag) == expected, options
