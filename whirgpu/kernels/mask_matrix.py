"""A hiding-PCS mask oracle's coefficient matrix built on a GPU runtime (``mask_matrix``) from mask draws already
in a device buffer, recorded into a caller's batch: the device twin of ``profiles.p3_whir.zk.device_inputs.
coefficient_matrix`` (the input of ``Commitments.commit_matrix``), ``mask_matrix_reference`` its numpy twin.

Contracts:
- ``src`` holds EF entries (4 u32 words c0..c3 each); entry indices count from the start of the src binding (a
  buffer or an ``RtView``). Column c < ``columns`` of the matrix is the ``msg_len`` message entries
  ``msg_at + c * msg_stride + r`` (r < msg_len), then the ``rnd_len`` randomness entries
  ``rnd_at + c * rnd_stride + (r - msg_len)`` (msg_len <= r < msg_len + rnd_len), then zeros to 2^log_rows
  rows; columns ``columns`` .. 2^log_cols - 1 are zero. The hiding prover's two layouts: a batch's (all w
  messages back to back, msg_stride = m, then all w randomness rows, rnd_stride = t) and a base-case group's
  (each column's message then its randomness: msg_stride = rnd_stride = m + t, rnd_at = msg_at + m).
- ``out`` receives 2^log_rows rows of 2^log_cols EF entries, row-major: entry (g, c) at words
  ``4 (g 2^log_cols + c) ..``, row g holding coefficient r = rev_{log_rows}(g) (g's log_rows bits reversed: the
  column NTT's input order) when ``reversed``, else r = g. Every one of its n_words = 4 * 2^(log_rows + log_cols)
  words is written (zeros included: no reliance on zeroed memory); nothing past them.
- Ranges (ValueError otherwise): log_rows, log_cols >= 0 with n_words < 2^32; 0 <= columns <= 2^log_cols;
  msg_len, rnd_len >= 0 with msg_len + rnd_len <= 2^log_rows; offsets and strides >= 0; every entry read inside
  the src binding (and its words below 2^32); ``out``'s binding at least n_words words.
- One launch (``wgsl/kernels/mask_matrix.wgsl``): one thread per output word, WG threads per workgroup, on the
  runtime's 2-D grid past the per-dimension limit. Bindings: src (read), out (write); each must fit a storage
  binding (the runtime refuses one that does not).
"""

from __future__ import annotations

import numpy as np

from ..ref.ntt import bit_reverse_permutation
from ..runtime.base import Batch, RtBuffer, RtView, Runtime, binding_range

STEM = "mask_matrix"
WG = 256  # threads per workgroup (the kernel's WG)
EF_WORDS = 4


def _check(src_entries: int, log_rows: int, log_cols: int, columns: int, msg_at: int, msg_stride: int,
           msg_len: int, rnd_at: int, rnd_stride: int, rnd_len: int) -> int:
    """n_words of the matrix, after the module doc's range checks (ValueError naming the numbers)."""
    if log_rows < 0 or log_cols < 0 or EF_WORDS << (log_rows + log_cols) >= 1 << 32:
        raise ValueError(f"mask_matrix: 2^{log_rows} x 2^{log_cols} EF entries: the output's word count must be "
                         f"below 2^32 (log_rows + log_cols <= 29)")
    if not 0 <= columns <= 1 << log_cols:
        raise ValueError(f"mask_matrix: {columns} columns do not fit 2^{log_cols}")
    if msg_len < 0 or rnd_len < 0 or msg_len + rnd_len > 1 << log_rows:
        raise ValueError(f"mask_matrix: {msg_len} message + {rnd_len} randomness rows do not fit 2^{log_rows}")
    if min(msg_at, msg_stride, rnd_at, rnd_stride) < 0:
        raise ValueError(f"mask_matrix: negative offset or stride (msg_at {msg_at}, msg_stride {msg_stride}, "
                         f"rnd_at {rnd_at}, rnd_stride {rnd_stride})")
    for what, at, stride, length in (("message", msg_at, msg_stride, msg_len), ("randomness", rnd_at, rnd_stride,
                                                                                rnd_len)):
        end = at + (columns - 1) * stride + length if columns and length else 0  # past the last entry read
        if end > src_entries or EF_WORDS * end > 1 << 32:
            raise ValueError(f"mask_matrix: {what} entries up to {end - 1} (at {at}, stride {stride}, {length} a "
                             f"column, {columns} columns) overrun the {src_entries}-entry src binding")
    return EF_WORDS << (log_rows + log_cols)


def _rows(log_rows: int, reversed: bool) -> np.ndarray:
    """The coefficient index r of each output row g."""
    return bit_reverse_permutation(log_rows).astype(np.int64) if reversed else np.arange(1 << log_rows)


def mask_matrix_reference(src_entries: np.ndarray, *, log_rows: int, log_cols: int, columns: int, msg_at: int,
                          msg_stride: int, msg_len: int, rnd_at: int, rnd_stride: int, rnd_len: int,
                          reversed: bool = True) -> np.ndarray:
    """The kernel's output on host arrays: ``src_entries`` (N, 4) uint32 -> (2^log_rows, 2^log_cols, 4) uint32
    (the module doc's contract and checks)."""
    src = np.asarray(src_entries, np.uint32).reshape(-1, EF_WORDS)
    _check(src.shape[0], log_rows, log_cols, columns, msg_at, msg_stride, msg_len, rnd_at, rnd_stride, rnd_len)
    out = np.zeros((1 << log_rows, 1 << log_cols, EF_WORDS), np.uint32)
    r = _rows(log_rows, reversed)[:, None]
    cols = np.arange(columns)[None, :]
    msg = np.broadcast_to(r < msg_len, (r.shape[0], columns))
    rnd = np.broadcast_to((r >= msg_len) & (r < msg_len + rnd_len), msg.shape)
    out[:, :columns][msg] = src[np.broadcast_to(msg_at + cols * msg_stride + r, msg.shape)[msg]]
    out[:, :columns][rnd] = src[np.broadcast_to(rnd_at + cols * rnd_stride + r - msg_len, rnd.shape)[rnd]]
    return out


def record_mask_matrix(rt: Runtime, batch: Batch, src: RtBuffer | RtView, out: RtBuffer | RtView, *, log_rows: int,
                       log_cols: int, columns: int, msg_at: int, msg_stride: int, msg_len: int, rnd_at: int,
                       rnd_stride: int, rnd_len: int, reversed: bool = True) -> int:
    """Record the launch that writes the 2^log_rows x 2^log_cols EF coefficient matrix of the mask draws in
    ``src`` to ``out`` (the module doc's contract; ValueError on its ranges). Returns the words written."""
    args = [int(v) for v in (log_rows, log_cols, columns, msg_at, msg_stride, msg_len, rnd_at, rnd_stride,
                             rnd_len)]
    n_words = _check(binding_range(src)[2] // (4 * EF_WORDS), *args)
    out_words = binding_range(out)[2] // 4
    if out_words < n_words:
        raise ValueError(f"mask_matrix: a 2^{log_rows} x 2^{log_cols} EF matrix is {n_words} words; the out "
                         f"binding holds {out_words}")
    params = np.array([n_words, *args, 1 if reversed else 0, 0], np.uint32)
    batch.dispatch(rt.kernel(STEM), [src, out], params, -(-n_words // WG))
    return n_words
