"""Canonical field elements as callers give them: integer array-likes checked into numpy arrays, with one-line
``ConfigError``s naming the argument (``what``). Shared by the prover's and the verifier's public entry points."""

from __future__ import annotations

import numpy as np

from .errors import ConfigError
from .field import P


def integer_array(values, what: str) -> np.ndarray:
    """``values`` as a numpy integer array (Python ints beyond int64 and non-integers refused); no range check."""
    try:
        array = np.asarray(values)
        if array.dtype.kind == "O":
            array = np.asarray(values, dtype=np.int64)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ConfigError(f"{what}: not an integer array ({exc})") from None
    if array.size and array.dtype.kind not in "ui":
        raise ConfigError(f"{what}: expected integers, got dtype {array.dtype}")
    return array


def canonical_array(values, what: str, prime: int = P) -> np.ndarray:
    """``integer_array`` whose every value is a canonical field element, in [0, prime) (BabyBear's by default)."""
    array = integer_array(values, what)
    if array.size and (array.min() < 0 or array.max() >= prime):
        raise ConfigError(f"{what}: values must be canonical field elements in [0, {prime})")
    return array
