"""Time proofs over a grid on several open backends, checking that every backend proves the same bytes.

Per point: one random instance (``random_canonical_instance(n, seed)``: a canonical uint32 table and its point,
drawn untimed); then per backend the untimed warm-up proofs (``steady.warm_up``: on a backend that replays
recorded proofs, every proof until one of this shape has been replayed, then ``warmup`` more; elsewhere
``warmup``), ``runs`` timed proofs (``Prover.prove`` wall time, or ``P3Prover.prove``'s in the p3-whir profile,
as a user calls it: the input's checks, the upload and conversion, the claims evaluated where the table is,
waiting for the device included) and, with ``phases`` on a kernel backend, one more proof with
``GpuBackend.profile`` set, whose phase times are a true breakdown (the device is waited for at every phase
boundary; ``input`` is the host's share before the backend starts; a profiled proof is never replayed). On the
cpu backend phases come from the median timed run, as nothing there is asynchronous. Finally the proofs are
compared (``check``) and the reference proof is verified once (untimed).

A row keeps the first proof's time (``first_ms``: the first proof of the shape on that backend, untimed or
timed), every untimed proof's and, on a backend that replays, whether each timed proof was replayed.

A backend that raises while proving gets its error in its row and the grid goes on. Ctrl-C stops the run: the
rows of finished (point, backend) pairs are kept and ``interrupted`` is set.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from ..proving import Prover, random_canonical_instance
from ..backends import Backend
from ..cli.options import phases_ms
from ..profiles.p3_whir.api import P3ProofDocument, P3Prover
from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.format import pcs_proof_to_postcard
from ..profiles.p3_whir.verifier import verify_p3
from ..profiles.whir_p3_metal.serialize import dump
from ..profiles.whir_p3_metal.verifier import MetalWhirVerifier
from .check import compare_proofs, record_verification
from .grid import GridPoint
from .results import BenchResults, Row
from .steady import REPLAY_WARMUPS, replayed, replays, warm_up


@dataclass(frozen=True)
class Plan:
    """What to run: points x backends (spec text -> open backend, in table order)."""

    points: list[GridPoint]
    backends: dict[str, Backend]
    runs: int
    warmup: int
    seed: int
    phases: bool

    def proofs_per_point(self, backend: Backend) -> int:
        """Warm-up and timed proofs (at most: on a backend that replays, up to ``REPLAY_WARMUPS`` warm-ups wait
        for the first replayed proof), and on a kernel backend with ``phases`` the profiled one."""
        waits = REPLAY_WARMUPS if replays(backend) else 0
        return waits + self.warmup + self.runs + (1 if self.phases and _is_kernel(backend) else 0)

    def label(self, point: GridPoint, backend: str, what: str) -> str:
        """A progress line with aligned columns: "20:4:1  wgpu:u64  run 2/3"."""
        point_width = max(len(str(p)) for p in self.points)
        backend_width = max(len(b) for b in self.backends)
        return f"{str(point):<{point_width}}  {backend:<{backend_width}}  {what}"

    def total_steps(self) -> int:
        """Proofs in the whole plan."""
        return len(self.points) * sum(self.proofs_per_point(b) for b in self.backends.values())


# on_step(description, done) is called before each proof and each verification, with the number of proofs done
# so far (out of Plan.total_steps()): "20:4:1  wgpu:u64  run 2/3"
StepCallback = Callable[[str, int], None]


class _Steps:
    def __init__(self, on_step: StepCallback):
        self.on_step = on_step
        self.done = 0

    def start(self, description: str) -> None:
        self.on_step(description, self.done)


def _is_kernel(backend: Backend) -> bool:
    return hasattr(backend, "profile")  # GpuBackend, whatever its runtime


def _phases_ms(seconds: dict[str, float], total_s: float) -> dict[str, float]:

    return phases_ms(seconds, total_s)


def _prove_once(steps: _Steps, description: str, point: GridPoint, config, backend: Backend, words, points):
    """(proof file, seconds, phase seconds) of one ``Prover.prove`` (``P3Prover.prove`` of one opening drawn from
    the transcript, for a p3-whir configuration)."""
    steps.start(description)
    if isinstance(config, P3WhirConfig):
        prover = P3Prover(config.num_variables, config.params, point.field, backend=backend)
        start = time.perf_counter()
        proof = prover.prove(words)
    else:
        prover = Prover(config, backend=backend)
        start = time.perf_counter()
        proof = prover.prove(words, points)
    seconds = time.perf_counter() - start
    steps.done += 1
    return proof, seconds, dict(prover.last_phase_seconds)


def _digest(proof_file) -> tuple[int, str]:
    if isinstance(proof_file, P3ProofDocument):  # upstream's postcard bytes
        data = pcs_proof_to_postcard(proof_file.proved.proof)
    else:
        data = dump(proof_file, "binary")
    return len(data), hashlib.sha256(data).hexdigest()


def _verify(config, proof_file) -> None:
    if isinstance(proof_file, P3ProofDocument):
        verify_p3(config, proof_file.proved.commitment, proof_file.proved.proof, proof_file.field)
    else:
        MetalWhirVerifier(config).verify(proof_file.proof, proof_file.statement)


def _time_backend(plan: Plan, point: GridPoint, name: str, backend: Backend, config, words, points,
                  steps: _Steps):
    """The row of one backend at one point, and its first timed proof (None when proving failed)."""
    row = Row(point, name)
    first = None
    done_before = steps.done
    try:
        def prove_untimed(i: int, total: int | None) -> float:
            what = f"warm-up {i}/{total}" if total else f"warm-up {i}, until a proof is replayed"
            return _prove_once(steps, plan.label(point, name, what), point, config, backend, words, points)[1]

        def prove_timed(description: str):
            return replayed(backend, lambda: _prove_once(steps, description, point, config, backend, words, points))

        warmup = warm_up(backend, prove_untimed, plan.warmup)
        row.warmup_ms, row.steady = [round(s * 1e3, 3) for s in warmup.seconds], warmup.steady
        phase_runs = []
        for i in range(plan.runs):
            (proof, seconds, phases), was_replayed = prove_timed(plan.label(point, name, f"run {i + 1}/{plan.runs}"))
            row.runs_ms.append(round(seconds * 1e3, 3))  # as JSON keeps it
            if was_replayed is not None:
                row.replayed = (row.replayed or []) + [was_replayed]
            phase_runs.append((seconds, phases))
            size, sha = _digest(proof)
            if first is None:
                first, row.proof_bytes, row.proof_sha256 = proof, size, sha
            elif sha != row.proof_sha256:
                row.fail(f"run {i + 1}'s proof differs from run 1's (the backend is not deterministic)")
        if plan.phases and _is_kernel(backend):
            backend.profile = True
            try:
                _, seconds, phases = _prove_once(steps, plan.label(point, name, "profiled run"), point, config,
                                                 backend, words, points)
            finally:
                backend.profile = False
            row.phases_ms = _phases_ms(phases, seconds)
        elif plan.phases:
            median = statistics.median_low(s for s, _ in phase_runs)
            seconds, phases = next(run for run in phase_runs if run[0] == median)
            row.phases_ms = _phases_ms(phases, seconds)
    except Exception as exc:  # noqa: BLE001 - one backend failing at one point must not end a long grid
        row.runs_ms.clear()
        row.phases_ms = row.proof_bytes = row.proof_sha256 = first = row.replayed = None
        row.fail(f"proving failed: {type(exc).__name__}: {exc}")
    steps.done = done_before + plan.proofs_per_point(backend)  # the proofs a failure skipped count as done
    return row, first


def run_grid(plan: Plan, results: BenchResults, devices: dict[str, str],
             on_step: StepCallback = lambda description, done: None) -> BenchResults:
    """Run ``plan``, adding one row per (point, backend) to ``results`` as each finishes (so a Ctrl-C leaves the
    finished ones, their proofs compared but not verified). ``devices``: spec -> device description, copied into
    each row."""
    steps = _Steps(on_step)
    point = None
    try:
        for point in plan.points:
            config = point.config()
            steps.start(plan.label(point, "", "instance"))
            words, points = random_canonical_instance(point.n, plan.seed)
            proofs = {}
            for name, backend in plan.backends.items():
                row, proof = _time_backend(plan, point, name, backend, config, words, points, steps)
                row.device = devices.get(name, "")
                results.add(row)
                if proof is not None:
                    proofs[name] = proof
            reference = compare_proofs(results.point_rows(point))
            if reference is not None:
                steps.start(plan.label(point, reference.backend, "verify"))
                proof_file = proofs[reference.backend]
                record_verification(results.point_rows(point), reference, lambda: _verify(config, proof_file))
    except KeyboardInterrupt:
        results.interrupted = True
        if point is not None:
            compare_proofs(results.point_rows(point))
    return results
