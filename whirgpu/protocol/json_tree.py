"""Typed reading of a decoded JSON tree, shared by the proof formats (``serialize``, ``p3_format``), and a bounded
JSON parser for documents from anyone.

Contract: ``JsonTreeReader`` gives ``lst`` (a list, optionally of a given length or at most some length), ``words``
(a list of field words as a uint32 array) and ``efs`` (a list of extension elements, (m, 4)); every failure is a
``ProofFormatError`` naming the JSON path. A subclass defines ``word(value, path)`` and ``ef(value, path)``, the
one-element checks whose rules (the prime, serde's marker fields) belong to its format. ``first_difference``
names where two trees differ.

``loads_bounded``, ``json_depth`` and ``json_type`` are ``bounded_json``'s (the one bounded reader), re-exported.
"""

from __future__ import annotations

import numpy as np

from whirgpu.errors import ProofFormatError
from whirgpu.protocol.bounded_json import MAX_INT_DIGITS, MAX_JSON_DEPTH, json_depth, json_type, loads_bounded

__all__ = ["EF_DEGREE", "JsonTreeReader", "MAX_INT_DIGITS", "MAX_JSON_DEPTH", "first_difference", "json_depth",
           "json_type", "loads_bounded"]

EF_DEGREE = 4


class JsonTreeReader:
    @staticmethod
    def lst(value, path: str, length: int | None = None, at_most: int | None = None) -> list:
        if not isinstance(value, list):
            raise ProofFormatError(f"{path}: expected an array, got {json_type(value)}")
        if length is not None and len(value) != length:
            raise ProofFormatError(f"{path}: expected {length} entries, got {len(value)}")
        if at_most is not None and len(value) > at_most:
            raise ProofFormatError(f"{path}: {len(value)} entries, more than the {at_most} the configuration allows")
        return value

    def words(self, value, path: str, length: int | None = None, at_most: int | None = None) -> np.ndarray:
        items = self.lst(value, path, length, at_most)
        return np.array([self.word(v, f"{path}[{i}]") for i, v in enumerate(items)], dtype=np.uint32)

    def efs(self, value, path: str, length: int | None = None, at_most: int | None = None) -> np.ndarray:
        items = self.lst(value, path, length, at_most)
        return np.array([self.ef(v, f"{path}[{i}]") for i, v in enumerate(items)],
                        dtype=np.uint32).reshape(-1, EF_DEGREE)


def first_difference(got, want, path: str) -> str | None:
    """The path of the first place where two JSON trees differ (types included: true is not 1), or None."""
    if type(got) is not type(want):
        return path
    if isinstance(want, dict):
        if got.keys() != want.keys():
            return f"{path} (keys)"
        return next((d for k in want if (d := first_difference(got[k], want[k], f"{path}.{k}"))), None)
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path} (length)"
        return next((d for i, (g, w) in enumerate(zip(got, want)) if (d := first_difference(g, w, f"{path}[{i}]"))),
                    None)
    return None if got == want else path
