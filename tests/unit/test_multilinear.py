"""Multilinear tables, eq/select weights and their closed forms against definitions on Python ints."""

from __future__ import annotations


import numpy as np
import pytest

from whirgpu.field import P
from whirgpu.ref import field_np as F
from whirgpu.ref import multilinear as ML

from . import naive_field as N


def _naive_eq(bits, z):
    acc = N.ONE
    for x, zt in zip(bits, z):
        acc = N.ef_mul(acc, zt if x else N.ef_sub(N.ONE, zt))
    return acc


def _bits(b, n):
    return [(b >> (n - 1 - t)) & 1 for t in range(n)]  # x_0 = most significant bit


def _naive_mle(table, z):
    n = len(z)
    acc = [0, 0, 0, 0]
    for b, value in enumerate(table):
        value = value if isinstance(value, list) else [value, 0, 0, 0]
        acc = N.ef_add(acc, N.ef_mul(value, _naive_eq(_bits(b, n), z)))
    return acc


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_eq_table_and_evaluate(n):
    rng = np.random.default_rng(n)
    z = N.random_canonical(rng, (n, 4))
    table = N.random_canonical(rng, (1 << n,))
    assert N.canon(ML.eq_table(N.monty(z).reshape(n, 4))) == [_naive_eq(_bits(b, n), z) for b in range(1 << n)]
    assert N.canon(ML.evaluate(N.monty(table), N.monty(z).reshape(n, 4))) == _naive_mle(table, z)
    ext_table = N.random_canonical(rng, (1 << n, 4))
    assert N.canon(ML.evaluate(N.monty(ext_table), N.monty(z).reshape(n, 4))) == _naive_mle(ext_table, z)


def test_eq_table_scaled():
    rng = np.random.default_rng(1)
    z = N.monty(N.random_canonical(rng, (3, 4)))
    s = N.monty(N.random_canonical(rng, (4,)))
    assert np.array_equal(ML.eq_table(z, s), F.ef_mul(ML.eq_table(z), s))


def test_fix_first_variable_binds_msb():
    rng = np.random.default_rng(2)
    n = 4
    table = N.random_canonical(rng, (1 << n, 4))
    r = N.random_canonical(rng, (4,))
    z = N.random_canonical(rng, (n - 1, 4))
    folded = ML.fix_first_variable(N.monty(table), N.monty(r))
    assert N.canon(ML.evaluate(folded, N.monty(z))) == _naive_mle(table, [r] + z)


def test_expand_from_univariate():
    rng = np.random.default_rng(3)
    y = N.random_canonical(rng, (4,))
    point = N.canon(ML.expand_from_univariate(N.monty(y), 4))
    powers = [y]
    for _ in range(3):
        powers.append(N.ef_mul(powers[-1], powers[-1]))
    assert point == powers[::-1]  # [y^8, y^4, y^2, y]


@pytest.mark.parametrize("n", [1, 3, 6])
def test_eq_at_and_select_at_are_the_mles(n):
    rng = np.random.default_rng(10 + n)
    z = N.monty(N.random_canonical(rng, (n, 4)))
    p = N.monty(N.random_canonical(rng, (n, 4)))
    assert np.array_equal(ML.eq_at(z, p), ML.evaluate(ML.eq_table(z), p))
    var = F.constant(int(rng.integers(0, P)))
    table = ML.select_table(var, n)
    assert N.canon(table[:, 0]) == [pow(int(F.from_monty(var)), b, P) for b in range(1 << n)]
    assert np.array_equal(ML.select_at(var, p), ML.evaluate(table, p))


def test_select_table_scaled_and_edge_vars():
    s = N.monty([5, 6, 7, 8])
    for var in (0, 1, P - 1):
        table = ML.select_table(F.constant(var), 3, s)
        expected = [N.ef_scale([5, 6, 7, 8], pow(var, b, P)) for b in range(8)]
        assert N.canon(table) == expected


def test_horner():
    rng = np.random.default_rng(4)
    coeffs = N.random_canonical(rng, (8, 4))
    x = int(rng.integers(0, P))
    expected = [0, 0, 0, 0]
    for b, c in enumerate(coeffs):
        expected = N.ef_add(expected, N.ef_scale(c, pow(x, b, P)))
    assert N.canon(ML.horner(N.monty(coeffs), F.constant(x))) == expected


def test_evaluate_rejects_mismatched_sizes():
    with pytest.raises(ValueError, match="does not match"):
        ML.evaluate(np.zeros(8, np.uint32), np.zeros((2, 4), np.uint32))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_eq_select_horner_batched_equal_one_at_a_time(n):
    """eq_at over a batch of points, select_at over a batch of vars and horner over a batch of x: each entry is
    the single-argument value (the verifier evaluates a whole round's constraints at once)."""
    rng = np.random.default_rng(20 + n)
    zs = N.monty(N.random_canonical(rng, (7, n, 4))).reshape(7, n, 4)
    p = N.monty(N.random_canonical(rng, (n, 4))).reshape(n, 4)
    batched = ML.eq_at(zs, p)
    assert batched.shape == (7, 4)
    for z, got in zip(zs, batched):
        assert np.array_equal(got, ML.evaluate(ML.eq_table(z), p))
    vars_ = F.to_monty(np.array([0, 1, P - 1] + rng.integers(0, P, 5).tolist(), np.uint64))
    batched = ML.select_at(vars_, p)
    assert batched.shape == (8, 4)
    for var, got in zip(vars_, batched):
        assert np.array_equal(got, ML.evaluate(ML.select_table(var, n), p))
    coeffs = N.monty(N.random_canonical(rng, (1 << n, 4)))
    batched = ML.horner(coeffs, vars_.reshape(2, 4))
    assert batched.shape == (2, 4, 4)
    for var, got in zip(vars_, batched.reshape(-1, 4)):
        x = int(F.from_monty(var))
        expected = [0, 0, 0, 0]
        for b, c in enumerate(N.canon(coeffs)):
            expected = N.ef_add(expected, N.ef_scale(c, pow(x, b, P)))
        assert N.canon(got) == expected


