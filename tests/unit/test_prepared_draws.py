"""The absorb, search and draws made ready before their words exist (``DuplexChallenger.prepare_grind_draw``,
``native.draw_call.PreparedMontyCall``, the hiding proof's ``PendingDraws``) against the call made at once and the
steps one by one: the same witness, draws, layout and pruned ids, on the direct call and on a ``HostWorker``'s thread
(waiting, with search helpers, or given up), both fields, length-tagged and not, runs with and without a tail; None where the call is not
compiled; a word or sponge outside the field refused."""

from __future__ import annotations

import random

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.native import permute as native
from whirgpu.native.draw_call import PreparedMontyCall
from whirgpu.native.layout import DrawLayout
from whirgpu.profiles.p3_whir.zk.host_draws import HostDraws, PendingDraws, draw_sets, set_starts
from whirgpu.protocol import transcript
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

pytestmark = pytest.mark.skipif(native._library() is None, reason="no C compiler: the compiled paths do not exist")

CHALLENGERS = [("whir-p3", lambda: DuplexChallenger())] + \
    [(f"p3-{field.name}", lambda field=field: DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], True))
     for field in (KOALABEAR, BABYBEAR)]
SETS = [(15, 9), (8, 101), (9, 101)]


def _sampled(make, seed: int) -> DuplexChallenger:
    """A challenger after random observations and 1-8 samples: its input buffer empty, as a device's after a sample."""
    rnd = random.Random(seed)
    ch = make()
    ch.observe_many([rnd.randrange(ch.field.P) for _ in range(rnd.randrange(0, 30))])
    for _ in range(rnd.randrange(1, 9)):
        ch.sample()
    assert not ch.input_buffer
    return ch


def _worker(how: str):
    if how == "direct":
        return None
    worker = native.HostWorker.start(0.0 if how == "gave_up" else 5.0, 2 if how == "helpers" else 0)
    assert worker is not None
    while how == "gave_up" and worker.state == "waiting":
        pass
    return worker


@pytest.mark.parametrize("label,make", CHALLENGERS, ids=[c[0] for c in CHALLENGERS])
@pytest.mark.parametrize("count", [16, 23, 7496])
@pytest.mark.parametrize("how", ["direct", "worker", "helpers", "gave_up"])
def test_a_prepared_call_is_observe_grind_draw(label, make, count, how):
    """Prepared from a fresh challenger (only its constants and tag are read), run with another's sponge: that
    challenger's ``observe_grind_draw`` witness and draws, ``meanwhile`` run once."""
    for seed in range(2):
        ch = _sampled(make, 40 + seed)
        words = np.array([random.Random(seed).randrange(ch.field.P) for _ in range(count)], np.uint32)
        prepared = make().prepare_grind_draw(count, 10, SETS)
        prepared.words[:] = words
        called = []
        got = prepared.run(ch.sponge_state, lambda: called.append(1), _worker(how))
        assert got == ch.clone().observe_grind_draw(words, 10, SETS) and called == [1]
        slow = ch.clone()
        slow.observe_many(words.tolist())
        assert got[0] == slow.grind(10)


@pytest.mark.parametrize("how", ["direct", "worker", "gave_up"])
@pytest.mark.parametrize("field", [KOALABEAR, BABYBEAR], ids=lambda f: f.name)
def test_a_prepared_layout_is_the_one_observe_grind_draw_lays_out(how, field):
    make = lambda: DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], True)  # noqa: E731
    starts = set_starts([n for _, n in SETS], 64)
    requests = [(0, 15), (1, 8), (2, 9), (0, 16)]
    for seed in range(2):
        ch = _sampled(make, 60 + seed)
        words = np.array([random.Random(seed).randrange(field.P) for _ in range(7496)], np.uint32)
        ahead, at_once = DrawLayout(starts[:-1], starts[-1], requests), DrawLayout(starts[:-1], starts[-1], requests)
        prepared = make().prepare_grind_draw(words.size, 10, SETS, ahead)
        prepared.words[:] = words
        witness, draws = prepared.run(ch.sponge_state, None, _worker(how))
        assert draws is None  # laid out: the layout holds them
        assert witness == ch.clone().observe_grind_draw(words, 10, SETS, None, None, at_once)[0]
        assert np.array_equal(ahead.words, at_once.words) and not ahead.words.flags.writeable
        assert all(np.array_equal(a, b) for a, b in zip(ahead.sets, at_once.sets))
        assert all(np.array_equal(a, b) for a, b in zip(ahead.kept, at_once.kept)) and len(ahead.kept) == 4


