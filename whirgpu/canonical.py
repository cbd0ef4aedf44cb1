"""Canonical field elements as callers give them: integer array-likes checked into numpy arrays, with one-line
``ConfigError``s naming the argument (``what``); the (2^n,) uint32 table the backends take (``canonical_table``).
Shared by the prover's and the verifier's public entry points and the backends' range checks."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor

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


def non_canonical(index: int, value: int, what: str = "evaluations", prime: int = P) -> ConfigError:
    """The error for a table word that is not a canonical field element: names the first such index and its value."""
    return ConfigError(f"{what}[{index}] = {value} is not a canonical field element (must be in [0, {prime}))")


def first_non_canonical(words: np.ndarray, prime: int = P) -> int | None:
    """The first index of ``words`` (uint32) holding a value >= ``prime``, or None."""
    bad = words >= np.uint32(prime)
    return int(np.argmax(bad)) if bad.any() else None


def canonical_table(values, num_variables: int) -> np.ndarray:
    """``values`` as the (2^n,) C-contiguous uint32 array of canonical words the backends take: a C-contiguous
    uint32 array is returned as it is (not copied, not read: the backend range-checks it); other integer dtypes
    are narrowed in one vectorised pass, refusing what does not fit 32 bits (negative or >= 2^32) with a
    ``ConfigError`` naming the first such index and its value. Values in [p, 2^32) pass here and are refused by
    the backend's check."""
    n = 1 << num_variables
    if isinstance(values, np.ndarray) and values.dtype == np.uint32 and values.flags.c_contiguous:
        array = values
    else:
        array = integer_array(values, "evaluations")
        if array.dtype.kind not in "ui":  # an empty array of another dtype
            raise ConfigError(f"evaluations: expected integers, got dtype {array.dtype}")
    if array.shape != (n,):
        raise ConfigError(f"evaluations must have 2^{num_variables} = {n} entries, got shape {array.shape}")
    if array.dtype == np.uint32:
        return np.ascontiguousarray(array)
    return _narrow(array)


def _narrow(array: np.ndarray) -> np.ndarray:
    """An integer array as uint32, refusing values outside [0, 2^32) (``non_canonical``): one pass for 8- to
    32-bit dtypes; for 64-bit ones a check of the high words and a copy of the low ones, over several threads for
    a large table."""
    array = array.astype(array.dtype.newbyteorder("="), copy=False)
    if array.dtype.itemsize <= 4:
        narrowed = array.astype(np.uint32)
        if array.dtype.kind == "i":
            # A negative value wraps to >= 2^31 > p, which the backend's check would refuse with the wrapped
            # value: name the caller's own value instead.
            wrapped = narrowed >= np.uint32(1 << 31)
            if wrapped.any():
                index = int(np.argmax(wrapped))
                raise non_canonical(index, int(array[index]))
        return narrowed
    words = array.view(np.uint32).reshape(-1, 2)
    low, high = (words[:, 0], words[:, 1]) if sys.byteorder == "little" else (words[:, 1], words[:, 0])
    narrowed = np.empty(len(array), np.uint32)

    def narrow_share(start: int, stop: int) -> int | None:
        # A high word that is not 0 means negative or >= 2^32: the low word alone could pass for a field element.
        if high[start:stop].any():
            return start + int(np.argmax(high[start:stop] != 0))
        np.copyto(narrowed[start:stop], low[start:stop])
        return None

    # numpy releases the GIL for both passes, so shares of a large table run on several cores at once.
    shares = max(1, min(NARROW_THREADS, len(array) // NARROW_SHARE))
    bounds = [len(array) * i // shares for i in range(shares + 1)]
    if shares == 1:
        bad = [narrow_share(0, len(array))]
    else:
        bad = list(_narrow_pool().map(narrow_share, bounds[:-1], bounds[1:]))
    index = next((i for i in bad if i is not None), None)
    if index is not None:
        raise non_canonical(index, int(array[index]))
    return narrowed


NARROW_THREADS = min(8, os.cpu_count() or 1)
NARROW_SHARE = 1 << 20  # values per thread at least: below it a thread costs more than it saves
_NARROW_POOL: ThreadPoolExecutor | None = None


def _narrow_pool() -> ThreadPoolExecutor:
    global _NARROW_POOL
    if _NARROW_POOL is None:
        _NARROW_POOL = ThreadPoolExecutor(max_workers=NARROW_THREADS, thread_name_prefix="whirgpu-narrow")
    return _NARROW_POOL
