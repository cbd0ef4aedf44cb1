"""The binary proof format's words: ``Writer`` and ``Reader`` (little-endian u32 words, counts), and the
sumcheck and query-opening records ``serialize.to_binary`` / ``from_binary`` write and read (the layout is in
``serialize``'s docstring). A reader checks every word is a field element (< p) and that the data holds what it
asks for, and raises ``ProofFormatError`` naming the part; openings are read as one block when they are whole and
in range, part by part otherwise (which names the first problem)."""

from __future__ import annotations

import math
import struct

import numpy as np

from ...errors import ProofFormatError
from ...field import P
from ...protocol.proof import DIGEST_ELEMS, OpeningList, QueryOpening, SumcheckData


class Writer:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def words(self, array) -> None:
        self.parts.append(np.ascontiguousarray(array, dtype="<u4").tobytes())

    def count(self, n: int) -> None:
        self.parts.append(struct.pack("<I", n))

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class Reader:
    def __init__(self, data: bytes, offset: int) -> None:
        self.data = data
        self.offset = offset

    def words(self, shape: tuple[int, ...], what: str) -> np.ndarray:
        n = math.prod(shape)  # Python ints: a shape the configuration derives may not fit int64
        end = self.offset + 4 * n
        if end > len(self.data):
            raise ProofFormatError(f"truncated: {what} needs {4 * n} bytes at offset {self.offset}, "
                                   f"only {len(self.data) - self.offset} left")
        array = np.frombuffer(self.data, dtype="<u4", count=n, offset=self.offset).astype(np.uint32)
        self.offset = end
        if np.any(array >= P):
            raise ProofFormatError(f"{what}: value {int(array[array >= P][0])} is not a field element (>= p)")
        return array.reshape(shape)

    def block(self, rows: int, parts: tuple[int, ...]) -> np.ndarray | None:
        """``rows`` records of ``sum(parts)`` words each, read at once as a (rows, sum(parts)) array, or None (and
        nothing read) when they do not all fit or a word is not a field element: the caller then reads them
        part by part, which names the problem."""
        n = rows * sum(parts)
        if self.offset + 4 * n > len(self.data):
            return None
        array = np.frombuffer(self.data, dtype="<u4", count=n, offset=self.offset).astype(np.uint32)
        if n and int(array.max()) >= P:
            return None
        self.offset += 4 * n
        return array.reshape(rows, sum(parts))

    def count(self, what: str, limit: int) -> int:
        if self.offset + 4 > len(self.data):
            raise ProofFormatError(f"truncated: {what} count missing at offset {self.offset}")
        (n,) = struct.unpack_from("<I", self.data, self.offset)
        self.offset += 4
        if n > limit:
            raise ProofFormatError(f"{what}: count {n} exceeds the configuration's maximum {limit}")
        return n


def write_sumcheck(w: Writer, s: SumcheckData) -> None:
    w.words(s.evaluations)
    w.words(s.pow_witnesses)


def read_sumcheck(r: Reader, n_rounds: int, grinds: bool, what: str) -> SumcheckData:
    evaluations = r.words((n_rounds, 2, 4), f"{what} evaluations")
    witnesses = r.words((n_rounds if grinds else 0,), f"{what} PoW witnesses")
    return SumcheckData(evaluations, witnesses)


def write_queries(w: Writer, queries: list[QueryOpening]) -> None:
    w.count(len(queries))
    for q in queries:
        w.words(q.values)
        w.words(q.siblings)


def read_queries(r: Reader, count_limit: int, kind: str, width: int, depth: int, what: str) -> list[QueryOpening]:
    n = r.count(f"{what} queries", count_limit)
    shape = (width,) if kind == "base" else (width, 4)
    block = r.block(n, (math.prod(shape), depth * DIGEST_ELEMS))
    if block is not None:  # every opening present and in range: one read, each opening a view of it
        split = math.prod(shape)
        return OpeningList(kind, block[:, :split].reshape((n,) + shape),
                           block[:, split:].reshape(n, depth, DIGEST_ELEMS))
    return [  # query by query: names the first truncated or out-of-range part
        QueryOpening(kind, r.words(shape, f"{what} query {j} values"),
                     r.words((depth, DIGEST_ELEMS), f"{what} query {j} Merkle path"))
        for j in range(n)
    ]
