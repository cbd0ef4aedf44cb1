"""``whirgpu.ref.field_np`` (BabyBear at module level, any field through ``field_ops``) against plain Python-int
arithmetic; the constants in ``whirgpu.field``."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu import field
from whirgpu.field import BABYBEAR, KOALABEAR, MU, P, R, R2, R_INV, TWO_ADIC_GENERATORS, W, field_by_name
from whirgpu.ref import field_np
from whirgpu.ref.field_np import field_ops

from . import naive_field as N

FIELDS = [BABYBEAR, KOALABEAR]


@pytest.fixture(params=FIELDS, ids=lambda f: f.name)
def fld(request):
    """The field under test; ``fnp`` is its operations."""
    return request.param


@pytest.fixture
def fnp(fld):
    return field_ops(fld)


def _edges(f) -> list[int]:
    p = f.P
    return [0, 1, 2, p - 2, p - 1, (1 << 30), (1 << 30) + 1, p - (1 << f.TWO_ADICITY), p // 2, p // 2 + 1, f.W,
            f.R, f.R_INV, (1 << 31) - 1 - p if (1 << 31) - 1 > p else 3]


def _values(f, seed: int, n: int = 400) -> list[int]:
    rng = np.random.default_rng(seed)
    return _edges(f) + rng.integers(0, f.P, n).tolist()


def _m(f, xs) -> np.ndarray:
    """canonical ints -> Montgomery array"""
    return np.array([f.to_monty_int(x) for x in xs], dtype=np.uint32)


def _c(f, a) -> list[int]:
    """Montgomery array -> canonical ints"""
    return [f.from_monty_int(int(x)) for x in np.asarray(a).reshape(-1)]


# ---- constants ---------------------------------------------------------------------------------------------------

SPEC_TWO_ADIC = [0x1, 0x78000000, 0x67055c21, 0x5ee99486, 0xbb4c4e4, 0x2d4cc4da, 0x669d6090, 0x17b56c64, 0x67456167,
                 0x688442f9, 0x145e952d, 0x4fe61226, 0x4c734715, 0x11c33e2a, 0x62c3d2b1, 0x77cad399, 0x54c131f4,
                 0x4cabd6a6, 0x5cf5713f, 0x3e9430e8, 0xba067a3, 0x18adc27d, 0x21fd55bc, 0x4b859b3d, 0x3bd57996,
                 0x4483d85a, 0x3a26eef8, 0x1a427a41]
# Plonky3 koala-bear/src/koala_bear.rs, TwoAdicData::TWO_ADIC_GENERATORS (canonical).
KOALABEAR_TWO_ADIC = [0x1, 0x7f000000, 0x7e010002, 0x6832fe4a, 0x8dbd69c, 0xa28f031, 0x5c4a5b99, 0x29b75a80,
                      0x17668b8a, 0x27ad539b, 0x334d48c7, 0x7744959c, 0x768fc6fa, 0x303964b2, 0x3e687d4d,
                      0x45a60e61, 0x6e2f4d7a, 0x163bd499, 0x6c4a8a45, 0x143ef899, 0x514ddcad, 0x484ef19b,
                      0x205d63c3, 0x68e7dd49, 0x6ac49f88]


def test_constants():
    assert P == 2 ** 31 - 2 ** 27 + 1 == 2013265921
    assert (P * MU) % (1 << 32) == 1
    assert R == 0x0FFFFFFE and R2 == 0x45DDDDE3 and R_INV == 943718400
    assert R * R_INV % P == 1
    assert TWO_ADIC_GENERATORS == SPEC_TWO_ADIC
    assert TWO_ADIC_GENERATORS[27] == pow(31, 15, P)


def test_babybear_field_object_equals_the_module_constants():
    b = BABYBEAR
    assert (b.P, b.MU, b.R, b.R2, b.R_INV, b.generator, b.TWO_ADICITY, b.W, b.EF_DEGREE, b.EF_BITS) == \
        (P, MU, R, R2, R_INV, field.MONTY_GEN, field.TWO_ADICITY, W, field.EF_DEGREE, field.EF_BITS)
    assert list(b.TWO_ADIC_GENERATORS) == TWO_ADIC_GENERATORS
    assert field_by_name("babybear") is BABYBEAR and field_by_name("koalabear") is KOALABEAR
    with pytest.raises(KeyError, match="goldilocks"):
        field_by_name("goldilocks")


def test_koalabear_constants():
    k = KOALABEAR
    assert k.P == 2 ** 31 - 2 ** 24 + 1 == 0x7F000001
    assert k.MU == 0x81000001 and (k.P * k.MU) % (1 << 32) == 1  # Plonky3's MONTY_MU
    assert k.R == (1 << 32) % k.P and k.R2 == (1 << 64) % k.P and k.R * k.R_INV % k.P == 1
    assert k.generator == 3 and k.W == 3 and k.TWO_ADICITY == 24 and k.EF_BITS == 124
    assert list(k.TWO_ADIC_GENERATORS) == KOALABEAR_TWO_ADIC
    # 3 generates F_P^*: no maximal proper subgroup contains it (P - 1 = 2^24 * 127)
    assert all(pow(3, (k.P - 1) // q, k.P) != 1 for q in (2, 127))
    # X^4 - W is irreducible: W is not a square (so no factor x^2 - c, c^2 = W, nor linear ones)
    assert pow(k.W, (k.P - 1) // 2, k.P) == k.P - 1 and (k.P - 1) % 4 == 0


def test_field_int_conversions(fld):
    for x in _edges(fld):
        assert fld.from_monty_int(fld.to_monty_int(x)) == x % fld.P
        assert fld.to_monty_int(x) == x * (1 << 32) % fld.P
    assert fld.to_monty_int(-1) == fld.to_monty_int(fld.P - 1)


def test_module_level_is_babybear():
    ops = field_ops(BABYBEAR)
    assert field_ops(BABYBEAR) is ops and field_ops(KOALABEAR) is not ops
    for name in ("to_monty", "from_monty", "add", "sub", "mul", "ef_mul", "ef_inv", "ef_mul_words", "total"):
        assert getattr(field_np, name) is getattr(ops, name)
    assert field_np.ONE == ops.ONE == R and field_np.P == P


@pytest.mark.parametrize("k", range(KOALABEAR.TWO_ADICITY + 1))
def test_two_adic_generator_exact_order(k):
    for f in FIELDS:
        g = f.TWO_ADIC_GENERATORS[k]
        assert pow(g, 1 << k, f.P) == 1
        if k:
            assert pow(g, 1 << (k - 1), f.P) != 1
        # same through the numpy path
        ops = field_ops(f)
        gm = ops.constant(g)
        assert int(ops.power(gm, 1 << k)) == int(ops.ONE)
        if k:
            assert int(ops.power(gm, 1 << (k - 1))) == int(ops.constant(f.P - 1))


@pytest.mark.parametrize("k", range(KOALABEAR.TWO_ADICITY + 1, BABYBEAR.TWO_ADICITY + 1))
def test_two_adic_generator_exact_order_babybear_only(k):
    g = TWO_ADIC_GENERATORS[k]
    assert pow(g, 1 << k, P) == 1 and pow(g, 1 << (k - 1), P) != 1
    assert int(field_np.power(field_np.constant(g), 1 << k)) == int(field_np.ONE)


# ---- base field --------------------------------------------------------------------------------------------------

def test_conversions(fld, fnp):
    p = fld.P
    xs = _values(fld, 1)
    m = fnp.to_monty(np.array(xs, dtype=np.uint64))
    assert m.dtype == np.uint32
    assert m.tolist() == [x * (1 << 32) % p for x in xs]
    assert fnp.from_monty(m).tolist() == xs
    assert int(fnp.constant(5)) == fld.to_monty_int(5) and int(fnp.ONE) == fld.R and int(fnp.ZERO) == 0
    # inputs outside [0, P) are reduced first
    big = [p, p + 1, (1 << 31), (1 << 32) - 1, (1 << 63) + 5, (1 << 64) - 1]
    assert fnp.to_monty(np.array(big, dtype=np.uint64)).tolist() == [fld.to_monty_int(x) for x in big]
    neg = [-1, -p, -(1 << 40), 1 << 80]
    assert fnp.to_monty(np.array(neg, dtype=object)).tolist() == [fld.to_monty_int(x) for x in neg]
    assert fnp.to_monty(np.array([-1, 3], dtype=np.int64)).tolist() == [fld.to_monty_int(-1), fld.to_monty_int(3)]


@pytest.mark.parametrize("name,op", [
    ("add", lambda a, b, p: (a + b) % p),
    ("sub", lambda a, b, p: (a - b) % p),
    ("mul", lambda a, b, p: a * b % p),
])
def test_binary_ops(fld, fnp, name, op):
    edges = _edges(fld)
    xs, ys = _values(fld, 2), _values(fld, 3)
    xs, ys = xs + edges * len(edges), ys + [e for e in edges for _ in edges]  # all edge pairs too
    out = getattr(fnp, name)(_m(fld, xs), _m(fld, ys))
    assert out.dtype == np.uint32
    assert _c(fld, out) == [op(a, b, fld.P) for a, b in zip(xs, ys)]


def test_montgomery_word_edges(fld, fnp):
    # raw words 0, 1, P-1 (not canonical values): mul is Montgomery, so word product = a*b/R
    p = fld.P
    words = np.array([0, 1, p - 1, fld.R, p // 2, p - 2], dtype=np.uint32)
    for a in words.tolist():
        for b in words.tolist():
            assert int(fnp.mul(np.uint32(a), np.uint32(b))) == a * b * fld.R_INV % p
            assert int(fnp.add(np.uint32(a), np.uint32(b))) == (a + b) % p
            assert int(fnp.sub(np.uint32(a), np.uint32(b))) == (a - b) % p


def test_unary_ops(fld, fnp):
    p = fld.P
    xs = _values(fld, 4)
    m = _m(fld, xs)
    assert _c(fld, fnp.neg(m)) == [(-x) % p for x in xs]
    assert _c(fld, fnp.square(m)) == [x * x % p for x in xs]
    for e in (0, 1, 2, 7, 123456789, p - 1, p + 3):
        assert _c(fld, fnp.power(m, e)) == [pow(x, e, p) for x in xs]
    assert _c(fld, fnp.inv(m)) == [pow(x, p - 2, p) for x in xs]  # 0 -> 0
    for few in (m[:1], m[:5], m[:64], m[:65]):  # a few elements take Python's modular power; shape kept
        assert fnp.inv(few).shape == few.shape and np.array_equal(fnp.inv(few), fnp.power(few, p - 2))
    assert fnp.inv(m[3]).shape == () and int(fnp.inv(m[3])) == int(fnp.power(m[3], p - 2))
    with pytest.raises(ValueError):
        fnp.power(m, -1)


def test_inputs_not_modified_and_broadcast(fld, fnp):
    a = _m(fld, [1, 2, 3])
    before = a.copy()
    fnp.mul(a, a)
    fnp.add(a, np.uint32(5))
    assert (a == before).all()
    grid = fnp.mul(a[:, None], a[None, :])
    assert grid.shape == (3, 3) and _c(fld, grid) == [x * y % fld.P for x in (1, 2, 3) for y in (1, 2, 3)]


def test_total_and_powers(fld, fnp):
    p = fld.P
    xs = _values(fld, 5, 5000)
    m = _m(fld, xs)
    assert _c(fld, fnp.total(m)) == [sum(xs) % p]
    table = m[:4000].reshape(40, 100)
    assert _c(fld, fnp.total(table, axis=0)) == [sum(xs[i + 100 * r] for r in range(40)) % p for i in range(100)]
    assert _c(fld, fnp.total(table, axis=1)) == [sum(xs[100 * r:100 * r + 100]) % p for r in range(40)]
    full = _m(fld, [p - 1] * 3000)
    assert _c(fld, fnp.total(full)) == [3000 * (p - 1) % p]
    g = fld.TWO_ADIC_GENERATORS[2]
    assert _c(fld, fnp.powers(fnp.constant(g), 37)) == [pow(g, i, p) for i in range(37)]
    assert _c(fld, fnp.powers(fnp.constant(g), 1)) == [1]


def test_power_each(fld, fnp):
    rng = np.random.default_rng(8)
    base = np.uint32(rng.integers(0, fld.P))
    exponents = np.concatenate([[0, 1, 2, (1 << 31) - 1], rng.integers(0, 1 << 30, 50)])
    want = np.array([fnp.power(base, int(e)) for e in exponents], np.uint32)
    np.testing.assert_array_equal(fnp.power_each(base, exponents), want)


# ---- extension field ---------------------------------------------------------------------------------------------

def _ef_values(f, seed, n=150):
    p = f.P
    rng = np.random.default_rng(seed)
    vals = rng.integers(0, p, (n, 4)).tolist()
    vals += [[0, 0, 0, 0], [1, 0, 0, 0], [p - 1] * 4, [0, 0, 0, 1], [0, 1, 0, 0], [p - 1, 0, 0, p - 1],
             [f.W, 0, 0, 0], [0, 0, 1, p - 1]]
    return vals


def _em(f, vals):
    return _m(f, [x for v in vals for x in v]).reshape(-1, 4)


def _ec(f, a):
    return np.array(_c(f, a), dtype=np.int64).reshape(-1, 4).tolist()


def test_ef_mul_add_sub(fld, fnp):
    p = fld.P
    xs, ys = _ef_values(fld, 6), _ef_values(fld, 7)
    a, b = _em(fld, xs), _em(fld, ys)
    assert _ec(fld, fnp.ef_mul(a, b)) == [N.ef_mul(x, y, fld) for x, y in zip(xs, ys)]
    assert _ec(fld, fnp.ef_square(a)) == [N.ef_mul(x, x, fld) for x in xs]
    assert _ec(fld, fnp.ef_add(a, b)) == [[(u + v) % p for u, v in zip(x, y)] for x, y in zip(xs, ys)]
    assert _ec(fld, fnp.ef_sub(a, b)) == [[(u - v) % p for u, v in zip(x, y)] for x, y in zip(xs, ys)]
    assert _ec(fld, fnp.ef_neg(a)) == [[(-u) % p for u in x] for x in xs]
    # X^4 = W (11 for BabyBear, 3 for KoalaBear)
    x = _em(fld, [[0, 1, 0, 0]])
    assert _ec(fld, fnp.ef_power(x, 4)) == [[fld.W, 0, 0, 0]]
    words = [fld.to_monty_int(c) for c in xs[0]], [fld.to_monty_int(c) for c in ys[0]]
    assert [fld.from_monty_int(w) for w in fnp.ef_mul_words(*words)] == N.ef_mul(xs[0], ys[0], fld)


def test_ef_inv_frobenius_powers(fld, fnp):
    p = fld.P
    xs = _ef_values(fld, 8, 60)
    a = _em(fld, xs)
    inv = fnp.ef_inv(a)
    for x, y in zip(xs, _ec(fld, inv)):
        if any(x):
            assert N.ef_mul(x, y, fld) == [1, 0, 0, 0]
        else:
            assert y == [0, 0, 0, 0]
    assert _ec(fld, fnp.ef_frobenius(a)) == [N.ef_pow(x, p, fld) for x in xs]
    for e in (0, 1, 5, p + 7):
        assert _ec(fld, fnp.ef_power(a[:10], e)) == [N.ef_pow(x, e, fld) for x in xs[:10]]
    pw = fnp.ef_powers(a[0], 19)
    assert pw.shape == (19, 4) and _ec(fld, pw) == [N.ef_pow(xs[0], i, fld) for i in range(19)]


def test_ef_base_mixing_and_sums(fld, fnp):
    p = fld.P
    xs = _ef_values(fld, 9, 50)
    bs = _values(fld, 10, 50)[:len(xs)]
    a, b = _em(fld, xs), _m(fld, bs)
    assert _ec(fld, fnp.ef_mul_base(a, b)) == [[c * k % p for c in x] for x, k in zip(xs, bs)]
    assert _ec(fld, fnp.ef_from_base(b)) == [[k, 0, 0, 0] for k in bs]
    assert _ec(fld, fnp.ef_sum(a, axis=0)) == [[sum(x[i] for x in xs) % p for i in range(4)]]
    dot = [0, 0, 0, 0]
    for x, k in zip(xs, bs):
        dot = [(d + c * k) % p for d, c in zip(dot, x)]
    assert _ec(fld, fnp.ef_dot_base(b, a)) == [dot]
    assert _ec(fld, fnp.ef_constant([1, 2, 3, p + 4])) == [[1, 2, 3, 4]]
    with pytest.raises(ValueError):
        fnp.ef_sum(a, axis=1)


def test_ef_mul_scalar_path_matches_the_array_path(fld, fnp):
    """ef_mul of two (4,) elements takes a Python-int path; it must equal the vectorised product."""
    p = fld.P
    rng = np.random.default_rng(7)
    a = rng.integers(0, p, (300, 4), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, p, (300, 4), dtype=np.uint64).astype(np.uint32)
    a[:20] = p - 1
    b[10:30] = 0
    want = fnp.ef_mul(a, b)
    got = np.stack([fnp.ef_mul(x, y) for x, y in zip(a, b)])
    assert got.dtype == np.uint32
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [2, 1000, 1024, 1025, 3000])
def test_ef_mul_paths_agree_across_sizes(fld, fnp, n):
    """ef_mul folds an outer product for small batches and works per coefficient for large ones (the threshold
    is an implementation detail): every size, and broadcasting against one element, equals the naive product."""
    p = fld.P
    rng = np.random.default_rng(n)
    xs = rng.integers(0, p, (n, 4)).tolist()
    xs[:2] = [[p - 1] * 4, [0, 0, 0, p - 1]]
    y = rng.integers(0, p, 4).tolist()
    a, b = _em(fld, xs), _em(fld, [y])[0]
    want = [N.ef_mul(x, y, fld) for x in xs]
    assert _ec(fld, fnp.ef_mul(a, b)) == want
    assert _ec(fld, fnp.ef_mul(b, a)) == want
    assert _ec(fld, fnp.ef_mul(a, a)) == [N.ef_mul(x, x, fld) for x in xs]


def test_fields_differ():
    """The same words mean different things in the two fields: guards against an ops object ignoring its field."""
    bb, kb = field_ops(BABYBEAR), field_ops(KOALABEAR)
    a = np.array([5, 1 << 30, 123456789], dtype=np.uint32)
    assert (bb.mul(a, a) != kb.mul(a, a)).any()
    assert bb.ONE != kb.ONE
    x = np.array([[0, 1, 0, 0]] * 2, dtype=np.uint32)
    assert kb.from_monty(kb.ef_power(kb.to_monty(x), 4)[0, 0]) == 3
    assert bb.from_monty(bb.ef_power(bb.to_monty(x), 4)[0, 0]) == 11
