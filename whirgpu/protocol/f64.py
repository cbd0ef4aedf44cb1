"""Rust's ``f64`` semantics where Python's differ, for the soundness formulas (p3-whir ``parameters/``).

Contract: each function returns, bit for bit, what the Rust expression in its name returns for every double,
the edges included (NaN, infinities, zero, negatives), where the plain Python call would raise or differ:
``as_usize`` is ``x as usize``, ``log2`` is libm's ``log2``, ``fmin``/``fmax`` are ``f64::min``/``f64::max``.
Nothing else: the formulas themselves live in ``soundness``, the schedule that rounds them in ``config``.
"""

from __future__ import annotations

import math


def as_usize(x: float) -> int:
    """Rust's ``f64 as usize``: truncate toward zero, saturate at 0 and 2^64 - 1, NaN -> 0."""
    if math.isnan(x) or x <= 0.0:
        return 0
    if math.isinf(x) or x >= 18446744073709551615.0:
        return (1 << 64) - 1
    return int(x)


def log2(x: float) -> float:
    # libm::log2 semantics at the edges (math.log2 raises instead): log2(0) = -inf, log2(<0) = NaN.
    if x == 0.0:
        return -math.inf
    if x < 0.0 or math.isnan(x):
        return math.nan
    return math.log2(x)


def fmin(a: float, b: float) -> float:
    # f64::min: a NaN operand yields the other operand.
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a <= b else b


def fmax(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a >= b else b
