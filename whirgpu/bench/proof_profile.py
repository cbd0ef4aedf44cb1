"""One whole proof, kernel by kernel, read from its launch program: per-kernel GPU time from the runtime's
``kernel_times``, the work models of ``kernel_models``, and the counts (submissions, dispatches, copies, uploads)
of the program's steps (``runtime.program``).

``ProofProfiler(rt, storage)`` opens a ``GpuBackend`` on ``rt``; ``profile(point, runs)`` proves the point's
random instance through ``Prover.prove`` (``P3Prover.prove`` for a p3-whir point; canonical uint32 words, as users
call it) untimed until the backend replays the shape's recorded launches (``steady.warm_up``: kernels compiled,
buffers pooled, launches recorded), then ``runs`` times with kernel timing on, alternating with ``runs`` proofs
with it off (the wall time is taken from those: timing puts every dispatch in its own pass on wgpu). Every
profiled proof replays the same program (``GpuBackend.last_program``); its dispatches, in order, label the
kernel times (each ``Dispatch``'s kernel ``label``: "stem" or "stem.entry") and give the modelled work (their
params). Per kernel label: the median over the timed proofs of its summed launch times, its launches, and its
modelled work; the counts are the program's, with its one readback of the proof region. Runtimes that time
command buffers rather than dispatches (Metal) put each dispatch in a command buffer of its own while profiling.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict
from dataclasses import dataclass, field

from ..proving import Prover, random_canonical_instance
from ..profiles.p3_whir.api import P3Prover
from ..profiles.p3_whir.config import P3WhirConfig
from ..backends.gpu import GpuBackend
from ..kernels.calibrate import kernel_timing
from ..runtime.program import Dispatch
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
        self.backend = GpuBackend(rt, storage=storage)

    @property
    def timing(self) -> str | None:
        """How the kernels of a profiled proof are timed, in words; None when the runtime cannot time them."""
        how = kernel_timing(self.rt)
        return f"{how}, one command buffer per dispatch" if how and self.rt.name in _PER_COMMAND_BUFFER else how

    def _prove(self, prover: Prover, instance) -> float:
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
        launched = self.backend.last_program
        if launched is None:
            raise RuntimeError(f"{self.rt.name}: the proof was not recorded, so it has no launch program to profile")
        dispatches = [step for step in launched.program.launches() if isinstance(step, Dispatch)]
        per_run: list[dict[str, float]] = []
        timed_wall, wall = [], []
        for _ in range(runs):  # timed and untimed proofs alternate, so drifting load affects both alike
            totals, ms = self._timed_proof(prover, instance, dispatches)
            per_run.append(totals)
            timed_wall.append(ms)
            wall.append(self._prove(prover, instance))
        if self.backend.last_program is not launched:
            raise RuntimeError(f"{self.rt.name}: the profiled proofs did not all run the same launch program")
        counts: dict[str, int] = {}
        work: dict[str, tuple[str | None, int]] = {}
        for step in dispatches:
            label = step.kernel.label
            counts[label] = counts.get(label, 0) + 1
            w = launch_work(label, step.params)
            unit, amount = work.get(label, (None, 0))
            work[label] = (w.unit, amount + w.amount) if w else (unit, amount)
        rows = [KernelRow(label, statistics.median(r.get(label, 0.0) for r in per_run), n, *work[label])
                for label, n in counts.items()]
        rows.sort(key=lambda r: -r.ms)
        return ProofProfile(rows, sum(r.ms for r in rows), [sum(r.values()) for r in per_run],
                            statistics.median(wall), wall, statistics.median(timed_wall), _counts(launched))

    def _timed_proof(self, prover: Prover, instance, dispatches: list) -> tuple[dict[str, float], float]:
        """One proof with kernel timing on: (ms per kernel label, wall ms)."""
        rt = self.rt
        rt.set_profiling(True)
        try:
            rt.kernel_times()  # drop times recorded before (Metal records command buffers all the time)
            ms = self._prove(prover, instance)
            times = self._match(rt.kernel_times(), [step.kernel.label for step in dispatches])
        finally:
            rt.set_profiling(False)
        totals: dict[str, float] = defaultdict(float)
        for step, ns in zip(dispatches, times):
            totals[step.kernel.label] += ns / 1e6
        return totals, ms

    def _match(self, times: list[tuple[str, float]], expected: list[str]) -> list[float]:
        """The ns of each of the program's dispatches (labels ``expected``), in order. Entries that are no kernel
        (Metal's 'copy', 'write', 'read' command buffers) are dropped; the rest must be the program's dispatches,
        label for label."""
        launched = set(expected)
        kept = [(label, ns) for label, ns in times if label in launched]
        if [label for label, _ in kept] != expected:
            raise RuntimeError(f"{self.rt.name}: {len(kept)} kernel times do not match the proof's {len(expected)} "
                               f"launches label for label")
        return [ns for _, ns in kept]


def _counts(launched) -> Counts:
    """What one replayed proof sends and reads: its program's steps, and the proof region read back once."""
    counts = launched.program.counts()
    return Counts(submissions=counts.submissions, dispatches=counts.dispatches, copies=counts.copies, reads=1,
                  read_bytes=int(launched.proof_bytes), writes=counts.writes, write_bytes=counts.write_bytes)
