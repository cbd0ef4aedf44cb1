"""Encoding launches into one WebGPU submission, shared by the batches that record as they go (``_WgpuBatch``)
and the recorded ones replayed whole (``RecordedBatch``): an encoded step is a ``DispatchStep`` (pipeline, bind
group, grid, label) or a ``CopyStep``; ``encode`` puts consecutive dispatches in one compute pass (one pass per
dispatch, with timestamps, while the runtime profiles) and submits; ``command_buffer`` only encodes (a
``RecordedBatch`` can be ``prime``d: encoded ahead, sent as is by its next submission). Outside profiling a pass's dispatches are
the implementation's C calls made directly (``device.NativePass``: wgpu-py's wrappers capture errors around each
call, about 1,000 of them a replayed hiding proof); passes, copies, the encoder and the submission go through
wgpu-py, which reports what the direct calls got wrong when the pass ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..base import PARAMS_WORDS, binding_range, grid_for
from ..program import Copy

PARAMS_SLOT_BYTES = 4 * PARAMS_WORDS  # per-dispatch params slot; a multiple of every uniform offset alignment


@dataclass(frozen=True)
class CopyStep:
    """An encoded copy: native buffer handles and byte offsets."""

    src: Any
    src_offset: int
    dst: Any
    dst_offset: int
    nbytes: int


@dataclass(frozen=True)
class DispatchStep:
    """An encoded dispatch: the pipeline, its bind group (params included), the (x, y) grid, the label and the
    instances (the grid's z)."""

    pipeline: Any
    bind_group: Any
    gx: int
    gy: int
    label: str
    gz: int = 1


@dataclass(frozen=True)
class PendingDispatch:
    """A dispatch before encoding: the kernel (possibly still compiling), its bindings as (buffer, offset,
    bytes) ranges, its row in a params table (None: no params) and its (x, y) grid; an instanced one's
    instances and the row of its strides."""

    kernel: Any
    bindings: tuple
    params_slot: int | None
    grid: tuple[int, int]
    instances: int = 1
    strides_slot: int | None = None


def encode(rt, steps: list) -> None:
    """Encode ``steps`` (``DispatchStep`` / ``CopyStep``) into one command buffer and submit it."""
    submit_encoded(rt, command_buffer(rt, steps))


def submit_encoded(rt, buffer) -> None:
    """Submit a finished command buffer (``command_buffer``'s)."""
    rt.device.queue.submit([buffer])


def command_buffer(rt, steps: list):
    """``steps`` (``DispatchStep`` / ``CopyStep``) encoded into one finished command buffer, not submitted. A
    pipeline is set once for a run of dispatches that share it. Host writes made between this and its submission
    still reach the device before it (the queue orders them by submission, not by encoding)."""
    encoder = rt.device.create_command_encoder()
    timing = rt.profiler.start(sum(isinstance(s, DispatchStep) for s in steps)) if rt.profiler else None
    native = rt.native_calls if timing is None else None
    cpass = None
    current = None
    for step in steps:
        if isinstance(step, CopyStep):
            if cpass is not None:
                cpass.end()
                cpass = None
            encoder.copy_buffer_to_buffer(step.src, step.src_offset, step.dst, step.dst_offset, step.nbytes)
            continue
        if timing is not None:  # one pass per dispatch, so each kernel gets its own begin/end timestamps
            if cpass is not None:
                cpass.end()
            cpass = encoder.begin_compute_pass(timestamp_writes=timing.writes(step.label))
            current = None
        elif cpass is None:
            cpass = encoder.begin_compute_pass()
            current = None
            handle = native.handle(cpass) if native is not None else None
        if native is not None:  # the C calls themselves (module doc)
            if step.pipeline is not current:
                native.set_pipeline(handle, native.handle(step.pipeline))
                current = step.pipeline
            native.set_bind_group(handle, 0, native.handle(step.bind_group), 0, native.null)
            native.dispatch(handle, step.gx, step.gy, step.gz)
            continue
        if step.pipeline is not current:
            cpass.set_pipeline(step.pipeline)
            current = step.pipeline
        cpass.set_bind_group(0, step.bind_group)
        cpass.dispatch_workgroups(step.gx, step.gy, step.gz)
    if cpass is not None:
        cpass.end()
    if timing is not None:
        timing.resolve(encoder)
    return encoder.finish()


class RecordedBatch:
    """A program's launches (``Runtime.recorded_batch``: ``runtime.program`` ``Dispatch`` / ``Copy``), submitted
    as often as asked: its params live in a uniform buffer of its own, written once; its pipelines and bind
    groups are resolved at the first submission (a pipeline may still be compiling when the recording ends) and
    kept."""

    def __init__(self, rt, launches: list):
        self.rt = rt
        dispatches = [launch for launch in launches if not isinstance(launch, Copy)]
        rows = sum((launch.params is not None) + (launch.strides is not None) for launch in dispatches)
        table = np.zeros((max(1, rows), PARAMS_WORDS), np.uint32)
        self.ops: list = []
        slot = 0
        for launch in launches:
            if isinstance(launch, Copy):
                self.ops.append(CopyStep(launch.src.handle, launch.src_offset, launch.dst.handle, launch.dst_offset,
                                         launch.nbytes))
                continue
            at = strides_at = None
            if launch.params is not None:
                table[slot, :launch.params.size] = launch.params
                at, slot = slot, slot + 1
            if launch.strides is not None:
                table[slot, :launch.strides.size] = launch.strides
                strides_at, slot = slot, slot + 1
            self.ops.append(PendingDispatch(launch.kernel, tuple(binding_range(b) for b in launch.bindings), at,
                                            grid_for(launch.groups, rt.max_groups_per_dim), launch.instances,
                                            strides_at))
        usage = rt.wgpu.BufferUsage
        self.params = rt.device.create_buffer(size=table.nbytes, usage=usage.UNIFORM | usage.COPY_DST)
        rt.device.queue.write_buffer(self.params, 0, table)
        self.steps: list | None = None
        self.primed = None  # a command buffer encoded ahead (``prime``), sent by the next ``submit``

    def _resolve(self) -> list:
        steps = []
        for op in self.ops:
            if isinstance(op, CopyStep):
                steps.append(op)
                continue
            pipeline, layout, label = op.kernel.resolve()
            params_at = None if op.params_slot is None else (self.params, op.params_slot * PARAMS_SLOT_BYTES)
            strides_at = None if op.strides_slot is None else (self.params, op.strides_slot * PARAMS_SLOT_BYTES)
            gx, gy = op.grid
            steps.append(DispatchStep(pipeline, self.rt.new_bind_group(layout, op.bindings, params_at, strides_at),
                                      gx, gy, label, op.instances))
        return steps

    def prime(self) -> None:
        """Encode the next submission now, so that ``submit`` only sends it: host work moved off a proof's
        critical path (done while the device runs something before it). Not while the runtime profiles (a
        profiled submission is encoded with its timestamps when sent)."""
        if self.primed is None and self.rt.profiler is None:
            if self.steps is None:
                self.steps = self._resolve()
            self.primed = command_buffer(self.rt, self.steps)

    def submit(self) -> None:
        primed, self.primed = self.primed, None
        if primed is not None and self.rt.profiler is None:
            submit_encoded(self.rt, primed)
            return
        if self.steps is None:
            self.steps = self._resolve()
        encode(self.rt, self.steps)

    def close(self) -> None:
        """Free the params buffer and drop the bind groups (the recording is not submitted again)."""
        self.steps = None
        self.primed = None
        if self.params is not None:
            self.params.destroy()
            self.params = None
