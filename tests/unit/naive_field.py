"""Obviously-correct scalar BabyBear/EF4 arithmetic on canonical Python ints: the oracle for ref/ tests."""

from __future__ import annotations

import numpy as np

from whirgpu.field import P, W, from_monty_int, to_monty_int


def ef_mul(a, b):
    c = [0] * 7
    for i in range(4):
        for j in range(4):
            c[i + j] += a[i] * b[j]
    return [(c[k] + W * (c[k + 4] if k + 4 < 7 else 0)) % P for k in range(4)]


def ef_add(a, b):
    return [(x + y) % P for x, y in zip(a, b)]


def ef_sub(a, b):
    return [(x - y) % P for x, y in zip(a, b)]


def ef_scale(a, s: int):
    return [x * s % P for x in a]


ONE = [1, 0, 0, 0]


def canon(a) -> list:
    """Montgomery array -> nested lists of canonical ints (same shape)."""
    return np.vectorize(lambda m: from_monty_int(int(m)), otypes=[object])(np.asarray(a)).tolist()


def monty(x) -> np.ndarray:
    """Nested lists of canonical ints -> Montgomery uint32 array."""
    return np.vectorize(lambda v: to_monty_int(int(v)), otypes=[np.uint32])(np.asarray(x, dtype=object))


def random_canonical(rng: np.random.Generator, shape) -> list:
    return rng.integers(0, P, shape).tolist()
