"""The compiled draws' set arrays, and the absorb, search and draws for words as a device keeps them made ready
before those words exist (``PreparedMontyCall``): every buffer and argument of ``p2_absorb_grind_draw_monty`` (and
of ``p2_layout_prune`` where a ``DrawLayout`` asks) built ahead, so a proof's thread, once the words are back, only
writes them and the sponge and hands the call over (``native.permute.native_absorb_grind_draw_monty`` is this
call made at once).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .layout import NOT_LAID, DrawLayout


@lru_cache(maxsize=64)
def set_arrays(sets: tuple, p: int) -> tuple:
    """``p2_distinct``'s (bits, targets, bounds) for ``sets`` of (bits, target), made once per sets (read-only in C;
    a proof draws the same sets). ValueError for a set outside bits [1, 16], target [0, 2^bits]."""
    bits = array("q", [int(b) for b, _ in sets] or [1])
    targets = array("q", [int(n) for _, n in sets] or [0])
    if any(not 1 <= b <= 16 or not 0 <= n <= 1 << b for b, n in zip(bits, targets)):
        raise ValueError(f"distinct: a set {list(zip(bits, targets))} outside bits [1, 16], target [0, 2^bits]")
    bounds = array("Q", [p & ~((1 << b) - 1) for b in bits])
    return bits, targets, bounds


def split_draws(draws, targets, sets: int) -> list:
    """The first ``sets`` sets' draws as lists of ints, set k the next ``targets[k]`` of ``draws``."""
    out, at = [], 0
    for n in targets[:sets]:
        out.append(draws[at:at + n].tolist())
        at += n
    return out


@dataclass(frozen=True)
class MontyCallParts:
    """What every ``PreparedMontyCall`` of one width-16 instance shares: the loaded library (ffi, lib), the C table
    (kept alive here), its pointer, the field's P and the lane and single-state kernels' ISAs."""

    loaded: tuple
    table: np.ndarray
    table_pointer: object
    p: int
    lane_isa: int
    single_isa: int


class PreparedMontyCall:
    """``p2_absorb_grind_draw_monty`` for ``nwords`` words with the sponge's length ``tag`` (0: none), a ``bits``-bit
    search on ``threads`` threads and the draw ``sets`` of (bits, target), its buffers made now: write the sponge's
    16 canonical words into ``state`` and the Montgomery words into ``words`` (or pass ``words``, a contiguous
    uint32 array of ``nwords``, used in place), then ``run`` once. After it: ``state`` the sponge at the draws' last
    permutation, ``used`` the samples they took, ``draw_lists()`` the draws, and ``layout`` (when given) filled as
    ``DrawLayout.made`` fills it. ValueError for bits outside [1, 30] or a set the compiled draws do not take."""

    def __init__(self, parts: MontyCallParts, nwords: int, tag: int, bits: int, sets, threads: int = 1,
                 layout: DrawLayout | None = None, words: np.ndarray | None = None):
        if not 1 <= bits <= 30:
            raise ValueError(f"absorb_grind_draw: bits {bits} outside [1, 30]")
        ffi, lib = parts.loaded
        from_buffer = ffi.from_buffer
        self._lib, self.layout, self.nsets = lib, layout, len(sets)
        self.state = np.zeros(16, np.uint64)
        self.words = np.zeros(int(nwords), np.uint32) if words is None else words
        if self.words.dtype != np.uint32 or self.words.shape != (int(nwords),) or not self.words.flags.c_contiguous:
            raise ValueError(f"absorb_grind_draw: words must be a contiguous uint32 array of {nwords}")
        set_bits, self.targets, bounds = set_arrays(tuple(sets), parts.p)
        self.draws = np.zeros(max(1, sum(self.targets)), np.uint64)
        self._used = np.zeros(1, np.int64)
        self._draws_at, self._targets_at = from_buffer(self.draws, require_writable=True), from_buffer(self.targets)
        self.args = (from_buffer(self.state, require_writable=True), from_buffer(self.words), int(nwords), tag,
                     (1 << bits) - 1, parts.p, parts.table_pointer, parts.lane_isa, max(1, int(threads)), len(sets),
                     from_buffer(set_bits), self._targets_at, from_buffer(bounds), self._draws_at, parts.single_isa,
                     from_buffer(self._used, require_writable=True))
        self._laid = layout.buffers(self.targets[:len(sets)], from_buffer) if layout is not None else None

    @property
    def used(self) -> int:
        return int(self._used[0])

    def run(self, worker=None, meanwhile=None) -> int:
        """The call: on ``worker``'s thread (a started ``native.permute.HostWorker``, used up here) while this one
        runs ``meanwhile()``, or here after ``meanwhile()`` where there is no worker or it gave up waiting. The
        witness (canonical), or -1 where none is in range. ValueError when a word is not below P, MemoryError
        when C had no memory for the converted words."""
        lib, laid = self._lib, self._laid
        if worker is not None and laid is not None:
            worker.also(lib.p2_job_layout, laid[0])
        if worker is not None and worker.take(lib.p2_job_absorb_grind_draw_monty, self.args):
            try:  # this thread's own work while the worker's thread makes the call; the buffers live till finish
                if meanwhile is not None:
                    meanwhile()
            finally:
                witness = worker.finish()
        else:
            if worker is not None:
                worker.finish()  # it gave up waiting: its thread is joined, the call made here
            if meanwhile is not None:
                meanwhile()
            witness = lib.p2_absorb_grind_draw_monty(*self.args)
        if witness == -3:
            raise ValueError("absorb_grind_draw: a word is not below P")
        if witness < -1:
            raise MemoryError("absorb_grind_draw: no memory for the converted words")
        if witness >= 0 and laid is not None:
            made = laid[1][0] if worker is not None and laid[1][0] != NOT_LAID else \
                lib.p2_layout_prune(self._draws_at, self._targets_at, self.nsets, *laid[0][:-1])
            self.layout.made(made, *laid[2:])
        return int(witness)

    def draw_lists(self) -> list:
        """The draws of each set, lists of ints, after ``run`` found a witness."""
        return split_draws(self.draws, self.targets, self.nsets)
