"""One round of WHIR's quadratic sumcheck over Σ_b g[b] W[b], binding x_0 (the index MSB) first.

The round polynomial h(X) = Σ_{b < half} g(X, b) W(X, b) has degree 2 and is sent as its evaluations
h(0), h(2); the verifier recovers h(1) = S - h(0). g is a base (2^n,) or EF (2^n, 4) table, W an EF table;
all values are uint32 Montgomery words.
"""

from __future__ import annotations

import numpy as np

from . import field_np as F
from .multilinear import fix_first_variable

_TWO = F.constant(2)
_INV_TWO = F.inv(_TWO)


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


def fold(table: np.ndarray, weights: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bind x_0 := r in both the table and the weights."""
    return fix_first_variable(table, r), fix_first_variable(weights, r)


def evaluate_round_polynomial(claimed_sum: np.ndarray, h0: np.ndarray, h2: np.ndarray, r: np.ndarray) -> np.ndarray:
    """h(r) from h(0), h(1) = S - h(0), h(2), by Lagrange interpolation on {0, 1, 2}."""
    one = F.ef_from_base(F.ONE)
    two = F.ef_from_base(_TWO)
    h1 = F.ef_sub(claimed_sum, h0)
    r_minus_1 = F.ef_sub(r, one)
    r_minus_2 = F.ef_sub(r, two)
    l0 = F.ef_mul_base(F.ef_mul(r_minus_1, r_minus_2), _INV_TWO)  # (r-1)(r-2)/2
    l1 = F.ef_mul(r, F.ef_sub(two, r))  # r(2-r)
    l2 = F.ef_mul_base(F.ef_mul(r, r_minus_1), _INV_TWO)  # r(r-1)/2
    return F.ef_add(F.ef_add(F.ef_mul(h0, l0), F.ef_mul(h1, l1)), F.ef_mul(h2, l2))
