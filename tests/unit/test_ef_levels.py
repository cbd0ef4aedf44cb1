"""``ef_program``'s levels (``kernels/ef_program.levels``, ``footprint``, ``EfProgram.launches``' tables) on random
programs (``tests/ef_programs``), against each op's words listed entry by entry: ops of one level touch nothing
another of them writes, every dependent pair keeps its order, every op sits as early as its dependences allow,
and the tables list the levels with one ``LEVEL_END`` each."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ef_programs import exact_words, random_program
from whirgpu.kernels.ef_program import LEVEL_END, MAX_SLOTS, EfProgram, footprint, in_proof, levels

SEEDS = range(12)


def _level_of(program: EfProgram) -> list[int]:
    out = [None] * len(program.ops)
    for depth, level in enumerate(levels(program.ops)):
        for op in level:
            out[next(i for i, o in enumerate(program.ops) if o is op)] = depth
    return out


def _clash(x, y) -> bool:
    (rx, wx), (ry, wy) = exact_words(x), exact_words(y)
    return bool(wx & (ry | wy) or wy & rx)


def _covered(words: set, ranges: list) -> bool:
    return all(any(space == p and lo <= w < end for p, lo, end in ranges) for space, w in words)


@pytest.mark.parametrize("seed", SEEDS)
def test_levels_keep_every_dependence_and_nothing_else_apart(seed):
    program = random_program(seed, 160)
    ops = program.ops
    level_of = _level_of(program)
    assert None not in level_of
    for depth, level in enumerate(levels(ops)):  # program order within a level
        positions = [next(i for i, o in enumerate(ops) if o is op) for op in level]
        assert positions == sorted(positions) and all(level_of[i] == depth for i in positions)
    for j in range(len(ops)):
        for i in range(j):
            if _clash(ops[i], ops[j]):
                assert level_of[i] < level_of[j], (i, j)
    for j, op in enumerate(ops):  # as early as the (bounding) footprints allow
        if level_of[j]:
            reads, writes = footprint(op)
            assert any(level_of[i] == level_of[j] - 1 and _meets(footprint(ops[i]), (reads, writes))
                       for i in range(j))


def _meets(earlier, later) -> bool:
    (r1, w1), (r2, w2) = earlier, later
    meet = lambda x, y: any(p == q and a < d and c < b for p, a, b in x for q, c, d in y)  # noqa: E731
    return meet(r2, w1) or meet(w2, r1) or meet(w2, w1)


@pytest.mark.parametrize("seed", SEEDS)
def test_footprints_cover_every_word_an_op_touches(seed):
    for op in random_program(seed, 120).ops:
        reads, writes = exact_words(op)
        got_reads, got_writes = footprint(op)
        assert _covered(reads, got_reads) and _covered(writes, got_writes)


@pytest.mark.parametrize("seed", [0, 5])
def test_tables_list_each_launchs_levels(seed):
    """Each launch's table: its window of the program (ops in order, never split, at most MAX_SLOTS slots) level
    by level, LEVEL_END on each level's last op and nowhere else."""
    program = random_program(seed, 700)
    tables = program.launches()
    assert len(tables) > 1
    at = 0
    for table in tables:
        slots = table.reshape(-1, 4)
        assert len(slots) <= MAX_SLOTS
        window, used = [], 0
        while at < len(program.ops) and used + len(program.ops[at]) <= MAX_SLOTS:
            window.append(program.ops[at])
            used += len(program.ops[at])
            at += 1
        expected = []
        for level in levels(window):
            for k, op in enumerate(level):
                expected.append([op[0][0] | (LEVEL_END if k == len(level) - 1 else 0), *op[0][1:]])
                expected.extend(list(more) for more in op[1:])
        np.testing.assert_array_equal(slots, np.asarray(expected, np.uint64).astype(np.uint32))
    assert at == len(program.ops)


def test_independent_ops_share_a_level_and_a_chain_does_not():
    p = EfProgram()
    for i in range(20):
        p.inv(1000 + 4 * i, 16 + 4 * i)             # twenty independent inverses
    p.dot(in_proof(0), 1000, 1000, 20)              # reads them all
    p.linear(2000, in_proof(0), 16, None, 1)        # reads the dot
    p.linear(20, 64, 64, None, 1)                   # overwrites what the second inverse read: after it only
    assert [[p.ops.index(op) for op in level] for level in levels(p.ops)] == [list(range(20)), [20, 22], [21]]
