"""``whirgpu bench --kernels``: per device, a calibration (``kernels.calibrate``), then per grid point every kernel
of one whole proof (``proof_profile``) with its share of the proof's GPU time and, where a work model exists
(``kernel_models``), its fraction of the calibration ceiling; and the proof's wall time against its summed GPU
time, with an estimate of the difference from the calibrated overheads.

JSON (``json_path``; ``whirgpu bench --load`` reads it back and prints the same tables, ``load_reports``)::

    {"schema": "whirgpu-bench-kernels/1", "command": "whirgpu bench --kernels", "date": ISO-8601, "runs": R,
     "storage": policy or null,
     "backends": [
       {"spec": "cpu", "skipped": "why"},                                   # cpu, or a runtime unavailable here
       {"spec": "wgpu:u64", "device": "...", "skipped": null, "storage": the policy used, "runs": R,
        "calibration": {Calibration fields, SI units},
        "kernel_timing": "how kernels are timed" or null,                    # null: no points are profiled
        "points": [
          {"point": "20:4:1", "n": 20, "fold": 4, "rate": 1, "error": null,  # error: why the point failed
           "wall_ms", "wall_ms_runs", "timed_wall_ms", "gpu_ms", "gpu_ms_runs", "other_ms",
           "overhead_estimate_ms",
           "counts": {"submissions", "dispatches", "copies", "reads", "read_bytes", "writes", "write_bytes"},
           "kernels": [{"label", "launches", "ms", "share", "unit": "bytes" | "products" | null, "work",
                        "rate_per_s", "ceiling": "copy" | "mul" | null, "fraction"}]}]}]}

``gpu_ms`` is the sum of the kernels' ``ms`` (each the median over the timed proofs), so shares sum to 1;
``wall_ms`` is the median of untimed proofs; ``other_ms = wall_ms - gpu_ms`` (host work, dispatch, readback),
never negative: where the kernels' time exceeds the untimed wall time (timed proofs run one compute pass per
dispatch to write timestamps, slower than untimed ones; on a CPU adapter such as lavapipe the "GPU" also shares
the host's cores), ``other_ms`` is 0 and ``gpu_exceeds_wall`` is true.
"""

from __future__ import annotations

import datetime
import json
import sys

from ..errors import BackendUnavailable, ConfigError, WhirGpuError
from ..files import write_atomic
from ..kernels.calibrate import Calibration, calibrate
from .backends import BackendSpec, open_runtime
from .grid import GridPoint
from .kernel_models import ceiling_name
from .kernel_report import print_kernel_report
from .proof_profile import Counts, ProofProfile, ProofProfiler

CPU_NOTE = "the numpy reference has no kernels"
SCHEMA = "whirgpu-bench-kernels/1"
COMMAND = "whirgpu bench --kernels"


def is_report(doc) -> bool:
    """Whether ``doc`` is a ``--kernels`` JSON report: this schema, or a file written before the schema existed
    (its command and its backends list say so)."""
    if not isinstance(doc, dict):
        return False
    return doc.get("schema") == SCHEMA or (doc.get("schema") is None and doc.get("command") == COMMAND
                                           and isinstance(doc.get("backends"), list))


def merge_reports(named: list[tuple[str, dict]]) -> dict:
    """One report from saved ``--kernels`` reports, in order: a later file's backend replaces the same spec of
    an earlier one, and each backend keeps its own ``runs``. ConfigError naming the file for a malformed one."""
    merged = {"schema": SCHEMA, "command": COMMAND, "date": "", "runs": None, "storage": None, "backends": [],
              "sources": []}
    by_spec: dict[str, dict] = {}
    for name, doc in named:
        backends = doc.get("backends")
        if not isinstance(backends, list) or not all(isinstance(b, dict) and "spec" in b and "skipped" in b
                                                     for b in backends):
            raise ConfigError(f"{name}: 'backends' must be a list of backend entries with 'spec' and 'skipped'")
        merged["sources"].append({"file": name, "date": doc.get("date"), "runs": doc.get("runs")})
        merged.update(date=doc.get("date", ""), runs=doc.get("runs"), storage=doc.get("storage"))
        for entry in backends:
            by_spec[str(entry["spec"])] = {**entry, "runs": entry.get("runs", doc.get("runs"))}
    merged["backends"] = list(by_spec.values())
    return merged


def overhead_estimate_s(counts: Counts, cal: Calibration) -> float:
    """Host overhead of a proof predicted from the calibration: every submission a round trip (which includes
    one dispatch), every further dispatch the per-dispatch cost, every readback the 16-byte latency plus its
    bytes at the readback bandwidth, every upload its bytes at the upload bandwidth."""
    return (counts.submissions * cal.round_trip_s
            + max(counts.dispatches - counts.submissions, 0) * cal.dispatch_s
            + counts.reads * cal.read_latency_s + counts.read_bytes / cal.read_bytes_per_s
            + counts.write_bytes / cal.write_bytes_per_s)


