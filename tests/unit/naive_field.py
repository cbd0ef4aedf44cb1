"""Obviously-correct scalar field/EF4 arithmetic on canonical Python ints: the oracle for ref/ tests.

Every function takes an optional ``field`` (a ``whirgpu.field.Field``); the default is BabyBear.
"""

from __future__ import annotations

import numpy as np

from whirgpu.field import BABYBEAR


def ef_mul(a, b, field=BABYBEAR):
    p, w = field.P, field.W
    c = [0] * 7
    for i in range(4):
        for j in range(4):
            c[i + j] += a[i] * b[j]
    return [(c[k] + w * (c[k + 4] if k + 4 < 7 else 0)) % p for k in range(4)]


def ef_pow(a, e: int, field=BABYBEAR):
    result, base = list(ONE), list(a)
    while e:
        if e & 1:
            result = ef_mul(result, base, field)
        base = ef_mul(base, base, field)
        e >>= 1
    return result


def ef_add(a, b, field=BABYBEAR):
    return [(x + y) % field.P for x, y in zip(a, b)]


def ef_sub(a, b, field=BABYBEAR):
    return [(x - y) % field.P for x, y in zip(a, b)]


def ef_scale(a, s: int, field=BABYBEAR):
    return [x * s % field.P for x in a]


ONE = [1, 0, 0, 0]


def canon(a, field=BABYBEAR) -> list:
    """Montgomery array -> nested lists of canonical ints (same shape)."""
    return np.vectorize(lambda m: field.from_monty_int(int(m)), otypes=[object])(np.asarray(a)).tolist()


def monty(x, field=BABYBEAR) -> np.ndarray:
    """Nested lists of canonical ints -> Montgomery uint32 array."""
    return np.vectorize(lambda v: field.to_monty_int(int(v)), otypes=[np.uint32])(np.asarray(x, dtype=object))


def random_canonical(rng: np.random.Generator, shape, field=BABYBEAR) -> list:
    return rng.integers(0, field.P, shape).tolist()
