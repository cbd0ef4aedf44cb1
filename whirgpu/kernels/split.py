"""Row-split arrays: one logical array of ``rows`` x ``row_bytes`` stored as several buffers and bound in windows.

Codewords and Merkle levels can be larger than one buffer (``max_buffer_size``) or one binding
(``max_storage_binding_size``). A ``SplitArray`` keeps them as a list of equal buffers of ``buffer_rows`` whole
rows each and hands the kernels windows of ``window_rows`` whole rows, so every kernel sees a plain row-major
array and a row offset; the split follows the data's natural seams.

Contract:
- ``rows`` is a power of two >= 1; ``row_bytes`` a multiple of 4. Global row r lives at row ``r % buffer_rows``
  of ``buffers[r // buffer_rows]``, row-major.
- ``buffer_rows`` and ``window_rows`` are powers of two, ``window_rows <= buffer_rows <= rows``; windows are the
  aligned blocks [k W, (k + 1) W) of W = ``window_rows`` rows, each inside one buffer at a byte offset that is a
  multiple of W * row_bytes (a multiple of the runtime's ``offset_alignment``, checked).
- When the array fits one buffer and one binding, it is that one buffer, bound whole: exactly the unsplit layout
  (``split`` is False), so callers launch once as before.
- ``binding(first, n)``: the binding (whole buffer or ``RtView``) of the window holding rows [first, first + n)
  and the row of ``first`` inside it; the rows must lie in one window (aligned power-of-two blocks of at most
  W rows always do).
- Packed arrays (``alloc_packed``): several unsplit arrays may share one buffer as consecutive byte ranges, each
  at ``pack``'s offset (a multiple of ``offset_alignment``, except inside a glued block: see ``pack``). Such an
  array has ``offset`` set (None: it owns its buffers): it is one buffer and one window, bound as
  ``RtView(buffers[0], offset, nbytes)`` when its offset is aligned (an array inside a glued block is read through
  a binding of the block, at its offset), and ``locate``, ``read_rows`` and ``release_buffers`` account for the
  offset and the sharing (a shared buffer is released once).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..devices.limits import StorageMode
from ..errors import DeviceLimitError
from ..runtime.base import RtBuffer, Runtime, RtView


def _floor_pow2(n: int) -> int:
    return 1 << (int(n).bit_length() - 1)


def layout(rows: int, row_bytes: int, binding_limit: int, buffer_limit: int, alignment: int) -> tuple[int, int]:
    """(buffer_rows, window_rows) for ``rows`` rows of ``row_bytes`` under the two limits (see the module
    contract). DeviceLimitError when one row exceeds a binding, or a window's size is not a multiple of
    ``alignment`` (binding limits below a few rows)."""
    if rows < 1 or rows & (rows - 1):
        raise ValueError(f"a split array has a power-of-two row count, got {rows}")
    if row_bytes > binding_limit or row_bytes > buffer_limit:
        raise DeviceLimitError(f"a row of {row_bytes} bytes exceeds max_storage_binding_size {binding_limit} or "
                               f"max_buffer_size {buffer_limit}")
    total = rows * row_bytes
    buffer_rows = rows if total <= buffer_limit else min(rows, _floor_pow2(buffer_limit // max(row_bytes, 1)))
    window_rows = buffer_rows
    if buffer_rows * row_bytes > binding_limit:
        window_rows = min(buffer_rows, _floor_pow2(binding_limit // max(row_bytes, 1)))
    if window_rows < rows and (window_rows * row_bytes) % alignment:
        raise DeviceLimitError(f"windows of {window_rows} rows x {row_bytes} bytes are not a multiple of "
                               f"offset_alignment {alignment} (max_storage_binding_size {binding_limit})")
    return buffer_rows, window_rows


def pack(sizes: list[int], alignment: int, glued: int = 0) -> tuple[list[int], int]:
    """(byte offset of each of ``sizes``, end of the last) when laid back to back in one buffer, each starting at
    a multiple of ``alignment`` so that it can be bound as a window of its own; the last ``glued`` sizes are one
    block, from a multiple of ``alignment``, with no padding between them (bound together, as one window)."""
    offsets, at, end = [], 0, 0
    for k, size in enumerate(sizes):
        offsets.append(at)
        end = at + size
        at = end if k >= len(sizes) - glued else at + -(-size // alignment) * alignment
    return offsets, end


def runtime_limits(rt: Runtime) -> tuple[int, int, int]:
    """(binding limit, buffer limit, offset alignment) the runtime (or the backend's view of it) imposes."""
    limits = rt.limits()
    return limits.max_storage_binding_size, limits.max_buffer_size, max(4, int(rt.offset_alignment))


@dataclass
class SplitArray:
    """``rows`` x ``row_bytes`` in ``buffers`` (see the module contract)."""

    buffers: list[RtBuffer]
    rows: int
    row_bytes: int
    buffer_rows: int
    window_rows: int
    offset: int | None = None  # byte offset of row 0 in a buffer shared with other arrays (None: owned buffers)

    @property
    def nbytes(self) -> int:
        return self.rows * self.row_bytes

    @property
    def mode(self) -> StorageMode:
        return self.buffers[0].mode

    @property
    def split(self) -> bool:
        """More than one window (or buffer)."""
        return self.window_rows < self.rows

    def binding(self, first: int, n: int = 1) -> tuple[RtBuffer | RtView, int]:
        """(binding of the window holding rows [first, first + n), row of ``first`` in it)."""
        w = self.window_rows
        start = first - first % w
        if first < 0 or n < 0 or first + n > start + w or first + n > self.rows:
            raise ValueError(f"rows [{first}, {first + n}) do not lie in one window of {w} rows of a "
                             f"{self.rows}-row array")
        buffer = self.buffers[start // self.buffer_rows]
        if self.offset is not None:
            return RtView(buffer, self.offset, self.nbytes), first
        if w == self.buffer_rows:
            return buffer, first - start
        return RtView(buffer, (start % self.buffer_rows) * self.row_bytes, w * self.row_bytes), first - start

    def windows(self):
        """(binding, first global row, rows) of every window, in row order."""
        for start in range(0, self.rows, self.window_rows):
            yield self.binding(start, self.window_rows)[0], start, self.window_rows

    def locate(self, row: int) -> tuple[RtBuffer, int]:
        """(buffer, byte offset) of global row ``row`` (for copies)."""
        return self.buffers[row // self.buffer_rows], (self.offset or 0) + (row % self.buffer_rows) * self.row_bytes


def alloc_rows(rt: Runtime, rows: int, row_bytes: int, mode: StorageMode = StorageMode.PRIVATE) -> SplitArray:
    """A new ``SplitArray`` laid out for ``rt``'s limits, its buffers from ``rt.alloc`` (contents undefined)."""
    binding_limit, buffer_limit, alignment = runtime_limits(rt)
    buffer_rows, window_rows = layout(rows, row_bytes, binding_limit, buffer_limit, alignment)
    buffers = [rt.alloc(buffer_rows * row_bytes, mode) for _ in range(rows // buffer_rows)]
    return SplitArray(buffers, rows, row_bytes, buffer_rows, window_rows)


def alloc_packed(rt: Runtime, row_counts: list[int], row_bytes: int, mode: StorageMode = StorageMode.PRIVATE,
                 glued: int = 0) -> list[SplitArray]:
    """Arrays of ``row_counts`` x ``row_bytes`` packed into one new buffer of ``pack``'s end from ``rt.alloc``, at
    ``pack``'s offsets for ``rt``'s alignment, the last ``glued`` in one block (contents undefined). The caller
    makes sure each array (each glued block) fits one binding, and the buffer one binding where it binds them
    together."""
    offsets, end = pack([rows * row_bytes for rows in row_counts], runtime_limits(rt)[2], glued)
    buffer = rt.alloc(end, mode)
    return [SplitArray([buffer], rows, row_bytes, rows, rows, at) for rows, at in zip(row_counts, offsets)]


def wrap(rt: Runtime, data: "RtBuffer | SplitArray", rows: int, row_bytes: int) -> SplitArray:
    """``data`` as a ``SplitArray`` of ``rows`` x ``row_bytes`` (one buffer holding them all is windowed for
    ``rt``'s binding limit; a ``SplitArray`` is returned as is)."""
    if isinstance(data, SplitArray):
        if (data.rows, data.row_bytes) != (rows, row_bytes):
            raise ValueError(f"a {data.rows} x {data.row_bytes}-byte array where {rows} x {row_bytes} was expected")
        return data
    if data.nbytes < rows * row_bytes:
        raise ValueError(f"a buffer of {data.nbytes} bytes holds fewer than {rows} rows of {row_bytes} bytes")
    binding_limit, _, alignment = runtime_limits(rt)
    _, window_rows = layout(rows, row_bytes, binding_limit, 1 << 62, alignment)
    return SplitArray([data], rows, row_bytes, rows, window_rows)


def read_rows(rt: Runtime, array: SplitArray) -> np.ndarray:
    """The whole array as host words, row-major (waits for submitted work)."""
    per = array.buffer_rows * array.row_bytes
    return np.concatenate([rt.read(b, per, array.offset or 0) for b in array.buffers])


def release_buffers(arrays) -> list[RtBuffer]:
    """Every buffer of ``arrays``, each once (packed arrays share theirs), for a pool."""
    seen: dict[int, RtBuffer] = {}
    for a in arrays:
        for b in a.buffers:
            seen.setdefault(id(b), b)
    return list(seen.values())