def test_eq_and_select_with_leading_zero_padding():
    """Padding a point with leading zero coordinates (and, for eq, the other point too) leaves eq and select
    unchanged: how the verifier puts the constraints of every round, each over its own last variables, in one
    batch; p may then differ per batch entry."""
    rng = np.random.default_rng(30)
    n, pad = 4, 3
    z = N.monty(N.random_canonical(rng, (n, 4))).reshape(n, 4)
    p = N.monty(N.random_canonical(rng, (n, 4))).reshape(n, 4)
    zeros = np.zeros((pad, 4), np.uint32)
    zp, pp = np.concatenate([zeros, z]), np.concatenate([zeros, p])
    np.testing.assert_array_equal(ML.eq_at(zp, pp), ML.eq_at(z, p))
    var = F.constant(int(rng.integers(0, P)))
    np.testing.assert_array_equal(ML.select_at(var, pp), ML.select_at(var, p))
    other = N.monty(N.random_canonical(rng, (n + pad, 4))).reshape(n + pad, 4)
    both = ML.select_at(np.array([var, var], np.uint32), np.stack([pp, other]))
    np.testing.assert_array_equal(both[0], ML.select_at(var, p))
    np.testing.assert_array_equal(both[1], ML.select_at(var, other))
    both = ML.eq_at(np.stack([zp, other]), np.stack([pp, other]))
    np.testing.assert_array_equal(both[0], ML.eq_at(z, p))
    np.testing.assert_array_equal(both[1], ML.eq_at(other, other))


@pytest.mark.parametrize("n", [1, 2, 5])
def test_every_function_takes_another_field(n):
    """``field=KOALABEAR`` (the p3-whir verifier's): the same closed forms over KoalaBear's words, checked against
    the definitions on Python ints."""
    from whirgpu.field import KOALABEAR as KB

    ops = F.field_ops(KB)
    rng = np.random.default_rng(40 + n)

    def naive_eq(bits, z):
        acc = [1, 0, 0, 0]
        for x, zt in zip(bits, z):
            acc = N.ef_mul(acc, zt if x else N.ef_sub([1, 0, 0, 0], zt, KB), KB)
        return acc

    def naive_mle(table, z):
        acc = [0, 0, 0, 0]
        for b, value in enumerate(table):
            value = value if isinstance(value, list) else [value, 0, 0, 0]
            acc = N.ef_add(acc, N.ef_mul(value, naive_eq(_bits(b, n), z), KB), KB)
        return acc

    z = N.random_canonical(rng, (n, 4), KB)
    zm = N.monty(z, KB).reshape(n, 4)
    base = N.random_canonical(rng, (1 << n,), KB)
    ext = N.random_canonical(rng, (1 << n, 4), KB)
    assert N.canon(ML.eq_table(zm, field=KB), KB) == [naive_eq(_bits(b, n), z) for b in range(1 << n)]
    assert N.canon(ML.evaluate(N.monty(base, KB), zm, KB), KB) == naive_mle(base, z)
    assert N.canon(ML.evaluate(N.monty(ext, KB), zm, KB), KB) == naive_mle(ext, z)
    rows = np.stack([N.monty(ext, KB), N.monty(ext[::-1], KB)])
    assert N.canon(ML.evaluate_rows(rows, zm, KB), KB) == [naive_mle(ext, z), naive_mle(ext[::-1], z)]
    p = N.monty(N.random_canonical(rng, (n, 4), KB), KB)
    assert np.array_equal(ML.eq_at(zm, p, KB), ML.evaluate(ML.eq_table(zm, field=KB), p, KB))
    var = int(rng.integers(0, KB.P))
    table = [[pow(var, b, KB.P), 0, 0, 0] for b in range(1 << n)]
    assert N.canon(ML.select_at(ops.constant(var), p, KB), KB) == naive_mle(table, N.canon(p, KB))
    x = int(rng.integers(0, KB.P))
    expected = [0, 0, 0, 0]
    for b, c in enumerate(ext):
        expected = N.ef_add(expected, N.ef_scale(c, pow(x, b, KB.P), KB), KB)
    assert N.canon(ML.horner(N.monty(ext, KB), ops.constant(x), KB), KB) == expected
    powers = [z[0]]
    for _ in range(2):
        powers.append(N.ef_mul(powers[-1], powers[-1], KB))
    assert N.canon(ML.expand_from_univariate(zm[0], 3, KB), KB) == powers[::-1]
