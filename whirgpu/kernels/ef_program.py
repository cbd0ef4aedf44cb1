"""Extension-field arithmetic on a GPU runtime, on words of a proof's scratch and proof regions
(``ef_program``): the hiding prover's steps between its transcript ops, where their operands already are
(docs/ZK-PROTOCOL.md §15, the one-launch-program plan's first step).

Contract:
- An operand is a word offset: in the scratch buffer, or, as ``in_proof(word)`` (bit 31 set), in the proof
  buffer. An EF value is 4 consecutive Montgomery words (c0..c3); a vector is consecutive EF values.
- ``EfProgram`` collects ops in order. A vector operand's entries are ``stride`` EF values apart (stride 0
  repeats one value); every output vector is contiguous.
  ``linear(dst, a, s, b, n, sa=1, sb=1)``: dst[i] = s a[i sa] + b[i sb], i < n (``b`` None: no b term; dst may
  alias a or b element for element at strides 1);
  ``dot(dst, a, b, n, m=1, sa=1, sb=1, ja=0, jb=0)``: dst[j] = sum_{i<n} a[i sa + j ja] b[i sb + j jb], j < m
  (matrix-vector products, element-wise products at n = 1; dst must not overlap a or b when m > 1);
  ``inv(dst, a)`` (a^-1, 0 to 0, as ``field_np.ef_inv``); ``eq(dst, point, k)`` (the 2^k-entry eq table of the
  k-point at ``point``, its first coordinate the index's most significant bit, as ``ref.multilinear.eq_table``;
  dst must not overlap the point); ``powers(dst, x, n, start=None, m=1, sx=1)`` (dst[j n + i] = start
  x[j sx]^i for j < m, start None: 1); ``squares(dst, x, n, reverse=False, m=1, sx=1)`` (dst[j n + i] =
  x[j sx]^(2^i), reversed: each j's n entries in reverse order); ``lift(dst, a, n, sa=1)``
  (dst[i] = the base word a[i sa] as an EF value; ``a`` and ``sa`` in words; dst must not overlap a). Ops run in
  order, each seeing what the earlier ones wrote.
- A launch runs its ops level by level (``levels``): an op's level is one past the highest level of an earlier op
  it depends on (it reads what that one writes, or writes what that one reads or writes; ``footprint``, whole
  bounding ranges), so the ops of one level touch nothing another of them writes and run together: their outputs
  dealt round the threads, one storage barrier after each level. The table lists the ops level by level (in
  program order within a level), ``LEVEL_END`` set in the code word of each level's last op.
- A launch of one workgroup runs up to ``MAX_SLOTS`` op slots (linear, powers, squares and lift take two, dot
  three, the rest one; ops never split): its table of slots, which the kernel reads from scratch at the word its
  params name into workgroup memory (``launches()``, ``params(table, at)``); no op may write a table.
  ``record(rt, batch, scratch, proof, field, table_at)`` writes the tables from ``table_at`` on and records the
  launches, on the kernels composed for ``field``; both buffers bound whole. ``run_reference(ops, scratch, proof, field)`` is the numpy twin, in place
  on word arrays: the tests' oracle.
"""

from __future__ import annotations

import numpy as np

from ..field import Field
from ..ref.field_np import field_ops
from ..ref.multilinear import eq_table

STEM = "ef_program"
MAX_SLOTS = 512  # op slots a launch's table holds (the kernels' workgroup array: 8 KiB)
LINEAR, DOT, INV, EQ, POWERS, SQUARES, LIFT = 1, 2, 3, 4, 5, 6, 7
LEVEL_END = 0x100  # in an op's code word: the last op of its level (a storage barrier follows it)
IN_PROOF = 0x80000000
NO_OPERAND = 0xFFFFFFFF
_SLOTS = {LINEAR: 2, DOT: 3, INV: 1, EQ: 1, POWERS: 2, SQUARES: 2, LIFT: 2}


def _span(at: int, words: int) -> list[tuple[bool, int, int]]:
    """The words [at, at + words) of ``at``'s buffer as (in proof, first, end); none when empty."""
    return [(bool(at & IN_PROOF), at & ~IN_PROOF, (at & ~IN_PROOF) + words)] if words > 0 else []


