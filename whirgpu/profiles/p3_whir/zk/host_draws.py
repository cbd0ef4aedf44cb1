"""The second session's draws where the host makes them (``HostDraws``): a hiding proof on a GPU whose final proof
of work is short finds the witness and every final and mask-group position on the host, in one compiled call with
the blinded vectors' absorb (``DuplexChallenger.observe_grind_draw``), and writes the positions as one named input.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ....backends.gpu.geometry import log2
from ....native.layout import DrawLayout


@dataclass
class HostDraws:
    """The second session's named inputs, what a replay writes. Drawn on the host (``draw``: the final proof of
    work on the compiled search, the positions by ``distinct_query_indices``): ``witness`` the final proof of work's
    witness (None without one), which only the proof holds, and ``sets`` the position sets (uint32 ascending: the
    final positions, then each mask group's), written as the one input ("positions",) (``positions_words``). Or,
    where the device searches and draws (``device``): ("challenger",), the host challenger's words for it."""

    inputs: dict
    witness: int | None = None
    sets: tuple = ()
    kept: dict = field(default_factory=dict)  # (set, depth) -> the pruned ids ``draw`` was asked for (``prune``)

    @classmethod
    def device(cls, challenger_words: np.ndarray) -> "HostDraws":
        return cls({("challenger",): challenger_words})

    @classmethod
    def draw(cls, config, challenger, blinded, align_words: int = 1, meanwhile=None, worker=None,
             prune=()) -> "HostDraws":
        """Observe ``blinded`` (the blinded vectors' words) on ``challenger`` (the host's, before them), then grind
        and draw in the transcript's order: one compiled call from the absorb to the last draw where it can
        (``DuplexChallenger.observe_grind_draw``), on ``worker``'s thread (a started ``HostWorker``, used up here)
        while this one runs ``meanwhile()`` (once, whichever way the draws are made). ``align_words``: where each
        set starts in ("positions",) (``positions_words``). ``prune``: (set, depth) pairs whose pruned multiproof
        ids (``ref.merkle_pruned`` over path ids rank * depth + level) the compiled call also makes, into ``kept``
        (where it made them; else ``kept`` is empty)."""
        sets = draw_sets(config)
        if config.final_pow_bits > 0:  # the absorb, the search and the draws in one call
            layout = _layout(config, align_words, prune)
            witness, drawn = challenger.observe_grind_draw(blinded, config.final_pow_bits, sets, meanwhile, worker,
                                                           layout)
            return cls.made(int(witness), drawn, layout, align_words)
        if worker is not None:
            worker.finish()
        if meanwhile is not None:
            meanwhile()
        challenger.observe_many(blinded)
        return cls.made(None, challenger.distinct_uniform_sets(sets), None, align_words)

    @classmethod
    def made(cls, witness: int | None, drawn, layout: "DrawLayout | None", align_words: int) -> "HostDraws":
        """The draws ``drawn`` (lists per set) with ``witness``, or ``layout``'s where it was laid out in C."""
        if layout is not None and layout.words is not None:  # laid out and pruned in C
            return cls({("positions",): layout.words}, witness, layout.sets, dict(zip(layout.requests, layout.kept)))
        drawn = tuple(np.sort(np.array(draws, np.uint32)) for draws in drawn)
        return cls({("positions",): positions_words(drawn, align_words)}, witness, drawn, {})


class PendingDraws:
    """``HostDraws.draw``'s compiled call made ready before the first session's words are back (``prepare``: while
    the device runs it), for a challenger whose input buffer is then empty: ``words`` takes the blinded vectors'
    words (Montgomery uint32, as read back), ``draw(sponge, meanwhile, worker)`` the challenger's 16 sponge words
    and gives the same ``HostDraws`` as ``HostDraws.draw`` with the same arguments. Run once."""

    def __init__(self, call, layout: "DrawLayout | None", align_words: int):
        self._call, self._layout, self._align = call, layout, align_words
        self.words = call.words

    @classmethod
    def prepare(cls, config, challenger, nwords: int, align_words: int = 1, prune=()) -> "PendingDraws | None":
        """For ``nwords`` blinded words and ``challenger``'s constants and tag (not its state); None where the draws
        are not one compiled call (no final proof of work, the library not loaded now)."""
        if config.final_pow_bits <= 0:
            return None
        layout = _layout(config, align_words, prune)
        call = challenger.prepare_grind_draw(nwords, config.final_pow_bits, draw_sets(config), layout)
        return None if call is None else cls(call, layout, align_words)

    def draw(self, sponge, meanwhile=None, worker=None) -> HostDraws:
        witness, drawn = self._call.run(sponge, meanwhile, worker)
        return HostDraws.made(int(witness), drawn, self._layout, self._align)


def _layout(config, align_words: int, prune) -> "DrawLayout | None":
    """The draws' layout in ("positions",) with ``prune``'s requests; None where a set draws nothing."""
    counts = [count for _, count in draw_sets(config)]
    starts = set_starts(counts, align_words)
    return DrawLayout(starts[:-1], starts[-1], prune) if all(n > 0 for n in counts) else None


@lru_cache(maxsize=16)
def draw_sets(config) -> tuple:
    """The (bits, count) of each position set ``HostDraws.draw`` draws for ``config`` (made once per configuration):
    the final positions', then each mask group's; distinct_query_indices of each set in turn, in one call, its
    draws those of consecutive calls."""
    from ....protocol.query_indices import folded_domain_size  # noqa: PLC0415 - host path only

    _, _, domain_size = config.source_code()
    sets = [(domain_size, config.final_queries)]
    sets += [(group.shape.domain_size, config.mask_queries) for group in config.mask_groups()]
    sizes = [folded_domain_size(size, 0, count) for size, count in sets]
    return tuple((log2(size), min(count, size)) for size, (_, count) in zip(sizes, sets))


def set_starts(counts, align_words: int) -> list[int]:
    """Where each of position sets of ``counts`` entries starts in ``positions_words``, and (last) its length:
    every start a multiple of ``align_words`` (so each set binds as a window of its own)."""
    starts = [0]
    for count in counts:
        starts.append(starts[-1] + -(-max(1, int(count)) // align_words) * align_words)
    return starts


def positions_words(sets, align_words: int) -> np.ndarray:
    """The position sets one after another at ``set_starts``, zeros between: the one write the second session's
    positions take."""
    starts = set_starts([len(x) for x in sets], align_words)
    words = np.zeros(starts[-1], np.uint32)
    for start, values in zip(starts, sets):
        words[start:start + len(values)] = values
    return words
