"""Typed reading of a decoded JSON tree, shared by the proof formats (``serialize``, ``p3_format``), and a bounded
JSON parser for documents from anyone.

Contract: ``JsonTreeReader`` gives ``lst`` (a list, optionally of a given length or at most some length), ``words``
(a list of field words as a uint32 array) and ``efs`` (a list of extension elements, (m, 4)); every failure is a
``ProofFormatError`` naming the JSON path. A subclass defines ``word(value, path)`` and ``ef(value, path)``, the
one-element checks whose rules (the prime, serde's marker fields) belong to its format. ``first_difference``
names where two trees differ.

``loads_bounded(data, what)`` parses JSON text (bytes or str) into dicts, lists, strs, ints, floats, bools and
None, or raises ``ProofFormatError`` naming ``what`` and the problem: text that is not UTF-8 or not JSON, arrays
and objects nested deeper than ``MAX_JSON_DEPTH`` (measured before anything is parsed, so the parser and every
walk over the tree stay far from Python's recursion limit), a repeated key in one object (two readers could
disagree on which one counts), ``NaN``/``Infinity`` (not JSON), numbers beyond a double's range and integers of
more than ``MAX_INT_DIGITS`` digits.
The tree is at most a small constant times the text's size.
"""

from __future__ import annotations

import json
import re

import numpy as np

from whirgpu.errors import ProofFormatError

EF_DEGREE = 4
MAX_JSON_DEPTH = 32  # a proof document nests about 10 deep
MAX_INT_DIGITS = 40  # a u64 has 20; nothing in a proof document is larger
_DEPTH_CHUNK = 1 << 20

# A string, or an unterminated one up to the end (so every match attempt succeeds at once: linear time)
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)


class JsonTreeReader:
    @staticmethod
    def lst(value, path: str, length: int | None = None, at_most: int | None = None) -> list:
        if not isinstance(value, list):
            raise ProofFormatError(f"{path}: expected a list, got {type(value).__name__}")
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


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count); for text that
    is not JSON, some number the parser then has to reject anyway."""
    text = _STRING.sub(b'""', data)
    depth = deepest = 0
    for start in range(0, len(text), _DEPTH_CHUNK):  # a chunk at a time: a few bytes of scratch per text byte
        chunk = np.frombuffer(text, dtype=np.uint8, count=min(_DEPTH_CHUNK, len(text) - start), offset=start)
        opening = (chunk == ord("[")) | (chunk == ord("{"))
        closing = (chunk == ord("]")) | (chunk == ord("}"))
        steps = (opening.astype(np.int8) - closing.astype(np.int8))[opening | closing]
        if steps.size:
            levels = depth + np.cumsum(steps, dtype=np.int64)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
    return deepest


def _no_constant(name: str):
    raise ProofFormatError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ProofFormatError(f"the number {text:.40} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ProofFormatError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _unique_keys(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ProofFormatError(f"key {repeated!r:.60} appears twice in one object")
    return out


def loads_bounded(data, what: str = "document"):
    """Parse JSON text from an untrusted source (see the module contract)."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProofFormatError(f"{what}: expected JSON text (bytes or str), got {type(data).__name__}")
    data = bytes(data)
    depth = json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise ProofFormatError(f"{what}: not JSON within limits: nested {depth} deep, above MAX_JSON_DEPTH "
                               f"{MAX_JSON_DEPTH}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProofFormatError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        return json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int, parse_float=_finite_float,
                          object_pairs_hook=_unique_keys)
    except ProofFormatError as exc:
        raise ProofFormatError(f"{what}: not JSON within limits: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ProofFormatError(f"{what}: not JSON: {exc}"[:300]) from None