def _kernel_entries(profile: ProofProfile, cal: Calibration) -> list[dict]:
    ceilings = {"copy": cal.copy_bytes_per_s, "mul": cal.products_per_s}
    out = []
    for row in profile.kernels:
        entry = {"label": row.label, "launches": row.launches, "ms": row.ms,
                 "share": row.ms / profile.gpu_ms if profile.gpu_ms else 0.0,
                 "unit": row.unit, "work": row.work if row.unit else None,
                 "rate_per_s": None, "ceiling": None, "fraction": None}
        if row.unit and row.ms > 0:
            rate = row.work / (row.ms * 1e-3)
            ceiling = ceiling_name(row.unit)
            entry.update(rate_per_s=rate, ceiling=ceiling,
                         fraction=rate / ceilings[ceiling] if ceilings[ceiling] else None)
        out.append(entry)
    return out


def _point_entry(point: GridPoint, profile: ProofProfile, cal: Calibration) -> dict:
    counts = profile.counts
    other = profile.wall_ms - profile.gpu_ms
    return {"point": str(point), "n": point.n, "fold": point.fold, "rate": point.rate, "error": None,
            "wall_ms": profile.wall_ms, "wall_ms_runs": profile.wall_ms_runs, "timed_wall_ms": profile.timed_wall_ms,
            "gpu_ms": profile.gpu_ms, "gpu_ms_runs": profile.gpu_ms_runs, "other_ms": max(0.0, other),
            "gpu_exceeds_wall": other < 0,
            "overhead_estimate_ms": overhead_estimate_s(counts, cal) * 1e3, "counts": dict(vars(counts)),
            "kernels": _kernel_entries(profile, cal)}


def _measure(spec: BackendSpec, points: list[GridPoint], runs: int, storage: str | None, say) -> dict:
    """One kernel backend's JSON entry (see the module docstring)."""
    try:
        rt = open_runtime(spec)
        profiler = ProofProfiler(rt, storage)
    except BackendUnavailable as exc:
        return {"spec": str(spec), "skipped": str(exc)}
    say(f"{spec}: calibrating")
    try:
        cal = calibrate(rt, profiler.backend.mode_for(True))
    except WhirGpuError as exc:
        return {"spec": str(spec), "skipped": f"calibration failed: {type(exc).__name__}: {exc}"}
    entry = {"spec": str(spec), "device": cal.device, "skipped": None, "storage": profiler.backend.storage,
             "runs": runs, "calibration": cal.to_dict(), "kernel_timing": profiler.timing, "points": []}
    if entry["kernel_timing"] is None:
        return entry
    for point in points:
        say(f"{spec}: proving {point} ({runs} timed + {runs} untimed proofs after the warm-ups that reach replay)")
        try:
            entry["points"].append(_point_entry(point, profiler.profile(point, runs), cal))
        except WhirGpuError as exc:
            entry["points"].append({"point": str(point), "n": point.n, "fold": point.fold, "rate": point.rate,
                                    "error": f"{type(exc).__name__}: {exc}"})
    return entry


def run_kernels(points: list[GridPoint], specs: list[BackendSpec], runs: int, storage: str | None,
                json_path: str | None, markdown: bool, quiet: bool) -> int:
    """Calibrate every kernel backend in ``specs`` and profile a proof of every point on it (cpu specs are skipped
    with a note); print the tables (markdown when asked), write the JSON report to ``json_path`` if given.
    ``runs`` >= 1 timed proofs per point (and as many untimed, for the wall time), after the warm-ups that reach
    the shape's replay (``steady.warm_up``).
    Returns 0 when at least one point was profiled and none failed, else 1."""
    if runs < 1:
        raise ConfigError(f"--runs must be at least 1, got {runs}")

    def say(text: str) -> None:
        if not quiet:
            print(text, file=sys.stderr, flush=True)

    report = {"schema": SCHEMA, "command": COMMAND, "date": datetime.datetime.now().astimezone().isoformat(),
              "runs": runs, "storage": storage, "backends": []}
    for spec in specs:
        if not spec.is_gpu:
            report["backends"].append({"spec": str(spec), "skipped": CPU_NOTE})
            continue
        report["backends"].append(_measure(spec, points, runs, storage, say))
    print_kernel_report(report, markdown)
    if json_path:
        write_atomic(json_path, json.dumps(report, indent=1))
    profiled = [p for b in report["backends"] for p in b.get("points", [])]
    return 0 if profiled and not any(p["error"] for p in profiled) else 1
