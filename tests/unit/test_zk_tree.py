"""``device_run.tree``: an associative, commutative combination made as a balanced tree (so a device program has
log2 levels, not a chain): the chain's value, ceil(log2 n) combinations deep, n - 1 of them."""

from __future__ import annotations

import math
import random

import pytest

from whirgpu.profiles.p3_whir.zk.device_run import tree


@pytest.mark.parametrize("n", list(range(1, 18)) + [31, 32, 33])
def test_a_tree_is_the_chain_in_log_depth(n):
    values = [(random.Random(n).randrange(1 << 31), 0) for _ in range(n)]  # (value, depth)
    made = []

    def add(a, b):
        made.append(1)
        return ((a[0] + b[0]) % 2013265921, max(a[1], b[1]) + 1)

    value, depth = tree(values, add)
    assert value == sum(v for v, _ in values) % 2013265921
    assert depth == math.ceil(math.log2(n)) and len(made) == n - 1
