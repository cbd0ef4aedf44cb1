"""``runtime.program``: a proof's typed steps, split into submissions, re-pointed, counted and executed."""

from __future__ import annotations

import numpy as np

from whirgpu.devices.limits import StorageMode
from whirgpu.runtime.base import ReissuedBatch, RtBuffer, RtView
from whirgpu.runtime.program import (Copy, Dispatch, PreparedProgram, Program, Submit, Write, dispatch,
                                     launch_buffers)


def _buffer(nbytes=64):
    return RtBuffer(object(), nbytes, StorageMode.PRIVATE)


class _Batch:
    def __init__(self, log):
        self.log = log

    def dispatch(self, kernel, buffers, params, n_groups):
        self.log.append(("dispatch", kernel, list(buffers), None if params is None else list(params), n_groups))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.log.append(("copy", src, src_offset, dst, dst_offset, nbytes))

    def submit(self):
        self.log.append(("submit",))


class _Runtime:
    def __init__(self):
        self.log = []

    def batch(self):
        return _Batch(self.log)

    def recorded_batch(self, launches):
        return ReissuedBatch(self, launches)


def _program():
    a, b, region = _buffer(), _buffer(), _buffer()
    steps = [Write(region, 0, np.arange(4, dtype=np.uint32)), Write(a, 16, None, ("table", 0, 8)),
             dispatch("k1", [a, RtView(b, 0, 32)], [1, 2], 3), Copy(a, 0, b, 32, 16), Submit(), Submit(),
             Write(region, 4, None, ("points",), 48), dispatch("k2", [region], None, 1), Submit()]
    return Program(steps), (a, b, region)


def test_segments_split_at_each_submission_and_skip_empty_ones():
    program, (a, b, region) = _program()
    segments = program.segments()
    assert [(len(w), len(l)) for w, l in segments] == [(2, 2), (1, 1)]
    assert [id(x) for x in program.buffers()] == [id(region), id(a), id(b)]
    counts = program.counts()
    assert (counts.submissions, counts.dispatches, counts.copies, counts.copied_bytes, counts.writes,
            counts.write_bytes) == (2, 2, 1, 16, 3, 16 + 32 + 48)


def test_repointed_replaces_buffers_and_views_and_keeps_the_rest():
    program, (a, b, region) = _program()
    fresh = _buffer()
    moved = program.repointed({id(b): fresh})
    first = moved.launches()[0]
    assert isinstance(first, Dispatch) and first.bindings[0] is a and first.bindings[1].buffer is fresh
    assert first.bindings[1].offset == 0 and first.bindings[1].nbytes == 32
    assert moved.launches()[1].dst is fresh and moved.launches()[1].src is a
    assert [id(x) for x in launch_buffers(program.launches()[1])] == [id(a), id(b)]  # the original is unchanged


def test_prepared_program_runs_writes_before_each_submissions_launches():
    program, (a, b, region) = _program()
    rt = _Runtime()
    written = []
    prepared = PreparedProgram(rt, program, write=lambda buffer, words, offset: rt.log.append(("write", offset)))
    for _ in range(2):  # executed again, the same order
        rt.log.clear()
        written.clear()
        prepared.run(lambda w: written.append((w.offset, w.source)) or np.zeros(1, np.uint32))
        assert [entry[0] for entry in rt.log] == ["write", "write", "dispatch", "copy", "submit", "write",
                                                   "dispatch", "submit"]
        assert rt.log[2][3] == [1, 2] and rt.log[2][4] == 3
        assert written == [(0, None), (16, ("table", 0, 8)), (4, ("points",))]
    prepared.close()
    assert prepared.parts == []
