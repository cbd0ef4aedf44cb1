"""``ef_program`` (extension-field ops on a proof's scratch and proof words, ``kernels/ef_program.py``) against its
numpy twin ``run_reference``, word for word, both fields, on every runtime: every op with operands in either
buffer, vectors of 0, 1 and many entries, LINEAR with and without its b term and in place, DOT of nothing, INV of
0, 1, -1 and random values, EQ tables of 0, 1 and 6 coordinates, chains that read what an earlier op wrote, edge
words (0, 1, P - 1) and programs longer than one launch. Every word not written keeps its value."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.field import field_by_name
from whirgpu.kernels.ef_program import MAX_SLOTS, EfProgram, in_proof, run_reference
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
        buffer = rt.alloc(words.nbytes)
        rt.write(buffer, words)
        buffers.append(buffer)
    batch = rt.batch()
    launches = program.record(rt, batch, buffers[0], buffers[1], field)
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
    assert _check(gpu_runtime, field, p, 1) >= 2


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
    """Ops are never split across launches: 2-slot and 1-slot ops mixed past MAX_SLOTS several times over."""
    field = field_by_name("koalabear")
    p = EfProgram()
    for i in range(3 * MAX_SLOTS):
        if i % 3:
            p.linear(3000, 3000, 16 + 4 * (i % 7), 64, 4)
        else:
            p.inv(3100, 3000 + 4 * (i % 4))
    launches = _check(gpu_runtime, field, p, 3)
    slots = sum(len(op) for op in p.ops)
    assert launches == len(p.launches()) >= -(-slots // MAX_SLOTS) > 1
