"""Typed reading of a decoded JSON tree, shared by the proof formats (``serialize``, ``p3_format``).

Contract: ``JsonTreeReader`` gives ``lst`` (a list, optionally of a given length), ``words`` (a list of field
words as a uint32 array) and ``efs`` (a list of extension elements, (m, 4)); every failure is a
``ProofFormatError`` naming the JSON path. A subclass defines ``word(value, path)`` and ``ef(value, path)``, the
one-element checks whose rules (the prime, serde's marker fields) belong to its format.
"""

from __future__ import annotations

import numpy as np

from whirgpu.errors import ProofFormatError

EF_DEGREE = 4


class JsonTreeReader:
    @staticmethod
    def lst(value, path: str, length: int | None = None) -> list:
        if not isinstance(value, list):
            raise ProofFormatError(f"{path}: expected a list, got {type(value).__name__}")
        if length is not None and len(value) != length:
            raise ProofFormatError(f"{path}: expected {length} entries, got {len(value)}")
        return value

    def words(self, value, path: str, length: int | None = None) -> np.ndarray:
        items = self.lst(value, path, length)
        return np.array([self.word(v, f"{path}[{i}]") for i, v in enumerate(items)], dtype=np.uint32)

    def efs(self, value, path: str, length: int | None = None) -> np.ndarray:
        items = self.lst(value, path, length)
        return np.array([self.ef(v, f"{path}[{i}]") for i, v in enumerate(items)],
                        dtype=np.uint32).reshape(-1, EF_DEGREE)
