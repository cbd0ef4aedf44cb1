"""The host challenger's compiled proof-of-work search (``native_grind``) and distinct draws (``native_distinct``,
behind ``distinct_uniform_bits`` and so ``distinct_query_indices``) against the one-at-a-time reference: the same
witness and draws and the challenger left in the same state (sponge, input and output buffers), both fields,
length-tagged and not, every output-buffer depth and a pending input, bits 1 to 16 (and 17, drawn one by one),
targets 0, 1, a duplex's worth, a whole small domain; the absorb, search and draws in one call, here or on a
``HostWorker``'s thread (waiting, given up, finished before use); the numbers a call gets wrong refused."""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.native import permute as native
from whirgpu.protocol import transcript
from whirgpu.protocol.query_indices import distinct_query_indices
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

pytestmark = pytest.mark.skipif(native._library() is None, reason="no C compiler: the compiled paths do not exist")

# (label, challenger factory): whir-p3's (BabyBear, untagged) and p3-whir's (both fields, length-tagged)
CHALLENGERS = [("whir-p3", lambda: DuplexChallenger())] + \
    [(f"p3-{field.name}", lambda field=field: DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], True))
     for field in (KOALABEAR, BABYBEAR)]


def _positioned(make, seed: int) -> DuplexChallenger:
    """A challenger after random observations, 0-8 samples popped and, sometimes, one observation pending."""
    rnd = random.Random(seed)
    ch = make()
    ch.observe_many([rnd.randrange(ch.field.P) for _ in range(rnd.randrange(0, 30))])
    for _ in range(rnd.randrange(0, 9)):
        ch.sample()
    if rnd.random() < 0.3:
        ch.observe(rnd.randrange(ch.field.P))
    return ch


def _reference_draws(ch: DuplexChallenger, bits: int, target: int) -> list:
    seen: dict = {}
    while len(seen) < target:
        seen[ch.sample_uniform_bits(bits)] = None
    return list(seen)


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("bits,target", [(1, 0), (1, 1), (1, 2), (2, 4), (3, 8), (4, 9), (8, 101), (8, 256),
                                         (9, 101), (15, 9), (16, 300), (17, 20)])
def test_distinct_draws_and_state_match_the_loop(label, make, bits, target):
    assert native.native_distinct(make().constants) is not None  # the compiled path is what runs below
    for seed in range(12):
        fast, slow = _positioned(make, seed), _positioned(make, seed)
        assert fast.distinct_uniform_bits(bits, target) == _reference_draws(slow, bits, target)
        assert fast.same_state(slow), (seed, bits, target)
        assert fast.sample() == slow.sample()  # and the stream goes on alike


def test_query_indices_take_the_compiled_draws():
    make = CHALLENGERS[1][1]
    fast, slow = _positioned(make, 5), _positioned(make, 5)
    indices = distinct_query_indices(fast, 1 << 12, 4, 101)
    assert indices == sorted(_reference_draws(slow, 8, 101)) and fast.same_state(slow)


def test_a_rejected_sample_is_skipped_as_the_loop_skips_it():
    """A sample at or above P's bound for the bits (P - 1 for one bit: its low bit cleared is P - 1) is dropped,
    not drawn: a sponge forced to output P - 1 first."""
    make = CHALLENGERS[1][1]
    fast = make()
    p = fast.field.P
    fast.output_buffer = [fast.field.R * v % p for v in (1, 0, 1, 1, p - 1)]  # popped last first: P - 1, 1, 1, 0
    slow = fast.clone()
    assert fast.distinct_uniform_bits(1, 2) == _reference_draws(slow, 1, 2) == [1, 0]
    assert fast.same_state(slow)


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("bits", [1, 4, 10, 13])
def test_compiled_grind_finds_the_reference_witness(label, make, bits, monkeypatch):
    assert native.native_grind(make().constants) is not None
    for seed in range(4):
        fast, slow = _positioned(make, 100 + seed), _positioned(make, 100 + seed)
        witness = fast.grind(bits)
        with monkeypatch.context() as m:
            m.setattr(transcript, "native_grind", lambda constants: None)  # the numpy batches
            assert slow.grind(bits) == witness
        assert fast.same_state(slow)


