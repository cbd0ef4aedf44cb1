"""Encoding launches into one WebGPU submission, shared by the batches that record as they go (``_WgpuBatch``)
and the recorded ones replayed whole (``RecordedBatch``): a step is a dispatch (pipeline, bind group, grid,
label) or a copy; ``encode`` puts consecutive dispatches in one compute pass (one pass per dispatch, with
timestamps, while the runtime profiles) and submits."""

from __future__ import annotations

import numpy as np

from ..base import PARAMS_WORDS, binding_range, grid_for

PARAMS_SLOT_BYTES = 4 * PARAMS_WORDS  # per-dispatch params slot; a multiple of every uniform offset alignment


class Copy(tuple):
    """A copy step: (src handle, src offset, dst handle, dst offset, bytes)."""


def encode(rt, steps: list) -> None:
    """Encode ``steps`` (``(pipeline, bind group, gx, gy, label)`` dispatches and ``Copy`` steps) into one command
    buffer and submit it. A pipeline is set once for a run of dispatches that share it."""
    encoder = rt.device.create_command_encoder()
    timing = rt.profiler.start(sum(not isinstance(s, Copy) for s in steps)) if rt.profiler else None
    cpass = None
    current = None
    for step in steps:
        if isinstance(step, Copy):
            if cpass is not None:
                cpass.end()
                cpass = None
            encoder.copy_buffer_to_buffer(*step)
            continue
        pipeline, bind_group, gx, gy, label = step
        if timing is not None:  # one pass per dispatch, so each kernel gets its own begin/end timestamps
            if cpass is not None:
                cpass.end()
            cpass = encoder.begin_compute_pass(timestamp_writes=timing.writes(label))
            current = None
        elif cpass is None:
            cpass = encoder.begin_compute_pass()
            current = None
        if pipeline is not current:
            cpass.set_pipeline(pipeline)
            current = pipeline
        cpass.set_bind_group(0, bind_group)
        cpass.dispatch_workgroups(gx, gy, 1)
    if cpass is not None:
        cpass.end()
    if timing is not None:
        timing.resolve(encoder)
    rt.device.queue.submit([encoder.finish()])


class RecordedBatch:
    """A recorded list of launches (``Runtime.recorded_batch``), submitted as often as asked: its params live in
    a uniform buffer of its own, written once; its pipelines and bind groups are resolved at the first submission
    (a pipeline may still be compiling when the recording ends) and kept."""

    def __init__(self, rt, calls: list[tuple]):
        self.rt = rt
        rows = [call[3] for call in calls if call[0] == "dispatch" and call[3] is not None]
        table = np.zeros((max(1, len(rows)), PARAMS_WORDS), np.uint32)
        self.ops = []
        slot = 0
        for call in calls:
            if call[0] == "copy":
                _, src, src_offset, dst, dst_offset, nbytes = call
                self.ops.append(Copy((src.handle, src_offset, dst.handle, dst_offset, nbytes)))
                continue
            _, kernel, buffers, params, n_groups = call
            at = None
            if params is not None:
                table[slot, :params.size] = params
                at, slot = slot, slot + 1
            self.ops.append((kernel, tuple(binding_range(b) for b in buffers), at,
                             grid_for(n_groups, rt.max_groups_per_dim)))
        usage = rt.wgpu.BufferUsage
        self.params = rt.device.create_buffer(size=table.nbytes, usage=usage.UNIFORM | usage.COPY_DST)
        rt.device.queue.write_buffer(self.params, 0, table)
        self.steps: list | None = None

    def _resolve(self) -> list:
        steps = []
        for op in self.ops:
            if isinstance(op, Copy):
                steps.append(op)
                continue
            kernel, bindings, at, (gx, gy) = op
            pipeline, layout, label = kernel.resolve()
            params_at = None if at is None else (self.params, at * PARAMS_SLOT_BYTES)
            steps.append((pipeline, self.rt._new_bind_group(layout, bindings, params_at), gx, gy, label))
        return steps

    def submit(self) -> None:
        if self.steps is None:
            self.steps = self._resolve()
        encode(self.rt, self.steps)

    def close(self) -> None:
        """Free the params buffer and drop the bind groups (the recording is not submitted again)."""
        self.steps = None
        if self.params is not None:
            self.params.destroy()
            self.params = None
