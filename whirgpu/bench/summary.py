"""Per-point speedups: baseline ms / the best kernel backend's median ms, shared by the table, the plot and JSON.

Kernel backends are every spec but ``cpu`` (msl-cpu included: it runs the GPU kernels). A row with an error
is not a candidate for best, nor a baseline. The baseline is ``cpu`` (the numpy reference measured in the same
run) or one of the Rust reference's columns (``reference.COLUMNS``); a point without a baseline figure or without
a good kernel row has no speedup (None, shown as n/a).
"""

from __future__ import annotations

from dataclasses import dataclass

from .grid import GridPoint
from .reference import COLUMNS, reference_ms
from .results import BenchResults

BASELINES = ("cpu",) + tuple(COLUMNS)


def baseline_label(baseline: str) -> str:
    return "cpu (numpy reference)" if baseline == "cpu" else COLUMNS[baseline]


def is_kernel_spec(spec: str) -> bool:
    return spec.partition(":")[0] != "cpu"


@dataclass(frozen=True)
class PointSummary:
    point: GridPoint
    baseline: str
    baseline_ms: float | None
    best: str | None  # the fastest kernel backend without an error
    best_ms: float | None

    @property
    def speedup(self) -> float | None:
        if self.baseline_ms is None or self.best_ms is None or self.best_ms <= 0:
            return None
        return self.baseline_ms / self.best_ms

    def to_json(self) -> dict:
        speedup = self.speedup
        return {"point": str(self.point), "baseline": self.baseline, "baseline_ms": _round(self.baseline_ms),
                "best": self.best, "best_ms": _round(self.best_ms),
                "speedup": None if speedup is None else round(speedup, 3)}


def _round(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 3)


def summarize(results: BenchResults, baseline: str) -> list[PointSummary]:
    """One summary per point of ``results``, in its order."""
    out = []
    for point in results.points:
        good = [row for row in results.point_rows(point) if not row.error and row.median_ms is not None]
        if baseline == "cpu":
            cpu = [row.median_ms for row in good if row.backend == "cpu"]
            base = cpu[0] if cpu else None
        else:
            base = reference_ms(point, baseline)
        kernels = [row for row in good if is_kernel_spec(row.backend)]
        best = min(kernels, key=lambda row: row.median_ms, default=None)
        out.append(PointSummary(point, baseline, base, best.backend if best else None,
                                best.median_ms if best else None))
    return out
