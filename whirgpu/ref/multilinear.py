"""Multilinear polynomials as evaluation tables, and the weights WHIR's constraints use.

Variable order (everywhere in whirgpu): a table g of 2^n entries is indexed by b = Σ_t x_t 2^(n-1-t), so x_0 is
the MOST significant bit of the index. A point z has n coordinates, z[t] binding x_t. Tables are base (2^n,)
or EF (2^n, 4) uint32 Montgomery arrays; points and scalars are EF (..., 4).

The field is BabyBear unless a function is given ``field=`` (a ``whirgpu.field.Field``; the p3-whir profile's
verifier passes KoalaBear); the default path calls exactly the module-level BabyBear operations it always did.
"""

from __future__ import annotations

import numpy as np

from . import field_np as F
from ..field import Field


def field_ops_or_default(field: Field | None):
    """The operations of ``field`` (the BabyBear module itself when None)."""
    return F if field is None else F.field_ops(field)


def _as_ext(table: np.ndarray, field: Field | None = None) -> np.ndarray:
    F = field_ops_or_default(field)
    table = np.asarray(table, dtype=np.uint32)
    return table if table.ndim == 2 else F.ef_from_base(table)


def eq_table(point: np.ndarray, scale: np.ndarray | None = None, field: Field | None = None) -> np.ndarray:
    """(2^n, 4): scale * eq(b, point) for every index b, eq(x, z) = Π_t (x_t z_t + (1 - x_t)(1 - z_t))."""
    F = field_ops_or_default(field)
    point = np.asarray(point, dtype=np.uint32)
    out = (np.asarray(scale, dtype=np.uint32) if scale is not None else F.ef_from_base(F.ONE)).reshape(1, 4)
    for z in point:  # x_0 first, so it ends up as the most significant index bit
        hi = F.ef_mul(out, z)
        out = np.stack([F.ef_sub(out, hi), hi], axis=1).reshape(-1, 4)
    return out


def fix_first_variable(table: np.ndarray, r: np.ndarray, field: Field | None = None) -> np.ndarray:
    """Bind x_0 (the index MSB) to r: g'[b] = g[b] + r (g[b + half] - g[b]). Base or EF in, EF out (2^(n-1), 4)."""
    F = field_ops_or_default(field)
    table = _as_ext(table, field)
    half = table.shape[0] // 2
    lo, hi = table[:half], table[half:]
    return F.ef_add(lo, F.ef_mul(F.ef_sub(hi, lo), r))


def fix_last_variable(table: np.ndarray, r: np.ndarray, field: Field | None = None) -> np.ndarray:
    """Bind x_{n-1} (the index LSB) to r: g'[b] = g[2b] + r (g[2b + 1] - g[2b]). Base or EF in, EF out
    (2^(n-1), 4). The suffix order of the p3-whir profile folds this way."""
    F = field_ops_or_default(field)
    table = _as_ext(table, field)
    lo, hi = table[0::2], table[1::2]
    return F.ef_add(lo, F.ef_mul(F.ef_sub(hi, lo), r))


def evaluate(table: np.ndarray, point: np.ndarray, field: Field | None = None) -> np.ndarray:
    """The multilinear extension of ``table`` at ``point`` (n EF coordinates) -> EF (4,)."""
    point = np.asarray(point, dtype=np.uint32)
    n = point.shape[0]
    if np.asarray(table).shape[0] != 1 << n:
        raise ValueError(f"table of {np.asarray(table).shape[0]} entries does not match a point of {n} coordinates")
    if np.asarray(table).ndim == 1 and n >= 2:
        return _evaluate_base(np.asarray(table, dtype=np.uint32), point, field)
    g = _as_ext(table, field)
    for z in point:
        g = fix_first_variable(g, z, field)
    return g[0]


def _evaluate_base(table: np.ndarray, point: np.ndarray, field: Field | None = None) -> np.ndarray:
    """``evaluate`` of a base table, as Σ_hi eq(hi, z_hi) Σ_lo t[hi, lo] eq(lo, z_lo) with the index split into
    its high and low halves: the inner sums take each coordinate of eq(lo, z_lo) apart, as integer products
    reduced mod P (t e = a e R^2 for Montgomery words t = a R, e = e' R) summed exactly in uint64 and turned
    back into Montgomery words a e R by one Montgomery reduction; no EF product is taken over the whole table."""
    F = field_ops_or_default(field)
    n = point.shape[0]
    n_hi = n // 2
    n_lo = n - n_hi
    eq_lo = eq_table(point[n_hi:], field=field).astype(np.uint64)  # (2^n_lo, 4)
    rows = table.reshape(1 << n_hi, 1 << n_lo)
    inner = np.empty((1 << n_hi, 4), np.uint32)
    p = np.uint64(F.P)
    step = max(1, (1 << 20) >> n_lo)  # rows per chunk: about 2^20 products at a time
    for start in range(0, rows.shape[0], step):
        chunk = rows[start:start + step].astype(np.uint64)
        for c in range(4):  # 2^n_lo terms below P each: the sum stays below 2^63 for n_lo <= 32
            sums = np.sum((chunk * eq_lo[:, c]) % p, axis=1, dtype=np.uint64) % p
            inner[start:start + step, c] = F.mul(sums.astype(np.uint32), 1)  # the raw word 1: times R^-1
    return F.ef_sum(F.ef_mul(inner, eq_table(point[:n_hi], field=field)), axis=0)


