"""What ``whirgpu bench`` measured, as objects and as its JSON file (``SCHEMA``), and how saved files merge.

JSON layout (``to_json`` / ``from_json``; times in ms, rounded to 3 decimals):

    {"schema": "whirgpu-bench/1", "date": ISO 8601 UTC, "command": the command line (defaults filled in),
     "host": {"cpu", "cores", "os", "python", "numpy", "whirgpu"},
     "settings": {"grid", "points": ["N:F:R", ...], "backends": [spec, ...], "runs", "warmup", "seed",
                  "storage", "phases"},
     "backends": {spec: {"device": one line, "storage": policy or null}},
     "skipped": {spec: why it could not open},
     "interrupted": bool,
     "sources": [{"file", "date", "command", "host", "settings"}]   (merged files only: where rows came from),
     "results": [{"point": "N:F:R", "n", "fold", "rate", "security_bits": {"provable", "regime", "conjectural",
                  "derived_under"}, "backend": spec, "device", "median_ms", "runs_ms": [...],
                  "first_ms", "warmup_ms": [...] or null, "steady": bool or null, "replayed": [bool, ...] or null,
                  "phases_ms": {phase: ms} or null, "proof_bytes", "proof_sha256", "verified": bool or null,
                  "error": one line or null}],
     "summary": [{"point", "baseline", "baseline_ms", "best", "best_ms", "speedup"}]   (written, never read)}

``median_ms`` is the median of ``runs_ms``. ``warmup_ms`` holds every untimed proof before them, in order (on a
backend that replays recorded proofs: the proofs until one of the shape was replayed, then ``--warmup`` more);
``first_ms`` is the first proof of the shape on that backend (``warmup_ms[0]``, or ``runs_ms[0]`` without
warm-ups), null when not known. ``steady`` is False when the backend replays proofs but replayed none of the
warm-ups (its timed runs are then not its steady state), null on a backend that does not replay; ``replayed``
says of each timed run whether it was replayed (null on such a backend). Files written before these keys
load with them null. ``phases_ms`` comes from one profiled extra run on kernel backends
and from the median run on cpu. ``verified`` is True when the verifier accepted this proof (or a byte-identical
one), False when it rejected it, null when it was not checked. A row with ``error`` set is not trusted: a proof
that differs from the reference backend's, a rejected proof, or a backend that failed to prove.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..cli.options import read_json_file
from ..errors import ConfigError
from .grid import GridPoint, parse_point

SCHEMA = "whirgpu-bench/1"


@dataclass
class Row:
    """One backend at one grid point. ``runs_ms`` holds every timed run in order (empty when proving failed)."""

    point: GridPoint
    backend: str
    device: str = ""
    runs_ms: list[float] = field(default_factory=list)
    phases_ms: dict[str, float] | None = None
    proof_bytes: int | None = None
    proof_sha256: str | None = None
    verified: bool | None = None
    error: str | None = None
    warmup_ms: list[float] | None = None  # every untimed proof, in order; None: not recorded (an older file)
    steady: bool | None = None  # None: a backend that does not replay; False: no warm-up was replayed
    replayed: list[bool] | None = None  # per timed run; None: a backend that does not replay

    @property
    def median_ms(self) -> float | None:
        """Rounded as JSON stores it, so a table rendered now and one rendered from the file agree."""
        return _ms(statistics.median(self.runs_ms)) if self.runs_ms else None

    @property
    def first_ms(self) -> float | None:
        """The first proof of the shape on this backend: the first warm-up, else the first timed run; None when
        the warm-ups were not recorded or nothing was proved."""
        if self.warmup_ms is None:
            return None
        return _ms(self.warmup_ms[0]) if self.warmup_ms else _ms(self.runs_ms[0]) if self.runs_ms else None

    @property
    def not_replayed(self) -> int:
        """Timed runs of a backend that replays which were not replayed (0 on a backend that does not)."""
        return sum(1 for r in self.replayed or [] if not r)

    def fail(self, message: str) -> None:
        """Record an error; the first one stays in front."""
        self.error = message if not self.error else f"{self.error}; {message}"


@dataclass
class BenchResults:
    """A run's (or several merged runs') rows keyed by (point, backend spec), plus where they came from."""

    date: str = ""
    command: str = ""
    host: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    backends: dict[str, dict] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    interrupted: bool = False
    sources: list[dict] = field(default_factory=list)
    rows: dict[tuple[GridPoint, str], Row] = field(default_factory=dict)

    def add(self, row: Row) -> None:
        self.rows[(row.point, row.backend)] = row

    @property
    def points(self) -> list[GridPoint]:
        """Every point with a row, in the order first seen."""
        return list(dict.fromkeys(point for point, _ in self.rows))

    @property
    def backend_names(self) -> list[str]:
        """Every backend spec with a row, in the order first seen."""
        return list(dict.fromkeys(name for _, name in self.rows))

    def row(self, point: GridPoint, backend: str) -> Row | None:
        return self.rows.get((point, backend))

    def point_rows(self, point: GridPoint) -> list[Row]:
        return [row for (p, _), row in self.rows.items() if p == point]

    def devices(self) -> dict[str, str]:
        """spec -> the device line of its rows (several joined with '; ' when merged files disagree)."""
        out = {}
        for spec in self.backend_names:
            devices = dict.fromkeys(row.device for (_, s), row in self.rows.items() if s == spec and row.device)
            out[spec] = "; ".join(devices) or self.backends.get(spec, {}).get("device", "?")
        return out

    @property
    def has_errors(self) -> bool:
        return any(row.error for row in self.rows.values())


def _ms(value: float) -> float:
    return round(float(value), 3)


def row_to_json(row: Row) -> dict:
    return {
        "point": str(row.point), "n": row.point.n, "fold": row.point.fold, "rate": row.point.rate,
        "security_bits": row.point.security(), "backend": row.backend, "device": row.device,
        "median_ms": row.median_ms,
        "runs_ms": [_ms(t) for t in row.runs_ms],
        "first_ms": row.first_ms,
        "warmup_ms": None if row.warmup_ms is None else [_ms(t) for t in row.warmup_ms],
        "steady": row.steady,
        "replayed": row.replayed,
        "phases_ms": None if row.phases_ms is None else {k: _ms(v) for k, v in row.phases_ms.items()},
        "proof_bytes": row.proof_bytes, "proof_sha256": row.proof_sha256,
        "verified": row.verified, "error": row.error,
    }


def to_json(results: BenchResults, summary: list[dict] | None = None) -> dict:
    """The JSON document (module docstring); ``summary`` is the rendered per-point speedups, if any."""
    doc = {
        "schema": SCHEMA,
        "date": results.date,
        "command": results.command,
        "host": results.host,
        "settings": results.settings,
        "backends": results.backends,
        "skipped": results.skipped,
        "interrupted": results.interrupted,
    }
    if results.sources:
        doc["sources"] = results.sources
    doc["results"] = [row_to_json(row) for row in results.rows.values()]
    if summary is not None:
        doc["summary"] = summary
    return doc


def _row_from_json(item, where: str) -> Row:
    if not isinstance(item, dict) or not isinstance(item.get("point"), str) or not isinstance(item.get("backend"), str):
        raise ConfigError(f"{where}: a result needs 'point' (N:F:R) and 'backend'")
    try:
        point = parse_point(item["point"])
        runs = [float(t) for t in item.get("runs_ms") or []]
        phases = item.get("phases_ms")
        phases = None if phases is None else {str(k): float(v) for k, v in phases.items()}
        warmups = item.get("warmup_ms")
        warmups = None if warmups is None else [float(t) for t in warmups]
        replayed = item.get("replayed")
        replayed = None if replayed is None else [bool(r) for r in replayed]
        steady = item.get("steady")
        steady = None if steady is None else bool(steady)
    except (ConfigError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"{where}: result {item.get('point')} {item.get('backend')}: {exc}") from None
    return Row(point, item["backend"], str(item.get("device") or ""), runs, phases,
               item.get("proof_bytes"), item.get("proof_sha256"), item.get("verified"), item.get("error"),
               warmups, steady, replayed)


def from_json(doc, where: str = "input") -> BenchResults:
    """Parse a document ``to_json`` wrote; ConfigError naming ``where`` for anything else."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise ConfigError(f"{where} is not a whirgpu bench result (schema {found!r}, expected {SCHEMA!r})")
    if not isinstance(doc.get("results"), list):
        raise ConfigError(f"{where}: 'results' must be a list")
    results = BenchResults(
        date=str(doc.get("date", "")), command=str(doc.get("command", "")), host=dict(doc.get("host") or {}),
        settings=dict(doc.get("settings") or {}), backends=dict(doc.get("backends") or {}),
        skipped=dict(doc.get("skipped") or {}), interrupted=bool(doc.get("interrupted")),
        sources=list(doc.get("sources") or []),
    )
    for item in doc["results"]:
        results.add(_row_from_json(item, where))
    return results


