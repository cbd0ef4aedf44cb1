"""Host -> device uploads through persistent staging chunks: the plan both staging runtimes follow (``wgpu_rt``
and ``metal_rt``) and the host-side copy they share.

A staged write of ``n`` bytes is cut into chunks of ``UploadPlan.chunk_for(n)`` bytes (``chunk_ranges``): the
write spread over the ring's slots, at most ``UploadPlan.chunk_bytes``. Each chunk goes through the next of a ring
of ``UploadPlan.slots`` host-visible staging buffers, which a runtime makes together at its first staged write
and keeps (made anew, larger, only for a later write that needs larger chunks): the host waits until the copy
that last read that slot has finished, fills it with one memcpy (``copy_into``, split over up to
``UploadPlan.threads`` threads), and submits the device-side copy into the destination at once, without waiting,
so the device copies chunk i while the host fills chunk i + 1. Copies are submitted in the order of the writes, on
the queue every other submission uses, so a later batch sees the data and a later write to the same bytes wins.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

MiB = 1 << 20
MIN_SHARE_BYTES = MiB  # the least a copy thread is given: below it, starting a thread costs more than it saves


def default_threads() -> int:
    """Copy threads per chunk: 4, or one per four cores on a smaller host. One thread's memcpy into memory it
    has touched before moves about 5-10 GB/s and a PCIe Gen5 x16 link about 50 GB/s, so one thread would cap the
    upload; a host with few cores also runs the proof's encoding and the driver's threads."""
    return max(1, min(4, (os.cpu_count() or 1) // 4))


@dataclass(frozen=True)
class UploadPlan:
    """How a runtime stages writes. ``threshold``: the bytes from which a wgpu write goes through the staging
    slots (smaller ones use ``queue.write_buffer``; Metal stages every PRIVATE write). ``chunk_bytes``: the size of
    one staging buffer, a multiple of 8 (wgpu's map alignment). ``slots``: staging buffers in the ring (at least 1).
    ``threads``: the most threads one chunk's memcpy is split over (1: the calling thread alone)."""

    # 1 MiB: below it queue.write_buffer's per-call staging buffer costs little, and small writes (params, points)
    # leave the slots to the tables.
    threshold: int = MiB
    # Chunks of at most 32 MiB over 4 slots: a write of up to 128 MiB (a 2^25-entry table) is spread over the
    # slots (``chunk_for``) and never waits for one, which matters because waiting for a slot's map drains the
    # whole queue on wgpu-native (its poll blocks until all submitted work is done). Measured on an H100
    # (2026-11-25, 64 MiB): 8 MiB chunks over 4 slots 10.4 GB/s (wgpu-native) / 9.3 (Dawn), two 32 MiB chunks
    # 15.6 / 10.7; with 8 threads no better than 4.
    chunk_bytes: int = 32 * MiB
    slots: int = 4
    threads: int = field(default_factory=default_threads)
    # A write of up to 8 MiB is one chunk: each chunk costs a map wait and a submission (on the H200 machine,
    # 2026-11-28, a 4 MiB table took 1.12 ms in four 1 MiB chunks through wgpu-native, 0.63 ms through Dawn),
    # more than spreading its memcpy saves; the memcpy itself is split over ``threads``.
    min_chunk: int = 8 * MiB

    def chunk_for(self, nbytes: int) -> int:
        """The staging chunk for a write of ``nbytes``: the write spread evenly over the slots, but one chunk for a
        write of up to ``min_chunk`` bytes (and chunks of at least that), rounded up to whole MiB (or to
        ``chunk_bytes`` when that is smaller), at most ``chunk_bytes``."""
        grain = min(MiB, self.chunk_bytes)
        share = max(-(-int(nbytes) // self.slots), min(int(nbytes), self.min_chunk))
        return min(self.chunk_bytes, max(grain, -(-share // grain) * grain))

    def __post_init__(self):
        if self.chunk_bytes <= 0 or self.chunk_bytes % 8 or min(self.slots, self.threads) < 1 or self.threshold < 0:
            raise ValueError(f"bad upload plan {self}: chunk_bytes must be a positive multiple of 8, slots and "
                             f"threads at least 1, threshold at least 0")


def chunk_ranges(nbytes: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """(start, size) of the chunks of an ``nbytes`` transfer, in order; every size is at most ``chunk_bytes``."""
    return [(start, min(chunk_bytes, nbytes - start)) for start in range(0, nbytes, chunk_bytes)]


_POOL: ThreadPoolExecutor | None = None
POOL_THREADS = 8  # the most helper threads any plan gets (the calling thread copies one share itself)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=min(POOL_THREADS, os.cpu_count() or 1),
                                   thread_name_prefix="whirgpu-upload")
    return _POOL


def copy_into(dst: np.ndarray, src: np.ndarray, threads: int) -> None:
    """``dst[:] = src`` for two uint8 arrays of one length: ``copy_many`` of the one pair."""
    copy_many([(dst, src)], threads)


def copy_many(pairs: list[tuple[np.ndarray, np.ndarray]], threads: int) -> None:
    """``dst[:] = src`` for every (dst, src) pair of uint8 arrays of one length each. Pairs of at least
    ``MIN_SHARE_BYTES`` are cut into pieces of about an equal share of ``threads`` (at least that many bytes, whole
    cache lines). numpy releases the GIL for a plain same-dtype copy, so the pieces run in parallel on the pool's
    threads; the calling thread copies the first piece and the smaller pairs itself, then waits."""
    large = sum(src.nbytes for _, src in pairs if src.nbytes >= MIN_SHARE_BYTES)
    shares = max(1, min(threads, large // MIN_SHARE_BYTES))
    step = max(MIN_SHARE_BYTES, -(-large // shares // 64) * 64)
    pieces, small = [], []
    for dst, src in pairs:
        if shares == 1 or src.nbytes < MIN_SHARE_BYTES:
            small.append((dst, src))
        else:
            pieces += [(dst[i:i + step], src[i:i + step]) for i in range(0, src.nbytes, step)]
    rest = [_pool().submit(np.copyto, dst, src) for dst, src in pieces[1:]]
    for dst, src in pieces[:1] + small:
        np.copyto(dst, src)
    for piece in rest:
        piece.result()
