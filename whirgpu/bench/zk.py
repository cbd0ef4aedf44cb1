"""``whirgpu bench --tables SPEC --zk``: the zero-knowledge proof of stacked tables timed beside the same proof
without zero knowledge, per backend (the cpu backend's hiding prover is the numpy reference; a GPU backend's is
``ZkBackendProver`` on it, the same bytes for the same masks).

Contract: ``run_zk_bench(spec, config, zk_config, backends, runs, warmup, seed, on_step=None, devices=None)
-> ZkBench``:
- ``spec`` a prefix, prescribed ``TablesSpec`` (current columns only), ``config`` the stacked ``P3WhirConfig``,
  ``zk_config`` the ``ZkWhirConfig`` of the same parameters; ``backends`` {spec text: open ``Backend``}, in row
  order; ``devices`` {spec text: device description} for the rows.
- The instance is the oracle's (``tables.instance.draw_instance``: tables and points from SmallRng(seed)), the
  same on every backend.
- Per backend that proves tables (``Backend.proves_tables``; any other gets a row saying it is skipped): untimed
  warm-up rounds (``steady.warm_up``: on a backend that replays recorded proofs, until a plain proof is replayed
  or ``REPLAY_WARMUPS`` rounds were made, then ``warmup`` more), then ``runs`` timed rounds, each one plain proof
  (``P3Tables(..., layout="prefix", backend=BACKEND).prove(batches, points)``) and one hiding proof
  (``zk.api.prove_zk_statement(..., backend=BACKEND)``; None, the numpy reference, on a ``CpuBackend``; masks from
  the OS CSPRNG), alternated so load on the host weighs on both alike. One document of each is verified through
  ``whirgpu.verify`` (untimed).
- Every plain proof must be byte for byte the backend's first (else the row's ``error``), and every backend's plain
  proof must have the same sha256 (the first timed backend's is the reference; a mismatch is an ``error``). The
  hiding proofs differ run to run (fresh masks) and are not compared.
A backend that raises gets its error in its row and the others go on; ``ZkBench.has_errors`` (a row with an error,
or no row timed) is the CLI's exit code 1. ``render_zk_bench(bench)`` gives the lines to print (a header, then one
block per backend with its device); ``ZkBench.to_json()`` is what ``--json`` writes: the settings and one row per
backend (name, device, per-run ms, medians, ratio = zk / plain, proof sizes and sha256, skipped or error).
"""

from __future__ import annotations

import hashlib
import statistics
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from ..backends import Backend, CpuBackend
from ..profiles.p3_whir.config import P3WhirConfig
from ..profiles.p3_whir.format import pcs_proof_to_postcard
from ..profiles.p3_whir.tables.api import P3Tables
from ..profiles.p3_whir.tables.instance import draw_instance
from ..profiles.p3_whir.tables.spec import TablesSpec
from ..profiles.p3_whir.zk.api import prove_zk_statement
from ..profiles.p3_whir.zk.config import ZkWhirConfig
from ..ref.field_np import field_ops
from ..verifying import verify
from .steady import warm_up

StepCallback = Callable[[str], None]


@dataclass
class ZkRow:
    """One backend's figures (milliseconds; module contract)."""

    backend: str
    device: str = ""
    plain_ms: list[float] = field(default_factory=list)
    zk_ms: list[float] = field(default_factory=list)
    plain_warmup_ms: list[float] = field(default_factory=list)
    zk_warmup_ms: list[float] = field(default_factory=list)
    steady: bool | None = None  # as ``steady.Warmup.steady``, for the plain proofs
    plain_proof_bytes: int | None = None
    plain_proof_sha256: str | None = None
    zk_proof_bytes: int | None = None
    verified: bool | None = None
    skipped: str | None = None
    error: str | None = None

    @property
    def plain_median(self) -> float | None:
        return statistics.median(self.plain_ms) if self.plain_ms else None

    @property
    def zk_median(self) -> float | None:
        return statistics.median(self.zk_ms) if self.zk_ms else None

    @property
    def ratio(self) -> float | None:
        plain, zk = self.plain_median, self.zk_median
        return None if zk is None or not plain else zk / plain

    def fail(self, message: str) -> None:
        self.error = message if self.error is None else f"{self.error}; {message}"


