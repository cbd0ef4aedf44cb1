"""GPU time of one batch from pass timestamps, without the runtime's profiling mode (which puts every dispatch in
its own pass): the batch is encoded as usual, each compute pass writes begin/end timestamps, and the time runs from
the first pass's begin to the last pass's end (copies after the last pass are not counted)."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

MAX_PASSES = 64


class _TimedEncoder:
    """A command encoder whose compute passes write begin/end timestamps (one query pair per pass)."""

    def __init__(self, device, query_set):
        self._encoder = device.create_command_encoder()
        self._query_set = query_set
        self.n_passes = 0

    def begin_compute_pass(self, **kwargs):
        i = self.n_passes
        self.n_passes += 1
        return self._encoder.begin_compute_pass(timestamp_writes={
            "query_set": self._query_set, "beginning_of_pass_write_index": 2 * i,
            "end_of_pass_write_index": 2 * i + 1})

    def __getattr__(self, name):
        return getattr(self._encoder, name)


class _TimingDevice:
    """Stands in for rt.device: every encoder it makes is a _TimedEncoder on one shared query set."""

    def __init__(self, device, max_passes: int = MAX_PASSES):
        self._device = device
        self.query_set = device.create_query_set(type="timestamp", count=2 * max_passes)
        self.encoders: list[_TimedEncoder] = []

    def create_command_encoder(self, **kwargs):
        encoder = _TimedEncoder(self._device, self.query_set)
        self.encoders.append(encoder)
        return encoder

    def __getattr__(self, name):
        return getattr(self._device, name)


def one_pass_ms(rt: WgpuRuntime, record, runs: int) -> float:
    """GPU ms from the first pass's begin to the last pass's end of one batch (no profiling passes)."""
    from wgpu.backends.wgpu_native import lib  # noqa: PLC0415

    real = rt.device
    period = float(lib.wgpuQueueGetTimestampPeriod(real.queue._internal))
    usage = rt.wgpu.BufferUsage
    resolve = real.create_buffer(size=16 * MAX_PASSES, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
    times = []
    for _ in range(runs + 1):
        timing = _TimingDevice(real)
        rt.device = timing
        try:
            batch = rt.batch()
            record(batch)
            batch.submit()
        finally:
            rt.device = real
        n = timing.encoders[-1].n_passes
        encoder = real.create_command_encoder()
        encoder.resolve_query_set(timing.query_set, 0, 2 * n, resolve, 0)
        real.queue.submit([encoder.finish()])
        ticks = np.frombuffer(real.queue.read_buffer(resolve), np.uint64)[: 2 * n]
        times.append(float(ticks[-1] - ticks[0]) * period / 1e6)
    return statistics.median(times[1:])
