"""A hiding proof's position sets as its second session takes them (``DrawLayout``), made in C by the compiled
absorb, search and draws (``native.permute``'s uint32 call, ``p2_layout_prune`` in ``job_c``), on its worker's thread
where it has one: the sets sorted into one uint32 array at given starts, and the pruned multiproof ids of each
(set, depth) asked for (``ref.merkle_pruned``'s order, over path ids rank * depth + level).
"""

from __future__ import annotations

from array import array
from functools import lru_cache

import numpy as np

NOT_LAID = -(1 << 62)  # p2_job_layout's result before the job's thread wrote it


@lru_cache(maxsize=64)
def _layout_spec(starts: tuple, size: int, requests: tuple) -> tuple:
    """``DrawLayout``'s constant parts, made once per layout: (starts, size, requests, the requests flat, the
    checked targets' kept sizes, filled by ``buffers``)."""
    starts_array = np.array(starts, np.int64)
    reqs = np.array(requests or [(0, 0)], np.int64).reshape(-1)
    starts_array.setflags(write=False)
    reqs.setflags(write=False)
    return starts_array, size, requests, reqs, {}


class DrawLayout:
    """What ``native_absorb_grind_draw_monty``'s call also makes in C (its ``layout``; ``p2_layout_prune``), on
    the worker's thread where there is one, once a witness is found: the draw sets sorted ascending into one
    uint32 array of ``size`` words, set k from word ``starts[k]`` (zeros between; every set's target > 0), and
    per request (set k, depth) the ids rank * depth + level of the boundary digests of set k's positions in a tree
    of 2^depth leaves (``ref.merkle_pruned``'s order). Made: ``words`` (that array), ``sets`` (its sets, views),
    ``kept`` (per request, int64); all None where the call did not lay them out (not compiled, no witness)."""

    def __init__(self, starts, size: int, requests=()):
        self.starts, self.size, self.requests, self.reqs, self._fits = _layout_spec(
            tuple(int(x) for x in starts), int(size), tuple((int(k), int(depth)) for k, depth in requests))
        self.words = self.sets = self.kept = None

    def buffers(self, targets, from_buffer) -> tuple:
        """(p2_job_layout's arguments after the job, its result slot, the output arrays, the sets' views of the
        first) for sets of ``targets``: what ``made`` takes after the call."""
        targets = tuple(targets)
        if targets not in self._fits:  # checked once per layout and targets (a proof draws the same sets)
            starts = self.starts.tolist()
            if len(targets) != len(starts) or any(n <= 0 or s + n > self.size for s, n in zip(starts, targets)) or \
                    any(not 0 <= k < len(targets) or not 0 <= depth < 32 for k, depth in self.requests):
                raise ValueError(f"DrawLayout: sets of {list(targets)} draws at starts {starts} in {self.size} "
                                 f"words, requests {self.requests}")
            self._fits[targets] = max(1, sum(targets[k] * depth for k, depth in self.requests))
        out = np.zeros(self.size, np.uint32)
        kept = np.empty(self._fits[targets], np.int64)
        counts, result = np.zeros(max(1, len(self.requests)), np.int64), array("q", [NOT_LAID])
        args = (from_buffer(self.starts), from_buffer(out, require_writable=True), from_buffer(self.reqs),
                len(self.requests), from_buffer(kept, require_writable=True),
                from_buffer(counts, require_writable=True), from_buffer(result))
        sets = tuple(out[s:s + n] for s, n in zip(self.starts.tolist(), targets))
        return args, result, out, kept, counts, sets

    def made(self, written: int, out: np.ndarray, kept: np.ndarray, counts: np.ndarray, sets: tuple) -> None:
        """Keep what the call made into ``buffers``' arrays (``written``: p2_layout_prune's result; below 0:
        nothing kept)."""
        if written < 0:
            return
        out.setflags(write=False)
        self.words, self.sets, at, views = out, sets, 0, []
        for n in counts[:len(self.requests)].tolist():
            views.append(kept[at:at + n])
            at += n
        self.kept = tuple(views)
