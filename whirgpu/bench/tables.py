"""``whirgpu bench --tables``: a stacked multi-table commitment and opening timed beside a single-column proof of the
same stacked size, per backend (issue 38 item 6 asks the first within 1.15x of the second on the GPU machine).

Contract: ``run_tables_bench(spec, config, backends, runs, warmup, seed, on_step=None) -> TablesBench``:
- ``spec`` a ``TablesSpec`` (tables, schedule, layout, who chooses the points), ``config`` the ``P3WhirConfig`` of
  the stacked arity its shapes derive; ``backends`` {spec text: open ``Backend``}, in table order.
- The instance is the oracle's (``tables.instance.draw_instance(protocol, seed, ...)``: the same tables and
  prescribed points as ``whirgpu prove --profile p3-whir --tables ... --seed S`` and ``oracle-p3 prove-tables``);
  the single column is 2^n canonical values drawn from ``numpy.random.default_rng(seed)``.
- Per backend that proves tables (``Backend.proves_tables``; any other gets a row saying it is skipped): the
  untimed warm-ups of each kind (``steady.warm_up``: on a backend that replays recorded proofs, until one is
  replayed or ``REPLAY_WARMUPS`` were made, then ``warmup`` more; of a stacked proof the opening is replayed, the
  commitment is not; the one-proof path is replayed whole), then ``runs`` timed rounds, each one stacked proof as a
  user makes it (``P3Tables.commit()`` then ``.open(batches, points)``: wall clock, commit and open apart), the
  same in one proof (``P3Tables.prove(batches, points)``, which must give the same bytes) and one
  ``P3Prover.prove`` of one opening drawn from the transcript under the same configuration (alternated, so load
  on the host weighs on all alike). Medians are reported; ``ratio`` = stacked / single, ``one_proof_ratio`` = one
  proof / single.
- Every timed proof of a kind must be byte for byte the first (else the row's ``error``), the stacked proofs the
  same on every backend (the first backend's is the reference), and one stacked and one single document per
  backend are verified through ``whirgpu.verify`` (untimed) with the expectations pinned (``P3Expected``).
A backend that raises gets its error in its row and the others go on. ``render_tables_bench`` prints the table
(rich or markdown) and the notes; ``TablesBench.to_json()`` is what ``--json`` writes.
"""

from __future__ import annotations

import hashlib
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np

from ..backends import Backend
from ..profiles.p3_whir.api import P3Prover
from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.expectations import P3Expected
from ..profiles.p3_whir.format import pcs_proof_to_postcard
from ..profiles.p3_whir.tables.api import P3Tables
from ..profiles.p3_whir.tables.instance import draw_instance
from ..profiles.p3_whir.tables.spec import TablesSpec
from ..ref.field_np import field_ops
from ..verifying import verify
from .report import TextTable, format_ms
from .steady import warm_up

StepCallback = Callable[[str], None]


@dataclass
class TablesRow:
    """One backend's figures (milliseconds; module contract)."""

    backend: str
    device: str = ""
    stacked_ms: list[float] = field(default_factory=list)  # commit + open, per timed run
    commit_ms: list[float] = field(default_factory=list)
    open_ms: list[float] = field(default_factory=list)
    single_ms: list[float] = field(default_factory=list)
    one_proof_ms: list[float] = field(default_factory=list)  # P3Tables.prove: commit and open in one proof
    one_proof_warmup_ms: list[float] = field(default_factory=list)
    one_proof_steady: bool | None = None
    stacked_warmup_ms: list[float] = field(default_factory=list)
    single_warmup_ms: list[float] = field(default_factory=list)
    stacked_steady: bool | None = None  # as ``steady.Warmup.steady``, for the stacked proofs
    single_steady: bool | None = None  # and for the single-column proofs
    proof_bytes: int | None = None  # the stacked proof's postcard bytes
    proof_sha256: str | None = None
    single_proof_bytes: int | None = None
    verified: bool | None = None
    skipped: str | None = None
    error: str | None = None

    @staticmethod
    def _median(values: list[float]) -> float | None:
        return statistics.median(values) if values else None

    @property
    def stacked_median(self) -> float | None:
        return self._median(self.stacked_ms)

    @property
    def single_median(self) -> float | None:
        return self._median(self.single_ms)

    @property
    def one_proof_median(self) -> float | None:
        return self._median(self.one_proof_ms)

    @property
    def ratio(self) -> float | None:
        stacked, single = self.stacked_median, self.single_median
        return None if stacked is None or not single else stacked / single

    @property
    def one_proof_ratio(self) -> float | None:
        one, single = self.one_proof_median, self.single_median
        return None if one is None or not single else one / single

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}; {message}"


