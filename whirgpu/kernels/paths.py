"""Merkle openings to roots on a GPU runtime (``merkle_paths``): the roots a verifier's batch of openings implies.

Contract (``ref.merkle.compute_roots_batched``'s, word for word): ``openings`` is a list of (rows (N, width), index
(N,), siblings (N, depth, 8)), one entry per tree, widths and depths free per entry; the result is one (N, 8) uint32
array of Montgomery words per entry, ``compute_root(index, hash_rows(rows), siblings)``. Rows and siblings are
Montgomery words (any u32 word: read mod P, as the reference's ``from_monty`` reads it); indices are int64, their bits
taken level by level (two's complement, as numpy's shifts). The permutation is BabyBear's width-16 one with whir-p3's
``SmallRng(1)`` constants (the kernels' table).

How: one thread per opening walks its whole chain (the sponge of its row, then one compression per level), so the
openings of every tree go in one launch, whatever their widths and depths: a launch reads an 8-word descriptor per
opening (its row's word offset, width, siblings' offset, depth, index). Why not one launch per (width, depth)
group: a batch of many proofs has a tree per round per proof (hundreds of groups), and the chain's length is a
loop bound in the kernel, so mixing them costs only divergence at group boundaries. The host packs the batch
into four arrays (descriptors, rows, siblings, roots); a batch larger than one binding (``max_storage_binding_size``,
``max_buffer_size``) or one launch (``max_workgroups_per_dimension`` squared workgroups, ``MAX_LAUNCH_OPENINGS``) is
split into consecutive chunks of openings, one launch and four buffers each, all in one submission, then read
back. An opening whose row or siblings alone exceed a binding is a ``DeviceLimitError`` naming the limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import DeviceLimitError
from ..devices.limits import StorageMode
from ..runtime.base import RtBuffer, Runtime, RtView
from .merkle import round_constants

DIGEST = 8  # words per digest
DESC_WORDS = 8  # descriptor words per opening: row_at, width, sib_at (vec4), depth, index lo, index hi, 0, 0
WORKGROUP = 64  # threads per workgroup (the kernel's `override WG`), one opening each
# The most openings one launch walks (besides the device's grid and binding limits): about 20 M permutations on a
# 100-bit batch, a few ms on a large GPU, so no launch comes near a driver's watchdog. Tests lower it.
MAX_LAUNCH_OPENINGS = 1 << 20
_MIN_BINDING = 16  # bytes: the smallest binding (an empty array is bound as 16 bytes nobody reads)


@dataclass(frozen=True)
class _Batch:
    """The openings of every entry, flattened in entry order."""

    sizes: list[int]  # openings per entry
    rows: np.ndarray  # every row's words, back to back (uint32)
    siblings: np.ndarray  # every opening's sibling words, back to back (uint32)
    width: np.ndarray  # (N,) words per row
    depth: np.ndarray  # (N,) levels per opening
    row_at: np.ndarray  # (N + 1,) word offsets of the rows (exclusive prefix sums), int64
    sib_at: np.ndarray  # (N + 1,) digest offsets of the siblings, int64
    index: np.ndarray  # (N,) int64


def _flatten(openings) -> _Batch:
    """The entries checked as ``compute_roots_batched`` checks them (the same shapes, the same messages)."""
    sizes, rows_parts, sib_parts, widths, depths, indices = [], [], [], [], [], []
    for entry in openings:
        rows, index, siblings = entry
        rows = np.asarray(rows, dtype=np.uint32)
        siblings = np.asarray(siblings, dtype=np.uint32)
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        n = index.size
        if rows.ndim != 2 or rows.shape[0] != n:
            raise ValueError(f"compute_roots_batched: rows shape {rows.shape}, expected ({n}, width)")
        if siblings.ndim != 3 or siblings.shape[0] != n or siblings.shape[2] != DIGEST:
            raise ValueError(f"compute_roots_batched: siblings shape {siblings.shape}, "
                             f"expected ({n}, depth, {DIGEST})")
        sizes.append(n)
        rows_parts.append(rows.reshape(-1))
        sib_parts.append(siblings.reshape(-1))
        widths.append(np.full(n, rows.shape[1], np.int64))
        depths.append(np.full(n, siblings.shape[1], np.int64))
        indices.append(index)
    width = np.concatenate(widths) if widths else np.zeros(0, np.int64)
    depth = np.concatenate(depths) if depths else np.zeros(0, np.int64)
    row_at = np.zeros(width.size + 1, np.int64)
    np.cumsum(width, out=row_at[1:])
    sib_at = np.zeros(depth.size + 1, np.int64)
    np.cumsum(depth, out=sib_at[1:])
    return _Batch(sizes, np.concatenate(rows_parts) if rows_parts else np.zeros(0, np.uint32),
                  np.concatenate(sib_parts) if sib_parts else np.zeros(0, np.uint32), width, depth, row_at, sib_at,
                  np.concatenate(indices) if indices else np.zeros(0, np.int64))


def launch_openings(rt: Runtime) -> int:
    """The most openings one launch may walk on ``rt``: its 2-D grid (``max_workgroups_per_dimension`` squared
    workgroups of WORKGROUP threads), a descriptor and a root binding each within ``window_bytes``, and
    MAX_LAUNCH_OPENINGS."""
    per_dim = max(1, int(rt.limits().max_workgroups_per_dimension))
    return max(1, min(MAX_LAUNCH_OPENINGS, per_dim * per_dim * WORKGROUP, window_bytes(rt) // (4 * DESC_WORDS)))


def window_bytes(rt: Runtime) -> int:
    """The most bytes one binding may hold: the runtime's storage-binding and buffer limits (a GpuBackend's
    runtime view reports the limits the backend lays its arrays out for)."""
    limits = rt.limits()
    return min(int(limits.max_storage_binding_size), int(limits.max_buffer_size))


def chunks(batch: _Batch, rt: Runtime) -> list[tuple[int, int]]:
    """Consecutive (first, end) ranges of openings, each one launch: as many as fit the launch and the bindings."""
    limit, cap = window_bytes(rt), launch_openings(rt)
    row_words, sib_digests = limit // 4, limit // (4 * DIGEST)
    n, out, start = batch.width.size, [], 0
    while start < n:
        end = min(n, start + cap,
                  int(np.searchsorted(batch.row_at, batch.row_at[start] + row_words, side="right")) - 1,
                  int(np.searchsorted(batch.sib_at, batch.sib_at[start] + sib_digests, side="right")) - 1)
        if end <= start:
            width, depth = int(batch.width[start]), int(batch.depth[start])
            what = (f"its row of {width} words ({4 * width} bytes)" if 4 * width > limit else
                    f"its {depth} sibling digests ({4 * DIGEST * depth} bytes)")
            limits = rt.limits()
            name = ("max_storage_binding_size" if limits.max_storage_binding_size <= limits.max_buffer_size
                    else "max_buffer_size")
            raise DeviceLimitError(f"merkle_paths: opening {start} of the batch does not fit one binding: {what} "
                                   f"> {name} {limit} bytes")
        out.append((start, end))
        start = end
    return out


def _descriptors(batch: _Batch, first: int, end: int) -> np.ndarray:
    """(end - first, 8) descriptor words of a chunk, offsets relative to its own rows and siblings."""
    desc = np.zeros((end - first, DESC_WORDS), np.uint32)
    desc[:, 0] = batch.row_at[first:end] - batch.row_at[first]
    desc[:, 1] = batch.width[first:end]
    desc[:, 2] = 2 * (batch.sib_at[first:end] - batch.sib_at[first])  # vec4 offset: 2 per digest
    desc[:, 3] = batch.depth[first:end]
    index = batch.index[first:end].view(np.uint64)  # two's complement
    desc[:, 4] = (index & np.uint64(0xFFFFFFFF)).astype(np.uint32)
    desc[:, 5] = (index >> np.uint64(32)).astype(np.uint32)
    return desc


def _pooled_bytes(nbytes: int, limit: int) -> int:
    """Bytes to allocate for a binding of ``nbytes``: a power of two (so a backend's pool holds a few sizes, whatever
    the batches), at most ``limit`` (``nbytes`` itself when that is more)."""
    nbytes = max(_MIN_BINDING, -(-nbytes // _MIN_BINDING) * _MIN_BINDING)
    return max(nbytes, min(1 << (nbytes - 1).bit_length(), limit))


def compute_roots(rt: Runtime, openings, release: Callable[..., None] | None = None) -> list[np.ndarray]:
    """The roots of ``openings`` (module contract) computed on ``rt``: one submission, one readback per chunk.
    ``release`` takes the buffers back afterwards (a backend's pool); None frees them (``rt.free``)."""
    batch = _flatten(openings)
    n = batch.width.size
    if n == 0:
        return [np.zeros((size, DIGEST), np.uint32) for size in batch.sizes]
    kernel = rt.kernel("merkle_paths", constants={"WG": WORKGROUP}, field="babybear")
    table = round_constants(rt, "babybear", 16)
    limit = window_bytes(rt)
    gpu_batch = rt.batch()
    held: list[RtBuffer] = []
    outputs: list[tuple[RtBuffer, int]] = []

    def bound(words: np.ndarray | None, nbytes: int, mode: StorageMode) -> RtView:
        buffer = rt.alloc(_pooled_bytes(nbytes, limit), mode)
        held.append(buffer)
        if words is not None and words.size:
            rt.write(buffer, words)
        return RtView(buffer, 0, max(_MIN_BINDING, -(-nbytes // _MIN_BINDING) * _MIN_BINDING))

    try:
        for first, end in chunks(batch, rt):
            count = end - first
            rows = batch.rows[batch.row_at[first]:batch.row_at[end]]
            siblings = batch.siblings[DIGEST * batch.sib_at[first]:DIGEST * batch.sib_at[end]]
            bindings = [bound(_descriptors(batch, first, end).reshape(-1), 4 * DESC_WORDS * count, StorageMode.SHARED),
                        bound(rows, rows.nbytes, StorageMode.SHARED),
                        bound(siblings, siblings.nbytes, StorageMode.SHARED),
                        bound(None, 4 * DIGEST * count, StorageMode.SHARED)]  # the host reads the roots
            outputs.append((bindings[3].buffer, count))
            gpu_batch.dispatch(kernel, [*bindings, table], np.array([count, 0, 0, 0], np.uint32),
                               -(-count // WORKGROUP))
        gpu_batch.submit()
        roots = np.concatenate([rt.read(buffer, 4 * DIGEST * count).reshape(count, DIGEST)
                                for buffer, count in outputs])
    finally:
        if release is not None:
            release(*held)
        else:
            for buffer in held:
                rt.free(buffer)
    bounds = np.cumsum([0, *batch.sizes])
    return [roots[bounds[i]:bounds[i + 1]] for i in range(len(batch.sizes))]
