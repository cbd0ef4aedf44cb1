"""The batched NTT against the O(H^2) definition and against Python ints, in BabyBear (the default) and KoalaBear."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import KOALABEAR, P, TWO_ADIC_GENERATORS
from whirgpu.ref import field_np as F
from whirgpu.ref.field_np import field_ops
from whirgpu.ref.ntt import dft_batch, dft_ext_batch, naive_dft

from .naive_field import canon, monty


@pytest.mark.parametrize("log_h", [0, 1, 2, 3, 5, 7])
@pytest.mark.parametrize("width", [1, 3, 16])
def test_dft_matches_naive(log_h, width):
    rng = np.random.default_rng(log_h * 100 + width)
    m = F.to_monty(rng.integers(0, P, (1 << log_h, width), dtype=np.uint64))
    assert np.array_equal(dft_batch(m), naive_dft(m))


def test_naive_dft_matches_python_ints():
    rng = np.random.default_rng(5)
    h = 8
    coeffs = rng.integers(0, P, (h, 2)).tolist()
    omega = TWO_ADIC_GENERATORS[3]
    expected = [[sum(coeffs[t][j] * pow(omega, i * t, P) for t in range(h)) % P for j in range(2)] for i in range(h)]
    assert canon(naive_dft(monty(coeffs))) == expected


def test_edge_values():
    for value in (0, 1, P - 1):
        m = monty(np.full((16, 2), value, dtype=object))
        assert np.array_equal(dft_batch(m), naive_dft(m))
    # a delta at t = 1 evaluates to omega^i
    m = np.zeros((32, 1), np.uint32)
    m[1, 0] = F.ONE
    assert canon(dft_batch(m)[:, 0]) == [pow(TWO_ADIC_GENERATORS[5], i, P) for i in range(32)]


def test_larger_size_linear_and_shift():
    """At 2^12 (beyond the naive oracle) check linearity and the shift theorem against each other."""
    rng = np.random.default_rng(9)
    h = 1 << 12
    a = F.to_monty(rng.integers(0, P, (h, 2), dtype=np.uint64))
    b = F.to_monty(rng.integers(0, P, (h, 2), dtype=np.uint64))
    assert np.array_equal(dft_batch(F.add(a, b)), F.add(dft_batch(a), dft_batch(b)))
    shifted = np.roll(a, 1, axis=0)  # coefficient t -> t+1, wrapping: multiply evaluation i by omega^i
    omega_powers = F.powers(F.constant(TWO_ADIC_GENERATORS[12]), h)
    assert np.array_equal(dft_batch(shifted), F.mul(dft_batch(a), omega_powers[:, None]))


def test_ext_batch_is_per_coefficient():
    rng = np.random.default_rng(3)
    m = F.to_monty(rng.integers(0, P, (16, 3, 4), dtype=np.uint64))
    out = dft_ext_batch(m)
    for c in range(4):
        assert np.array_equal(out[:, :, c], dft_batch(m[:, :, c]))


def test_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        dft_batch(np.zeros((12, 1), np.uint32))


@pytest.mark.parametrize("log_h", [0, 1, 4, 6])
def test_koalabear_matches_naive_and_python_ints(log_h):
    """``field=`` switches the prime and the roots: KoalaBear's transform against its O(H^2) form and Python ints."""
    field = KOALABEAR
    ops = field_ops(field)
    rng = np.random.default_rng(40 + log_h)
    h, p = 1 << log_h, field.P
    coeffs = rng.integers(0, p, (h, 3)).tolist()
    m = ops.to_monty(np.asarray(coeffs, np.int64))
    out = dft_batch(m, KOALABEAR)
    assert np.array_equal(out, naive_dft(m, KOALABEAR))
    omega = pow(field.generator, (p - 1) >> log_h, p)
    expected = [[sum(coeffs[t][j] * pow(omega, i * t, p) for t in range(h)) % p for j in range(3)] for i in range(h)]
    assert ops.from_monty(out).tolist() == expected
    ext = ops.to_monty(rng.integers(0, p, (h, 2, 4)))
    assert np.array_equal(dft_ext_batch(ext, KOALABEAR)[:, :, 2], dft_batch(ext[:, :, 2], KOALABEAR))
