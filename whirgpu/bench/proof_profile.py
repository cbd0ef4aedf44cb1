"""One whole proof, kernel by kernel: per-kernel GPU time from the runtime's ``kernel_times``, the work models of
``kernel_models``, and the host-side counts (submissions, dispatches, readbacks, uploads) of a thin tracing layer
between the backend and its runtime.

``ProofProfiler(rt, storage)`` opens a ``GpuBackend`` on ``TracingRuntime(rt)``; ``profile(point, runs)`` proves
the point's random instance through ``Prover.prove`` (``P3Prover.prove`` for a p3-whir point; canonical uint32
words, as users call it) untimed until the backend replays the shape's recorded launches (``steady.warm_up``:
kernels compiled, buffers pooled, launches recorded), then ``runs`` times with kernel timing on, alternating
with ``runs`` proofs with it off (the wall time is taken from those: timing puts every dispatch in its own pass
on wgpu). Per kernel label: the median over the timed proofs of its summed launch times, its launches, and its
modelled work. Runtimes that time command buffers rather than dispatches (Metal)
get one command buffer per dispatch while timing.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from ..api import Prover, random_canonical_instance
from ..profiles.p3_whir.api import P3Prover
from ..profiles.p3_whir.config import P3WhirConfig
from ..backends.gpu import GpuBackend
from ..kernels.calibrate import kernel_timing
from ..runtime import program
from ..runtime.base import Runtime
from .grid import GridPoint
from .kernel_models import launch_work
from .steady import warm_up

_PER_COMMAND_BUFFER = {"metal"}  # runtimes whose kernel_times are per submission (command buffer), not per dispatch


@dataclass
class Counts:
    """Host-side operations of one proof."""

    submissions: int = 0
    dispatches: int = 0
    copies: int = 0
    reads: int = 0
    read_bytes: int = 0
    writes: int = 0
    write_bytes: int = 0


class _TracingBatch:
    """Records launches, issues them into the runtime's batch at ``submit`` (into one batch per launch when
    ``split``)."""

    def __init__(self, tracer: "TracingRuntime"):
        self._tracer = tracer
        self._launches: list = []

    def dispatch(self, kernel, buffers, params, n_groups) -> None:
        self._launches.append(program.dispatch(kernel, buffers, params, n_groups))

    def copy(self, src, src_offset, dst, dst_offset, nbytes) -> None:
        self._launches.append(program.Copy(src, src_offset, dst, dst_offset, nbytes))

    def submit(self) -> None:
        tracer, launches, self._launches = self._tracer, self._launches, []
        _trace(tracer, launches)
        batch = tracer.rt.batch()
        for i, launch in enumerate(launches):
            launch.issue(batch)
            if tracer.split and i + 1 < len(launches):
                batch.submit()
                batch = tracer.rt.batch()
        batch.submit()


def _trace(tracer: "TracingRuntime", launches: list) -> None:
    """Count one submission of ``launches`` (``runtime.program`` ``Dispatch`` / ``Copy``) and record each
    dispatch's (label, params)."""
    counts = tracer.counts
    counts.submissions += 1
    for launch in launches:
        if isinstance(launch, program.Dispatch):
            counts.dispatches += 1
            tracer.launches.append((tracer.labels[id(launch.kernel)], launch.params))
        else:
            counts.copies += 1


class _TracedRecording:
    """A replayed recording (``Runtime.recorded_batch``) counted and labelled as ``_TracingBatch`` counts its
    launches; while ``split``, they go through a tracing batch instead (one command buffer each)."""

    def __init__(self, tracer: "TracingRuntime", launches: list):
        self._tracer = tracer
        self._launches = launches
        self._inner = tracer.rt.recorded_batch(launches)

    def submit(self) -> None:
        tracer = self._tracer
        if tracer.split:
            batch = _TracingBatch(tracer)
            for launch in self._launches:
                launch.issue(batch)
            batch.submit()
            return
        _trace(tracer, self._launches)
        self._inner.submit()

    def close(self) -> None:
        self._inner.close()


class TracingRuntime:
    """A runtime as the backend sees it, forwarding everything, that counts submissions, dispatches, copies,
    readbacks and uploads (``counts``) and records each dispatch's (kernel label, params) in launch order
    (``launches``). ``split``: submit every op as its own batch (one command buffer per kernel)."""

    def __init__(self, rt: Runtime):
        self.rt = rt
        self.split = False
        self.labels: dict[int, str] = {}  # id(compiled kernel) -> label; compiled kernels are cached by the runtime
        self.reset()

    def reset(self) -> None:
        self.counts = Counts()
        self.launches: list[tuple[str, np.ndarray]] = []

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear"):
        return self._label(self.rt.kernel(stem, entry, constants, field), stem, entry)

    def kernel_async(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
                     field: str = "babybear"):
        return self._label(self.rt.kernel_async(stem, entry, constants, field), stem, entry)

    def _label(self, compiled, stem: str, entry: str | None):
        self.labels[id(compiled)] = stem if entry is None or entry == stem else f"{stem}.{entry}"
        return compiled

    def batch(self) -> _TracingBatch:
        return _TracingBatch(self)

    def read(self, buffer, nbytes=None, offset=0):
        out = self.rt.read(buffer, nbytes, offset)
        self.counts.reads += 1
        self.counts.read_bytes += out.nbytes
        return out

    def read_later(self, buffer, nbytes):
        pending = self.rt.read_later(buffer, nbytes)

        def words():
            out = pending()
            self.counts.reads += 1
            self.counts.read_bytes += out.nbytes
            return out

        return words

    def recorded_batch(self, launches):
        return _TracedRecording(self, launches)

    def write(self, buffer, data, offset=0):
        self.rt.write(buffer, data, offset)
        self.counts.writes += 1
        self.counts.write_bytes += np.asarray(data).nbytes

    def __getattr__(self, name):
        return getattr(self.rt, name)


