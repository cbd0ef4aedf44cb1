"""``whirgpu bench --tables``: the stacked commitment + opening timed beside the single-column proof of the same
stacked n, per backend that proves tables (``bench.tables``), end to end through the CLI (markdown, JSON, exit
codes, one-line refusals) and through ``run_tables_bench`` on every backend that proves tables (a GPU backend skips
with the reason until it says ``proves_tables``; one that does not is a ``skipped`` row in a run)."""

from __future__ import annotations

import json
import statistics

import pytest

from tests.protocol.test_p3_tables import make_backend
from tests.test_cli import run
from whirgpu.backends.cpu import CpuBackend
from whirgpu.bench.tables import TablesRow, run_tables_bench, tables_table
from whirgpu.profiles.p3_whir.expectations import p3_expected_config
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec

TABLES = ["--tables", "6x2,4x1", "--open", "0:0,1:1/1:0", "--fold", "2", "--pow-bits", "0"]
BENCH_BACKENDS = ["cpu", "wgpu-u64", "msl-cpu-mulhi"]  # as tests/protocol/test_p3_tables.py names them


def _small():
    spec = TablesSpec.parse("6x2,4x1", "0:0,1:1/1:0", "prefix", "prescribed")
    return spec, p3_expected_config(8, 2, 1, security_level=32, pow_bits=0)


def test_the_cli_prints_both_columns_and_their_ratio(capsys, tmp_path):
    out_json = tmp_path / "tables.json"
    code, out, err = run(["bench", *TABLES, "--backends", "cpu", "--runs", "3", "--warmup", "1", "--markdown",
                          "--json", out_json], capsys)
    assert code == 0, err
    assert "stacked ms (commit+open)" in out and "single ms" in out and "stacked / single" in out
    assert "one proof ms" in out and "one proof / single" in out
    row = next(line for line in out.splitlines() if line.startswith("| cpu"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[-1] == "ok" and cells[6].endswith("x") and cells[7].endswith("x")
    doc = json.loads(out_json.read_text())
    assert doc["kind"] == "tables" and doc["settings"]["tables"] == "6x2,4x1"
    assert doc["settings"]["num_variables"] == 8 and doc["settings"]["folding_factor"] == 2
    (saved,) = doc["rows"]
    assert len(saved["stacked_ms"]) == len(saved["single_ms"]) == len(saved["commit_ms"]) == 3
    assert saved["ratio"] == pytest.approx(statistics.median(saved["stacked_ms"]) /
                                           statistics.median(saved["single_ms"]))
    assert len(saved["one_proof_ms"]) == 3
    assert saved["one_proof_ratio"] == pytest.approx(statistics.median(saved["one_proof_ms"]) /
                                                     statistics.median(saved["single_ms"]))
    assert saved["verified"] is True and saved["error"] is None
    assert "--tables 6x2,4x1 --layout suffix --open 0:0,1:1/1:0:" in doc["command"]


@pytest.mark.parametrize("argv, message", [
    (["bench", "--open", "0:0"], "--open refines --tables"),
    (["bench", "--fold", "3"], "--fold refines --tables"),
    (["bench", "--tables", "6x2", "--grid", "8:2:1"], "does not take --grid"),
    (["bench", "--tables", "6x2", "--phases"], "does not take --phases"),
    (["bench", "--tables", "6y2"], "not LOGROWSxCOLUMNS"),
    (["bench", "--tables", "6x2", "--open", "3:0"], "table 3 does not exist"),
    (["bench", "--tables", "6x2", "--layout", "middle"], "suffix or prefix"),
    (["bench", "--tables", "6x2", "--runs", "0"], "at least 1 timed run"),
])
def test_refusals_are_one_line(capsys, argv, message):
    code, out, err = run([*argv, "--backends", "cpu"], capsys)
    assert code == 1 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name", BENCH_BACKENDS)
def test_every_backend_that_proves_tables_proves_the_same_bytes(name):
    spec, config = _small()
    backend = make_backend(name)  # a GPU backend skips with the reason until it proves tables
    try:
        bench = run_tables_bench(spec, config, {"cpu": CpuBackend(), name + "'": backend}, 2, 0, 7)
    finally:
        backend.close()
    assert not bench.has_errors, [row.error for row in bench.rows]
    reference, row = bench.rows
    assert row.proof_sha256 == reference.proof_sha256 and row.verified
    assert len(row.stacked_ms) == 2 and row.ratio == pytest.approx(row.stacked_median / row.single_median)
    assert len(row.one_proof_ms) == 2 and row.one_proof_ratio == pytest.approx(row.one_proof_median /
                                                                               row.single_median)


class NoTables(CpuBackend):
    proves_tables = False


class Broken(CpuBackend):
    def commit(self, table, log_folding, log_height):
        raise RuntimeError("no codeword today")


def test_a_backend_without_tables_is_skipped_and_a_failure_is_its_row():
    spec, config = _small()
    bench = run_tables_bench(spec, config, {"cpu": CpuBackend(), "plain": NoTables(), "broken": Broken()}, 1, 0, 1)
    ok, skipped, broken = bench.rows
    assert ok.verified and not ok.error
    assert skipped.skipped and "does not prove stacked tables" in skipped.skipped and not skipped.stacked_ms
    assert "no codeword today" in broken.error and bench.has_errors
    cells = tables_table(bench).rows
    assert cells[1][-1] == "skipped" and cells[2][-1] == "error"
    assert TablesRow("x").ratio is None and TablesRow("x").one_proof_ratio is None
