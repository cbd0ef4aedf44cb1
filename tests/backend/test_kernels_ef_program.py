"""``ef_program`` (extension-field ops on a proof's scratch and proof words, ``kernels/ef_program.py``) against its
numpy twin ``run_reference``, word for word, both fields, on every runtime: every op with operands in either
buffer, vectors of 0, 1 and many entries, LINEAR with and without its b term and in place, DOT of nothing, INV of
0, 1, -1 and random values, EQ tables of 0, 1 and 6 coordinates, strided and repeated (stride 0) operands,
matrix-vector products both ways round, POWERS with and without a start, SQUARES both ways round, LIFT of base
words, chains that read what an earlier op wrote, edge words (0, 1, P - 1), a long program in one launch (its op
table in scratch past the words the ops use). Every word not written keeps its value."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ef_programs import random_program
from whirgpu.field import field_by_name
from whirgpu.kernels.ef_program import MAX_SLOTS, EfProgram, in_proof, levels, run_reference
from whirgpu.ref.field_np import field_ops

FIELDS = ("babybear", "koalabear")
WORDS = 4096


def _words(rng, field) -> np.ndarray:
    words = rng.integers(0, field.P, WORDS, dtype=np.uint64).astype(np.uint32)
    ops = field_ops(field)
    words[:12] = np.array([0, 0, 0, 0, ops.ONE, 0, 0, 0, field.P - 1, field.P - 1, 0, 1], np.uint32)  # 0, 1, edge
    return words


def _run(rt, field, program: EfProgram, scratch: np.ndarray, proof: np.ndarray):
    buffers = []
    for words in (scratch, proof):
        buffer = rt.alloc(words.nbytes + 16 * max(1, sum(len(op) for op in program.ops)))  # the tables past them
        rt.write(buffer, words)
        buffers.append(buffer)
    batch = rt.batch()
    launches = program.record(rt, batch, buffers[0], buffers[1], field, WORDS)
    batch.submit()
    got = [rt.read(b)[:WORDS] for b in buffers]
    for b in buffers:
        rt.free(b)
    return got, launches


def _check(rt, field, program, seed):
    rng = np.random.default_rng(seed)
    scratch, proof = _words(rng, field), _words(rng, field)
    (got_scratch, got_proof), launches = _run(rt, field, program, scratch, proof)
    run_reference(program.ops, scratch, proof, field)
    np.testing.assert_array_equal(got_scratch, scratch)
    np.testing.assert_array_equal(got_proof, proof)
    return launches


@pytest.mark.parametrize("field_name", FIELDS)
def test_each_op_on_both_buffers(gpu_runtime, field_name):
    field = field_by_name(field_name)
    p = EfProgram()
    p.linear(1000, 16, 4, 200, 37)                           # scratch <- scratch, scratch
    p.linear(in_proof(1000), in_proof(16), 8, None, 5)       # proof <- proof, no b term
    p.linear(300, in_proof(40), in_proof(0), 300, 1)         # s = 0, b aliased with dst
    p.linear(400, 400, 4, 400, 9)                            # in place: dst = a = b
    p.linear(500, 16, 4, 16, 0)                              # nothing
    p.dot(in_proof(1200), 16, in_proof(300), 50)
    p.dot(1300, 16, 16, 0)                                   # an empty sum: 0
    p.dot(1304, in_proof(1000), 1000, 1)                     # reads the first ops' results
    for i, at in enumerate((0, 4, 8, 20, in_proof(24))):     # 0, 1, -1 (edge words), random
        p.inv(1400 + 4 * i, at)
    p.eq(1500, 1400, 0)
    p.eq(in_proof(1600), 20, 1)
    p.eq(1700, in_proof(60), 6)                              # 64 entries
    assert _check(gpu_runtime, field, p, 1) == 1


@pytest.mark.parametrize("field_name", FIELDS)
def test_an_inverse_times_its_value_is_one(gpu_runtime, field_name):
    """The kernel's INV, checked by the field rather than the twin: a * a^-1 = 1 for random a (DOT of the two)."""
    field = field_by_name(field_name)
    p = EfProgram()
    for i in range(6):
        p.inv(2000 + 4 * i, 100 + 4 * i)
        p.dot(2100 + 4 * i, 2000 + 4 * i, 100 + 4 * i, 1)
    rng = np.random.default_rng(7)
    scratch, proof = _words(rng, field), _words(rng, field)
    (got, _), _ = _run(gpu_runtime, field, p, scratch, proof)
    one = field_ops(field).ef_from_base(field_ops(field).ONE)
    for i in range(6):
        np.testing.assert_array_equal(got[2100 + 4 * i:2104 + 4 * i], one)


