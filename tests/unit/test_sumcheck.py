"""Sumcheck round sums, folds and the round-polynomial update against their definitions."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.ref import field_np as F
from whirgpu.ref import sumcheck as SC

from . import naive_field as N


def _h(table, weights, t: int):
    """h(t) = Σ_b g(t, b) W(t, b) straight from the definition (x_0 := t), on Python ints."""
    half = len(table) // 2
    acc = [0, 0, 0, 0]
    for b in range(half):
        g = N.ef_add(table[b], N.ef_scale(N.ef_sub(table[b + half], table[b]), t))
        w = N.ef_add(weights[b], N.ef_scale(N.ef_sub(weights[b + half], weights[b]), t))
        acc = N.ef_add(acc, N.ef_mul(g, w))
    return acc


@pytest.mark.parametrize("n", [1, 2, 6])
@pytest.mark.parametrize("base_table", [True, False])
def test_round_evaluations(n, base_table):
    rng = np.random.default_rng(n + 10 * base_table)
    if base_table:
        raw = N.random_canonical(rng, (1 << n,))
        table_ints = [[v, 0, 0, 0] for v in raw]
    else:
        raw = N.random_canonical(rng, (1 << n, 4))
        table_ints = raw
    weights = N.random_canonical(rng, (1 << n, 4))
    h0, h2 = SC.round_evaluations(N.monty(raw), N.monty(weights))
    assert N.canon(h0) == _h(table_ints, weights, 0)
    assert N.canon(h2) == _h(table_ints, weights, 2)


def test_fold_then_sum_equals_round_polynomial_at_r():
    rng = np.random.default_rng(7)
    n = 5
    table = N.monty(N.random_canonical(rng, (1 << n,)))
    weights = N.monty(N.random_canonical(rng, (1 << n, 4)))
    claimed = F.ef_sum(F.ef_mul_base(weights, table))
    for _ in range(n):
        h0, h2 = SC.round_evaluations(table, weights)
        r = N.monty(N.random_canonical(rng, (4,)))
        table, weights = SC.fold(table, weights, r)
        claimed = SC.evaluate_round_polynomial(claimed, h0, h2, r)
        assert np.array_equal(claimed, F.ef_sum(F.ef_mul(table, weights)))


def test_round_polynomial_interpolates_small_points():
    rng = np.random.default_rng(8)
    h0, h1, h2 = (N.monty(N.random_canonical(rng, (4,))) for _ in range(3))
    s = F.ef_add(h0, h1)
    for t, expected in ((0, h0), (1, h1), (2, h2)):
        assert np.array_equal(SC.evaluate_round_polynomial(s, h0, h2, F.ef_from_base(F.constant(t))), expected)


def _h_suffix(table, weights, t: int, field):
    """h(t) = Σ_b g(b, t) W(b, t) straight from the definition (x_{n-1} := t), on Python ints."""
    acc = [0, 0, 0, 0]
    for b in range(len(table) // 2):
        lo, hi = 2 * b, 2 * b + 1
        g = N.ef_add(table[lo], N.ef_scale(N.ef_sub(table[hi], table[lo], field), t, field), field)
        w = N.ef_add(weights[lo], N.ef_scale(N.ef_sub(weights[hi], weights[lo], field), t, field), field)
        acc = N.ef_add(acc, N.ef_mul(g, w, field), field)
    return acc


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("n", [1, 2, 6])
@pytest.mark.parametrize("base_table", [True, False])
def test_suffix_round_message(field, n, base_table):
    """[h(0), c_inf] with c_inf = (h(2) - 2 h(1) + h(0)) / 2, the X^2 coefficient, each from the definition."""
    rng = np.random.default_rng(n + 10 * base_table)
    raw = N.random_canonical(rng, (1 << n,) if base_table else (1 << n, 4), field)
    table_ints = [[v, 0, 0, 0] for v in raw] if base_table else raw
    weights = N.random_canonical(rng, (1 << n, 4), field)
    h0, c_inf = SC.suffix_round_message(N.monty(raw, field), N.monty(weights, field), field)
    h = [_h_suffix(table_ints, weights, t, field) for t in range(3)]
    half = pow(2, -1, field.P)
    expected = N.ef_scale(N.ef_add(N.ef_sub(h[2], N.ef_scale(h[1], 2, field), field), h[0], field), half, field)
    assert N.canon(h0, field) == h[0]
    assert N.canon(c_inf, field) == expected


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
def test_fold_suffix_binds_the_last_variable(field):
    """Folding at r is the table's values at (b, r): the MLE at (p_0..p_{n-2}, r) equals the fold's at p."""
    from whirgpu.ref.multilinear import evaluate

    rng = np.random.default_rng(5)
    table = N.monty(N.random_canonical(rng, (1 << 5,), field), field)
    weights = N.monty(N.random_canonical(rng, (1 << 5, 4), field), field)
    point = N.monty(N.random_canonical(rng, (5, 4), field), field)
    folded, folded_weights = SC.fold_suffix(table, weights, point[-1], field)
    assert np.array_equal(evaluate(folded, point[:-1], field), evaluate(table, point, field))
    assert np.array_equal(evaluate(folded_weights, point[:-1], field), evaluate(weights, point, field))
