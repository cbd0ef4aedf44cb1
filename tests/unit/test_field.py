"""``whirgpu.ref.field_np`` against plain Python-int arithmetic; the constants in ``whirgpu.field``."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu import field
from whirgpu.field import MU, P, R, R2, R_INV, TWO_ADIC_GENERATORS, W, from_monty_int, to_monty_int
from whirgpu.ref import field_np as fnp

EDGES = [0, 1, 2, P - 2, P - 1, (1 << 30), (1 << 30) + 1, (1 << 31) - (1 << 27), P // 2, P // 2 + 1, 11]


def _values(seed: int, n: int = 400) -> list[int]:
    rng = np.random.default_rng(seed)
    return EDGES + rng.integers(0, P, n).tolist()


def _m(xs) -> np.ndarray:
    """canonical ints -> Montgomery array"""
    return np.array([to_monty_int(x) for x in xs], dtype=np.uint32)


def _c(a) -> list[int]:
    """Montgomery array -> canonical ints"""
    return [from_monty_int(int(x)) for x in np.asarray(a).reshape(-1)]


# ---- constants ---------------------------------------------------------------------------------------------------

SPEC_TWO_ADIC = [0x1, 0x78000000, 0x67055c21, 0x5ee99486, 0xbb4c4e4, 0x2d4cc4da, 0x669d6090, 0x17b56c64, 0x67456167,
                 0x688442f9, 0x145e952d, 0x4fe61226, 0x4c734715, 0x11c33e2a, 0x62c3d2b1, 0x77cad399, 0x54c131f4,
                 0x4cabd6a6, 0x5cf5713f, 0x3e9430e8, 0xba067a3, 0x18adc27d, 0x21fd55bc, 0x4b859b3d, 0x3bd57996,
                 0x4483d85a, 0x3a26eef8, 0x1a427a41]


def test_constants():
    assert P == 2 ** 31 - 2 ** 27 + 1 == 2013265921
    assert (P * MU) % (1 << 32) == 1
    assert R == 0x0FFFFFFE and R2 == 0x45DDDDE3 and R_INV == 943718400
    assert R * R_INV % P == 1
    assert TWO_ADIC_GENERATORS == SPEC_TWO_ADIC
    assert TWO_ADIC_GENERATORS[27] == pow(31, 15, P)


@pytest.mark.parametrize("k", range(field.TWO_ADICITY + 1))
def test_two_adic_generator_exact_order(k):
    g = TWO_ADIC_GENERATORS[k]
    assert pow(g, 1 << k, P) == 1
    if k:
        assert pow(g, 1 << (k - 1), P) != 1
    # same through the numpy path
    gm = fnp.constant(g)
    assert int(fnp.power(gm, 1 << k)) == int(fnp.ONE)
    if k:
        assert int(fnp.power(gm, 1 << (k - 1))) == int(fnp.constant(P - 1))


# ---- base field --------------------------------------------------------------------------------------------------

def test_conversions():
    xs = _values(1)
    m = fnp.to_monty(np.array(xs, dtype=np.uint64))
    assert m.dtype == np.uint32
    assert m.tolist() == [x * (1 << 32) % P for x in xs]
    assert fnp.from_monty(m).tolist() == xs
    assert int(fnp.constant(5)) == to_monty_int(5) and int(fnp.ONE) == R and int(fnp.ZERO) == 0
    # inputs outside [0, P) are reduced first
    big = [P, P + 1, (1 << 31), (1 << 32) - 1, (1 << 63) + 5, (1 << 64) - 1]
    assert fnp.to_monty(np.array(big, dtype=np.uint64)).tolist() == [to_monty_int(x) for x in big]
    neg = [-1, -P, -(1 << 40), 1 << 80]
    assert fnp.to_monty(np.array(neg, dtype=object)).tolist() == [to_monty_int(x) for x in neg]
    assert fnp.to_monty(np.array([-1, 3], dtype=np.int64)).tolist() == [to_monty_int(-1), to_monty_int(3)]


@pytest.mark.parametrize("name,op", [
    ("add", lambda a, b: (a + b) % P),
    ("sub", lambda a, b: (a - b) % P),
    ("mul", lambda a, b: a * b % P),
])
def test_binary_ops(name, op):
    xs, ys = _values(2), _values(3)
    xs, ys = xs + EDGES * len(EDGES), ys + [e for e in EDGES for _ in EDGES]  # all edge pairs too
    out = getattr(fnp, name)(_m(xs), _m(ys))
    assert out.dtype == np.uint32
    assert _c(out) == [op(a, b) for a, b in zip(xs, ys)]


def test_montgomery_word_edges():
    # raw words 0, 1, P-1 (not canonical values): mul is Montgomery, so word product = a*b/R
    words = np.array([0, 1, P - 1, R, P // 2], dtype=np.uint32)
    for a in words.tolist():
        for b in words.tolist():
            assert int(fnp.mul(np.uint32(a), np.uint32(b))) == a * b * R_INV % P
            assert int(fnp.add(np.uint32(a), np.uint32(b))) == (a + b) % P
            assert int(fnp.sub(np.uint32(a), np.uint32(b))) == (a - b) % P


def test_unary_ops():
    xs = _values(4)
    m = _m(xs)
    assert _c(fnp.neg(m)) == [(-x) % P for x in xs]
    assert _c(fnp.square(m)) == [x * x % P for x in xs]
    for e in (0, 1, 2, 7, 123456789, P - 1, P + 3):
        assert _c(fnp.power(m, e)) == [pow(x, e, P) for x in xs]
    assert _c(fnp.inv(m)) == [pow(x, P - 2, P) for x in xs]  # 0 -> 0
    with pytest.raises(ValueError):
        fnp.power(m, -1)


def test_inputs_not_modified_and_broadcast():
    a = _m([1, 2, 3])
    before = a.copy()
    fnp.mul(a, a)
    fnp.add(a, np.uint32(5))
    assert (a == before).all()
    grid = fnp.mul(a[:, None], a[None, :])
    assert grid.shape == (3, 3) and _c(grid) == [x * y % P for x in (1, 2, 3) for y in (1, 2, 3)]


def test_total_and_powers():
    xs = _values(5, 5000)
    m = _m(xs)
    assert _c(fnp.total(m)) == [sum(xs) % P]
    table = m[:4000].reshape(40, 100)
    assert _c(fnp.total(table, axis=0)) == [sum(xs[i + 100 * r] for r in range(40)) % P for i in range(100)]
    assert _c(fnp.total(table, axis=1)) == [sum(xs[100 * r:100 * r + 100]) % P for r in range(40)]
    full = _m([P - 1] * 3000)
    assert _c(fnp.total(full)) == [3000 * (P - 1) % P]
    g = 0x67055C21
    assert _c(fnp.powers(fnp.constant(g), 37)) == [pow(g, i, P) for i in range(37)]
    assert _c(fnp.powers(fnp.constant(g), 1)) == [1]


# ---- extension field ---------------------------------------------------------------------------------------------

def ef_mul_naive(a, b):
    prod = [0] * 7
    for i in range(4):
        for j in range(4):
            prod[i + j] += a[i] * b[j]
    for k in range(6, 3, -1):  # X^k = W X^(k-4)
        prod[k - 4] += W * prod[k]
    return [x % P for x in prod[:4]]


def ef_pow_naive(a, e):
    result, base = [1, 0, 0, 0], list(a)
    while e:
        if e & 1:
            result = ef_mul_naive(result, base)
        base = ef_mul_naive(base, base)
        e >>= 1
    return result


def _ef_values(seed, n=150):
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, P, (n, 4)).tolist()
    vals += [[0, 0, 0, 0], [1, 0, 0, 0], [P - 1] * 4, [0, 0, 0, 1], [0, 1, 0, 0], [P - 1, 0, 0, P - 1]]
    return vals


def _em(vals):
    return _m([x for v in vals for x in v]).reshape(-1, 4)


def _ec(a):
    return np.array(_c(a), dtype=np.int64).reshape(-1, 4).tolist()


def test_ef_mul_add_sub():
    xs, ys = _ef_values(6), _ef_values(7)
    a, b = _em(xs), _em(ys)
    assert _ec(fnp.ef_mul(a, b)) == [ef_mul_naive(x, y) for x, y in zip(xs, ys)]
    assert _ec(fnp.ef_square(a)) == [ef_mul_naive(x, x) for x in xs]
    assert _ec(fnp.ef_add(a, b)) == [[(p + q) % P for p, q in zip(x, y)] for x, y in zip(xs, ys)]
    assert _ec(fnp.ef_sub(a, b)) == [[(p - q) % P for p, q in zip(x, y)] for x, y in zip(xs, ys)]
    # X^4 = 11
    x = _em([[0, 1, 0, 0]])
    assert _ec(fnp.ef_power(x, 4)) == [[W, 0, 0, 0]]


def test_ef_inv_frobenius_powers():
    xs = _ef_values(8, 60)
    a = _em(xs)
    inv = fnp.ef_inv(a)
    for x, y in zip(xs, _ec(inv)):
        if any(x):
            assert ef_mul_naive(x, y) == [1, 0, 0, 0]
        else:
            assert y == [0, 0, 0, 0]
    assert _ec(fnp.ef_frobenius(a)) == [ef_pow_naive(x, P) for x in xs]
    for e in (0, 1, 5, P + 7):
        assert _ec(fnp.ef_power(a[:10], e)) == [ef_pow_naive(x, e) for x in xs[:10]]
    pw = fnp.ef_powers(a[0], 19)
    assert pw.shape == (19, 4) and _ec(pw) == [ef_pow_naive(xs[0], i) for i in range(19)]


def test_ef_base_mixing_and_sums():
    xs = _ef_values(9, 50)
    bs = _values(10, 50)[:len(xs)]
    a, b = _em(xs), _m(bs)
    assert _ec(fnp.ef_mul_base(a, b)) == [[c * k % P for c in x] for x, k in zip(xs, bs)]
    assert _ec(fnp.ef_from_base(b)) == [[k, 0, 0, 0] for k in bs]
    assert _ec(fnp.ef_sum(a, axis=0)) == [[sum(x[i] for x in xs) % P for i in range(4)]]
    dot = [0, 0, 0, 0]
    for x, k in zip(xs, bs):
        dot = [(d + c * k) % P for d, c in zip(dot, x)]
    assert _ec(fnp.ef_dot_base(b, a)) == [dot]
    assert _ec(fnp.ef_constant([1, 2, 3, P + 4])) == [[1, 2, 3, 4]]
    with pytest.raises(ValueError):
        fnp.ef_sum(a, axis=1)


def test_ef_mul_scalar_path_matches_the_array_path():
    """ef_mul of two (4,) elements takes a Python-int path; it must equal the vectorised product."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, P, (300, 4), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, P, (300, 4), dtype=np.uint64).astype(np.uint32)
    a[:20] = P - 1
    b[10:30] = 0
    want = fnp.ef_mul(a, b)
    got = np.stack([fnp.ef_mul(x, y) for x, y in zip(a, b)])
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, want)


