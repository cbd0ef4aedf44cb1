"""Batched NTT over plain two-adic subgroups (no coset shift), plus the O(n^2) oracle.

Contract: ``dft_batch(m, field)`` takes an (H, w) uint32 Montgomery matrix of ``field`` (a
``whirgpu.field.Field``, BabyBear when omitted), H a power of two <= 2^field.TWO_ADICITY, and returns the (H, w)
matrix whose column j holds the evaluations of column j (as univariate coefficients, row t = coefficient of x^t)
at omega_H^i for i = 0..H-1 in natural order, omega_H = field.TWO_ADIC_GENERATORS[log2 H]. This is Plonky3's
``dft_batch`` for ``Radix2DFTSmallBatch`` (and its ``dft_algebra_batch`` for EF matrices: ``dft_ext_batch``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..field import BABYBEAR, Field
from .field_np import field_ops


def log2_exact(h: int) -> int:
    if h < 1 or h & (h - 1):
        raise ValueError(f"size {h} is not a power of two")
    return h.bit_length() - 1


@lru_cache(maxsize=64)
def bit_reverse_permutation(log_h: int) -> np.ndarray:
    """rev(i) for i < 2^log_h: row i's bit-reversed index (the NTT's input order)."""
    idx = np.arange(1 << log_h, dtype=np.uint32)
    rev = np.zeros_like(idx)
    for bit in range(log_h):
        rev |= ((idx >> bit) & 1) << (log_h - 1 - bit)
    return rev


@lru_cache(maxsize=128)
def twiddles(log_m: int, field: Field = BABYBEAR) -> np.ndarray:
    """[omega_{2m}^k for k < m] with m = 2^log_m (Montgomery), the twiddles of a size-2m butterfly stage."""
    F = field_ops(field)
    return F.powers(F.constant(field.TWO_ADIC_GENERATORS[log_m + 1]), 1 << log_m)


def dft_batch(m: np.ndarray, field: Field = BABYBEAR) -> np.ndarray:
    """Column-wise forward NTT of an (H, w) matrix; see the module contract. Radix-2 DIT after bit reversal."""
    F = field_ops(field)
    m = np.asarray(m, dtype=np.uint32)
    if m.ndim != 2:
        raise ValueError(f"dft_batch takes an (H, w) matrix, got shape {m.shape}")
    h, w = m.shape
    log_h = log2_exact(h)
    if log_h > field.TWO_ADICITY:
        raise ValueError(f"NTT size 2^{log_h} exceeds the field's two-adicity 2^{field.TWO_ADICITY}")
    x = m[bit_reverse_permutation(log_h)]
    for log_half in range(log_h):
        half = 1 << log_half
        blocks = x.reshape(h // (2 * half), 2, half, w)
        lo = blocks[:, 0]
        hi = F.mul(blocks[:, 1], twiddles(log_half, field)[None, :, None])
        x = np.stack([F.add(lo, hi), F.sub(lo, hi)], axis=1).reshape(h, w)
    return x


def naive_dft(m: np.ndarray, field: Field = BABYBEAR) -> np.ndarray:
    """The O(H^2) definition, out[i][j] = Σ_t m[t][j] omega_H^(i t); for testing small H only."""
    F = field_ops(field)
    m = np.asarray(m, dtype=np.uint32)
    h, w = m.shape
    log_h = log2_exact(h)
    omega_powers = F.powers(F.constant(field.TWO_ADIC_GENERATORS[log_h]), h)
    exponents = (np.arange(h)[:, None] * np.arange(h)[None, :]) % h
    vandermonde = omega_powers[exponents]  # (H, H): omega^(i t)
    products = F.mul(vandermonde[:, :, None], m[None, :, :])  # (i, t, j)
    return F.total(products, axis=1)


def dft_ext_batch(m: np.ndarray, field: Field = BABYBEAR) -> np.ndarray:
    """Column-wise NTT of an (H, w, 4) EF matrix: one base NTT per extension coefficient (``dft_algebra_batch``)."""
    m = np.asarray(m, dtype=np.uint32)
    h, w, d = m.shape
    return dft_batch(m.reshape(h, w * d), field).reshape(h, w, d)
