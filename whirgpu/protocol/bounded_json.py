"""The one JSON reader for text from anyone: proof documents of both profiles, the binary format's header,
``--statement`` / ``--expect`` / ``--from`` files and anything else a user hands over.

Contract: ``loads_bounded(data, what)`` parses JSON text (bytes or str) into dicts, lists, strs, ints, floats,
bools and None, or raises ``ProofFormatError`` of one line naming ``what`` and the problem in the document's own
terms (never a Python type or an internal exception's text):
- text that is not UTF-8, or not JSON (with the line and column where it stops being JSON);
- arrays and objects nested deeper than ``MAX_JSON_DEPTH`` (measured before anything is parsed, so neither the
  parser nor any walk over the tree comes near Python's recursion limit);
- a key that appears twice in one object (two readers could disagree on which one counts), naming the key;
- ``NaN`` / ``Infinity`` (not JSON), numbers beyond a double's range, integers of more than ``MAX_INT_DIGITS``
  digits;
- a document whose tree would take more than ``MAX_TREE_FACTOR`` times the text's size in memory. A linear
  pre-scan (``scan_json``, a fixed-size chunk at a time) counts what the parser will build (arrays, objects, keys,
  strings, elements) and charges each its upper-bound size in CPython; numbers are charged as the parser meets them.
  Memory while reading is therefore at most ``MAX_TREE_FACTOR`` x the text's size (x ``SMALL_TEXT`` for
  shorter text), whatever the text holds (long
  strings, many keys, long lists, many empty containers); a proof document's tree takes 5-15x.
``json_type(value)`` names a decoded value's JSON type (``null``, ``boolean``, ``number``, ``string``, ``array``,
``object``) for messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from whirgpu.errors import ProofFormatError

MAX_JSON_DEPTH = 32  # a proof document nests about 10 deep, a statement file 3
MAX_INT_DIGITS = 40  # a u64 has 20; nothing a user hands over is larger
MAX_TREE_FACTOR = 20  # bytes of memory per byte of text, at most
SMALL_TEXT = 1 << 16  # text shorter than this may take MAX_TREE_FACTOR x SMALL_TEXT (a deep little array)

_CHUNK = 1 << 16  # bytes scanned at once: the scan's scratch is a few times this, whatever the text's size
# Upper bounds of what CPython 3.11 (64-bit) allocates per item the parser builds, allocator rounding included:
_ARRAY = 96  # list header 56 + the first 4 slots
_OBJECT = 200  # a dict of up to 5 keys (184) + the pairs list the repeated-key check receives
_KEY = 190  # the pair tuple, the key's memo entry, its slot in the dict as the dict grows
_STRING = 64  # a str header (the characters are charged with the text)
_ELEMENT = 12  # a list or pairs-list slot with over-allocation
_INT = 32  # an int beyond the small-int cache (4 more bytes per 9 digits)
_FLOAT = 32
_QUOTE, _BACKSLASH = 34, 92


@dataclass(frozen=True)
class JsonScan:
    """What ``scan_json`` found: the deepest nesting, and counts of what the parser will build."""

    depth: int
    arrays: int
    objects: int
    keys: int
    strings: int
    commas: int
    wide: bool  # non-ASCII bytes or \\u escapes: characters may take up to 4 bytes each

    def tree_bytes(self, size: int) -> int:
        """An upper bound on the parse's memory before numbers: the decoded text and the strings' characters
        (2 bytes per byte of ASCII text, 8 otherwise) and every container, key, string and element."""
        return (size * (8 if self.wide else 2) + self.arrays * _ARRAY + self.objects * _OBJECT + self.keys * _KEY
                + self.strings * _STRING + self.commas * _ELEMENT)


def scan_json(data: bytes) -> JsonScan:
    """Count the structure of JSON text in one linear pass (brackets, commas and colons inside strings do not
    count). For text that is not JSON, some counts the parser then rejects anyway."""
    depth = deepest = 0
    quotes_odd = 0  # 1 inside a string
    run_odd = 0  # 1 when the previous chunk ended in an odd run of backslashes
    totals = np.zeros(5, dtype=np.int64)  # [ {  :  "  ,
    view = memoryview(data)
    for start in range(0, len(data), _CHUNK):
        c = np.frombuffer(view[start:start + _CHUNK], dtype=np.uint8)
        idx = np.arange(len(c), dtype=np.int32)
        backslash = c == _BACKSLASH
        last_other = np.where(backslash, -1, idx)
        np.maximum.accumulate(last_other, out=last_other)
        run = idx - last_other  # backslashes ending at each byte (not counting the previous chunk's)
        run_parity = (run + np.where(last_other < 0, run_odd, 0)) & 1
        escaped = np.empty(len(c), dtype=bool)
        escaped[0] = run_odd == 1
        escaped[1:] = run_parity[:-1] == 1
        quote = (c == _QUOTE) & ~escaped
        inside = (np.cumsum(quote, dtype=np.int32) + quotes_odd) & 1
        outside = inside == 0
        opening = ((c == ord("[")) | (c == ord("{"))) & outside
        closing = ((c == ord("]")) | (c == ord("}"))) & outside
        totals += [np.count_nonzero(opening & (c == ord("["))), np.count_nonzero(opening & (c == ord("{"))),
                   np.count_nonzero((c == ord(":")) & outside), np.count_nonzero(quote),
                   np.count_nonzero((c == ord(",")) & outside)]
        steps = (opening.astype(np.int8) - closing.astype(np.int8))[opening | closing]
        if steps.size:
            levels = depth + np.cumsum(steps, dtype=np.int64)
            deepest, depth = max(deepest, int(levels.max())), int(levels[-1])
        quotes_odd = int(inside[-1])
        run_odd = int(run_parity[-1])
    wide = data.find(b"\\u") >= 0 or not data.isascii()
    arrays, objects, keys, quotes, commas = (int(t) for t in totals)
    return JsonScan(deepest, arrays, objects, keys, (quotes + 1) // 2, commas, wide)


def json_depth(data: bytes) -> int:
    """The deepest nesting of arrays and objects in JSON text (``scan_json``)."""
    return scan_json(data).depth


def json_type(value) -> str:
    """The JSON name of a decoded value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