@dataclass
class ZkBench:
    """The rows and what they were run with."""

    spec: TablesSpec
    config: P3WhirConfig
    zk_config: ZkWhirConfig
    runs: int
    warmup: int
    seed: int
    rows: list[ZkRow] = field(default_factory=list)
    date: str = ""
    command: str = ""
    host: dict = field(default_factory=dict)

    @property
    def has_errors(self) -> bool:
        return any(row.error for row in self.rows) or not any(row.zk_ms for row in self.rows)

    def settings(self) -> dict:
        p, c = self.config.params, self.spec.canonical()
        return {"tables": c["tables"], "open": c["open"], "layout": "prefix", "points": "prescribed",
                "num_variables": self.config.num_variables, "field": self.config.field.name,
                "folding_factor": p.folding.k, "rate": p.starting_log_inv_rate, "security": p.security_level,
                "pow_bits": p.pow_bits, "ell_zk": self.zk_config.ell_zk,
                "mask_log_inv_rate": self.zk_config.mask_log_inv_rate, "runs": self.runs, "warmup": self.warmup,
                "seed": self.seed, "backends": [row.backend for row in self.rows]}

    def to_json(self) -> dict:
        return {"kind": "zk", "date": self.date, "command": self.command, "host": self.host,
                "settings": self.settings(),
                "rows": [{**asdict(row), "plain_median_ms": row.plain_median, "zk_median_ms": row.zk_median,
                          "ratio": row.ratio} for row in self.rows]}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _time_backend(bench: ZkBench, row: ZkRow, backend: Backend, on_step: StepCallback) -> None:
    spec, config = bench.spec, bench.config
    field_ = config.field
    columns, points = draw_instance(spec.protocol, bench.seed, field_, config.folding_schedule[0], True)
    canonical_points = [field_ops(field_).from_monty(p).astype("int64") for p in points]
    zk_backend = None if isinstance(backend, CpuBackend) else backend  # cpu: the numpy reference
    tables = P3Tables(list(columns), orient="columns", params=config.params, field=field_, layout="prefix",
                      backend=backend)
    last: dict = {}

    def round_once(what: str) -> float:
        """One plain proof, then one hiding proof; the plain one's seconds (what ``warm_up`` waits on)."""
        on_step(f"{row.backend}  plain {what}")
        start = time.perf_counter()
        last["plain"] = tables.prove(spec.protocol.batches, canonical_points)
        middle = time.perf_counter()
        on_step(f"{row.backend}  zk {what}")
        last["zk"] = prove_zk_statement(bench.zk_config, spec, columns, points, None, bench.seed, backend=zk_backend)
        end = time.perf_counter()
        last["plain_s"], last["zk_s"] = middle - start, end - middle
        return middle - start

    try:
        zk_warmups: list[float] = []

        def warm(i: int, total: int | None) -> float:
            seconds = round_once(f"warm-up {i}")
            zk_warmups.append(round(last["zk_s"] * 1e3, 3))
            return seconds

        warmup = warm_up(backend, warm, bench.warmup)
        row.plain_warmup_ms, row.steady = [round(s * 1e3, 3) for s in warmup.seconds], warmup.steady
        row.zk_warmup_ms = zk_warmups
        for i in range(bench.runs):
            round_once(f"run {i + 1}/{bench.runs}")
            row.plain_ms.append(round(last["plain_s"] * 1e3, 3))
            row.zk_ms.append(round(last["zk_s"] * 1e3, 3))
            postcard = pcs_proof_to_postcard(last["plain"].proved.proof)
            if row.plain_proof_sha256 is None:
                row.plain_proof_bytes, row.plain_proof_sha256 = len(postcard), _sha(postcard)
                row.zk_proof_bytes, plain_doc, zk_doc = last["zk"].tree["proof_postcard_len"], last["plain"], last["zk"]
            elif _sha(postcard) != row.plain_proof_sha256:
                row.fail(f"run {i + 1}'s plain proof differs from run 1's (the backend is not deterministic)")
    finally:
        tables.close()
    on_step(f"{row.backend}  verify")
    verify(plain_doc)
    verify(zk_doc)
    row.verified = True