@dataclass
class TablesBench:
    """The rows and what they were run with."""

    spec: TablesSpec
    config: P3WhirConfig
    runs: int
    warmup: int
    seed: int
    rows: list[TablesRow] = field(default_factory=list)
    date: str = ""
    command: str = ""
    host: dict = field(default_factory=dict)

    @property
    def has_errors(self) -> bool:
        return any(row.error for row in self.rows) or not any(row.stacked_ms for row in self.rows)

    def to_json(self) -> dict:
        p = self.config.params
        return {"kind": "tables", "date": self.date, "command": self.command, "host": self.host,
                "settings": {**self.spec.canonical(), "field": self.config.field.name,
                             "num_variables": self.config.num_variables, "folding_factor": p.folding.k,
                             "rate": p.starting_log_inv_rate, "security": p.security_level, "pow_bits": p.pow_bits,
                             "runs": self.runs, "warmup": self.warmup, "seed": self.seed},
                "rows": [{**asdict(row), "stacked_median_ms": row.stacked_median,
                          "single_median_ms": row.single_median, "ratio": row.ratio,
                          "one_proof_median_ms": row.one_proof_median, "one_proof_ratio": row.one_proof_ratio}
                         for row in self.rows]}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _time_backend(bench: TablesBench, row: TablesRow, backend: Backend, on_step: StepCallback) -> None:
    spec, config = bench.spec, bench.config
    field_ = config.field
    columns, monty_points = draw_instance(spec.protocol, bench.seed, field_, config.fold(0), spec.prescribed)
    points = None if monty_points is None else [field_ops(field_).from_monty(p) for p in monty_points]
    batches = list(spec.protocol.batches)
    tables = P3Tables(columns, orient="columns", params=config.params, field=field_, layout=spec.layout,
                      backend=backend)
    words = np.random.default_rng(bench.seed).integers(0, field_.P, 1 << config.num_variables, dtype=np.uint32)
    single = P3Prover(config.num_variables, config.params, field_, backend=backend)
    last = {}

    def stacked_once(what: str) -> float:
        on_step(f"{row.backend}  stacked {what}")
        start = time.perf_counter()
        commitment = tables.commit()
        opened = time.perf_counter()
        document = commitment.open(batches, points)
        end = time.perf_counter()
        commitment.release()
        last["stacked"], last["commit"], last["open"] = document, opened - start, end - opened
        return end - start

    def one_proof_once(what: str) -> float:
        on_step(f"{row.backend}  one proof {what}")
        start = time.perf_counter()
        last["one"] = tables.prove(batches, points)
        return time.perf_counter() - start

    def single_once(what: str) -> float:
        on_step(f"{row.backend}  single {what}")
        start = time.perf_counter()
        last["single"] = single.prove(words)
        return time.perf_counter() - start

    warmup = warm_up(backend, lambda i, total: stacked_once(f"warm-up {i}"), bench.warmup)
    row.stacked_warmup_ms, row.stacked_steady = [round(s * 1e3, 3) for s in warmup.seconds], warmup.steady
    warmup = warm_up(backend, lambda i, total: one_proof_once(f"warm-up {i}"), bench.warmup)
    row.one_proof_warmup_ms, row.one_proof_steady = [round(s * 1e3, 3) for s in warmup.seconds], warmup.steady
    warmup = warm_up(backend, lambda i, total: single_once(f"warm-up {i}"), bench.warmup)
    row.single_warmup_ms, row.single_steady = [round(s * 1e3, 3) for s in warmup.seconds], warmup.steady
    single_sha = None
    for i in range(bench.runs):
        seconds = stacked_once(f"run {i + 1}/{bench.runs}")
        row.stacked_ms.append(round(seconds * 1e3, 3))
        row.commit_ms.append(round(last["commit"] * 1e3, 3))
        row.open_ms.append(round(last["open"] * 1e3, 3))
        postcard = pcs_proof_to_postcard(last["stacked"].proved.proof)
        if row.proof_sha256 is None:
            row.proof_bytes, row.proof_sha256, stacked_document = len(postcard), _sha(postcard), last["stacked"]
        elif _sha(postcard) != row.proof_sha256:
            row.fail(f"run {i + 1}'s stacked proof differs from run 1's (the backend is not deterministic)")
        row.one_proof_ms.append(round(one_proof_once(f"run {i + 1}/{bench.runs}") * 1e3, 3))
        if _sha(pcs_proof_to_postcard(last["one"].proved.proof)) != row.proof_sha256:
            row.fail(f"run {i + 1}'s one-proof stacked proof differs from commit + open's")
        row.single_ms.append(round(single_once(f"run {i + 1}/{bench.runs}") * 1e3, 3))
        postcard = pcs_proof_to_postcard(last["single"].proved.proof)
        if single_sha is None:
            row.single_proof_bytes, single_sha, single_document = len(postcard), _sha(postcard), last["single"]
        elif _sha(postcard) != single_sha:
            row.fail(f"run {i + 1}'s single-column proof differs from run 1's (the backend is not deterministic)")
    on_step(f"{row.backend}  verify")
    verify(stacked_document, params=P3Expected(config, tables=spec),
           points=stacked_document.points if spec.prescribed else None)
    verify(single_document, params=P3Expected(config, num_openings=1, prescribed=False))
    row.verified = True