def test_compiled_entries_refuse_what_they_cannot_do():
    constants = CHALLENGERS[1][1]().constants
    distinct, grind = native.native_distinct(constants), native.native_grind(constants)
    with pytest.raises(ValueError, match="outside bits"):
        distinct([0] * 16, [], [(17, 1)])
    with pytest.raises(ValueError, match="outside bits"):
        distinct([0] * 16, [], [(2, 5)])
    with pytest.raises(ValueError, match="index 16 outside"):
        grind([0] * 16, 16, 4, 0, 10)
    assert grind([0] * 16, 3, 30, 0, 64) == -1  # no hit among 64 candidates at 30 bits: none, not a wrong one
    with pytest.raises(ValueError, match="target 3 outside"):
        DuplexChallenger().distinct_uniform_bits(1, 3)
    assert native.native_distinct(Poseidon2Constants.smallrng_16_24(KOALABEAR)[1]) is None  # width 24: none


def test_without_the_library_the_loop_draws(monkeypatch):
    make = CHALLENGERS[2][1]
    fast, slow = _positioned(make, 9), _positioned(make, 9)
    monkeypatch.setattr(transcript, "native_distinct", lambda constants: None)
    assert fast.distinct_uniform_bits(8, 50) == _reference_draws(slow, 8, 50) and fast.same_state(slow)


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
def test_sets_drawn_in_one_call_are_the_calls_one_after_another(label, make):
    sets = [(15, 9), (8, 101), (0, 1), (9, 101), (8, 0), (1, 2), (8, 101)]
    for seed in range(6):
        fast, slow = _positioned(make, 200 + seed), _positioned(make, 200 + seed)
        assert fast.distinct_uniform_sets(sets) == [_reference_draws(slow, bits, n) for bits, n in sets]
        assert fast.same_state(slow)


@pytest.mark.parametrize("threads", [2, 3, 8])
def test_a_search_on_threads_finds_the_one_thread_witness(threads):
    """Threads claim blocks of candidates in order and stop past the least hit: the least hit, whichever thread
    finds it first (many seeds, bits where hits fall in early and late blocks)."""
    ch = CHALLENGERS[1][1]()
    grind = native.native_grind(ch.constants)
    for seed in range(24):
        base = [random.Random(seed).randrange(ch.field.P) for _ in range(16)]
        for bits in (6, 10, 12):
            assert grind(base, seed % 8, bits, 0, 1 << 20, threads) == grind(base, seed % 8, bits, 0, 1 << 20, 1)
    assert grind([0] * 16, 3, 30, 0, 200, threads) == -1


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("bits", [1, 5, 10])
def test_grind_then_draw_in_one_call_is_grind_then_the_draws(label, make, bits, monkeypatch):
    assert native.native_grind_draw(make().constants) is not None
    sets = [(15, 9), (8, 101), (0, 1), (9, 3), (1, 1)]
    for seed in range(5):
        fast, slow = _positioned(make, 300 + seed), _positioned(make, 300 + seed)
        witness, draws = fast.grind_then_draw(bits, sets)
        with monkeypatch.context() as m:
            m.setattr(transcript, "native_grind", lambda constants: None)
            assert slow.grind(bits) == witness
        assert draws == [_reference_draws(slow, b, n) for b, n in sets]
        assert fast.same_state(slow)
    fast, slow = _positioned(make, 400), _positioned(make, 400)  # draws that stay inside the witness's duplex
    witness, draws = fast.grind_then_draw(bits, [(1, 1), (2, 1)])
    assert witness == slow.grind(bits)
    assert draws == [_reference_draws(slow, 1, 1), _reference_draws(slow, 2, 1)] and fast.same_state(slow)


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("count", [16, 17, 23, 24, 1000, 7496])
@pytest.mark.parametrize("form", ["list", "uint32"])
def test_observe_grind_draw_in_one_call_is_the_three_calls(label, make, count, form):
    """Pending input before (completed in Python), whole runs, and a tail of 0 to 7 words left as the input buffer
    the witness meets: the same witness, draws and challenger as observe_many, grind, then the draws; words given
    as a list (converted in numpy) or as a uint32 array (``native_absorb_grind_draw_monty``: converted in C)."""
    assert native.native_absorb_grind_draw(make().constants) is not None
    assert native.native_absorb_grind_draw_monty(make().constants) is not None
    sets = [(15, 9), (8, 101), (9, 101)]
    for seed in range(4):
        fast, slow = _positioned(make, 500 + seed), _positioned(make, 500 + seed)
        words = [random.Random(seed).randrange(fast.field.P) for _ in range(count + seed)]
        if form == "uint32":
            words = np.array(words, np.uint32)
        called = []
        pending = len(fast.input_buffer)
        runs = (len(words) - (min(8 - pending, len(words)) if pending else 0)) // 8
        witness, draws = fast.observe_grind_draw(words, 10, sets, lambda: called.append(runs))
        slow.observe_many(words)
        assert witness == slow.grind(10)
        assert draws == [_reference_draws(slow, b, n) for b, n in sets] and fast.same_state(slow)
        assert called == [runs]  # meanwhile ran once, compiled absorb or not


