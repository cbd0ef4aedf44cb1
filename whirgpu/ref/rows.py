"""Per-row arithmetic for K proofs walked in lockstep (BabyBear, Montgomery words): each function is its one-proof
namesake of ``ref.field_np``, ``ref.multilinear`` or ``ref.sumcheck`` applied to every row at once, row r with
its own operands, equal word for word.

Shapes: EF values (K, 4); ``expand_rows`` (K, 4) -> (K, m, 4) as ``expand_from_univariate``; ``ef_powers_rows``
(K, 4) -> (K, n, 4) as ``ef_powers``; ``round_value_rows`` as ``evaluate_round_polynomial``; ``evaluate_each``
rows (Q, 2^k) base or (Q, 2^k, 4) EF at points (Q, k, 4) -> (Q, 4), as ``evaluate_rows`` with a point a row
(coordinate 0 binds the index's most significant bit); ``horner_each`` coefficients (Q, N, 4) at base points
(Q,) -> (Q, 4), as ``horner``; ``segment_sums`` EF terms (Q, 4) summed by owner (Q,) into (K, 4).
"""

from __future__ import annotations

import numpy as np

from ..field import P
from . import field_np as F

_P64 = np.uint64(P)
_HALF = np.uint64((P + 1) // 2)  # canonical 1/2: Montgomery words are linear, so it scales them directly
_TWO = F.constant(2)


def expand_rows(y: np.ndarray, num_variables: int) -> np.ndarray:
    """[y^(2^(m-1)), ..., y^2, y] per row: (K, 4) -> (K, m, 4)."""
    squares = []
    current = np.asarray(y, np.uint32)
    for _ in range(num_variables):
        squares.append(current)
        current = F.ef_mul(current, current)
    if not squares:
        return np.zeros((len(current), 0, 4), np.uint32)
    return np.stack(squares[::-1], axis=1)


def ef_powers_rows(a: np.ndarray, n: int) -> np.ndarray:
    """[1, a, ..., a^(n-1)] per row: (K, 4) -> (K, n, 4), by doubling."""
    a = np.asarray(a, np.uint32)
    out = np.zeros((len(a), max(n, 1), 4), np.uint32)
    out[:, 0, 0] = F.ONE
    filled, step = 1, a
    while filled < n:
        take = min(filled, n - filled)
        out[:, filled:filled + take] = F.ef_mul(out[:, :take], step[:, None, :])
        filled += take
        step = F.ef_mul(step, step)
    return out[:, :n]


def round_value_rows(claimed_sum: np.ndarray, h0: np.ndarray, h2: np.ndarray, r: np.ndarray) -> np.ndarray:
    """h(r) per row from the claim S, h(0) and h(2) (h(1) = S - h(0)), by Lagrange on {0, 1, 2}: (K, 4) each."""
    h1 = F.sub(claimed_sum, h0)
    x_minus_1, x_minus_2, two_minus_x = r.copy(), r.copy(), F.neg(r)
    x_minus_1[:, 0] = F.sub(r[:, 0], F.ONE)
    x_minus_2[:, 0] = F.sub(r[:, 0], _TWO)
    two_minus_x[:, 0] = F.sub(_TWO, r[:, 0])
    t0 = F.ef_mul(h0, F.ef_mul(x_minus_1, x_minus_2)).astype(np.uint64)
    t1 = F.ef_mul(h1, F.ef_mul(r, two_minus_x)).astype(np.uint64)
    t2 = F.ef_mul(h2, F.ef_mul(r, x_minus_1)).astype(np.uint64)
    return (((t0 + t2) * _HALF + t1) % _P64).astype(np.uint32)


def evaluate_each(rows: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Row q's multilinear extension at points[q]: rows (Q, 2^k) or (Q, 2^k, 4), points (Q, k, 4) -> (Q, 4)."""
    rows = np.asarray(rows, np.uint32)
    g = np.moveaxis(rows, 1, 0)
    g = g if g.ndim == 3 else F.ef_from_base(g)
    for t in range(points.shape[1]):
        half = g.shape[0] // 2
        g = F.ef_add(g[:half], F.ef_mul(F.ef_sub(g[half:], g[:half]), points[None, :, t, :]))
    return g[0]


def horner_each(coefficients: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Σ_b coefficients[q, b] x[q]^b: EF coefficients (Q, N, 4), base points (Q,) -> (Q, 4)."""
    acc = np.zeros((len(x), 4), np.uint32)
    for b in range(coefficients.shape[1] - 1, -1, -1):
        acc = F.ef_add(F.ef_mul_base(acc, x), coefficients[:, b])
    return acc


def segment_sums(terms: np.ndarray, owner: np.ndarray, k: int) -> np.ndarray:
    """Σ of the EF terms (Q, 4) of each owner in [0, k) -> (k, 4); owners without terms get 0."""
    out = np.zeros((k, 4), np.uint64)
    np.add.at(out, owner, terms.astype(np.uint64))  # Q < 2^32 terms below 2^31: no overflow
    return (out % _P64).astype(np.uint32)
