"""Commit encoding on a GPU runtime: transpose + zero-pad (``transpose_pad``) and the batched column NTT
(``ntt_bitrev`` + ``ntt`` entry points), written once against the ``Runtime``/``Batch`` interface.

Contracts (all words are Montgomery u32 in [0, P)):
- ``encode_commit_matrix``: a table of 2^nv entries (1 word each, or 4 for EF: c0..c3) becomes the (H, w)
  row-major matrix, H = 2^log_height, w = 2^log_folding (x4 for EF): column j = entries j*2^(nv-k) ..
  (j+1)*2^(nv-k)-1 as coefficients, rows >= 2^(nv-k) zero. This is ``CpuBackend.commit``'s ``flat``. With
  ``row_major`` (the p3-whir profile) row t < 2^(nv-k) is entries t*2^k .. t*2^k + 2^k - 1 instead.
- Every function takes ``field`` (a field name): the kernels are composed for it and the twiddles are its own.
- ``ntt_columns``: in place, every column of an (H, w) matrix becomes its evaluations at omega_H^i, i in
  natural order: word for word ``whirgpu.ref.ntt.dft_batch``.

NTT plan for log_h >= 1 (log_h = 0 is the identity): rows in bit-reversed order (``encode_codeword`` has
``transpose_pad`` write them so; a standalone ``ntt_columns`` reverses them in place); run the first T stages per
tile of 2^T rows x cw columns in workgroup memory (tile <= 2^LOG_TILE_WORDS words, cw = min(w, 2^LOG_TILE_COLS)
so each tile row is one coalesced segment); then the remaining log_h - T stages as global radix-4 passes (two
stages per dispatch) and one radix-2 pass when their count is odd. All dispatches go into the caller's batch.
Codewords are ``SplitArray``s (``kernels/split.py``): when one needs several windows, T stops at the window, the
passes run per window up to the window's size, and each later stage is one ``ntt_cross`` launch per window pair.
Twiddles: one stage-major table per runtime, tw[2^s + k] = omega_{2^(s+1)}^k, uploaded once and grown on demand.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..errors import DeviceLimitError
from ..field import field_by_name
from ..ref.ntt import twiddles
from ..devices.limits import StorageMode
from ..runtime.base import Batch, RtBuffer, Runtime, RtView
from ..runtime.counting import untouched_words
from . import split
from .split import SplitArray

WG = 256  # the kernels' default `override WG`
LOG_TILE_WORDS = 12  # ntt.wgsl TILE_WORDS = 4096 (16 KiB of workgroup memory)
LOG_TILE_COLS = 3  # columns per tile at most 8 words (32 bytes per row segment)
MIN_TABLE_LOG = 12  # smallest twiddle table uploaded, so small NTTs share one

_tables: "weakref.WeakKeyDictionary[Runtime, dict[str, tuple[int, RtBuffer]]]" = weakref.WeakKeyDictionary()


def stage_twiddles(log_n: int, field: str = "babybear") -> np.ndarray:
    """The stage-major table of 2^log_n words: tw[0] = 1 (unused), tw[2^s + k] = omega_{2^(s+1)}^k for
    k < 2^s and s < log_n. Serves every NTT of size <= 2^log_n."""
    f = field_by_name(field)
    if not 0 <= log_n <= f.TWO_ADICITY:
        raise ValueError(f"twiddle table 2^{log_n} outside 2^0..2^{f.TWO_ADICITY}")
    return np.concatenate([np.array([f.R], np.uint32)] + [twiddles(s, f) for s in range(log_n)])


def twiddle_table(rt: Runtime, log_h: int, field: str = "babybear") -> RtBuffer:
    """The runtime's uploaded table of ``field`` covering NTTs up to 2^log_h (uploaded once; replaced by a bigger
    one)."""
    tables = _tables.setdefault(rt, {})
    held = tables.get(field)
    if held is not None and held[0] >= log_h:
        return held[1]
    log_n = max(log_h, MIN_TABLE_LOG)
    # a runtime that only counts (runtime.counting) is given the table's size, not its 2^log_n values
    words = untouched_words(1 << log_n) if getattr(rt, "counts_only", False) else stage_twiddles(log_n, field)
    buffer = rt.alloc(words.nbytes, StorageMode.SHARED)  # host-written (an input in the storage policy's terms)
    rt.write(buffer, words)
    tables[field] = (log_n, buffer)
    return buffer


def _log2(n: int, what: str) -> int:
    if n < 1 or n & (n - 1):
        raise ValueError(f"{what} must be a power of two, got {n}")
    return n.bit_length() - 1


def _groups(n_threads: int) -> int:
    return -(-n_threads // WG)


def encode_commit_matrix(rt: Runtime, batch: Batch, table_buffer: RtBuffer, nv: int, is_ext: bool,
                         log_folding: int, log_height: int, bit_reversed: bool = False,
                         row_major: bool = False, field: str = "babybear") -> SplitArray:
    """Record transpose + zero-pad of a 2^nv-entry table into a new (2^log_height, w) matrix (a ``SplitArray``
    laid out for ``rt``'s limits); ``bit_reversed``: row g holds natural row rev(g) (the NTT's input order).
    One launch per matrix window and table window (one in all when both fit a binding)."""
    log_coeffs = nv - log_folding
    if log_folding < 0 or log_coeffs < 0 or log_coeffs > log_height:
        raise ValueError(f"cannot commit 2^{nv} entries as 2^{log_folding} columns of height 2^{log_height}")
    log_elem = 2 if is_ext else 0
    if table_buffer.nbytes < 4 << (nv + log_elem):
        raise ValueError(f"table buffer of {table_buffer.nbytes} bytes holds fewer than 2^{nv} entries")
    log_w = log_folding + log_elem
    if log_height + log_w >= 32 + 2:
        raise DeviceLimitError(f"commit matrix of 2^{log_height + log_w} words exceeds 32-bit row indexing")
    matrix = split.alloc_rows(rt, 1 << log_height, 4 << log_w)
    table = split.wrap(rt, table_buffer, 1 << nv, 4 << log_elem)
    kernel = rt.kernel("transpose_pad", constants={"ROW_MAJOR": int(row_major)} if row_major else None,
                       field=field)
    log_rev = log_height if bit_reversed else 0
    for window, row_base, rows in matrix.windows():
        n_words = rows << log_w
        for table_window, first, count in table.windows():
            params = np.array([n_words, log_w, log_coeffs, log_elem, row_base, log_rev, first, count], np.uint32)
            batch.dispatch(kernel, [table_window, window], params, _groups(n_words))
    return matrix


def _tw_binding(rt: Runtime, tw: RtBuffer, first: int, n: int) -> tuple[RtBuffer | RtView, int]:
    """(binding, index of tw word ``first`` in it) covering twiddle words [first, first + n): the whole table when
    it fits a binding, else a window from ``first`` rounded down to the offset alignment."""
    binding_limit, _, alignment = split.runtime_limits(rt)
    if tw.nbytes <= binding_limit:
        return tw, first
    start = (4 * first) // alignment * alignment
    size = min(4 * (first + n) - start, tw.nbytes - start)
    return RtView(tw, start, size), first - start // 4


def ntt_columns(rt: Runtime, batch: Batch, buffer: "RtBuffer | SplitArray", log_height: int, width: int,
                max_local_log: int | None = None, rows_reversed: bool = False, field: str = "babybear") -> None:
    """Record the in-place column NTT of the (2^log_height, width) matrix in ``buffer`` (one buffer, or a
    ``SplitArray`` of rows). ``rows_reversed``: the rows are already in bit-reversed order (``encode_commit_matrix``
    with ``bit_reversed``); otherwise they are reversed in place first, which needs the matrix in one window.

    Split matrices (windows of R = 2^log_r rows): the local stages stop at R rows, stages whose butterfly block
    fits a window run per window (window-local row = global row mod block), and each stage s >= log_r runs as
    ``ntt_cross`` over the window pairs (a, a + 2^s). ``max_local_log`` caps the stages done in workgroup memory
    (0 = global passes only); tests use it to reach every path at small sizes."""
    log_w = _log2(width, "width")
    two_adicity = field_by_name(field).TWO_ADICITY
    if not 0 <= log_height <= two_adicity:
        raise ValueError(f"NTT size 2^{log_height} exceeds the field's two-adicity 2^{two_adicity}")
    data = split.wrap(rt, buffer, 1 << log_height, 4 * width)
    if log_height == 0:
        return
    tw = twiddle_table(rt, log_height, field)
    log_r = _log2(data.window_rows, "window rows")
    window_words = 1 << (log_r + log_w)
    if not rows_reversed:
        if data.split:
            raise DeviceLimitError(f"the in-place row bit reversal needs the {4 * width << log_height}-byte matrix "
                                   f"in one binding (max_storage_binding_size {split.runtime_limits(rt)[0]}); "
                                   f"encode with bit_reversed rows instead")
        batch.dispatch(rt.kernel("ntt_bitrev", field=field), [data.buffers[0]],
                       np.array([window_words, log_w, log_height, 0], np.uint32), _groups(window_words))
    windows = list(data.windows())
    log_cw = min(log_w, LOG_TILE_COLS)
    log_local = min(log_r, LOG_TILE_WORDS - log_cw)
    if max_local_log is not None:
        log_local = min(log_local, max_local_log)
    if log_local > 0:
        n_tiles = 1 << (log_r - log_local + log_w - log_cw)
        tw_local = _tw_binding(rt, tw, 0, 1 << log_local)[0]
        for window, _, _ in windows:
            batch.dispatch(rt.kernel("ntt", "ntt_local", field=field), [window, tw_local],
                           np.array([n_tiles, log_w, log_local, log_cw], np.uint32), n_tiles)
    stage = log_local
    if (log_r - stage) % 2:
        tw_stage = _tw_binding(rt, tw, 0, 2 << stage)[0]
        for window, _, _ in windows:
            batch.dispatch(rt.kernel("ntt", "ntt_radix2", field=field), [window, tw_stage],
                           np.array([window_words >> 1, log_w, stage, 0], np.uint32), _groups(window_words >> 1))
        stage += 1
    while stage < log_r:
        tw_stage = _tw_binding(rt, tw, 0, 4 << stage)[0]
        for window, _, _ in windows:
            batch.dispatch(rt.kernel("ntt", "ntt_radix4", field=field), [window, tw_stage],
                           np.array([window_words >> 2, log_w, stage, 0], np.uint32), _groups(window_words >> 2))
        stage += 2
    rows = data.window_rows
    for stage in range(log_r, log_height):
        half = 1 << stage
        for block in range(0, 1 << log_height, 2 * half):
            for k0 in range(0, half, rows):
                lo = data.binding(block + k0, rows)[0]
                hi = data.binding(block + half + k0, rows)[0]
                tw_pair, base = _tw_binding(rt, tw, half + k0, rows)
                batch.dispatch(rt.kernel("ntt_cross", field=field), [lo, hi, tw_pair],
                               np.array([window_words, log_w, base, 0], np.uint32), _groups(window_words))


def encode_codeword(rt: Runtime, batch: Batch, table_buffer: RtBuffer, nv: int, is_ext: bool,
                    log_folding: int, log_height: int, row_major: bool = False,
                    field: str = "babybear") -> SplitArray:
    """Record the whole commit encoding (matrix written in bit-reversed row order, then the column NTT); returns
    the codeword (H, w) in natural row order as a ``SplitArray``."""
    matrix = encode_commit_matrix(rt, batch, table_buffer, nv, is_ext, log_folding, log_height, bit_reversed=True,
                                  row_major=row_major, field=field)
    width = 1 << (log_folding + (2 if is_ext else 0))
    ntt_columns(rt, batch, matrix, log_height, width, rows_reversed=True, field=field)
    return matrix
