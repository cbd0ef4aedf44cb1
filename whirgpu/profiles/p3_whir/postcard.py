"""The part of serde's postcard wire format that p3-whir proofs use: a cursor that reads it and a buffer that
writes it.

Wire rules (postcard 1.x):
    - a length (``usize``: a ``Vec``'s element count) and an enum variant index (``u32``) are unsigned LEB128
      varints: 7 bits a byte, least significant group first, the high bit set on every byte but the last; at
      most 10 bytes for a u64 and 5 for a u32;
    - an ``Option`` is one tag byte, 0 (None) or 1 (Some) followed by the value;
    - a fixed-size array or tuple (``[T; N]``) and a struct are their members in order, with nothing between;
      zero-sized members (``PhantomData``) take no bytes;
    - a Plonky3 31-bit field element (``MontyField31``) is its Montgomery word as 4 little-endian bytes.

This reader is stricter than postcard's own in one respect: a varint must be minimally encoded (no trailing
zero groups), so every value has exactly one encoding and a decoded proof re-encodes to the same bytes.
Every failure is a ``ProofFormatError`` that names what was being read and the byte offset.
"""

from __future__ import annotations

import numpy as np

from ...errors import ProofFormatError

U32_BITS = 32
U64_BITS = 64


class PostcardWriter:
    """Appends postcard encodings; ``getvalue`` returns the bytes written so far."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def varint(self, value: int) -> None:
        """An unsigned varint (a length or a variant index), minimally encoded."""
        if value < 0:
            raise ProofFormatError(f"postcard: cannot encode the negative length {value}")
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        self._parts.append(bytes(out))

    def option(self, present: bool) -> None:
        """An ``Option``'s tag byte; the caller writes the value after it when ``present``."""
        self._parts.append(b"\x01" if present else b"\x00")

    def words(self, words: np.ndarray) -> None:
        """Field elements: each uint32 Montgomery word of ``words`` (C order) as 4 little-endian bytes."""
        self._parts.append(np.ascontiguousarray(words, dtype="<u4").tobytes())

    def getvalue(self) -> bytes:
        return b"".join(self._parts)


class PostcardReader:
    """A cursor over postcard bytes. ``offset`` is the next byte to read; ``finish`` rejects trailing bytes."""

    def __init__(self, data: bytes, name: str = "postcard") -> None:
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ProofFormatError(f"{name}: expected bytes, got {type(data).__name__}")
        self.data = bytes(data)
        self.name = name
        self.offset = 0

    def _fail(self, what: str, problem: str, at: int | None = None) -> ProofFormatError:
        return ProofFormatError(f"{self.name}: {what} at byte {self.offset if at is None else at}: {problem}")

    @property
    def remaining(self) -> int:
        return len(self.data) - self.offset

    def varint(self, what: str, bits: int = U64_BITS) -> int:
        """An unsigned varint of at most ``bits`` bits (64: a ``usize``, 32: a variant index)."""
        start = self.offset
        max_bytes = -(-bits // 7)
        value = 0
        for i in range(max_bytes):
            if self.offset >= len(self.data):
                raise self._fail(what, "truncated inside a varint", start)
            byte = self.data[self.offset]
            self.offset += 1
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if i and byte == 0:
                    raise self._fail(what, "varint not minimally encoded (a trailing zero group)", start)
                if value >> bits:
                    raise self._fail(what, f"varint overflows {bits} bits", start)
                return value
        raise self._fail(what, f"varint longer than {max_bytes} bytes (overflows {bits} bits)", start)

    def length(self, what: str, min_item_bytes: int, at_most: int | None = None) -> int:
        """A ``Vec`` length whose items take at least ``min_item_bytes`` each: a length above ``at_most`` (when
        given) or one the remaining bytes cannot hold is reported here, before anything is allocated for it."""
        start = self.offset
        n = self.varint(f"{what} length")
        if at_most is not None and n > at_most:
            raise self._fail(what, f"length {n}, more than the {at_most} the configuration allows", start)
        if n * min_item_bytes > self.remaining:
            raise self._fail(what, f"length {n} needs at least {n * min_item_bytes} more bytes, only "
                                   f"{self.remaining} left (truncated or a corrupt length)", start)
        return n

    def option(self, what: str) -> bool:
        """An ``Option`` tag: True for Some (the value follows), False for None."""
        if self.offset >= len(self.data):
            raise self._fail(what, "truncated before the Option tag")
        tag = self.data[self.offset]
        if tag > 1:
            raise self._fail(what, f"Option tag {tag} (must be 0 or 1)")
        self.offset += 1
        return tag == 1

    def variant(self, what: str, names: tuple[str, ...]) -> int:
        """An enum variant index, which must name one of ``names`` (in declaration order)."""
        start = self.offset
        index = self.varint(f"{what} variant", U32_BITS)
        if index >= len(names):
            expected = " or ".join(f"{i} ({name})" for i, name in enumerate(names))
            raise self._fail(what, f"variant index {index} (expected {expected})", start)
        return index

    def words(self, count: int, what: str, prime: int | None = None) -> np.ndarray:
        """``count`` field elements as a uint32 array of Montgomery words; with ``prime``, each must be < prime."""
        need = 4 * count
        if need > self.remaining:
            raise self._fail(what, f"truncated: {count} field element(s) need {need} bytes, only {self.remaining} left")
        words = np.frombuffer(self.data, dtype="<u4", count=count, offset=self.offset).astype(np.uint32)
        if prime is not None and count:
            bad = np.flatnonzero(words >= prime)
            if bad.size:
                i = int(bad[0])
                raise self._fail(what, f"{int(words[i])} is not a field element (must be < {prime})",
                                 self.offset + 4 * i)
        self.offset += need
        return words

    def finish(self, what: str) -> None:
        """The end of the encoded value: any byte left over is an error."""
        if self.remaining:
            raise self._fail(what, f"{self.remaining} trailing byte(s) after the encoded value")
