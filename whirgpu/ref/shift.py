"""Next-row ("shift") weights: the linear functional a next-row opening claims (upstream Plonky3 5dc50e51's
``eval_next``, ``p3_sumcheck::constraints::statement::next``).

For a column of 2^m rows (row i <-> bits (b_0 .. b_{m-1}), b_0 the most significant) and a point p (m, 4), the
next-row value is the *repeat-last successor* view: Σ_i eq(i, p) col[min(i + 1, 2^m - 1)] = MLE(shift(col))(p)
with shift[i] = col[i + 1] and the last row repeated. As weights on the column: next(j, p) = eq(j - 1, p) for
j >= 1, plus eq(2^m - 1, p) at j = 2^m - 1; next(0, p) = 0.

Its multilinear extension in j at y (m, 4) has a closed form (``next_at``): the successor part sums, over the
position t of the carry (bit t of j - 1 is 0 and every bit after it 1; j flips them), the product of eq on the
bits before t, (1 - p_t) y_t at t, and p_s (1 - y_s) after t; the repeat-last part is Π p_s Π y_s.

Every array is uint32 Montgomery words of BabyBear, or of ``field`` when given (a ``whirgpu.field.Field``); EF
values have a trailing axis of 4.
"""

from __future__ import annotations

import numpy as np

from ..field import Field
from .multilinear import field_ops_or_default, eq_at, eq_table


def next_table(point: np.ndarray, scale: np.ndarray | None = None, field: Field | None = None) -> np.ndarray:
    """(2^m, 4): scale * next(j, point) for every row j of a column of m variables."""
    F = field_ops_or_default(field)
    eq = eq_table(point, scale, field)
    out = np.zeros_like(eq)
    out[1:] = eq[:-1]
    out[-1] = F.ef_add(out[-1], eq[-1])
    return out


def lifted_next_table(point: np.ndarray, start: int, m: int, scale: np.ndarray | None = None,
                      field: Field | None = None) -> np.ndarray:
    """(2^n, 4) for a point of n coordinates: scale * eq(b_out, point_out) * next(b_win, point_win), the window
    being the m variables x_start .. x_{start+m-1} (``Backend.add_next_weights``)."""
    F = field_ops_or_default(field)
    point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
    n = point.shape[0]
    if not (0 <= start and 0 <= m and start + m <= n):
        raise ValueError(f"window ({start}, {m}) does not fit a point of {n} coordinates")
    high = eq_table(point[:start], None, field)
    local = next_table(point[start:start + m], scale, field)
    low = eq_table(point[start + m:], None, field)
    out = F.ef_mul(high[:, None, :], local[None, :, :]).reshape(-1, 4)
    return F.ef_mul(out[:, None, :], low[None, :, :]).reshape(-1, 4)


def next_at(p: np.ndarray, y: np.ndarray, field: Field | None = None) -> np.ndarray:
    """The multilinear extension of j -> next(j, p) at y: p, y (..., m, 4), batch axes broadcast -> (..., 4)."""
    F = field_ops_or_default(field)
    p = np.asarray(p, dtype=np.uint32)
    y = np.asarray(y, dtype=np.uint32)
    p, y = np.broadcast_arrays(p, y)
    m = p.shape[-2]
    one = np.broadcast_to(F.ef_from_base(F.ONE), p.shape[:-2] + (4,))
    if m == 0:
        return np.array(one)
    py = F.ef_mul(p, y)
    eq = F.ef_add(F.ef_sub(F.ef_sub(one[..., None, :], p), y), F.ef_add(py, py))  # eq per coordinate
    carry_tail = F.ef_sub(p, py)  # p_s (1 - y_s): bit s of j - 1 is 1, of j is 0
    carry_at = F.ef_sub(y, py)  # (1 - p_t) y_t
    # after[t] = Π_{s > t} carry_tail[s], before[t] = Π_{s < t} eq[s]
    after = [None] * m
    running = np.array(one)
    for t in range(m - 1, -1, -1):
        after[t] = running
        running = F.ef_mul(running, carry_tail[..., t, :])
    total = np.zeros(p.shape[:-2] + (4,), np.uint32)
    before = np.array(one)
    for t in range(m):
        total = F.ef_add(total, F.ef_mul(F.ef_mul(before, carry_at[..., t, :]), after[t]))
        before = F.ef_mul(before, eq[..., t, :])
    last_p, last_y = np.array(one), np.array(one)
    for t in range(m):
        last_p = F.ef_mul(last_p, p[..., t, :])
        last_y = F.ef_mul(last_y, y[..., t, :])
    return F.ef_add(total, F.ef_mul(last_p, last_y))


def lifted_next_at(point: np.ndarray, start: int, m: int, y: np.ndarray, field: Field | None = None) -> np.ndarray:
    """The multilinear extension of ``lifted_next_table(point, start, m)`` at y (n, 4) -> (4,): eq on the
    coordinates outside the window times ``next_at`` on the window."""
    F = field_ops_or_default(field)
    point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
    y = np.asarray(y, dtype=np.uint32).reshape(-1, 4)
    outside = np.r_[0:start, start + m:point.shape[0]]
    selector = eq_at(point[outside], y[outside], field)
    return F.ef_mul(selector, next_at(point[start:start + m], y[start:start + m], field))