def run_zk_bench(spec: TablesSpec, config: P3WhirConfig, zk_config: ZkWhirConfig, backends: dict[str, Backend],
                 runs: int, warmup: int, seed: int, on_step: StepCallback | None = None,
                 devices: dict[str, str] | None = None) -> ZkBench:
    """Time every backend (module contract)."""
    bench = ZkBench(spec, config, zk_config, runs, warmup, seed)
    step = on_step or (lambda description: None)
    for name, backend in backends.items():
        row = ZkRow(name, (devices or {}).get(name, ""))
        bench.rows.append(row)
        if not getattr(backend, "proves_tables", False):
            row.skipped = f"the {backend.name} backend does not prove stacked tables"
            continue
        try:
            _time_backend(bench, row, backend, step)
        except Exception as exc:  # noqa: BLE001 - one backend failing must not end the others
            row.fail(f"proving failed: {type(exc).__name__}: {exc}")
            row.verified = None
    reference = next((row for row in bench.rows if row.plain_proof_sha256), None)
    for row in bench.rows:
        if row.plain_proof_sha256 and row.plain_proof_sha256 != reference.plain_proof_sha256:
            row.fail(f"its plain proof differs from {reference.backend}'s (sha256 {row.plain_proof_sha256[:16]}... "
                     f"against {reference.plain_proof_sha256[:16]}...)")
    return bench


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:10.1f} ms"


def render_zk_bench(bench: ZkBench) -> list[str]:
    """A header line, then one block per backend (module contract)."""
    s = bench.settings()
    lines = [f"zk bench: --tables {s['tables']} --open {s['open']} (prefix, prescribed points) "
             f"n={s['num_variables']} {s['field']} fold={s['folding_factor']} rate={s['rate']} "
             f"security={s['security']} pow_bits={s['pow_bits']} ell_zk={s['ell_zk']} "
             f"mask_log_inv_rate={s['mask_log_inv_rate']}, median of {bench.runs} timed run"
             f"{'s' * (bench.runs != 1)} after {bench.warmup} warm-up round{'s' * (bench.warmup != 1)} (backends "
             "that replay: first until a plain proof is replayed)"]
    for row in bench.rows:
        lines.append(f"{row.backend}: {row.device}" if row.device else f"{row.backend}:")
        if row.skipped:
            lines.append(f"  skipped: {row.skipped}")
            continue
        if row.plain_ms:
            lines.append(f"  plain (P3Tables prefix)  {_ms(row.plain_median)}  proof {row.plain_proof_bytes} bytes")
            lines.append(f"  zk (HidingWhirPcs)       {_ms(row.zk_median)}  proof {row.zk_proof_bytes} bytes")
            lines.append(f"  ratio zk / plain         {row.ratio:10.2f}x" if row.ratio is not None
                         else "  ratio zk / plain         -")
            if row.steady is False:
                lines.append("  ~ no plain warm-up proof was replayed: not the steady state")
        if row.error:
            lines.append(f"  ! error: {row.error}")
        elif row.verified:
            lines.append("  both proofs verified; plain proof sha256 " + row.plain_proof_sha256)
    return lines


__all__ = ["ZkBench", "ZkRow", "render_zk_bench", "run_zk_bench"]