def test_power_each():
    rng = np.random.default_rng(8)
    base = np.uint32(rng.integers(0, P))
    exponents = np.concatenate([[0, 1, 2, (1 << 31) - 1], rng.integers(0, 1 << 30, 50)])
    want = np.array([fnp.power(base, int(e)) for e in exponents], np.uint32)
    np.testing.assert_array_equal(fnp.power_each(base, exponents), want)


@pytest.mark.parametrize("n", [2, 1000, 1024, 1025, 3000])
def test_ef_mul_paths_agree_across_sizes(n):
    """ef_mul folds an outer product for small batches and works per coefficient for large ones (the threshold
    is an implementation detail): every size, and broadcasting against one element, equals the naive product."""
    rng = np.random.default_rng(n)
    xs = rng.integers(0, P, (n, 4)).tolist()
    xs[:2] = [[P - 1] * 4, [0, 0, 0, P - 1]]
    y = rng.integers(0, P, 4).tolist()
    a, b = _em(xs), _em([y])[0]
    want = [ef_mul_naive(x, y) for x in xs]
    assert _ec(fnp.ef_mul(a, b)) == want
    assert _ec(fnp.ef_mul(b, a)) == want
    assert _ec(fnp.ef_mul(a, a)) == [ef_mul_naive(x, x) for x in xs]
