"""``zk.sumcheck.switch_covector`` (batched over the query points) against the loop it replaced: upstream's
``switch_mask_covector`` one point at a time, for base query points (its fast path) and EF ones, both fields."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.zk.sumcheck import base_powers_each, ef_powers_each, switch_covector
from whirgpu.ref.field_np import field_ops


def _loop(ops, message_len, source_len, pad_len, rhos, ood_coeffs, xs, query_coeffs):
    covector = np.zeros((source_len + pad_len, 4), np.uint32)
    for rho, coeff in zip(rhos, ood_coeffs):
        term = ops.ef_mul(coeff, ops.ef_power(rho, message_len))
        covector = ops.ef_add(covector, ops.ef_mul(term, ops.ef_powers(rho, source_len + pad_len)))
    for x, coeff in zip(xs, query_coeffs):
        term = ops.ef_mul(coeff, ops.ef_power(x, message_len))
        covector[:source_len] = ops.ef_add(covector[:source_len], ops.ef_mul(term, ops.ef_powers(x, source_len)))
    return covector


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("points", ["base", "extension", "none"])
@pytest.mark.parametrize("message_len,source_len", [(1, 1), (1 << 10, 9), (1 << 15, 39)])
def test_switch_covector_equals_the_per_point_loop(field, points, message_len, source_len):
    ops = field_ops(field)
    rng = np.random.default_rng(message_len + source_len)
    q = 0 if points == "none" else 7
    xs = ops.ef_from_base(rng.integers(0, field.P, q, dtype=np.uint32))
    if q:
        xs[0] = 0  # the point 0 and, below, an EF point
        if points == "extension":
            xs[1, 2] = 5
    query_coeffs = rng.integers(0, field.P, (q, 4), dtype=np.uint32)
    rhos = rng.integers(0, field.P, (2, 4), dtype=np.uint32)
    ood_coeffs = rng.integers(0, field.P, (2, 4), dtype=np.uint32)
    got = switch_covector(ops, message_len, source_len, 2, rhos, ood_coeffs, xs, query_coeffs)
    assert np.array_equal(got, _loop(ops, message_len, source_len, 2, rhos, ood_coeffs, xs, query_coeffs))


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17])
def test_powers_each_by_doubling(n):
    ops = field_ops(KOALABEAR)
    rng = np.random.default_rng(n)
    base = rng.integers(0, KOALABEAR.P, 4, dtype=np.uint32)
    points = rng.integers(0, KOALABEAR.P, (3, 4), dtype=np.uint32)
    assert np.array_equal(base_powers_each(ops, base, n),
                          np.stack([ops.powers(x, n) for x in base]).reshape(4, n))
    assert np.array_equal(ef_powers_each(ops, points, n),
                          np.stack([ops.ef_powers(x, n) for x in points]).reshape(3, n, 4))
