"""Extension-field arithmetic on a GPU runtime, on words of a proof's scratch and proof regions
(``ef_program``): the hiding prover's steps between its transcript ops, where their operands already are
(docs/ZK-PROTOCOL.md §15, the one-launch-program plan's first step).

Contract:
- An operand is a word offset: in the scratch buffer, or, as ``in_proof(word)`` (bit 31 set), in the proof
  buffer. An EF value is 4 consecutive Montgomery words (c0..c3); a vector is consecutive EF values.
- ``EfProgram`` collects ops in order: ``linear(dst, a, s, b, n)`` (dst[i] = s a[i] + b[i], i < n; ``b`` None:
  no b term), ``dot(dst, a, b, n)`` (dst = sum a[i] b[i]), ``inv(dst, a)`` (a^-1, 0 to 0, as ``field_np.ef_inv``),
  ``eq(dst, point, k)`` (the 2^k-entry eq table of the k-point at ``point``, its first coordinate the index's most
  significant bit, as ``ref.multilinear.eq_table``; dst must not overlap the point). Ops run in order, each seeing
  what the earlier ones wrote; dst may alias a or b element for element.
- ``record(rt, batch, scratch, proof, field)`` records the program into ``batch`` as ``launches()`` one-thread
  launches of at most ``MAX_SLOTS`` op slots each (linear and dot take two slots), on the kernels composed for
  ``field``; both buffers bound whole. ``run_reference(ops, scratch, proof, field)`` is the numpy twin, in place
  on word arrays: the tests' oracle.
"""

from __future__ import annotations

import numpy as np

from ..field import Field
from ..ref.field_np import field_ops
from ..ref.multilinear import eq_table

STEM = "ef_program"
LINEAR, DOT, INV, EQ = 1, 2, 3, 4
IN_PROOF = 0x80000000
NO_OPERAND = 0xFFFFFFFF
MAX_SLOTS = 15  # op slots a launch's params hold (4 + 4 * 15 words: the params struct's 64 words)
_SLOTS = {LINEAR: 2, DOT: 2, INV: 1, EQ: 1}


def in_proof(word: int) -> int:
    """The operand naming word ``word`` of the proof buffer."""
    if not 0 <= word < IN_PROOF:
        raise ValueError(f"word offset {word} outside [0, 2^31)")
    return word | IN_PROOF


class EfProgram:
    """The ops of one program, each a list of 4-word slots (module contract)."""

    def __init__(self):
        self.ops: list[list[tuple[int, int, int, int]]] = []

    def linear(self, dst: int, a: int, s: int, b: int | None, n: int) -> None:
        self.ops.append([(LINEAR, dst, a, NO_OPERAND if b is None else b), (int(n), s, 0, 0)])

    def dot(self, dst: int, a: int, b: int, n: int) -> None:
        self.ops.append([(DOT, dst, a, b), (int(n), 0, 0, 0)])

    def inv(self, dst: int, a: int) -> None:
        self.ops.append([(INV, dst, a, 0)])

    def eq(self, dst: int, point: int, k: int) -> None:
        self.ops.append([(EQ, dst, point, int(k))])

    def launches(self) -> list[np.ndarray]:
        """Each launch's params words: n_slots, 3 pad words, then the slots (ops never split across launches)."""
        out, current = [], []
        for op in self.ops:
            if len(current) + len(op) > MAX_SLOTS:
                out.append(current)
                current = []
            current.extend(op)
        if current:
            out.append(current)
        params = []
        for slots in out:
            words = np.zeros(4 + 4 * MAX_SLOTS, np.uint32)
            words[0] = len(slots)
            words[4:4 + 4 * len(slots)] = np.asarray(slots, np.uint64).astype(np.uint32).reshape(-1)
            params.append(words)
        return params

    def record(self, rt, batch, scratch, proof, field: Field) -> int:
        """Record the program into ``batch``; returns its launches."""
        launches = self.launches()
        kernel = rt.kernel(STEM, field=field.name) if launches else None
        for params in launches:
            batch.dispatch(kernel, [scratch, proof], params, 1)
        return len(launches)


def run_reference(ops, scratch: np.ndarray, proof: np.ndarray, field: Field) -> None:
    """``ops`` (``EfProgram.ops``) on the word arrays ``scratch`` and ``proof`` (uint32, in place)."""
    f = field_ops(field)

    def where(at: int):
        return (proof, at & ~IN_PROOF) if at & IN_PROOF else (scratch, at)

    def get(at: int, n: int) -> np.ndarray:
        words, offset = where(at)
        return words[offset:offset + 4 * n].reshape(n, 4).copy()

    def put(at: int, values: np.ndarray) -> None:
        words, offset = where(at)
        values = np.asarray(values, np.uint32).reshape(-1)
        words[offset:offset + values.size] = values

    for op in ops:
        code, dst, a, b = op[0]
        if code == LINEAR:
            n, s = op[1][0], op[1][1]
            v = f.ef_mul(get(a, n), get(s, 1)[0]) if n else np.zeros((0, 4), np.uint32)
            put(dst, f.ef_add(v, get(b, n)) if b != NO_OPERAND and n else v)
        elif code == DOT:
            n = op[1][0]
            put(dst, f.ef_sum(f.ef_mul(get(a, n), get(b, n))) if n else np.zeros(4, np.uint32))
        elif code == INV:
            put(dst, f.ef_inv(get(a, 1)[0]))
        elif code == EQ:
            put(dst, eq_table(get(a, b), field=field) if b else f.ef_from_base(f.ONE))
        else:
            raise ValueError(f"unknown ef_program op {code}")