class _Limits:
    """The parser's hooks, charging numbers against what is left of the memory budget."""

    def __init__(self, budget: int):
        self.budget = budget

    def _charge(self, cost: int) -> None:
        self.budget -= cost
        if self.budget < 0:
            raise ProofFormatError(f"its tree would take more than MAX_TREE_FACTOR {MAX_TREE_FACTOR} times its "
                                   f"size in memory")

    def integer(self, text: str) -> int:
        digits = len(text.lstrip("-"))
        if digits > MAX_INT_DIGITS:
            raise ProofFormatError(f"an integer of {digits} digits (at most MAX_INT_DIGITS {MAX_INT_DIGITS})")
        value = int(text)
        if not -5 <= value <= 256:  # CPython's small ints are shared
            self._charge(_INT + 4 * (digits // 9))
        return value

    def real(self, text: str) -> float:
        value = float(text)
        if value in (float("inf"), float("-inf")):
            raise ProofFormatError(f"the number {text:.40} is out of range")
        self._charge(_FLOAT)
        return value

    @staticmethod
    def constant(name: str):
        raise ProofFormatError(f"{name} is not JSON")

    @staticmethod
    def unique_keys(pairs: list) -> dict:
        out = dict(pairs)
        if len(out) != len(pairs):
            seen = set()
            repeated = next(k for k, _ in pairs if k in seen or seen.add(k))
            raise ProofFormatError(f"key {repeated!r:.60} appears twice in one object")
        return out


def loads_bounded(data, what: str = "document"):
    """Parse JSON text from an untrusted source (see the module contract)."""
    if isinstance(data, str):
        text, data = data, data.encode("utf-8", "surrogatepass")
    elif isinstance(data, (bytes, bytearray, memoryview)):
        data, text = bytes(data), None
    else:
        raise ProofFormatError(f"{what}: expected JSON text (bytes or str), got {type(data).__name__}")
    scan = scan_json(data)
    if scan.depth > MAX_JSON_DEPTH:
        raise ProofFormatError(f"{what}: not JSON within limits: nested {scan.depth} deep, above MAX_JSON_DEPTH "
                               f"{MAX_JSON_DEPTH}")
    budget = MAX_TREE_FACTOR * max(len(data), SMALL_TEXT) - scan.tree_bytes(len(data))
    if budget < 0:
        raise ProofFormatError(f"{what}: not JSON within limits: its {scan.arrays} array(s), {scan.objects} "
                               f"object(s), {scan.keys} key(s) and {scan.strings} string(s) in {len(data)} bytes "
                               f"would take more than MAX_TREE_FACTOR {MAX_TREE_FACTOR} times its size in memory")
    if text is None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProofFormatError(f"{what}: not JSON: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    del data
    limits = _Limits(budget)
    try:
        return json.loads(text, parse_constant=limits.constant, parse_int=limits.integer, parse_float=limits.real,
                          object_pairs_hook=limits.unique_keys)
    except ProofFormatError as exc:
        raise ProofFormatError(f"{what}: not JSON within limits: {exc}") from None
    except json.JSONDecodeError as exc:
        reason = exc.msg.removesuffix(" at")  # "Unterminated string starting at"
        raise ProofFormatError(f"{what}: not JSON: {reason[:1].lower()}{reason[1:]} (line {exc.lineno}, column "
                               f"{exc.colno})") from None
    except RecursionError:  # not reached after the depth scan; kept so that no internal text leaks
        raise ProofFormatError(f"{what}: not JSON within limits: nested too deeply") from None
    except (ValueError, UnicodeError):  # e.g. lone surrogates in a str
        raise ProofFormatError(f"{what}: not JSON: not valid Unicode text") from None
