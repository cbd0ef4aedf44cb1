"""Sumcheck round sums, folds and the round-polynomial update against their definitions."""

from __future__ import annotations

import numpy as np
import pytest

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