def run_tables_bench(spec: TablesSpec, config: P3WhirConfig, backends: dict[str, Backend], runs: int, warmup: int,
                     seed: int, on_step: StepCallback | None = None, devices: dict[str, str] | None = None
                     ) -> TablesBench:
    """Time every backend (module contract)."""
    bench = TablesBench(spec, config, runs, warmup, seed)
    step = on_step or (lambda description: None)
    for name, backend in backends.items():
        row = TablesRow(name, (devices or {}).get(name, ""))
        bench.rows.append(row)
        if not getattr(backend, "proves_tables", False):
            row.skipped = f"the {backend.name} backend does not prove stacked tables yet (issue 38 item 2)"
            continue
        try:
            _time_backend(bench, row, backend, step)
        except Exception as exc:  # noqa: BLE001 - one backend failing must not end the others
            row.fail(f"proving failed: {type(exc).__name__}: {exc}")
            row.verified = None
    reference = next((row for row in bench.rows if row.proof_sha256), None)
    for row in bench.rows:
        if row.proof_sha256 and row.proof_sha256 != reference.proof_sha256:
            row.fail(f"its stacked proof differs from {reference.backend}'s")
    return bench


def tables_table(bench: TablesBench) -> TextTable:
    """One row per backend: stacked (commit + open), commit, open, single, ratio, sizes, verdict."""
    headers = ["backend", "stacked ms\n(commit+open)", "commit\nms", "open\nms", "one proof\nms", "single\nms",
               "stacked /\nsingle", "one proof /\nsingle", "proof\nbytes", "proofs"]
    c = bench.spec.canonical()
    p = bench.config.params
    table = TextTable(title=f"whirgpu bench --tables {c['tables']} --layout {c['layout']} --open {c['open'] or '/'} "
                            f"--points {c['points']}: p3-whir {bench.config.field.name} n={bench.config.num_variables} "
                            f"fold={p.folding.k} rate={p.starting_log_inv_rate} pow_bits={p.pow_bits}",
                      headers=headers, right=[False] + [True] * 8 + [False])
    for row in bench.rows:
        if row.skipped:
            table.rows.append([row.backend] + ["-"] * 8 + ["skipped"])
            continue
        median = TablesRow._median
        ratio, one_ratio = row.ratio, row.one_proof_ratio
        verdict = "error" if row.error else "ok" if row.verified else "unverified"
        if row.error:
            table.bad.add((len(table.rows), len(headers) - 1))
        table.rows.append([row.backend, format_ms(row.stacked_median) or "failed", format_ms(median(row.commit_ms)),
                           format_ms(median(row.open_ms)), format_ms(row.one_proof_median),
                           format_ms(row.single_median), "" if ratio is None else f"{ratio:.2f}x",
                           "" if one_ratio is None else f"{one_ratio:.2f}x", str(row.proof_bytes or ""), verdict])
    return table


def tables_notes(bench: TablesBench) -> list[str]:
    lines = [f"{row.backend}: {row.device}" for row in bench.rows if row.device]
    lines.append(f"times: ms of wall clock, median of {bench.runs} timed run{'s' * (bench.runs != 1)} after "
                 f"{bench.warmup} warm-up run{'s' * (bench.warmup != 1)} of each kind (backends that replay: first "
                 f"until a single-column proof is replayed); instance seed {bench.seed} (the oracle's tables)")
    lines.append("stacked: P3Tables.commit() + open(batches) as a user calls them (the root read back between); "
                 "one proof: P3Tables.prove(batches), the same bytes in one proof; single: P3Prover.prove of one "
                 "column of the same stacked n under the same configuration, one opening from the transcript; "
                 "ratios: of the medians")
    for row in bench.rows:
        if row.skipped:
            lines.append(f"skipped {row.backend}: {row.skipped}")
            continue
        if row.error:
            lines.append(f"! {row.backend}: {row.error}")
        if row.single_steady is False:
            lines.append(f"~ {row.backend}: no single-column warm-up proof was replayed: not the steady state")
        if row.stacked_steady is False:
            lines.append(f"~ {row.backend}: no stacked warm-up opening was replayed: not the steady state")
        if row.one_proof_steady is False:
            lines.append(f"~ {row.backend}: no one-proof warm-up was replayed: not the steady state")
    return lines


def render_tables_bench(bench: TablesBench, markdown: bool) -> None:
    """The table and the notes on stdout (``report``'s rich table or markdown)."""
    from .report import console, to_markdown, to_rich  # noqa: PLC0415

    table, lines = tables_table(bench), tables_notes(bench)
    if markdown:
        print(to_markdown(table))
        print()
        print("\n".join(f"- {line}" for line in lines))
        return
    out = console()
    out.print(table.title, style="bold", markup=False)
    out.print(to_rich(table))
    for line in lines:
        out.print(line, markup=False, style="red" if line.startswith("!") else None)