class _Watched:
    """A ``HostWorker`` whose ``take`` answers are kept (whether its thread made the call)."""

    def __init__(self, worker):
        self.worker, self.taken = worker, []

    def take(self, entry, args):
        self.taken.append(self.worker.take(entry, args))
        return self.taken[-1]

    def finish(self):
        return self.worker.finish()


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("how", ["waiting", "gave_up", "finished_first", "list"])
def test_observe_grind_draw_on_a_worker_is_the_same(label, make, how):
    """The compiled call made on a ``HostWorker``'s thread while this one runs ``meanwhile`` (a worker waiting,
    words a uint32 array), here (its thread gave up waiting, it was finished before use, or the words are a list):
    the same witness, draws and challenger as the steps one by one, ``meanwhile`` run once, the worker finished
    after."""
    sets = [(15, 9), (8, 101), (9, 101)]
    for seed in range(3):
        fast, slow = _positioned(make, 700 + seed), _positioned(make, 700 + seed)
        words = [random.Random(seed).randrange(fast.field.P) for _ in range(7496 + seed)]
        given = words if how == "list" else np.array(words, np.uint32)
        worker = native.HostWorker.start(5.0 if how == "waiting" else 0.0)
        assert worker is not None
        if how == "gave_up":
            while worker.state == "waiting":  # its thread stops after 256 turns past its budget of 0
                time.sleep(0.001)
            assert worker.state == "gave up"
        elif how == "finished_first":
            assert worker.finish() == -2  # nothing taken: cancelled and joined
        watched, called = _Watched(worker), []
        witness, draws = fast.observe_grind_draw(given, 10, sets, lambda: called.append(1), watched)
        slow.observe_many(words)
        assert witness == slow.grind(10)
        assert draws == [_reference_draws(slow, b, n) for b, n in sets] and fast.same_state(slow)
        assert called == [1] and watched.taken == ([] if how == "list" else [how == "waiting"])
        assert worker.finish() == -2  # finished: a second finish has nothing left


@pytest.mark.parametrize("bits", [1, 4, 11])
def test_a_workers_search_shared_with_the_waiting_thread_finds_the_least_witness(bits):
    """Below ``grind_threads``' threshold the worker's proof-of-work blocks are searched by the waiting thread too
    (``p2_job_finish``): the witness and draws are still the one-thread search's, search short or long."""
    make = CHALLENGERS[1][1]
    for seed in range(4):
        fast, slow = _positioned(make, 900 + seed), _positioned(make, 900 + seed)
        words = np.array([random.Random(seed).randrange(fast.field.P) for _ in range(800 + seed)], np.uint32)
        worker = native.HostWorker.start(5.0)
        witness, draws = fast.observe_grind_draw(words, bits, [(9, 40)], None, worker)
        slow.observe_many(words.tolist())
        assert witness == slow.grind(bits) and draws == [_reference_draws(slow, 9, 40)] and fast.same_state(slow)


