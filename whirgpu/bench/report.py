"""Render bench results: the main table (one row per point), the per-phase table, and the notes under them, as a
rich table on a terminal or as GitHub markdown. Both are built from one ``TextTable`` so they always agree.

Main table columns: n, fold, rate, provable bits; ``<spec> ms`` per backend (median of the timed runs, the steady
state; ``!`` marks a row with an error, ``~`` a row whose timed runs were not all replayed on a backend that
replays, ``failed`` a backend that could not prove); ``<spec> first ms`` per backend (the first proof of the
point's shape on it: caches filling, at a backend's first point its pipelines compiling; shown when
the results hold it); with ``--reference`` the Rust columns (``reference``); the
baseline's ms when it is a Rust column not shown otherwise; ``speedup`` (baseline / best); ``best`` (the fastest
kernel backend); ``proofs``: ``ok`` (all identical and verified), ``error``, or ``unverified`` (identical so far,
not verified: a loaded file that was not verified or an interrupted point).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from .reference import COLUMNS, reference_ms
from .results import BenchResults
from .summary import summarize

# Phases in proof order (the prover's and the backend's timer names); others follow sorted, "other" last.
PHASE_ORDER = ("input", "upload", "claims", "ntt", "merkle", "ood", "weights", "sumcheck", "pow", "fold", "openings",
               "download")


def format_ms(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.1f}" if ms >= 10 else f"{ms:.2f}"


def format_speedup(speedup: float | None) -> str:
    if speedup is None:
        return "n/a"
    return f"{speedup:.0f}x" if speedup >= 100 else f"{speedup:.1f}x" if speedup >= 10 else f"{speedup:.2f}x"


@dataclass
class TextTable:
    """A table as text cells; ``bad`` holds the (row, column) cells to highlight as errors."""

    title: str
    headers: list[str]
    right: list[bool]
    rows: list[list[str]] = field(default_factory=list)
    bad: set[tuple[int, int]] = field(default_factory=set)


def _proofs_cell(rows) -> str:
    if any(row.error for row in rows):
        return "error"
    with_proof = [row for row in rows if row.proof_sha256]
    return "ok" if with_proof and all(row.verified for row in with_proof) else "unverified"


def main_table(results: BenchResults, baseline: str, reference: bool) -> TextTable:
    specs = results.backend_names
    rust = list(COLUMNS) if reference else []
    baseline_column = baseline != "cpu" and baseline not in rust
    firsts = [spec for spec in specs if any(row.first_ms is not None for (_, s), row in results.rows.items()
                                             if s == spec)]
    headers = ["n", "fold", "rate", "provable\nbits"] + [f"{spec}\nms" for spec in specs]
    headers += [f"{spec}\nfirst ms" for spec in firsts]
    headers += [f"{c}\nms" for c in rust]
    headers += [f"{baseline}\nms"] if baseline_column else []
    headers += [f"speedup\nvs {baseline}", "best", "proofs"]
    table = TextTable(
        title=f"whirgpu bench: {len(results.points)} points x {len(specs)} backends" + _profile_note(results),
        headers=headers, right=[True] * (len(headers) - 2) + [False, False])
    for summary in summarize(results, baseline):
        point = summary.point
        cells = [str(point.n), str(point.fold), str(point.rate), point.security_text()]
        for spec in specs:
            row = results.row(point, spec)
            if row is None:
                cells.append("")
                continue
            if row.error:
                table.bad.add((len(table.rows), len(cells)))
            mark = " !" if row.error else " ~" if not _steady(row) else ""
            cells.append("failed" if row.median_ms is None else format_ms(row.median_ms) + mark)
        for spec in firsts:
            row = results.row(point, spec)
            cells.append("" if row is None else format_ms(row.first_ms) or "-")
        cells += [format_ms(reference_ms(point, c)) or "-" for c in rust]
        if baseline_column:
            cells.append(format_ms(summary.baseline_ms) or "-")
        cells += [format_speedup(summary.speedup), summary.best or "-"]
        proofs = _proofs_cell(results.point_rows(point))
        if proofs == "error":
            table.bad.add((len(table.rows), len(cells)))
        table.rows.append(cells + [proofs])
    return table


def phases_table(results: BenchResults) -> TextTable:
    rows = [row for row in results.rows.values() if row.phases_ms]
    names = {name for row in rows for name in row.phases_ms}
    phases = [p for p in PHASE_ORDER if p in names] + sorted(names - set(PHASE_ORDER) - {"other"})
    phases += ["other"] if "other" in names else []
    headers = ["point", "backend"] + phases + ["total"]
    table = TextTable(title="Per phase (ms): kernel backends from one profiled run, cpu from its median run",
                      headers=headers, right=[False, False] + [True] * (len(phases) + 1))
    for row in rows:
        values = [row.phases_ms.get(p) for p in phases]
        table.rows.append([str(row.point), row.backend] + [format_ms(v) or "-" for v in values]
                          + [format_ms(sum(row.phases_ms.values()))])
    return table


def _steady(row) -> bool:
    """False for a row of a backend that replays whose timed runs were not all replayed."""
    return row.steady is not False and not row.not_replayed


def _settings_line(s: dict) -> str:
    runs, warmup = s.get("runs"), s.get("warmup")
    if runs is None:
        return "settings unknown"
    warmups = f"{warmup} warm-up run{'s' * (warmup != 1)}"
    if s.get("warmup_until_replayed"):
        warmups = f"the untimed proofs until a shape's first replayed proof (backends that replay), then {warmups}"
    return f"median of {runs} timed run{'s' * (runs != 1)} after {warmups}; instance seed {s.get('seed')}"


def notes(results: BenchResults, baseline: str, reference: bool) -> list[str]:
    """The lines under the table: devices, settings, how speedup is computed, skipped backends, errors."""
    lines = [f"{spec}: {device}" for spec, device in results.devices().items()]
    for column, label in COLUMNS.items():
        if reference or column == baseline:
            lines.append(f"{column}: {label}, the Rust reference (whir-p3-metal), default grid only")
    policies = sorted({b.get("storage") for b in results.backends.values() if b.get("storage")})
    storage = "/".join(policies) or "n/a (no GPU backend)"
    runs = {_settings_line(src.get("settings") or {}): None for src in results.sources} or \
        {_settings_line(results.settings): None}
    for settings in runs:
        lines.append(f"times: ms of wall clock per proof (waiting for the device included), {settings}; "
                     f"GPU storage {storage}")
    lines.append(f"speedup = {baseline} ms / the fastest kernel backend's ms "
                 f"(every backend but cpu; rows with an error excluded)")
    if baseline == "cpu" and "cpu" not in results.backend_names:
        lines.append("no cpu rows, so no speedup: add cpu to --backends or pick --baseline rust-16core")
    for spec, reason in results.skipped.items():
        lines.append(f"skipped {spec}: {reason}")
    if any(row.first_ms is not None for row in results.rows.values()):
        lines.append("first ms: the first proof of the point's shape on that backend (caches filling; at a backend's "
                     "first point also its pipelines compiling)")
    for row in results.rows.values():
        if row.error:
            lines.append(f"! {row.point} {row.backend}: {row.error}")
        elif row.steady is False:
            lines.append(f"~ {row.point} {row.backend}: no warm-up proof was replayed (of {len(row.warmup_ms or [])}"
                         f"): the timed runs are not the steady state")
        elif row.not_replayed:
            lines.append(f"~ {row.point} {row.backend}: {row.not_replayed} of {len(row.replayed)} timed runs were "
                         f"not replayed: not the steady state")
    if results.interrupted:
        lines.append("interrupted: these are the results collected before Ctrl-C")
    return lines


# ---- output ----------------------------------------------------------------------------------------------------

def to_markdown(table: TextTable) -> str:
    def line(cells):
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"

    rule = "|" + "|".join("---:" if right else "---" for right in table.right) + "|"
    return "\n".join([f"**{table.title}**", "", line(table.headers), rule, *(line(r) for r in table.rows)])


def console(stderr: bool = False, width: int | None = None):
    """A rich console; off a terminal it does not wrap (a pipe or file gets whole table lines)."""
    from rich.console import Console  # noqa: PLC0415

    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=width or (None if stream.isatty() else 1000), highlight=False)


def to_rich(table: TextTable):
    from rich.table import Table  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    out = Table()
    for header, right in zip(table.headers, table.right):
        out.add_column(header, justify="right" if right else "left", no_wrap=True)
    for r, cells in enumerate(table.rows):
        out.add_row(*(Text(c, style="bold red" if (r, i) in table.bad else "") for i, c in enumerate(cells)))
    return out


def print_report(results: BenchResults, baseline: str, reference: bool, phases: bool, markdown: bool) -> None:
    """The main table, the phase table (with ``phases``) and the notes, on stdout."""
    tables = [main_table(results, baseline, reference)]
    if phases:
        tables.append(phases_table(results))
    lines = notes(results, baseline, reference)
    if markdown:
        print("\n\n".join(to_markdown(t) for t in tables))
        print()
        print("\n".join(f"- {line}" for line in lines))
        return
    out = console()
    for table in tables:
        out.print(table.title, style="bold", markup=False)
        rendered = to_rich(table)
        width = out.measure(rendered, options=out.options.update_width(100_000)).maximum
        # A table wider than the terminal is printed whole (the terminal wraps it) rather than with cropped cells.
        (out if width <= out.width else console(width=width)).print(rendered)
    for line in lines:
        out.print(line, markup=False, style="red" if line.startswith(("!", "interrupted")) else None)


def _profile_note(results) -> str:
    """", profile p3-whir (koalabear)" when the points are proved in the p3-whir profile."""
    profiles = sorted({f"{p.profile} ({p.field})" for p in results.points if p.profile != "whir-p3-metal"})
    return f", profile {', '.join(profiles)}" if profiles else ""
