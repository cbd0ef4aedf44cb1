"""One round of WHIR's quadratic sumcheck over Σ_b g[b] W[b], in either variable order.

Prefix order (whir-p3-metal): x_0 (the index MSB) is bound first; the round polynomial
h(X) = Σ_{b < half} g(X, b) W(X, b) has degree 2 and is sent as its evaluations h(0), h(2).
Suffix order (p3-whir): x_{n-1} (the index LSB) is bound first, h(X) = Σ_b g(b, X) W(b, X), sent as h(0) and
its X^2 coefficient c_inf = Σ_b (g[2b+1] - g[2b]) (W[2b+1] - W[2b]). p3-whir's prefix order (``PrefixProver``)
binds x_0 first, as whir-p3-metal, but sends [h(0), c_inf] too (``prefix_round_message``).
Either way the verifier recovers h(1) = S - h(0). g is a base (2^n,) or EF (2^n, 4) table, W an EF table;
all values are uint32 Montgomery words of BabyBear, or of ``field`` where a function takes one.
"""

from __future__ import annotations

import numpy as np

from ..field import P
from . import field_np as F
from ..field import Field
from .multilinear import field_ops_or_default, fix_first_variable, fix_last_variable

_TWO = F.constant(2)
_HALF = (P + 1) // 2  # the canonical 1/2: scales Montgomery words as it scales values


def round_evaluations(table: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(h(0), h(2)) with h(0) = Σ g_lo W_lo and h(2) = Σ (2 g_hi - g_lo)(2 W_hi - W_lo); each EF (4,)."""
    table = np.asarray(table, dtype=np.uint32)
    weights = np.asarray(weights, dtype=np.uint32)
    half = table.shape[0] // 2
    g_lo, g_hi = table[:half], table[half:]
    w_lo, w_hi = weights[:half], weights[half:]
    g2 = F.sub(F.add(g_hi, g_hi), g_lo)
    w2 = F.ef_sub(F.ef_add(w_hi, w_hi), w_lo)
    if table.ndim == 1:
        h0 = F.ef_sum(F.ef_mul_base(w_lo, g_lo))
        h2 = F.ef_sum(F.ef_mul_base(w2, g2))
    else:
        h0 = F.ef_sum(F.ef_mul(g_lo, w_lo))
        h2 = F.ef_sum(F.ef_mul(g2, w2))
    return h0, h2


def fold(table: np.ndarray, weights: np.ndarray, r: np.ndarray, field: Field | None = None
         ) -> tuple[np.ndarray, np.ndarray]:
    """Bind x_0 := r in both the table and the weights."""
    return fix_first_variable(table, r, field), fix_first_variable(weights, r, field)


def suffix_round_message(table: np.ndarray, weights: np.ndarray, field: Field | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(h(0), c_inf) of the suffix-order round: h(0) = Σ g[2b] W[2b], c_inf = Σ (g[2b+1] - g[2b])(W[2b+1] - W[2b]);
    each EF (4,)."""
    ops = field_ops_or_default(field)
    table = np.asarray(table, dtype=np.uint32)
    weights = np.asarray(weights, dtype=np.uint32)
    g_lo, g_hi = table[0::2], table[1::2]
    w_lo, w_hi = weights[0::2], weights[1::2]
    w_slope = ops.ef_sub(w_hi, w_lo)
    if table.ndim == 1:
        return (ops.ef_sum(ops.ef_mul_base(w_lo, g_lo)),
                ops.ef_sum(ops.ef_mul_base(w_slope, ops.sub(g_hi, g_lo))))
    return ops.ef_sum(ops.ef_mul(g_lo, w_lo)), ops.ef_sum(ops.ef_mul(ops.ef_sub(g_hi, g_lo), w_slope))


def prefix_round_message(table: np.ndarray, weights: np.ndarray, field: Field | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(h(0), c_inf) of a prefix-order round (x_0 free; upstream's ``PrefixProver``): h(0) = Σ g_lo W_lo,
    c_inf = Σ (g_hi - g_lo)(W_hi - W_lo) over the two halves of the table; each EF (4,)."""
    ops = field_ops_or_default(field)
    table = np.asarray(table, dtype=np.uint32)
    weights = np.asarray(weights, dtype=np.uint32)
    half = table.shape[0] // 2
    g_lo, g_hi = table[:half], table[half:]
    w_lo, w_hi = weights[:half], weights[half:]
    w_slope = ops.ef_sub(w_hi, w_lo)
    if table.ndim == 1:
        return (ops.ef_sum(ops.ef_mul_base(w_lo, g_lo)),
                ops.ef_sum(ops.ef_mul_base(w_slope, ops.sub(g_hi, g_lo))))
    return ops.ef_sum(ops.ef_mul(g_lo, w_lo)), ops.ef_sum(ops.ef_mul(ops.ef_sub(g_hi, g_lo), w_slope))


def fold_suffix(table: np.ndarray, weights: np.ndarray, r: np.ndarray, field: Field | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Bind x_{n-1} := r in both the table and the weights."""
    return fix_last_variable(table, r, field), fix_last_variable(weights, r, field)


def evaluate_round_polynomial(claimed_sum: np.ndarray, h0: np.ndarray, h2: np.ndarray, r: np.ndarray) -> np.ndarray:
    """h(r) from h(0), h(1) = S - h(0), h(2), by Lagrange interpolation on {0, 1, 2}; EF (4,) each.

    h(r) = h(0) (r-1)(r-2)/2 + h(1) r(2-r) + h(2) r(r-1)/2, on Python ints (one element: numpy's per-call cost
    would dominate). Montgomery form is linear, so sums and the canonical factor 1/2 apply to the words directly.
    """
    s, g0, g2, x = ([int(c) for c in np.asarray(e, dtype=np.uint32).reshape(4)] for e in (claimed_sum, h0, h2, r))
    one, two = int(F.ONE), int(_TWO)
    g1 = [(a - b) % P for a, b in zip(s, g0)]
    x_minus_1 = [(x[0] - one) % P] + x[1:]
    x_minus_2 = [(x[0] - two) % P] + x[1:]
    two_minus_x = [(two - x[0]) % P] + [-c % P for c in x[1:]]
    l0 = F.ef_mul_words(x_minus_1, x_minus_2)
    l1 = F.ef_mul_words(x, two_minus_x)
    l2 = F.ef_mul_words(x, x_minus_1)
    t0, t1, t2 = F.ef_mul_words(g0, l0), F.ef_mul_words(g1, l1), F.ef_mul_words(g2, l2)
    return np.array([((a + c) * _HALF + b) % P for a, b, c in zip(t0, t1, t2)], dtype=np.uint32)
