"""Vectorised prime-field and EF4 arithmetic on numpy arrays of Montgomery words.

Contracts (every function):
- Base-field arrays are ``uint32`` Montgomery words in [0, P); any shape, broadcasting as numpy does.
- Extension arrays have a trailing axis of length 4 (c0..c3, X^4 = W), also ``uint32`` Montgomery words.
- Outputs are fresh ``uint32`` arrays in [0, P). Inputs are never modified.

Only ``to_monty`` / ``from_monty`` see canonical values; everything else stays in Montgomery form, exactly as
the GPU kernels do, so a kernel's output buffer can be compared word for word with these results.

``field_ops(field)`` returns a ``FieldOps`` holding these operations for any ``whirgpu.field.Field`` (attributes
named as below, plus ``field``, ``P``, ``W``, ``ZERO`` and ``ONE``). The module-level names are BabyBear's
``FieldOps``: the same function objects, so the cpu backend's hot calls cost what they always did.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..field import BABYBEAR, Field

U32 = np.uint32
U64 = np.uint64
_MASK32 = U64(0xFFFFFFFF)
_SHIFT32 = U64(32)
# Products of at most this many elements take the folded-outer-product path (a few large numpy calls instead of
# ~270 small ones); above it, the per-coefficient form stays in cache and is faster (measured crossover on x86
# near 2,000).
_EF_MUL_OUTER_MAX = 1024


def _u32(a) -> np.ndarray:
    return np.asarray(a, dtype=U32)


def _u64(a) -> np.ndarray:
    return np.asarray(a, dtype=U32).astype(U64)


class FieldOps:
    """The operations of one field as attributes: plain functions closed over that field's constants (no ``self``,
    so a looked-up operation is as cheap to call as a module function). Build with ``field_ops``."""

    def __init__(self, field: Field):
        self.field = field
        self.P = field.P
        self.W = field.W
        self.__dict__.update(_operations(field))

    def __repr__(self) -> str:
        return f"FieldOps({self.field.name})"


@functools.lru_cache(maxsize=None)
def field_ops(field: Field) -> FieldOps:
    """The ``FieldOps`` of ``field`` (cached: one object per field)."""
    return FieldOps(field)


_SCALAR_INV_MAX = 64


def _operations(field: Field) -> dict:
    """Every operation of the module contract for ``field``, by name."""
    P, MU, R, R2, R_INV, W = field.P, field.MU, field.R, field.R2, field.R_INV, field.W
    _P64 = U64(P)
    _P32 = U32(P)
    _MU64 = U64(MU)

    def _reduce(x: np.ndarray) -> np.ndarray:
        """Montgomery reduction of uint64 x < P * 2^32: returns x * 2^-32 mod P in [0, P) as uint32."""
        t = ((x & _MASK32) * _MU64) & _MASK32  # < 2^64 before masking: never wraps, works on scalars too
        u = (t * _P64) >> _SHIFT32
        r = ((x >> _SHIFT32) + _P64 - u).astype(U32)  # in [1, 2P) and 2P < 2^32
        return _canonicalise(r)

    def _canonicalise(r) -> np.ndarray:
        """uint32 values in [0, 2P) -> [0, P): r - P wraps above 2^31 exactly when r < P, so the minimum is
        canonical."""
        return np.minimum(r, np.subtract(r, _P32))  # ufunc (not scalar) arithmetic: wraps silently

    # ---- conversions ---------------------------------------------------------------------------------------------

    def to_monty(x) -> np.ndarray:
        """Canonical values (any integer array-like, reduced mod P first) -> Montgomery words."""
        x = np.asarray(x)
        if x.dtype.kind == "O" or x.dtype.itemsize > 8 or x.dtype.kind == "i":
            x = np.asarray(np.mod(np.asarray(x, dtype=object), P), dtype=U64)
        else:
            x = x.astype(U64) % _P64
        return _reduce(x * U64(R2))

    def from_monty(m) -> np.ndarray:
        """Montgomery words -> canonical uint32 values in [0, P)."""
        return _reduce(_u64(m))

    def constant(x: int) -> np.uint32:
        """One canonical int -> its Montgomery word as a numpy scalar."""
        return U32((x % P) * R % P)

    ZERO = U32(0)
    ONE = constant(1)

    # ---- base field ----------------------------------------------------------------------------------------------

    def add(a, b) -> np.ndarray:
        return _canonicalise(np.add(_u32(a), _u32(b)))  # < 2P < 2^32: no wrap

    def sub(a, b) -> np.ndarray:
        return _canonicalise(np.subtract(np.add(_u32(a), _P32), _u32(b)))  # a + P < 2^32; minus b stays >= 1

    def neg(a) -> np.ndarray:
        return sub(np.zeros_like(np.asarray(a, dtype=U32)), a)

    def mul(a, b) -> np.ndarray:
        return _reduce(_u64(a) * _u64(b))

    def square(a) -> np.ndarray:
        a64 = _u64(a)
        return _reduce(a64 * a64)

    def power(a, e: int) -> np.ndarray:
        """a^e elementwise for a non-negative Python int exponent."""
        if e < 0:
            raise ValueError("exponent must be non-negative")
        a = np.asarray(a, dtype=U32)
        result = np.full(a.shape, ONE, dtype=U32)
        base = a.copy()
        while e:
            if e & 1:
                result = mul(result, base)
            e >>= 1
            if e:
                base = square(base)
        return result

    def power_each(a, exponents) -> np.ndarray:
        """a^e for one base element ``a`` and every non-negative int in ``exponents`` (same shape, uint32)."""
        e = np.asarray(exponents, dtype=np.int64)
        if np.any(e < 0):
            raise ValueError("exponents must be non-negative")
        result = np.full(e.shape, ONE, dtype=U32)
        base = U32(a)
        while np.any(e):
            result = np.where(e & 1, mul(result, base), result).astype(U32)
            e = e >> 1
            base = square(base)
        return result

    def inv(a) -> np.ndarray:
        """Multiplicative inverse (a^(P-2)); maps 0 to 0, as Plonky3's ``try_inverse`` callers must guard."""
        a = np.asarray(a, dtype=U32)
        if a.size <= _SCALAR_INV_MAX:  # a few elements: Python's modular power beats 60 numpy calls
            words = [pow(w * R_INV % P, P - 2, P) * R % P for w in a.reshape(-1).tolist()]
            return np.array(words, dtype=U32).reshape(a.shape)
        return power(a, P - 2)

    def total(a, axis=None) -> np.ndarray:
        """Sum along an axis, reduced mod P (exact: accumulates Montgomery words in uint64 chunks)."""
        a = np.asarray(a, dtype=U32)
        if axis is None:
            a = a.reshape(-1)
            axis = 0
        a = np.moveaxis(a, axis, 0)
        # Summing up to 2^32 words of < 2^31 fits in uint64; Montgomery form is linear so no conversion is needed.
        n = a.shape[0]
        acc = np.zeros(a.shape[1:], dtype=U64)
        chunk = 1 << 32
        for start in range(0, n, chunk):
            acc = (acc + a[start:start + chunk].astype(U64).sum(axis=0, dtype=U64)) % _P64
        return acc.astype(U32)

    # ---- extension field EF4 -------------------------------------------------------------------------------------

    _W_MONTY = constant(W)

    def ef_from_base(a) -> np.ndarray:
        """Embed base elements: shape (...) -> (..., 4)."""
        a = np.asarray(a, dtype=U32)
        out = np.zeros(a.shape + (4,), dtype=U32)
        out[..., 0] = a
        return out

    def ef_constant(coeffs) -> np.ndarray:
        """Canonical [c0, c1, c2, c3] ints -> one EF element (shape (4,))."""
        return to_monty(np.asarray([int(c) for c in coeffs], dtype=object))

    def ef_mul_words(a: list, b: list) -> list:
        """One EF product on Python ints: [a0..a3] x [b0..b3] Montgomery words -> 4 Montgomery words. The
        protocol's scalar arithmetic (transcript values, round polynomials) would otherwise pay numpy's per-call
        overhead ~50 times per product."""
        a0, a1, a2, a3 = a
        b0, b1, b2, b3 = b
        c0 = a0 * b0 + W * (a1 * b3 + a2 * b2 + a3 * b1)
        c1 = a0 * b1 + a1 * b0 + W * (a2 * b3 + a3 * b2)
        c2 = a0 * b2 + a1 * b1 + a2 * b0 + W * (a3 * b3)
        c3 = a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0
        return [c0 * R_INV % P, c1 * R_INV % P, c2 * R_INV % P, c3 * R_INV % P]

    def _ef_mul_one(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.array(ef_mul_words(a.tolist(), b.tolist()), dtype=U32)

    # Folds the 16 partial products a_i b_j (row 4i + j) into c_(i+j mod 4), times W where i + j >= 4 (X^4 = W).
    _EF_FOLD = np.array([[(1 if i + j < 4 else W) if (i + j) % 4 == k else 0 for k in range(4)]
                         for i in range(4) for j in range(4)], dtype=U64)

    def _ef_mul_outer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The product as reduce(a ⊗ b) folded by ``_EF_FOLD``: every folded sum is < (4 + 3 W) P < 2^64."""
        products = _reduce(a.astype(U64)[..., :, None] * b.astype(U64)[..., None, :])
        folded = products.reshape(products.shape[:-2] + (16,)).astype(U64) @ _EF_FOLD
        return (folded % _P64).astype(U32)  # Montgomery form is linear: the folded words need only a mod-P

    def ef_mul(a, b) -> np.ndarray:
        a = np.asarray(a, dtype=U32)
        b = np.asarray(b, dtype=U32)
        if a.shape == (4,) and b.shape == (4,):
            return _ef_mul_one(a, b)
        if math.prod(np.broadcast_shapes(a.shape, b.shape)) <= 4 * _EF_MUL_OUTER_MAX:
            return _ef_mul_outer(a, b)
        a0, a1, a2, a3 = (a[..., i] for i in range(4))
        b0, b1, b2, b3 = (b[..., i] for i in range(4))
        c0 = add(mul(a0, b0), mul(_W_MONTY, add(add(mul(a1, b3), mul(a2, b2)), mul(a3, b1))))
        c1 = add(add(mul(a0, b1), mul(a1, b0)), mul(_W_MONTY, add(mul(a2, b3), mul(a3, b2))))
        c2 = add(add(add(mul(a0, b2), mul(a1, b1)), mul(a2, b0)), mul(_W_MONTY, mul(a3, b3)))
        c3 = add(add(add(mul(a0, b3), mul(a1, b2)), mul(a2, b1)), mul(a3, b0))
        return np.stack([c0, c1, c2, c3], axis=-1)

    def ef_square(a) -> np.ndarray:
        return ef_mul(a, a)

    def ef_mul_base(a, b) -> np.ndarray:
        """EF (..., 4) times base (...) -> EF (..., 4)."""
        return mul(np.asarray(a, dtype=U32), np.asarray(b, dtype=U32)[..., None])

    def ef_power(a, e: int) -> np.ndarray:
        a = np.asarray(a, dtype=U32)
        result = ef_from_base(np.full(a.shape[:-1], ONE, dtype=U32))
        base = a.copy()
        while e:
            if e & 1:
                result = ef_mul(result, base)
            e >>= 1
            if e:
                base = ef_square(base)
        return result

    def ef_frobenius(a) -> np.ndarray:
        """a^P: c_i X^i -> c_i (W^((P-1)/4))^i X^i, since X^P = W^((P-1)/4) X."""
        a = np.asarray(a, dtype=U32)
        z = pow(W, (P - 1) // 4, P)
        factors = np.array([constant(pow(z, i, P)) for i in range(4)], dtype=U32)
        return mul(a, factors)

    def ef_inv(a) -> np.ndarray:
        """Inverse via the norm: a^-1 = (a^P a^P^2 a^P^3) / N(a), N(a) in the base field. Maps 0 to 0."""
        a = np.asarray(a, dtype=U32)
        f1 = ef_frobenius(a)
        f2 = ef_frobenius(f1)
        f3 = ef_frobenius(f2)
        conj = ef_mul(ef_mul(f1, f2), f3)
        norm = ef_mul(a, conj)[..., 0]
        return ef_mul_base(conj, inv(norm))

    def ef_sum(a, axis=0) -> np.ndarray:
        """Sum of EF elements along ``axis`` (which must not be the coefficient axis)."""
        a = np.asarray(a, dtype=U32)
        if axis < 0:
            axis += a.ndim
        if axis == a.ndim - 1:
            raise ValueError("axis must not be the coefficient axis")
        return total(a, axis=axis)

    def ef_dot_base(table, weights) -> np.ndarray:
        """Σ_i table[i] * weights[i] for base ``table`` (N,) and EF ``weights`` (N, 4) -> EF (4,)."""
        return ef_sum(ef_mul_base(weights, table), axis=0)

    def ef_powers(a, n: int) -> np.ndarray:
        """[1, a, a^2, ..., a^(n-1)] for one EF element ``a`` (4,) -> (n, 4), by doubling."""
        out = np.zeros((max(n, 1), 4), dtype=U32)
        out[0, 0] = ONE
        filled = 1
        step = np.asarray(a, dtype=U32)
        while filled < n:
            take = min(filled, n - filled)
            out[filled:filled + take] = ef_mul(out[:take], step)
            filled += take
            step = ef_square(step)
        return out[:n]

    def powers(a, n: int) -> np.ndarray:
        """[1, a, ..., a^(n-1)] for one base element -> (n,), by doubling."""
        out = np.zeros(max(n, 1), dtype=U32)
        out[0] = ONE
        filled = 1
        step = U32(a)
        while filled < n:
            take = min(filled, n - filled)
            out[filled:filled + take] = mul(out[:take], step)
            filled += take
            step = square(step)
        return out[:n]

    return {
        "ZERO": ZERO, "ONE": ONE,
        "to_monty": to_monty, "from_monty": from_monty, "constant": constant,
        "add": add, "sub": sub, "neg": neg, "mul": mul, "square": square, "power": power,
        "power_each": power_each, "inv": inv, "total": total, "powers": powers,
        "ef_from_base": ef_from_base, "ef_constant": ef_constant,
        "ef_add": add, "ef_sub": sub, "ef_neg": neg,  # coefficient-wise: the base operations broadcast
        "ef_mul_words": ef_mul_words, "ef_mul": ef_mul, "ef_square": ef_square, "ef_mul_base": ef_mul_base,
        "ef_power": ef_power, "ef_frobenius": ef_frobenius, "ef_inv": ef_inv, "ef_sum": ef_sum,
        "ef_dot_base": ef_dot_base, "ef_powers": ef_powers,
    }


# ---- BabyBear: the module-level interface ------------------------------------------------------------------------

_BABYBEAR = field_ops(BABYBEAR)
P = BABYBEAR.P
W = BABYBEAR.W
ZERO = _BABYBEAR.ZERO
ONE = _BABYBEAR.ONE
to_monty = _BABYBEAR.to_monty
from_monty = _BABYBEAR.from_monty
constant = _BABYBEAR.constant
add = _BABYBEAR.add
sub = _BABYBEAR.sub
neg = _BABYBEAR.neg
mul = _BABYBEAR.mul
square = _BABYBEAR.square
power = _BABYBEAR.power
power_each = _BABYBEAR.power_each
inv = _BABYBEAR.inv
total = _BABYBEAR.total
powers = _BABYBEAR.powers
ef_from_base = _BABYBEAR.ef_from_base
ef_constant = _BABYBEAR.ef_constant
ef_add = _BABYBEAR.ef_add
ef_sub = _BABYBEAR.ef_sub
ef_neg = _BABYBEAR.ef_neg
ef_mul_words = _BABYBEAR.ef_mul_words
ef_mul = _BABYBEAR.ef_mul
ef_square = _BABYBEAR.ef_square
ef_mul_base = _BABYBEAR.ef_mul_base
ef_power = _BABYBEAR.ef_power
ef_frobenius = _BABYBEAR.ef_frobenius
ef_inv = _BABYBEAR.ef_inv
ef_sum = _BABYBEAR.ef_sum
ef_dot_base = _BABYBEAR.ef_dot_base
ef_powers = _BABYBEAR.ef_powers
