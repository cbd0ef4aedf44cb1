"""Random ``EfProgram``s for the tests of its levels (``tests/unit/test_ef_levels.py``) and kernels
(``tests/backend/test_kernels_ef_program.py``): ops over a few blocks of scratch and proof words, so that later
ops read, overwrite and re-read what earlier ones wrote (every kind of dependence), each op within its own
contract (its output never overlapping its own inputs); and ``exact_words``, the words an op reads and writes,
listed entry by entry from the ops' definitions (not from ``footprint``'s bounding ranges)."""

from __future__ import annotations

import numpy as np

from whirgpu.kernels.ef_program import (DOT, EQ, INV, LIFT, LINEAR, NO_OPERAND, POWERS, SQUARES, EfProgram,
                                        in_proof)

BLOCK = 256  # words a block: 64 EF values
BLOCKS = 12  # per buffer: the ops use words [0, BLOCKS * BLOCK) of scratch and of proof


def _at(rng, used: int = 0) -> int:
    """A random operand: a block of either buffer, at a random EF offset that leaves ``used`` words in it."""
    word = int(rng.integers(BLOCKS)) * BLOCK + 4 * int(rng.integers(0, (BLOCK - used) // 4 + 1))
    return in_proof(word) if rng.integers(2) else word


def _entries(at: int, n: int, stride: int, width: int = 4) -> set:
    space = bool(at & 0x80000000)
    base = at & 0x7FFFFFFF
    return {(space, base + width * stride * i + w) for i in range(n) for w in range(width if width == 4 else 1)}


def exact_words(op) -> tuple[set, set]:
    """(words read, words written) by ``op``, each (in proof, word)."""
    code, dst, a, b = op[0]
    if code == LINEAR:
        n, s, sa, sb = op[1]
        reads = _entries(s, 1, 0) | _entries(a, n, sa) | (_entries(b, n, sb) if b != NO_OPERAND else set())
        return reads, _entries(dst, n, 1)
    if code == DOT:
        (n, m, sa, sb), (ja, jb, _, _) = op[1], op[2]
        reads = set()
        for j in range(m):
            reads |= _entries(a + 4 * j * ja, n, sa) | _entries(b + 4 * j * jb, n, sb)
        return reads, _entries(dst, m, 1)
    if code == INV:
        return _entries(a, 1, 0), _entries(dst, 1, 0)
    if code == EQ:
        return _entries(a, b, 1), _entries(dst, 1 << b, 1)
    if code in (POWERS, SQUARES):
        n, m, sx = (op[1][0], max(op[1][1], 1), op[1][2]) if code == POWERS else (op[1][0], max(op[1][2], 1),
                                                                                 op[1][3])
        reads = set()
        for j in range(m):
            reads |= _entries(a + 4 * j * sx, 1, 0)
        if code == POWERS and b != NO_OPERAND:
            reads |= _entries(b, 1, 0)
        return reads, _entries(dst, n * m, 1)
    if code == LIFT:
        n, sa = op[1][0], op[1][1]
        return {(bool(a & 0x80000000), (a & 0x7FFFFFFF) + sa * i) for i in range(n)}, _entries(dst, n, 1)
    raise ValueError(code)


def random_program(seed: int, ops: int) -> EfProgram:
    """``ops`` random ops (module docstring), each kind with several sizes, strides and repeats (stride 0)."""
    rng = np.random.default_rng(seed)
    program = EfProgram()
    while len(program.ops) < ops:
        kind = int(rng.integers(7))
        n = int(rng.choice([0, 1, 2, 5, 16, 40, 64]))
        if kind == 0:
            sa, sb = int(rng.choice([0, 1])), int(rng.choice([0, 1]))
            program.linear(_at(rng, 4 * n), _at(rng, 4 * max(1, n)), _at(rng, 4),
                           None if rng.integers(3) == 0 else _at(rng, 4 * max(1, n)), n, sa, sb)
        elif kind == 1:
            m = int(rng.choice([1, 2, 3, 8]))
            k = max(1, min(n, 64 // m))
            program.dot(_at(rng, 4 * m), _at(rng, 4 * k * m), _at(rng, 4 * k), k, m, 1, 1, k, 0)
        elif kind == 2:
            program.inv(_at(rng, 4), _at(rng, 4))
        elif kind == 3:
            k = int(rng.integers(0, 5))
            program.eq(_at(rng, 4 << k), _at(rng, 4 * k), k)
        elif kind == 4:
            m, count = int(rng.choice([1, 2])), max(1, min(n, 8))
            program.powers(_at(rng, 4 * count * m), _at(rng, 8), count, None if rng.integers(2) else _at(rng, 4),
                           m, 1)
        elif kind == 5:
            program.squares(_at(rng, 4 * 8), _at(rng, 4), int(rng.integers(1, 9)), bool(rng.integers(2)))
        else:
            program.lift(_at(rng, 4 * n), _at(rng, n), n, 1)
        reads, writes = exact_words(program.ops[-1])
        if reads & writes:  # outside the op's contract: draw another
            program.ops.pop()
    return program
