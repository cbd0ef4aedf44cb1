"""The hiding proof's position sets laid out and pruned in C (``p2_layout_prune``, ``native.permute.DrawLayout``,
``HostDraws.draw(prune=...)``) against what the host made before: the sets sorted into ``positions_words``' layout
and ``ref.merkle_pruned.prune_many`` over path ids, on the direct call and on a ``HostWorker``'s thread."""

from __future__ import annotations

import random

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.native import permute as native
from whirgpu.native.layout import DrawLayout
from whirgpu.profiles.p3_whir.zk.host_draws import positions_words, set_starts
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import merkle_pruned
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

pytestmark = pytest.mark.skipif(native._library() is None, reason="no C compiler: the compiled paths do not exist")


def _reference_ids(positions, depth: int) -> np.ndarray:
    """The kept path ids (rank * depth + level) of the numpy pruning, for sorted distinct ``positions``."""
    q = len(positions)
    ids = np.arange(q * depth, dtype=np.uint32).reshape(q, depth, 1)
    return merkle_pruned.prune_many([(np.asarray(positions, np.int64), ids)])[0].reshape(-1).astype(np.int64)


def _direct(sets, starts, size, requests):
    """p2_layout_prune called as it is: (its result, out, kept per request)."""
    ffi, lib = native._library()
    draws = np.array([v for s in sets for v in s] or [0], np.uint64)
    counts = np.array([len(s) for s in sets] or [0], np.int64)
    starts = np.array(starts or [0], np.int64)
    out = np.zeros(max(1, size), np.uint32)
    reqs = np.array(requests or [(0, 0)], np.int64).reshape(-1)
    kept = np.zeros(max(1, sum(len(sets[k]) * d for k, d in requests if 0 <= k < len(sets))), np.int64)
    kept_counts = np.zeros(max(1, len(requests)), np.int64)
    fb = ffi.from_buffer
    written = lib.p2_layout_prune(fb(draws), fb(counts), len(sets), fb(starts), fb(out, require_writable=True),
                                  fb(reqs), len(requests), fb(kept, require_writable=True),
                                  fb(kept_counts, require_writable=True))
    ends = np.cumsum(kept_counts[:len(requests)]).tolist()
    return written, out, [kept[a:b] for a, b in zip([0] + ends[:-1], ends)]


@pytest.mark.parametrize("seed", range(6))
def test_sets_are_laid_out_sorted_and_pruned_as_the_reference(seed):
    rnd = random.Random(seed)
    sets = []
    for _ in range(rnd.randrange(1, 7)):
        bits = rnd.randrange(1, 17)
        sets.append(rnd.sample(range(1 << bits), rnd.randrange(1, min(300, 1 << bits) + 1)))
    starts = set_starts([len(s) for s in sets], rnd.choice([1, 4, 64]))
    requests = []
    for k, s in enumerate(sets):
        low = max(s).bit_length()  # the smallest tree that holds the set
        requests += [(k, depth) for depth in sorted({low, low + rnd.randrange(0, 5)})]
    rnd.shuffle(requests)
    written, out, kept = _direct(sets, starts[:-1], starts[-1], requests)
    expected = np.zeros(starts[-1], np.uint32)
    for start, s in zip(starts, sets):
        expected[start:start + len(s)] = sorted(s)
    assert np.array_equal(out, expected)
    for (k, depth), ids in zip(requests, kept):
        assert np.array_equal(ids, _reference_ids(sorted(sets[k]), depth)), (k, depth)
    assert written == sum(ids.size for ids in kept)


def test_edges_one_position_a_full_tree_and_depth_zero():
    full = list(range(16))[::-1]
    written, out, kept = _direct([[5], full, [0]], [0, 8, 24], 25, [(0, 3), (1, 4), (2, 0)])
    assert out[:1].tolist() == [5] and out[8:24].tolist() == list(range(16)) and out[24] == 0
    assert kept[0].tolist() == [0, 1, 2]  # one leaf: its whole path
    assert kept[1].size == 0 and kept[2].size == 0  # every sibling queried; a one-leaf tree has none
    assert written == 3


@pytest.mark.parametrize("case", ["twice", "outside", "no set", "depth", "long"])
def test_what_it_cannot_lay_out_is_refused(case):
    sets, requests = [[3, 1, 2]], [(0, 2)]
    if case == "twice":
        sets = [[3, 1, 3]]
    elif case == "outside":
        requests = [(0, 1)]  # 3 >= 2^1
    elif case == "no set":
        requests = [(1, 2)]
    elif case == "depth":
        requests = [(0, 32)]
    else:
        sets = [list(range(4097))]
    assert _direct(sets, [0], 4097, requests)[0] == -1


CHALLENGER = lambda: DuplexChallenger(Poseidon2Constants.smallrng_16_24(KOALABEAR)[0], True)  # noqa: E731


@pytest.mark.parametrize("how", ["direct", "worker", "gave_up"])
@pytest.mark.parametrize("field", [KOALABEAR, BABYBEAR], ids=lambda f: f.name)
def test_the_compiled_draws_lay_out_and_prune_what_the_host_would(how, field):
    """``observe_grind_draw(..., layout=)`` on each path: the draws (unchanged), and the layout the sorted sets in
    ``positions_words``' layout with the reference's pruned ids; its witness and state as without a layout."""
    sets = [(15, 9), (8, 101), (9, 101)]
    make = lambda: DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], True)  # noqa: E731
    for seed in range(2):
        words = np.array([random.Random(seed).randrange(field.P) for _ in range(7496)], np.uint32)
        starts = set_starts([n for _, n in sets], 64)
        requests = [(0, 15), (1, 8), (2, 9), (0, 16)]
        layout = DrawLayout(starts[:-1], starts[-1], requests)
        worker = None
        if how != "direct":
            worker = native.HostWorker.start(5.0 if how == "worker" else 0.0)
            if how == "gave_up":
                while worker.state == "waiting":
                    pass
        laid, plain = make(), make()
        witness, draws = laid.observe_grind_draw(words, 10, sets, lambda: None, worker, layout)
        assert (witness, draws) == plain.observe_grind_draw(words, 10, sets) and laid.same_state(plain)
        positions = [np.sort(np.array(d, np.uint32)) for d in draws]
        assert np.array_equal(layout.words, positions_words(positions, 64)) and not layout.words.flags.writeable
        assert all(np.array_equal(a, b) for a, b in zip(layout.sets, positions))
        for (k, depth), ids in zip(requests, layout.kept):
            assert np.array_equal(ids, _reference_ids(positions[k], depth))


def test_a_layout_that_does_not_fit_is_refused_by_name():
    layout = DrawLayout([0, 4], 8, [(0, 4)])
    with pytest.raises(ValueError, match="DrawLayout"):
        CHALLENGER().observe_grind_draw(np.arange(1, 100, dtype=np.uint32), 4, [(4, 5), (4, 5)], None, None, layout)