def footprint(op) -> tuple[list, list]:
    """(read ranges, written ranges) of an op (``EfProgram.ops``' entry), each (in proof, first word, end): every
    word it may read or write lies in one of them (bounding ranges of strided operands)."""
    code, dst, a, b = op[0]
    if code == LINEAR:
        n, s, sa, sb = op[1]
        reads = _span(s, 4) + _span(a, 4 * (sa * (n - 1) + 1) if n else 0)
        if b != NO_OPERAND:
            reads += _span(b, 4 * (sb * (n - 1) + 1) if n else 0)
        return reads, _span(dst, 4 * n)
    if code == DOT:
        (n, m, sa, sb), (ja, jb, _, _) = op[1], op[2]
        if not m:
            return [], []
        return (_span(a, 4 * ((n - 1) * sa + (m - 1) * ja + 1) if n else 0)
                + _span(b, 4 * ((n - 1) * sb + (m - 1) * jb + 1) if n else 0)), _span(dst, 4 * m)
    if code == INV:
        return _span(a, 4), _span(dst, 4)
    if code == EQ:
        return _span(a, 4 * b), _span(dst, 4 << b)
    if code == POWERS:
        n, m, sx = op[1][0], max(op[1][1], 1), op[1][2]
        return _span(a, 4 * ((m - 1) * sx + 1)) + (_span(b, 4) if b != NO_OPERAND else []), _span(dst, 4 * n * m)
    if code == SQUARES:
        n, m, sx = op[1][0], max(op[1][2], 1), op[1][3]
        return _span(a, 4 * ((m - 1) * sx + 1)), _span(dst, 4 * n * m)
    if code == LIFT:
        n, sa = op[1][0], op[1][1]
        return _span(a, sa * (n - 1) + 1 if n else 0), _span(dst, 4 * n)
    raise ValueError(f"unknown ef_program op {code}")


def _meet(x: list, y: list) -> bool:
    return any(p == q and lo < end2 and lo2 < end for p, lo, end in x for q, lo2, end2 in y)


def levels(ops: list) -> list[list]:
    """``ops`` as levels (module contract): each level's ops in program order, none of them touching what another
    of its level writes, each after every earlier op it depends on."""
    placed: list[tuple[list, list, int]] = []
    out: list[list] = []
    for op in ops:
        reads, writes = footprint(op)
        level = 0
        for reads2, writes2, level2 in placed:
            if level2 >= level and (_meet(reads, writes2) or _meet(writes, reads2) or _meet(writes, writes2)):
                level = level2 + 1
        placed.append((reads, writes, level))
        if level == len(out):
            out.append([])
        out[level].append(op)
    return out


def in_proof(word: int) -> int:
    """The operand naming word ``word`` of the proof buffer."""
    if not 0 <= word < IN_PROOF:
        raise ValueError(f"word offset {word} outside [0, 2^31)")
    return word | IN_PROOF


