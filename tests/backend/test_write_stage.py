"""A recorded program's own write stage (``Runtime.write_stage``, ``PreparedProgram(stage=True)``), on wgpu-native and
Dawn: every write's words land where and when the direct writes put them (a write between two submissions is seen
by the second, not the first, though a staged run sends the program as one submission), run after run on the same stage, with constant, input and empty writes and a
trailing write-only submission; words of another size than the recording's are refused before anything is sent
and the next run is whole; a program writing more than the stage limit writes directly; closing the program (or
the runtime) frees its stage. ``upload.copy_many``, the stage's threaded copy, against plain assignment."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.devices.limits import StorageMode
from whirgpu.runtime import upload
from whirgpu.runtime.program import Copy, PreparedProgram, Program, Submit, Write
from whirgpu.runtime.wgpu_rt import stage as stage_module

from .conftest import open_runtime

RUNTIMES = [("wgpu", None), ("dawn", "emulated")]
N = 3000  # words of the input write: not a multiple of the slot alignment, so the next slot is padded


@pytest.fixture(scope="module", params=RUNTIMES, ids=[name for name, _ in RUNTIMES])
def runtime(request):
    name, mul = request.param
    return open_runtime(name, mul)


def _program(rt):
    """x -> a, a copied to b; then y over the start of a and a copied to c; a constant into d; nothing (an empty
    write) into d; then a trailing write-only submission z into e. Returns the program and (b, c, d, e)."""
    a, b, c = (rt.alloc(4 * N, StorageMode.PRIVATE) for _ in range(3))
    d, e = rt.alloc(64, StorageMode.PRIVATE), rt.alloc(64, StorageMode.PRIVATE)
    constant = np.arange(16, dtype=np.uint32) * 7 + 1
    steps = [Write(a, 0, None, ("x",), 4 * N), Copy(a, 0, b, 0, 4 * N), Submit(),
             Write(a, 8, None, ("y",), 40), Write(d, 0, constant), Write(d, 0, None, ("none",), 0),
             Copy(a, 0, c, 0, 4 * N), Submit(), Write(e, 4, None, ("z",), 12)]
    return Program(steps), (b, c, d, e), constant


def _inputs(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {"x": rng.integers(0, 1 << 32, N, dtype=np.uint32), "y": rng.integers(0, 1 << 32, 10, dtype=np.uint32),
            "z": rng.integers(0, 1 << 32, 3, dtype=np.uint32), "none": np.zeros(0, np.uint32)}


def _words(inputs):
    return lambda w: w.data if w.source is None else inputs[w.source[0]]


def _expected(inputs, constant):
    c = inputs["x"].copy()
    c[2:12] = inputs["y"]
    return inputs["x"], c, constant, inputs["z"]


def test_staged_runs_write_what_direct_writes_write(runtime):
    rt = runtime
    program, (b, c, d, e), constant = _program(rt)
    staged = PreparedProgram(rt, program, stage=True)
    try:
        assert staged.stage is not None and staged.stage in rt.stages
        assert staged.staged_writes == 4 * N + 40 + 64 + 12
        assert all(offset % stage_module.SLOT_ALIGN == 0 for offset in staged.stage.offsets)
        assert staged.stage.offsets[1] == -(-4 * N // stage_module.SLOT_ALIGN) * stage_module.SLOT_ALIGN
        assert [batch is not None for _, batch in staged.parts] == [True]  # one submission a run
        for seed in range(4):  # the same stage again and again: mapped again after each run
            inputs = _inputs(seed)
            staged.run(_words(inputs))
            rt.wait()
            want_b, want_c, want_d, want_z = _expected(inputs, constant)
            assert np.array_equal(rt.read(b), want_b)
            assert np.array_equal(rt.read(c), want_c)  # y landed after the first submission, before the second
            assert np.array_equal(rt.read(d), want_d)
            assert np.array_equal(rt.read(e, 12, 4), want_z)  # the trailing write-only submission was sent
    finally:
        staged.close()
    assert staged.stage is None and not rt.stages


def test_a_wrong_size_is_refused_before_anything_is_sent(runtime):
    rt = runtime
    program, (b, c, d, e), constant = _program(rt)
    staged = PreparedProgram(rt, program, stage=True)
    try:
        good = _inputs(10)
        staged.run(_words(good))
        rt.wait()
        bad = {**_inputs(11), "y": np.zeros(9, np.uint32)}
        with pytest.raises(ValueError, match=r"write 1 of a staged run \(\('y',\)\) has 36 bytes; the recording "
                                             r"wrote 40"):
            staged.run(_words(bad))
        rt.wait()
        assert np.array_equal(rt.read(b), good["x"])  # nothing of the refused run reached the device
        again = _inputs(12)
        staged.run(_words(again))
        rt.wait()
        assert np.array_equal(rt.read(c), _expected(again, constant)[1])
    finally:
        staged.close()


def test_a_program_over_the_stage_limit_writes_directly(runtime, monkeypatch):
    rt = runtime
    program, (b, c, d, e), constant = _program(rt)
    monkeypatch.setattr("whirgpu.runtime.wgpu_rt.buffers.STAGE_LIMIT", 4 * N)
    written = []
    direct = PreparedProgram(rt, program, write=lambda buf, words, offset: written.append(offset) or
                             rt.write(buf, words, offset), stage=True)
    try:
        assert direct.stage is None and direct.staged_writes == 0
        inputs = _inputs(20)
        direct.run(_words(inputs))
        rt.wait()
        assert written == [0, 8, 0, 0, 4]
        assert np.array_equal(rt.read(c), _expected(inputs, constant)[1])
    finally:
        direct.close()


def test_the_runtime_closes_the_stages_left_open():
    rt = open_runtime("wgpu", None)  # a runtime of its own: closed here
    program, _, _ = _program(rt)
    staged = PreparedProgram(rt, program, stage=True)
    staged.run(_words(_inputs(30)))  # its next map asked for, pending
    stage = staged.stage
    rt.close()
    assert stage.buffer is None and not rt.stages


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_copy_many_copies_every_pair(threads):
    rng = np.random.default_rng(threads)
    sizes = [0, 5, upload.MIN_SHARE_BYTES - 1, upload.MIN_SHARE_BYTES, 3 * upload.MIN_SHARE_BYTES + 17, 64]
    sources = [rng.integers(0, 256, size, dtype=np.uint8) for size in sizes]
    targets = [np.zeros(size, np.uint8) for size in sizes]
    upload.copy_many(list(zip(targets, sources)), threads)
    for got, want in zip(targets, sources):
        assert np.array_equal(got, want)
