"""The provers' Merkle multiproof pruning, compiled: ``ref.merkle_pruned.prune_many`` in C, digest for digest.

Contract:
- ``compiled_prune_many()``: a function ``(jobs) -> list`` equal to ``prune_many(jobs)`` (each job (indices,
  paths): ``paths[j]`` the sibling path of ``indices[j]``, leaf level first, (q, depth, w) uint32; the result per
  job the boundary digests, (m, w) uint32 in proof order: level by level, ascending index within a level), or None
  while the library is not loaded. It never waits on a compiler: the first call starts the build in the background
  (``native.build.NativeLibrary``, the cache folder of the compiled Poseidon2), later calls return the compiled
  function once it is loaded. Without a C compiler it stays None.
- ``prune_many(jobs)``: the compiled function when loaded, else the numpy reference: what a prover calls.
- ``build_now(retry_failed=True)``: for ``whirgpu warmup`` and benchmarks: ("cached" | "built", path), building
  now (``BackendUnavailable`` without a compiler).

Why compiled: a hiding proof's last session prunes a dozen openings; in numpy each walk is some twenty array
operations on a few hundred entries (about 0.3 ms for a proof at n = 20 on a fast host, twice that on a slow one),
on the proof's critical path after its last readback. The C walk is one call for all of them.
"""

from __future__ import annotations

import numpy as np

from ..ref import merkle_pruned
from . import boundary_c
from .build import CompiledFunction, NativeLibrary

_SOURCE = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int64_t index; int64_t row; } keyed;

static int by_index(const void *a, const void *b) {  /* ascending index, ties in row order: a stable sort */
    const keyed *x = (const keyed *)a, *y = (const keyed *)b;
    if (x->index != y->index) return x->index < y->index ? -1 : 1;
    return x->row < y->row ? -1 : (x->row > y->row);
}

/* Job j: jobs[4 j .. 4 j + 4) = (q, depth, its first index in idx, its first word in paths); its paths are q x depth
   x w words, row-major. Per job, rows are taken by ascending index; at each level l (leaf level first) the first row
   of each level-l node whose sibling node holds no queried row gives that row's level-l path digest. The digests go
   to out, job after job, level by level, ascending index within a level; counts[j] = how many job j gave. sorted:
   scratch of max q entries. Returns the digests written, or -1 when the scratch is too small (a q above max_q). */
long prune_many(const int64_t *idx, const uint32_t *paths, const int64_t *jobs, long njobs, long w, keyed *sorted,
                long max_q, uint32_t *out, int64_t *counts) {
    long written = 0;
    for (long j = 0; j < njobs; j++) {
        long q = (long)jobs[4 * j], depth = (long)jobs[4 * j + 1];
        const int64_t *index = idx + jobs[4 * j + 2];
        const uint32_t *path = paths + jobs[4 * j + 3];
        long before = written;
        if (q > max_q) return -1;
        int ascending = 1;
        for (long r = 0; r < q; r++) {
            sorted[r].index = index[r];
            sorted[r].row = r;
            if (r && index[r] < index[r - 1]) ascending = 0;
        }
        if (!ascending) qsort(sorted, (size_t)q, sizeof(keyed), by_index);
#define P2_SORTED(r) sorted[r].index
#define P2_COPY(r, l) do {                                                                             \
            memcpy(out + written * w, path + (sorted[r].row * depth + (l)) * w, (size_t)w * sizeof(uint32_t)); \
            written++;                                                                                 \
        } while (0)
        P2_BOUNDARY_WALK(P2_SORTED, q, depth, P2_COPY)
#undef P2_SORTED
#undef P2_COPY
        counts[j] = written - before;
    }
    return written;
}
"""
_CDEF = ("long prune_many(void *idx, void *paths, void *jobs, long njobs, long w, void *sorted, long max_q, "
         "void *out, void *counts);")

_NATIVE = NativeLibrary("host-prune", boundary_c.SOURCE + _SOURCE, ("-O2", "-shared", "-fPIC"), _CDEF,
                        what="the C multiproof pruning", fallback="the numpy pruning")


def _make(loaded):
    ffi, lib = loaded
    call, from_buffer = lib.prune_many, ffi.from_buffer

    def compiled(jobs) -> list:
        out: list = [None] * len(jobs)
        kept, indices, paths, table = [], [], [], []
        width, index_at, word_at = None, 0, 0
        for job, (job_indices, job_paths) in enumerate(jobs):
            job_paths = np.asarray(job_paths, np.uint32)
            job_indices = np.asarray(job_indices, np.int64).reshape(-1)
            if job_paths.ndim != 3 or job_paths.shape[0] != job_indices.size:
                raise ValueError(f"prune_paths: {job_indices.size} indices with paths of shape {job_paths.shape}")
            if job_paths.shape[0] == 0 or job_paths.shape[1] == 0 or (width is not None and
                                                                       job_paths.shape[2] != width):
                out[job] = merkle_pruned.prune_many([(job_indices, job_paths)])[0]  # empty, or another width
                continue
            width = job_paths.shape[2]
            table.append((job_indices.size, job_paths.shape[1], index_at, word_at))
            index_at, word_at = index_at + job_indices.size, word_at + job_paths.size
            kept.append(job)
            indices.append(job_indices)
            paths.append(job_paths.reshape(-1))
        if not kept:
            return out
        idx, words = np.concatenate(indices), np.concatenate(paths)
        jobs_table = np.asarray(table, np.int64).reshape(-1)
        max_q = max(i.size for i in indices)
        sorted_rows = np.empty(2 * max_q, np.int64)
        digests = np.empty(words.size, np.uint32)  # at most every path digest
        counts = np.empty(len(kept), np.int64)
        written = call(from_buffer(idx), from_buffer(words), from_buffer(jobs_table), len(kept), width,
                       from_buffer(sorted_rows, require_writable=True), max_q,
                       from_buffer(digests, require_writable=True), from_buffer(counts, require_writable=True))
        if written < 0:
            raise RuntimeError("prune_many: the compiled walk's scratch was too small")
        at = 0
        for job, count in zip(kept, counts.tolist()):
            out[job] = digests[at * width:(at + count) * width].reshape(count, width)
            at += count
        return out

    return compiled


_COMPILED = CompiledFunction(_NATIVE, _make)


def compiled_prune_many():
    """The compiled pruning, or None while it is not loaded (module contract)."""
    return _COMPILED.get()


def prune_many(jobs) -> list:
    """``ref.merkle_pruned.prune_many(jobs)``, compiled when the library is loaded (module contract)."""
    compiled = compiled_prune_many()
    return compiled(jobs) if compiled is not None else merkle_pruned.prune_many(jobs)


def build_now(retry_failed: bool = True):
    """("cached" | "built", library path), building it now; installs it for ``compiled_prune_many``."""
    return _COMPILED.build_now(retry_failed)