class EfProgram:
    """The ops of one program, each a list of 4-word slots (module contract)."""

    def __init__(self):
        self.ops: list[list[tuple[int, int, int, int]]] = []

    def linear(self, dst: int, a: int, s: int, b: int | None, n: int, sa: int = 1, sb: int = 1) -> None:
        self.ops.append([(LINEAR, dst, a, NO_OPERAND if b is None else b), (int(n), s, int(sa), int(sb))])

    def dot(self, dst: int, a: int, b: int, n: int, m: int = 1, sa: int = 1, sb: int = 1, ja: int = 0,
            jb: int = 0) -> None:
        self.ops.append([(DOT, dst, a, b), (int(n), int(m), int(sa), int(sb)), (int(ja), int(jb), 0, 0)])

    def inv(self, dst: int, a: int) -> None:
        self.ops.append([(INV, dst, a, 0)])

    def eq(self, dst: int, point: int, k: int) -> None:
        self.ops.append([(EQ, dst, point, int(k))])

    def powers(self, dst: int, x: int, n: int, start: int | None = None, m: int = 1, sx: int = 1) -> None:
        self.ops.append([(POWERS, dst, x, NO_OPERAND if start is None else start), (int(n), int(m), int(sx), 0)])

    def squares(self, dst: int, x: int, n: int, reverse: bool = False, m: int = 1, sx: int = 1) -> None:
        self.ops.append([(SQUARES, dst, x, 0), (int(n), int(bool(reverse)), int(m), int(sx))])

    def lift(self, dst: int, a: int, n: int, sa: int = 1) -> None:
        self.ops.append([(LIFT, dst, a, 0), (int(n), int(sa), 0, 0)])

    def launches(self) -> list[np.ndarray]:
        """Each launch's table: the program's ops in order split into launches of at most ``MAX_SLOTS`` slots
        (never an op), each launch's ops listed level by level (``levels``, ``LEVEL_END``), 4 words a slot."""
        windows, current, used = [], [], 0
        for op in self.ops:
            if used + len(op) > MAX_SLOTS:
                windows.append(current)
                current, used = [], 0
            current.append(op)
            used += len(op)
        if current:
            windows.append(current)
        tables = []
        for window in windows:
            slots = []
            for level in levels(window):
                for i, op in enumerate(level):
                    head = op[0]
                    slots.append((head[0] | (LEVEL_END if i == len(level) - 1 else 0),) + tuple(head[1:]))
                    slots.extend(op[1:])
            tables.append(np.asarray(slots, np.uint64).astype(np.uint32).reshape(-1))
        return tables

    @staticmethod
    def params(table: np.ndarray, table_at: int) -> np.ndarray:
        """A launch's params head: its slot count, the scratch word where its ``table`` lies, the proof window of
        its transcript epilogue (0; set by a transcript tail) and a pad. The epilogue's fields follow (zeros: none)."""
        return np.array([table.size // 4, table_at, 0, 0], np.uint32)

    def record(self, rt, batch, scratch, proof, field: Field, table_at: int) -> int:
        """Write the launches' tables to ``scratch`` from word ``table_at`` on, one after another, and record the
        launches into ``batch``, running no transcript program; returns how many."""
        launches = self.launches()
        for table in launches:
            rt.write(scratch, table, 4 * table_at)
            batch.dispatch(rt.kernel(STEM, field=field.name), [scratch, proof] + no_transcript(rt, field),
                           self.params(table, table_at), 1)
            table_at += table.size
        return len(launches)


def no_transcript(rt, field: Field) -> list:
    """The points and round-constant bindings of a launch that runs no transcript program: nothing reads them."""
    from .merkle import round_constants, tail_placeholder  # noqa: PLC0415 - merkle's tables, made on first use

    return [tail_placeholder(rt)[2], round_constants(rt, field.name)]


def run_reference(ops, scratch: np.ndarray, proof: np.ndarray, field: Field) -> None:
    """``ops`` (``EfProgram.ops``) on the word arrays ``scratch`` and ``proof`` (uint32, in place)."""
    f = field_ops(field)

    def where(at: int):
        return (proof, at & ~IN_PROOF) if at & IN_PROOF else (scratch, at)

    def get(at: int, n: int, stride: int = 1) -> np.ndarray:
        words, offset = where(at)
        if n == 0:
            return np.zeros((0, 4), np.uint32)
        rows = offset + 4 * stride * np.arange(n)[:, None] + np.arange(4)[None]
        return words[rows].copy()

    def put(at: int, values: np.ndarray) -> None:
        words, offset = where(at)
        values = np.asarray(values, np.uint32).reshape(-1)
        words[offset:offset + values.size] = values

    zero = np.zeros(4, np.uint32)
    one = f.ef_from_base(f.ONE)
    for op in ops:
        code, dst, a, b = op[0]
        if code == LINEAR:
            n, s, sa, sb = op[1]
            v = f.ef_mul(get(a, n, sa), get(s, 1)[0]) if n else np.zeros((0, 4), np.uint32)
            put(dst, f.ef_add(v, get(b, n, sb)) if b != NO_OPERAND and n else v)
        elif code == DOT:
            (n, m, sa, sb), (ja, jb, _, _) = op[1], op[2]
            out = [f.ef_sum(f.ef_mul(get(a + 4 * j * ja, n, sa), get(b + 4 * j * jb, n, sb))) if n else zero
                   for j in range(m)]
            if m:
                put(dst, np.stack(out))
        elif code == INV:
            put(dst, f.ef_inv(get(a, 1)[0]))
        elif code == EQ:
            put(dst, eq_table(get(a, b), field=field) if b else one)
        elif code == POWERS:
            n, m, sx = op[1][0], max(op[1][1], 1), op[1][2]
            start = one if b == NO_OPERAND else get(b, 1)[0]
            if n:
                put(dst, np.concatenate([f.ef_mul(f.ef_powers(get(a + 4 * j * sx, 1)[0], n), start)
                                         for j in range(m)]))
        elif code == SQUARES:
            n, reverse, m, sx = op[1][0], op[1][1], max(op[1][2], 1), op[1][3]
            rows = []
            for j in range(m):
                values, x = [], get(a + 4 * j * sx, 1)[0]
                for _ in range(n):
                    values.append(x)
                    x = f.ef_mul(x, x)
                rows.extend(values[::-1] if reverse else values)
            if n:
                put(dst, np.stack(rows))
        elif code == LIFT:
            n, sa = op[1][0], op[1][1]
            words, offset = where(a)
            base = words[offset + sa * np.arange(n)].copy()
            if n:
                put(dst, f.ef_from_base(base))
        else:
            raise ValueError(f"unknown ef_program op {code}")