@pytest.mark.parametrize("helpers", [1, 2, 3])
@pytest.mark.parametrize("bits", [1, 4, 10, 13])
def test_a_workers_search_helpers_find_the_least_witness(helpers, bits):
    """Search helpers started with the worker (``HostWorker.start(..., helpers)``) search its blocks as they begin,
    beside the waiting thread: the witness and draws are still the one-thread search's."""
    make = CHALLENGERS[2][1]
    for seed in range(4):
        fast, slow = _positioned(make, 1100 + seed), _positioned(make, 1100 + seed)
        words = np.array([random.Random(seed).randrange(fast.field.P) for _ in range(900 + seed)], np.uint32)
        worker = native.HostWorker.start(5.0, helpers)
        witness, draws = fast.observe_grind_draw(words, bits, [(9, 40)], None, worker)
        slow.observe_many(words.tolist())
        assert witness == slow.grind(bits) and draws == [_reference_draws(slow, 9, 40)] and fast.same_state(slow)
        assert worker.state == "finished"


def test_search_helpers_leave_a_call_that_searches_nothing():
    """Helpers of a call that publishes no search (a word outside the field, refused in C) leave once it is done:
    ``finish`` joins them; a worker never called starts none."""
    ch = CHALLENGERS[1][1]()
    call = native.native_absorb_grind_draw_monty(ch.constants).prepare(40, 8, 4, [(8, 3)])
    call.words[:] = [1] * 39 + [ch.field.P]
    worker = native.HostWorker.start(5.0, 3)
    with pytest.raises(ValueError, match="not below P"):
        call.run(worker)
    assert worker.state == "finished"
    assert native.HostWorker.start(0.0, 3).finish() == -2


def test_search_helpers_are_left_a_cpu_for_the_rest_of_the_machine(monkeypatch):
    native._cpus.cache_clear()
    for cpus, helpers in [(1, 0), (3, 0), (4, 1), (5, 2), (64, 2)]:
        monkeypatch.setattr(native, "_cpus", lambda cpus=cpus: cpus)
        assert native.search_helpers() == helpers


def test_observe_grind_draw_waits_for_its_worker_when_meanwhile_raises():
    """An error in ``meanwhile`` still waits for the worker's call (its buffers are this call's) and is raised."""
    make = CHALLENGERS[1][1]
    ch = make()
    worker = native.HostWorker.start(5.0)

    def fails():
        raise KeyError("meanwhile")

    with pytest.raises(KeyError, match="meanwhile"):
        ch.observe_grind_draw(np.arange(1, 7497, dtype=np.uint32), 10, [(8, 101)], fails, worker)
    assert worker.finish() == -2


@pytest.mark.parametrize("form", ["list", "uint32"])
def test_observe_grind_draw_refuses_a_word_outside_the_field(form):
    ch = CHALLENGERS[1][1]()
    before = ch.clone()
    words = [1] * 20 + [ch.field.P] + [2] * 20
    with pytest.raises(ValueError, match="outside"):
        ch.observe_grind_draw(words if form == "list" else np.array(words, np.uint32), 4, [(8, 3)])
    assert ch.same_state(before)  # refused before anything is absorbed


def test_the_uint32_call_refuses_a_word_outside_the_field_itself():
    """``native_absorb_grind_draw_monty`` checks its words in C too (a caller that skipped the check): refused,
    nothing absorbed."""
    ch = CHALLENGERS[1][1]()
    fast = native.native_absorb_grind_draw_monty(ch.constants)
    state = [1] * 16
    with pytest.raises(ValueError, match="not below P"):
        fast(state, np.array([1] * 20 + [ch.field.P], np.uint32), 8, 4, [(8, 3)])