def test_a_long_program_takes_several_launches(gpu_runtime):
    """2-slot and 1-slot ops mixed past MAX_SLOTS (each launch's table in workgroup memory) twice over: three
    launches, ops never split, every op in order."""
    field = field_by_name("koalabear")
    p = EfProgram()
    for i in range(3 * MAX_SLOTS // 2):
        if i % 3:
            p.linear(3000, 3000, 16 + 4 * (i % 7), 64, 4)
        else:
            p.inv(3100, 3000 + 4 * (i % 4))
    slots = sum(len(op) for op in p.ops)
    assert _check(gpu_runtime, field, p, 3) == len(p.launches()) == -(-slots // MAX_SLOTS) == 3
    assert all(table.size <= 4 * MAX_SLOTS for table in p.launches())


@pytest.mark.parametrize("field_name", FIELDS)
def test_strided_and_vector_ops(gpu_runtime, field_name):
    field = field_by_name(field_name)
    p = EfProgram()
    p.linear(1000, 16, 4, 200, 7, sa=3, sb=0)                # strided a, one b repeated
    p.linear(in_proof(1100), 16, 8, None, 5, sa=0)          # one value, scaled, repeated
    p.dot(1200, 16, in_proof(400), 8, m=6, sa=1, sb=6, ja=0, jb=1)   # vector x (8 x 6) matrix
    p.dot(1300, in_proof(16), 400, 6, m=8, sa=1, sb=1, ja=6, jb=0)   # (8 x 6) matrix x vector
    p.dot(1400, 16, 200, 1, m=9, ja=1, jb=1)                 # element-wise products
    p.dot(1440, 16, 200, 0, m=2)                             # empty sums
    p.dot(1460, 16, 200, 5, m=0)                             # nothing
    p.powers(1500, 20, 12)
    p.powers(in_proof(1600), in_proof(24), 7, start=28)
    p.powers(1700, 4, 3)                                     # of 1
    p.powers(1720, 0, 3)                                     # of 0: 1, 0, 0
    p.powers(1740, 20, 0)
    p.squares(1800, 20, 9)
    p.squares(1900, in_proof(20), 9, reverse=True)
    p.squares(1960, 20, 1)
    p.powers(2300, 16, 5, m=4, sx=2)                         # each of 4 strided points
    p.powers(in_proof(2400), in_proof(16), 3, start=20, m=3, sx=0)
    p.squares(2500, 16, 4, m=3, sx=1)
    p.squares(2600, in_proof(16), 5, reverse=True, m=2, sx=3)
    p.lift(2000, 33, 10, sa=3)
    p.lift(in_proof(2100), in_proof(7), 4)
    p.dot(2200, 1500, 2000, 10)                              # reads what the ops above wrote
    assert _check(gpu_runtime, field, p, 11) == 1


@pytest.mark.parametrize("field_name", FIELDS)
def test_powers_and_squares_agree(gpu_runtime, field_name):
    """Checked by the field rather than the twin: x^(2^i) from SQUARES is entry 2^i of POWERS."""
    field = field_by_name(field_name)
    p = EfProgram()
    p.powers(2000, 100, 17)
    p.squares(2100, 100, 5)
    rng = np.random.default_rng(5)
    scratch, proof = _words(rng, field), _words(rng, field)
    (got, _), _ = _run(gpu_runtime, field, p, scratch, proof)
    powers = got[2000:2000 + 4 * 17].reshape(17, 4)
    squares = got[2100:2100 + 4 * 5].reshape(5, 4)
    for i in range(5):
        np.testing.assert_array_equal(squares[i], powers[1 << i])


@pytest.mark.parametrize("field_name", FIELDS)
def test_runs_of_one_output_ops_meet_wide_ops(gpu_runtime, field_name):
    """Runs of one-output ops (made back to back by one thread) between ops whose outputs every thread makes: a
    run reading what a wide op's other threads wrote, a wide op reading a run's last result, runs of every op kind
    chained on each other's outputs (each starting where the one before ends), and a run ending the program."""
    field = field_by_name(field_name)
    p = EfProgram()
    p.linear(1000, 16, 4, 200, 130)            # wide: 130 entries over the threads
    p.dot(2000, 1000, 1000, 130)               # one output: a sum over every thread's entries
    p.inv(2004, 2000)
    p.linear(2008, 2004, 2000, 2004, 1)        # a chain on one thread, each op on the one before
    p.powers(2012, 2008, 1, start=2004)
    p.squares(2016, 2012, 1)
    p.lift(2020, 2017, 1)
    p.eq(2024, 2020, 0)
    p.dot(2028, 2024, 2020, 3, sa=0)
    p.linear(3000, 1000, 2028, 16, 100)         # wide, reading the run's last result as its scale
    p.dot(3400, 3000, 2028, 100, sb=0)          # one output again
    p.linear(in_proof(3500), 3400, 3400, None, 1)
    p.eq(3600, in_proof(3500), 1)               # two outputs: wide
    p.dot(3700, 3600, 3604, 1)                  # and the program ends on a run
    p.inv(3704, 3700)
    assert _check(gpu_runtime, field, p, 7) == 1


@pytest.mark.parametrize("field_name", FIELDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_programs_run_level_by_level(gpu_runtime, field_name, seed):
    """300 random ops over a few blocks of both buffers (reads, overwrites and re-reads of what earlier ops wrote),
    in two launches of a dozen levels or so, against the numpy twin run op by op."""
    program = random_program(seed, 300)
    assert len(levels(program.ops)) > 5
    assert _check(gpu_runtime, field_by_name(field_name), program, seed) == len(program.launches()) == 2


@pytest.mark.parametrize("field_name", FIELDS)
def test_a_level_deals_its_outputs_round_the_threads(gpu_runtime, field_name):
    """One level of 200 inverses and three 120-entry LINEARs (560 outputs dealt round the workgroup's threads from
    where the op before left off, past its size twice), then ops reading all of it, each level after the one it
    reads."""
    field = field_by_name(field_name)
    p = EfProgram()
    for i in range(200):
        p.inv(1000 + 4 * i, 12 + 4 * (i % 40))
    for j in range(3):
        p.linear(1900 + 480 * j, 16, 4 * j, 200, 120)
    p.dot(in_proof(0), 1000, 1900, 200)
    p.linear(in_proof(16), 1900, in_proof(0), 200, 300)
    assert [len(level) for level in levels(p.ops)] == [203, 1, 1]
    assert _check(gpu_runtime, field, p, 11) == 1
