"""Inputs for the kernels' differential tests: random Montgomery words with the field's edge values mixed in."""

from __future__ import annotations

import numpy as np

from whirgpu.ref.field_np import field_ops


def random_monty(rng, field, shape) -> np.ndarray:
    """Montgomery words of ``field``: uniform, with a tenth of them 0, 1, p - 1 (canonical) or R."""
    ops = field_ops(field)
    values = ops.to_monty(rng.integers(0, field.P, size=shape, dtype=np.uint64))
    edge = np.array([0, ops.ONE, field.P - 1, ops.constant(field.P - 1)], np.uint32)
    mask = rng.random(shape) < 0.1
    values[mask] = rng.choice(edge, size=int(mask.sum()))
    return values