def load_file(path: str | Path) -> BenchResults:
    """Read one saved result file; ConfigError (one line) when it cannot be read or is not one."""

    return from_json(read_json_file(path), str(path))


def _union(lists) -> list:
    return list(dict.fromkeys(item for items in lists for item in items or []))


def merge(named: list[tuple[str, BenchResults]]) -> BenchResults:
    """Combine saved runs, in order: a row of a later file replaces the same (point, backend) of an earlier one.

    Settings merge key by key (later wins), with ``points`` and ``backends`` the union in first-seen order;
    ``backends`` entries and ``skipped`` merge the same way (a backend that ran in any file is not skipped).
    ``sources`` lists every file with its date, command, host and settings; ``host`` is the last file's."""
    merged = BenchResults()
    for name, results in named:
        merged.sources.extend(results.sources or [{"file": name, "date": results.date, "command": results.command,
                                                   "host": results.host, "settings": results.settings}])
        points = _union([merged.settings.get("points"), results.settings.get("points")])
        specs = _union([merged.settings.get("backends"), results.settings.get("backends")])
        merged.settings.update(results.settings)
        merged.settings.update(points=points, backends=specs)
        merged.backends.update(results.backends)
        merged.skipped.update(results.skipped)
        merged.host = results.host
        merged.interrupted = merged.interrupted or results.interrupted
        for row in results.rows.values():
            merged.add(row)
    for spec in merged.backend_names:
        merged.skipped.pop(spec, None)
    return merged