@dataclass
class KernelRow:
    """One kernel label of a proof: median ms over the timed proofs, launches per proof, modelled work per proof
    (``unit`` None when the kernel has no model)."""

    label: str
    ms: float
    launches: int
    unit: str | None = None
    work: int = 0


@dataclass
class ProofProfile:
    """A point's proof: ``kernels`` (largest first); ``gpu_ms`` = the sum of their ms; ``wall_ms`` the median
    wall time of the untimed proofs; per-run lists for both; ``counts`` of one proof."""

    kernels: list[KernelRow]
    gpu_ms: float
    gpu_ms_runs: list[float]
    wall_ms: float
    wall_ms_runs: list[float]
    timed_wall_ms: float
    counts: Counts = field(default_factory=Counts)


class ProofProfiler:
    """Profiles proofs on one runtime (see the module docstring)."""

    def __init__(self, rt: Runtime, storage: str | None = None):
        self.rt = rt
        self.tracer = TracingRuntime(rt)
        self.backend = GpuBackend(self.tracer, storage=storage)

    @property
    def timing(self) -> str | None:
        """How the kernels of a profiled proof are timed, in words; None when the runtime cannot time them."""
        how = kernel_timing(self.rt)
        return f"{how}, one command buffer per dispatch" if how and self.rt.name in _PER_COMMAND_BUFFER else how

    def _prove(self, prover: Prover, instance) -> float:
        self.tracer.reset()
        start = time.perf_counter()
        prover.prove(*instance)
        return (time.perf_counter() - start) * 1e3

    def profile(self, point: GridPoint, runs: int) -> ProofProfile:
        if runs < 1:
            raise ValueError(f"runs must be >= 1, got {runs}")
        config = point.config()
        if isinstance(config, P3WhirConfig):  # P3Prover.prove: canonical words, one opening drawn
            prover = P3Prover(config.num_variables, config.params, config.field, backend=self.backend)
            instance = random_canonical_instance(config.num_variables, 0)[:1]
        else:
            prover = Prover(config, backend=self.backend)  # the user's path: canonical words, claims on the device
            instance = random_canonical_instance(config.num_variables, 0)
        # warm: kernels compiled, buffers pooled, and the shape's launches recorded (``steady.warm_up``), so every
        # measured proof is a replayed one, as in a long-lived process
        warm_up(self.backend, lambda i, total: self._prove(prover, instance), 0)
        per_run: list[dict[str, float]] = []
        timed_wall, wall = [], []
        for _ in range(runs):  # timed and untimed proofs alternate, so drifting load affects both alike
            totals, ms = self._timed_proof(prover, instance)
            per_run.append(totals)
            timed_wall.append(ms)
            launches = list(self.tracer.launches)
            wall.append(self._prove(prover, instance))
        counts: dict[str, int] = {}
        work: dict[str, tuple[str | None, int]] = {}
        for label, params in launches:
            counts[label] = counts.get(label, 0) + 1
            w = launch_work(label, params)
            unit, amount = work.get(label, (None, 0))
            work[label] = (w.unit, amount + w.amount) if w else (unit, amount)
        rows = [KernelRow(label, statistics.median(r.get(label, 0.0) for r in per_run), n, *work[label])
                for label, n in counts.items()]
        rows.sort(key=lambda r: -r.ms)
        return ProofProfile(rows, sum(r.ms for r in rows), [sum(r.values()) for r in per_run],
                            statistics.median(wall), wall, statistics.median(timed_wall), self.tracer.counts)

    def _timed_proof(self, prover: Prover, instance) -> tuple[dict[str, float], float]:
        """One proof with kernel timing on: (ms per kernel label, wall ms)."""
        rt = self.rt
        rt.set_profiling(True)
        self.tracer.split = rt.name in _PER_COMMAND_BUFFER
        try:
            rt.kernel_times()  # drop times recorded before (Metal records command buffers all the time)
            ms = self._prove(prover, instance)
            times = self._match(rt.kernel_times())
        finally:
            self.tracer.split = False
            rt.set_profiling(False)
        totals: dict[str, float] = defaultdict(float)
        for (label, _), ns in zip(self.tracer.launches, times):
            totals[label] += ns / 1e6
        return totals, ms

    def _match(self, times: list[tuple[str, float]]) -> list[float]:
        """The ns of each traced launch, in order. Entries that are no kernel (Metal's 'copy', 'write', 'read'
        command buffers) are dropped; the rest must be the traced launches, label for label."""
        launched = {label for label, _ in self.tracer.launches}
        kept = [(label, ns) for label, ns in times if label in launched]
        expected = [label for label, _ in self.tracer.launches]
        if [label for label, _ in kept] != expected:
            raise RuntimeError(f"{self.rt.name}: {len(kept)} kernel times do not match the proof's {len(expected)} "
                               f"launches label for label")
        return [ns for _, ns in kept]