def evaluate_rows(rows: np.ndarray, point: np.ndarray, field: Field | None = None) -> np.ndarray:
    """Each row's multilinear extension at one ``point`` (k, 4): rows (q, 2^k) base or (q, 2^k, 4) EF -> (q, 4)."""
    F = field_ops_or_default(field)
    rows = np.asarray(rows, dtype=np.uint32)
    point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
    if rows.shape[1] != 1 << point.shape[0]:
        raise ValueError(f"rows of {rows.shape[1]} entries do not match a point of {point.shape[0]} coordinates")
    g = np.moveaxis(rows, 1, 0)  # entry index first, so the fold below is fix_first_variable on every row at once
    g = g if g.ndim == 3 else F.ef_from_base(g)
    for z in point:
        half = g.shape[0] // 2
        g = F.ef_add(g[:half], F.ef_mul(F.ef_sub(g[half:], g[:half]), z))
    return g[0]


def expand_from_univariate(y: np.ndarray, num_variables: int, field: Field | None = None) -> np.ndarray:
    """[y^(2^(m-1)), ..., y^2, y] (m = num_variables): the point whose eq-weights are y^b, b over the table index."""
    F = field_ops_or_default(field)
    current = [int(c) for c in np.asarray(y, dtype=np.uint32).reshape(4)]
    squares = []
    for _ in range(num_variables):  # one element: Python ints beat numpy's per-call cost
        squares.append(current)
        current = F.ef_mul_words(current, current)
    return np.array(squares[::-1], dtype=np.uint32).reshape(num_variables, 4)


def _ef_product(terms: np.ndarray, field: Field | None = None) -> np.ndarray:
    """Π_t terms[..., t, :] for EF terms (..., m, 4) -> (..., 4), multiplied pairwise (log2(m) batched products)."""
    F = field_ops_or_default(field)
    terms = np.asarray(terms, dtype=np.uint32)
    if terms.shape[-2] == 0:
        return np.array(np.broadcast_to(F.ef_from_base(F.ONE), terms.shape[:-2] + (4,)), dtype=np.uint32)
    while terms.shape[-2] > 1:
        half = terms.shape[-2] // 2
        paired = F.ef_mul(terms[..., :half, :], terms[..., half:2 * half, :])
        terms = np.concatenate([paired, terms[..., 2 * half:, :]], axis=-2)  # an odd one out waits a level
    return terms[..., 0, :]


def eq_at(z: np.ndarray, p: np.ndarray, field: Field | None = None) -> np.ndarray:
    """eq(z, p) = Π_t (z_t p_t + (1 - z_t)(1 - p_t)) for EF points z (..., m, 4) and p (..., m, 4), batch axes
    broadcast -> EF (..., 4). A coordinate where both are 0 contributes 1, so points of fewer variables can be
    padded with leading zeros to share a batch."""
    F = field_ops_or_default(field)
    z = np.asarray(z, dtype=np.uint32)
    p = np.asarray(p, dtype=np.uint32)
    zp = F.ef_mul(z, p)
    one = F.ef_from_base(F.ONE)
    # z p + (1 - z)(1 - p) = 1 - z - p + 2 z p
    return _ef_product(F.ef_add(F.ef_sub(F.ef_sub(one, z), p), F.ef_add(zp, zp)), field)


def select_table(var, num_variables: int, scale: np.ndarray | None = None, field: Field | None = None
                 ) -> np.ndarray:
    """(2^m, 4): scale * var^b for every index b; ``var`` is one base element (Montgomery)."""
    F = field_ops_or_default(field)
    powers = F.powers(np.uint32(var), 1 << num_variables)
    if scale is None:
        return F.ef_from_base(powers)
    return F.ef_mul_base(np.broadcast_to(np.asarray(scale, dtype=np.uint32), (powers.shape[0], 4)), powers)


def select_at(var, p: np.ndarray, field: Field | None = None) -> np.ndarray:
    """The MLE of b -> var^b at p (m coordinates): Π_t (1 + p_t (var^(2^(m-1-t)) - 1)) -> EF (..., 4), for base
    ``var`` of any shape (...) and p (m, 4) or (..., m, 4) (batch axes broadcast). A coordinate p_t = 0 contributes
    1, so points of fewer variables can be padded with leading zeros to share a batch."""
    F = field_ops_or_default(field)
    p = np.asarray(p, dtype=np.uint32)
    m = p.shape[-2]
    var = np.asarray(var, dtype=np.uint32)
    powers = np.empty(var.shape + (m,), dtype=np.uint32)  # [..., t] = var^(2^(m-1-t))
    power = var
    for t in range(m - 1, -1, -1):
        powers[..., t] = power
        power = F.square(power)
    one = F.ef_from_base(F.ONE)
    return _ef_product(F.ef_add(one, F.ef_mul_base(p, F.sub(powers, F.ONE))), field)


def horner(coefficients: np.ndarray, x, field: Field | None = None) -> np.ndarray:
    """Σ_b coefficients[b] x^b for EF coefficients (N, 4) and base points x of any shape (...) -> EF (..., 4)."""
    F = field_ops_or_default(field)
    coefficients = np.asarray(coefficients, dtype=np.uint32)
    x = np.asarray(x, dtype=np.uint32)
    acc = np.zeros(x.shape + (4,), dtype=np.uint32)
    for c in coefficients[::-1]:
        acc = F.ef_add(F.ef_mul_base(acc, x), c)
    return acc