def test_prepare_is_none_where_the_call_is_not_compiled(monkeypatch):
    ch = CHALLENGERS[1][1]()
    assert ch.prepare_grind_draw(7496, 0, SETS) is None  # no search
    assert ch.prepare_grind_draw(7496, 10, [(17, 3)]) is None  # a set the compiled draws do not take
    assert ch.prepare_grind_draw(15, 10, SETS) is None  # fewer than two whole runs
    assert ch.prepare_grind_draw(16, 10, SETS) is not None
    monkeypatch.setattr(transcript, "native_absorb_grind_draw_monty", lambda constants: None)
    assert ch.prepare_grind_draw(7496, 10, SETS) is None  # the library not loaded


def test_what_is_outside_the_field_is_refused():
    make = CHALLENGERS[1][1]
    ch = _sampled(make, 80)
    prepared = make().prepare_grind_draw(40, 4, [(8, 3)])
    prepared.words[:] = [1] * 20 + [ch.field.P] + [2] * 19
    with pytest.raises(ValueError, match="outside"):  # the word named
        prepared.run(ch.sponge_state)
    prepared = make().prepare_grind_draw(40, 4, [(8, 3)])
    worker = native.HostWorker.start(5.0)
    sponge = ch.sponge_state
    sponge[3] = ch.field.P
    with pytest.raises(ValueError, match="sponge"):
        prepared.run(sponge, None, worker)
    assert worker.state == "finished"  # not left spinning
    with pytest.raises(ValueError, match="sponge"):
        prepared.run(ch.sponge_state[:15])
    fast = native.native_absorb_grind_draw_monty(ch.constants)
    with pytest.raises(ValueError, match="contiguous uint32"):
        fast.prepare(8, 0, 4, [(8, 3)], 1, None, np.zeros(8, np.int64))
    with pytest.raises(ValueError, match="bits 31"):
        fast.prepare(8, 0, 31, [(8, 3)])
    assert isinstance(fast.prepare(8, 0, 4, [(8, 3)]), PreparedMontyCall)


class _Config:
    """The few members ``draw_sets`` and ``PendingDraws`` read of a hiding configuration."""

    def __init__(self, final_pow_bits: int):
        self.final_pow_bits, self.final_queries, self.mask_queries = final_pow_bits, 9, 101

    def source_code(self):
        return (32, 9, 1 << 15)

    def mask_groups(self):
        shape = type("Shape", (), {"domain_size": 256})
        return [type("Group", (), {"shape": shape})] * 2


@pytest.mark.parametrize("how", ["direct", "worker"])
def test_pending_draws_are_host_draws(how):
    """``PendingDraws`` (prepared ahead, its words written after) gives ``HostDraws.draw``'s inputs, witness, sets
    and kept ids; none without a final proof of work."""
    make = CHALLENGERS[1][1]
    config = _Config(10)
    prune = ((0, 15), (1, 8), (2, 8))
    for seed in range(2):
        ch = _sampled(make, 90 + seed)
        words = np.array([random.Random(seed).randrange(ch.field.P) for _ in range(7496)], np.uint32)
        pending = PendingDraws.prepare(config, make(), words.size, 16, prune)
        pending.words[:] = words
        ahead = pending.draw(ch.sponge_state, None, _worker(how))
        at_once = HostDraws.draw(config, ch.clone(), words, 16, None, None, prune)
        assert ahead.witness == at_once.witness and set(ahead.inputs) == {("positions",)}
        assert np.array_equal(ahead.inputs[("positions",)], at_once.inputs[("positions",)])
        assert all(np.array_equal(a, b) for a, b in zip(ahead.sets, at_once.sets)) and len(ahead.sets) == 3
        assert ahead.kept.keys() == at_once.kept.keys() == set(prune)
        assert all(np.array_equal(ahead.kept[k], at_once.kept[k]) for k in prune)
    assert [bits for bits, _ in draw_sets(config)] == [15, 8, 8]
    assert PendingDraws.prepare(_Config(0), make(), 7496, 16, prune) is None


def test_a_prepared_call_waits_for_its_worker_when_meanwhile_raises():
    """An error in ``meanwhile`` still waits for the worker's call (its buffers are the prepared call's) and is
    raised; the worker is finished."""
    make = CHALLENGERS[1][1]
    prepared = make().prepare_grind_draw(7496, 10, SETS)
    prepared.words[:] = np.arange(1, 7497, dtype=np.uint32)
    worker = native.HostWorker.start(5.0, 2)

    def fails():
        raise KeyError("meanwhile")

    with pytest.raises(KeyError, match="meanwhile"):
        prepared.run(_sampled(make, 99).sponge_state, fails, worker)
    assert worker.state == "finished"
