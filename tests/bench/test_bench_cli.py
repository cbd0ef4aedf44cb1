"""``whirgpu bench`` end to end through ``whirgpu.cli.commands``: a real run of a tiny grid on every backend (table,
markdown and JSON agree; proofs are identical and verified), --load merging, --plot, Rust baselines, a corrupted
backend, Ctrl-C, and bad inputs (one line, exit 1).

Backends that need wgpu or msl-cpu are opened through tests/backend/conftest.py's ``open_runtime`` first, so an
unavailable one skips with its reason (a failure when WHIRGPU_REQUIRE names it); nothing falls back to the CPU.
"""

from __future__ import annotations

import contextlib
import io
import json
import statistics
import sys
import types

import numpy as np
import pytest

from tests.backend.conftest import open_runtime
from tests.test_cli import run
from whirgpu.cli import commands as cli
from whirgpu.backends.base import DeviceLimits
from whirgpu.bench import runner
from whirgpu.bench.backends import BackendSpec, describe
from whirgpu.bench.grid import GRIDS, GridPoint, parse_grid
from whirgpu.bench.report import format_ms, format_speedup
from whirgpu.bench.results import SCHEMA, BenchResults, Row, from_json, to_json
from whirgpu.errors import BackendUnavailable, ConfigError
from whirgpu.field import P

TINY = "8:2:1,10:4:1"
ALL_BACKENDS = ["cpu", "wgpu:u64", "wgpu:emulated", "dawn", "msl-cpu"]


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, f"expected one line, got {text!r}"
    return lines[0]


def require(*names: str) -> None:
    """Skip (or fail, under WHIRGPU_REQUIRE) unless every named runtime opens here."""
    for name in names:
        open_runtime(name, {"wgpu": "emulated", "dawn": "emulated", "msl-cpu": "mulhi"}[name])


def table_rows(out: str) -> dict[str, list[str]]:
    """The rich table's body rows keyed by 'n:fold:rate' (cells stripped)."""
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) > 3 and all(c.isdigit() for c in cells[:3]):
            rows[":".join(cells[:3])] = cells
    return rows


def markdown_rows(out: str) -> dict[str, list[str]]:
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) > 3 and all(c.isdigit() for c in cells[:3]):
            rows[":".join(cells[:3])] = cells
    return rows


def synthetic(rows: list[tuple[str, str, list[float], str]], **settings) -> dict:
    """A saved result document holding ``rows`` of (point, backend, runs_ms, sha256), written by the real code."""
    results = BenchResults(date="2026-01-01T00:00:00+00:00", command="whirgpu bench (synthetic)",
                           host={"cpu": "test"}, settings={"runs": 3, "warmup": 1, "seed": 1, **settings})
    for point, backend, runs_ms, sha in rows:
        results.backends[backend] = {"device": f"device of {backend}", "storage": None}
        results.add(Row(parse_grid(point)[0], backend, f"device of {backend}", list(runs_ms), None, 100, sha, True))
    return to_json(results)


def write(path, doc) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WHIRGPU_STORAGE", raising=False)
    monkeypatch.delenv("WHIRGPU_DEBUG", raising=False)


# ---- grids and specs -------------------------------------------------------------------------------------------

def test_parse_grid_names_and_lists():
    assert len(parse_grid("default")) == 29 and len(parse_grid("full")) == 45 and len(parse_grid("small")) == 8
    assert parse_grid("default") == GRIDS["default"]
    assert parse_grid(" 20:4:1, 8:2:1,20:4:1,") == [GridPoint(20, 4, 1), GridPoint(8, 2, 1)]
    for bad, message in (("nope", "unknown grid"), ("20:4", "is not N:F:R"), ("20:x:1", "is not N:F:R"),
                         (",", "empty grid"), ("4:9:1", "4:9:1:")):
        with pytest.raises(ConfigError, match=message):
            parse_grid(bad)


def test_describe_names_a_software_adapter_once():
    class Fake:
        name = "wgpu"
        rt = types.SimpleNamespace(mul="u64")

        def limits(self):
            return DeviceLimits("llvmpipe (LLVM 15) (CPU) via Vulkan", "Vulkan", "CPU", 1, 1)

    assert describe(Fake()) == "llvmpipe (LLVM 15) via Vulkan, software adapter, u64 multiply"
    Fake.name, Fake.rt = "dawn", types.SimpleNamespace(mul="emulated")
    assert describe(Fake()) == "llvmpipe (LLVM 15) via Vulkan, software adapter, emulated multiply"
    Fake.name, Fake.rt = "cpu", None
    Fake.limits = lambda self: DeviceLimits("numpy reference (2 CPU cores)", "numpy", "CPU", 1, 1)
    assert describe(Fake()) == "numpy reference (2 CPU cores)"
    Fake.limits = lambda self: DeviceLimits("Big GPU via Vulkan", "Vulkan", "DiscreteGPU", 1, 1)
    assert describe(Fake()) == "Big GPU via Vulkan [DiscreteGPU]"


# ---- a real run on every backend -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """One real run: TINY on cpu, both WGSL multiplies on wgpu-native, Dawn and msl-cpu, 2 timed runs, with phases
    and JSON. -> (exit code, stdout, the JSON document, its path)."""
    require("wgpu", "dawn", "msl-cpu")
    path = tmp_path_factory.mktemp("bench") / "tiny.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(["bench", "--grid", TINY, "--backends", ",".join(ALL_BACKENDS), "--runs", "2",
                         "--warmup", "0", "--phases", "--quiet", "--json", str(path)])
    return code, out.getvalue(), json.loads(path.read_text()), path


def test_tiny_run_json(tiny_run):
    code, _, doc, _ = tiny_run
    assert code == 0
    assert doc["schema"] == SCHEMA
    assert doc["command"].startswith(f"whirgpu bench --grid {TINY} --backends {','.join(ALL_BACKENDS)} --runs 2")
    assert set(doc["host"]) == {"cpu", "cores", "os", "python", "numpy", "whirgpu"}
    assert doc["settings"]["points"] == TINY.split(",") and doc["settings"]["backends"] == ALL_BACKENDS
    assert (doc["settings"]["runs"], doc["settings"]["warmup"], doc["settings"]["seed"]) == (2, 0, 1)
    assert list(doc["backends"]) == ALL_BACKENDS and doc["skipped"] == {} and doc["interrupted"] is False
    assert "software adapter" in doc["backends"]["wgpu:u64"]["device"] or "wgpu" not in doc["backends"]
    assert doc["backends"]["dawn"]["device"].endswith("emulated multiply")
    results = doc["results"]
    assert [(r["point"], r["backend"]) for r in results] == [(p, b) for p in TINY.split(",") for b in ALL_BACKENDS]
    for r in results:
        assert r["error"] is None and r["verified"] is True
        assert len(r["runs_ms"]) == 2
        assert r["median_ms"] == round(statistics.median(r["runs_ms"]), 3)
        assert r["device"] == doc["backends"][r["backend"]]["device"]
        assert "pow" in r["phases_ms"] and "other" in r["phases_ms"]
    for point in TINY.split(","):
        rows = [r for r in results if r["point"] == point]
        assert len({r["proof_sha256"] for r in rows}) == 1, "every backend proves the same bytes"
        assert len({r["proof_bytes"] for r in rows}) == 1


def test_tiny_run_summary_is_baseline_over_best(tiny_run):
    _, _, doc, _ = tiny_run
    for s in doc["summary"]:
        rows = {r["backend"]: r for r in doc["results"] if r["point"] == s["point"]}
        kernels = {b: r["median_ms"] for b, r in rows.items() if b != "cpu"}
        assert kernels[s["best"]] == min(kernels.values())  # the fastest (either one, when two medians tie)
        assert s["baseline"] == "cpu" and s["baseline_ms"] == rows["cpu"]["median_ms"]
        assert s["speedup"] == pytest.approx(s["baseline_ms"] / s["best_ms"], rel=1e-3)


def test_tiny_run_table_matches_json(tiny_run):
    _, out, doc, _ = tiny_run
    rows = table_rows(out)
    assert list(rows) == TINY.split(",")
    header = next(line for line in out.splitlines() if "cpu" in line and "wgpu:u64" in line)
    assert header.index("cpu") < header.index("wgpu:u64") < header.index("wgpu:emulated") < header.index("dawn") \
        < header.index("msl-cpu")
    for s in doc["summary"]:
        cells = rows[s["point"]]
        medians = [r["median_ms"] for r in doc["results"] if r["point"] == s["point"]]
        security = next(r["security_bits"] for r in doc["results"] if r["point"] == s["point"])
        assert cells[3] == f"{security['provable']} {security['regime']}, {security['conjectural']} conj."
        firsts = [r["first_ms"] for r in doc["results"] if r["point"] == s["point"]]
        k = len(ALL_BACKENDS)
        assert cells[4:4 + k] == [format_ms(m) for m in medians]
        assert cells[4 + k:4 + 2 * k] == [format_ms(f) for f in firsts]  # the first proof's own columns
        assert cells[4 + 2 * k:] == [format_speedup(s["baseline_ms"] / s["best_ms"]), s["best"], "ok"]
    assert "Per phase (ms)" in out
    for backend, entry in doc["backends"].items():
        assert f"{backend}: {entry['device']}" in out


def test_markdown_from_the_saved_run(tiny_run, capsys):
    _, out, doc, path = tiny_run
    code, md, _ = run(["bench", "--load", path, "--markdown"], capsys)
    assert code == 0
    assert md.splitlines()[0] == f"**whirgpu bench: 2 points x {len(ALL_BACKENDS)} backends**"
    assert "| n | fold | rate | provable bits | cpu ms | wgpu:u64 ms |" in md
    assert markdown_rows(md) == table_rows(out)
    assert "- cpu: numpy reference" in md


# ---- correctness checks ----------------------------------------------------------------------------------------

def _corrupting_prover(monkeypatch, corrupt):
    """Make Prover's proofs wrong on the backends for which ``corrupt(backend)`` is true."""

    class Corrupting(runner.Prover):
        def prove(self, evaluations, points):
            proof_file = super().prove(evaluations, points)
            if corrupt(self.backend):
                sums = proof_file.proof.initial_sumcheck.evaluations.copy()
                sums[0, 0, 0] = (int(sums[0, 0, 0]) + 1) % P
                proof_file.proof.initial_sumcheck.evaluations = sums
            return proof_file

    monkeypatch.setattr(runner, "Prover", Corrupting)


def test_a_backend_that_proves_other_bytes_is_an_error(monkeypatch, tmp_path, capsys):
    require("wgpu")
    _corrupting_prover(monkeypatch, lambda backend: backend.name == "wgpu")
    code, out, _ = run(["bench", "--grid", "8:2:1", "--backends", "cpu,wgpu:emulated", "--runs", 1, "--warmup", 0,
                        "--quiet", "--json", tmp_path / "r.json"], capsys)
    assert code == 1
    assert table_rows(out)["8:2:1"][-1] == "error"
    assert "! 8:2:1 wgpu:emulated: proof differs from cpu's" in out
    rows = {r["backend"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert rows["cpu"]["error"] is None and rows["cpu"]["verified"] is True
    assert "differs from cpu's" in rows["wgpu:emulated"]["error"]
    summary = json.loads((tmp_path / "r.json").read_text())["summary"][0]
    assert summary["best"] is None and summary["speedup"] is None  # an errored row is not a candidate


def test_a_rejected_proof_is_an_error(monkeypatch, capsys):
    _corrupting_prover(monkeypatch, lambda backend: True)
    code, out, _ = run(["bench", "--grid", "8:2:1", "--backends", "cpu", "--runs", 1, "--warmup", 0, "--quiet"],
                       capsys)
    assert code == 1
    assert "! 8:2:1 cpu: proof rejected by the verifier" in out


def test_a_backend_that_fails_to_prove_is_reported_and_the_grid_goes_on(monkeypatch, capsys):
    class Failing(runner.Prover):
        def prove(self, evaluations, points):
            if self.config.num_variables == 8:
                raise MemoryError("out of memory (test)")
            return super().prove(evaluations, points)

    monkeypatch.setattr(runner, "Prover", Failing)
    code, out, _ = run(["bench", "--grid", "8:2:1,10:4:1", "--backends", "cpu", "--runs", 1, "--warmup", 0,
                        "--quiet"], capsys)
    assert code == 1
    rows = table_rows(out)
    assert rows["8:2:1"][4] == "failed" and rows["10:4:1"][-1] == "ok"
    assert "! 8:2:1 cpu: proving failed: MemoryError: out of memory (test)" in out


# ---- --load, --baseline, --reference, --plot -------------------------------------------------------------------

def test_load_merges_files_later_rows_win(tmp_path, capsys):
    first = write(tmp_path / "a.json", synthetic([("20:4:1", "cpu", [1000.0, 1200.0, 1100.0], "aa"),
                                                  ("20:4:1", "wgpu", [90.0], "aa"),
                                                  ("22:4:1", "cpu", [4000.0], "bb")]))
    second = write(tmp_path / "b.json", synthetic([("20:4:1", "wgpu", [50.0], "aa"),
                                                   ("22:4:1", "metal", [40.0], "bb")]))
    code, out, _ = run(["bench", "--load", first, second, "--json", tmp_path / "m.json"], capsys)
    assert code == 0
    rows = table_rows(out)
    assert rows["20:4:1"][4:] == ["1100", "50.0", "", "22.0x", "wgpu", "ok"]
    assert rows["22:4:1"][4:] == ["4000", "", "40.0", "100x", "metal", "ok"]
    merged = json.loads((tmp_path / "m.json").read_text())
    assert [s["file"] for s in merged["sources"]] == [first, second]
    assert list(merged["backends"]) == ["cpu", "wgpu", "metal"]
    assert {(r["point"], r["backend"]): r["median_ms"] for r in merged["results"]}[("20:4:1", "wgpu")] == 50.0
    # a merged file loads again, unchanged
    code, again, _ = run(["bench", "--load", tmp_path / "m.json"], capsys)
    assert code == 0 and table_rows(again) == rows


def test_load_finds_proofs_that_differ_across_files(tmp_path, capsys):
    first = write(tmp_path / "a.json", synthetic([("20:4:1", "cpu", [1000.0], "aa")]))
    second = write(tmp_path / "b.json", synthetic([("20:4:1", "wgpu", [50.0], "cc")]))
    code, out, _ = run(["bench", "--load", first, second], capsys)
    assert code == 1
    assert "! 20:4:1 wgpu: proof differs from cpu's" in out


def test_rust_baseline_on_default_grid_points(tmp_path, capsys):
    doc = synthetic([("20:4:1", "wgpu", [57.5], "aa"), ("22:6:1", "wgpu", [105.0], "bb"),
                     ("10:4:1", "wgpu", [5.0], "cc")])
    path = write(tmp_path / "r.json", doc)
    code, out, _ = run(["bench", "--load", path, "--baseline", "rust-16core"], capsys)
    assert code == 0
    rows = table_rows(out)
    assert rows["20:4:1"][4:] == ["57.5", "115", "2.00x", "wgpu", "ok"]   # wgpu, rust-16core, speedup, best
    assert rows["22:6:1"][4:] == ["105", "210", "2.00x", "wgpu", "ok"]
    assert rows["10:4:1"][4:] == ["5.00", "-", "n/a", "wgpu", "ok"]       # not on the reference grid
    code, out, _ = run(["bench", "--load", path, "--baseline", "rust-m1-metal", "--reference", "--markdown"], capsys)
    assert code == 0
    assert "| n | fold | rate | provable bits | wgpu ms | rust-16core ms | rust-m1 ms | rust-m1-metal ms |" in out
    assert markdown_rows(out)["20:4:1"][4:] == ["57.5", "115", "49.0", "35.0", "0.61x", "wgpu", "ok"]


def test_cpu_baseline_without_cpu_rows_says_na(tmp_path, capsys):
    path = write(tmp_path / "r.json", synthetic([("20:4:1", "wgpu", [57.5], "aa")]))
    code, out, _ = run(["bench", "--load", path], capsys)
    assert code == 0 and table_rows(out)["20:4:1"][-3] == "n/a"
    assert "no cpu rows, so no speedup" in out


def test_plot_writes_a_png(tmp_path, capsys):
    from matplotlib.image import imread

    rows = [(str(p), "cpu", [1000.0], str(p)) for p in GRIDS["default"]]
    rows += [(str(p), "wgpu", [100.0 + 10 * i], str(p)) for i, p in enumerate(GRIDS["default"]) if i % 5]
    path = write(tmp_path / "r.json", synthetic(rows))
    code, _, err = run(["bench", "--load", path, "--plot", tmp_path / "speedup.png"], capsys)
    assert code == 0 and f"wrote {tmp_path / 'speedup.png'}" in err
    assert (tmp_path / "speedup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = imread(tmp_path / "speedup.png")
    assert image.ndim == 3 and image.shape[0] > 200 and image.shape[1] > 600


def test_plot_without_matplotlib_is_one_line_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    monkeypatch.setattr(runner, "run_grid", lambda *a, **k: pytest.fail("ran before checking --plot"))
    code, out, err = run(["bench", "--grid", "8:2:1", "--backends", "cpu", "--plot", tmp_path / "p.png"], capsys)
    assert code == 1 and out == ""
    assert one_line(err) == "error: --plot needs matplotlib: pip install 'matplotlib>=3.7'"


# ---- default backends, Ctrl-C, --kernels -----------------------------------------------------------------------

def test_an_unavailable_default_backend_is_skipped_with_its_reason(monkeypatch, tmp_path, capsys):
    from whirgpu.bench import backends as bench_backends

    real = bench_backends.open_backend

    def open_backend(spec, storage=None):
        if spec.name != "cpu":
            raise BackendUnavailable("no adapter (test)")
        return real(spec, storage)

    monkeypatch.setattr(bench_backends, "open_backend", open_backend)
    monkeypatch.setattr("whirgpu.bench.cli.default_specs", lambda: [BackendSpec("cpu"), BackendSpec("wgpu")])
    code, out, err = run(["bench", "--grid", "8:2:1", "--runs", 1, "--warmup", 0, "--quiet",
                          "--json", tmp_path / "r.json"], capsys)
    assert code == 0
    assert "skipping wgpu: no adapter (test)" in err and "skipped wgpu: no adapter (test)" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["skipped"] == {"wgpu": "no adapter (test)"} and list(doc["backends"]) == ["cpu"]
    # listed explicitly, the same backend is an error naming why
    code, _, err = run(["bench", "--grid", "8:2:1", "--backends", "cpu,wgpu"], capsys)
    assert code == 1 and one_line(err) == "error: backend wgpu cannot run here: no adapter (test)"


def test_ctrl_c_reports_what_finished_and_exits_130(monkeypatch, tmp_path, capsys):
    real, calls = runner._prove_once, []

    def prove_once(*args):
        calls.append(1)
        if len(calls) == 3:  # during the second point
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(runner, "_prove_once", prove_once)
    code, out, _ = run(["bench", "--grid", "8:2:1,10:4:1", "--backends", "cpu", "--runs", 2, "--warmup", 0,
                        "--quiet", "--json", tmp_path / "r.json"], capsys)
    assert code == 130
    assert list(table_rows(out)) == ["8:2:1"] and "interrupted" in out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["interrupted"] is True and len(doc["results"]) == 1


def test_kernels_dispatch_and_guard(monkeypatch, capsys):
    seen = {}

    def run_kernels(points, specs, runs, storage, json_path, markdown, quiet):
        seen.update(points=points, specs=specs, runs=runs, storage=storage, json=json_path, md=markdown, q=quiet)
        return 0

    monkeypatch.setitem(sys.modules, "whirgpu.bench.kernels", types.SimpleNamespace(run_kernels=run_kernels))
    code, _, _ = run(["bench", "--kernels", "--backends", "wgpu:u64", "--runs", 5, "--quiet"], capsys)
    assert code == 0
    assert seen == dict(points=[GridPoint(20, 4, 1)], specs=[BackendSpec("wgpu", "u64")], runs=5, storage=None,
                        json=None, md=False, q=True)
    code, _, err = run(["bench", "--kernels", "--plot", "x.png"], capsys)
    assert code == 1 and one_line(err) == "error: --kernels does not take --plot"
    monkeypatch.setitem(sys.modules, "whirgpu.bench.kernels", None)  # the module is missing
    code, _, err = run(["bench", "--kernels"], capsys)
    assert code == 1 and one_line(err) == "error: --kernels is not available yet"


# ---- bad inputs ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, message", [
    (["--runs", 0], "--runs 0: need at least 1 timed run"),
    (["--warmup", -1], "--warmup -1: cannot be negative"),
    (["--seed", -1], "--seed -1 is not a u64 seed"),
    (["--grid", "huge"], "unknown grid 'huge'"),
    (["--grid", "20:4"], "'20:4' is not N:F:R"),
    (["--backends", "gpu"], "unknown backend 'gpu'"),
    (["--backends", "wgpu:mulhi"], "'wgpu:mulhi': wgpu multiplies are"),
    (["--backends", "cpu:u64"], "the cpu backend has no multiply variants"),
    (["--backends", "dawn:u64"], "'dawn:u64': Dawn has no shader-int64 (its WGSL has no u64), so it runs only the "
                                 "emulated multiply: use dawn or dawn:emulated"),
    (["--backends", "dawn:mulhi"], "'dawn:mulhi': dawn multiplies are emulated"),
    (["--json", "no/such/folder/r.json"], "--json no/such/folder/r.json: cannot write there: No such file or "
                                          "directory"),
    (["--load", "missing.json"], "cannot read missing.json"),
    (["--load", "x.json", "--runs", "2"], "--load renders saved results and runs nothing; drop --runs"),
])
def test_bad_inputs_are_one_line_errors(argv, message, monkeypatch, capsys):
    """Exit 1 for a bad option, 2 for a file that cannot be read or written."""
    monkeypatch.setattr(runner, "run_grid", lambda *a, **k: pytest.fail("ran despite a bad option"))
    code, out, err = run(["bench", *argv], capsys)
    assert code == (2 if "cannot read" in message or "cannot write" in message else 1) and out == ""
    assert message in one_line(err) and one_line(err).startswith("error: ")


def test_a_file_that_is_not_a_bench_result(tmp_path, capsys):
    (tmp_path / "other.json").write_text(json.dumps({"schema": "something/1", "results": []}))
    code, _, err = run(["bench", "--load", tmp_path / "other.json"], capsys)
    assert code == 1 and "is not a whirgpu bench result (schema 'something/1'" in one_line(err)


def test_results_round_trip():
    doc = synthetic([("20:4:1", "cpu", [3.0, 1.0, 2.0], "aa"), ("20:4:1", "wgpu:u64", [0.5], "aa")])
    results = from_json(json.loads(json.dumps(doc)))
    assert results.row(GridPoint(20, 4, 1), "cpu").median_ms == 2.0
    assert to_json(results) == doc
    assert np.isclose(results.row(GridPoint(20, 4, 1), "wgpu:u64").median_ms, 0.5)


def test_the_provable_grids_are_the_default_grids_points_at_100_provable_bits():
    """Beside the seed's grid (capacity-bound conjecture), the same points derived under each provable regime."""
    from whirgpu.bench.grid import GRIDS, parse_grid
    from whirgpu.protocol.regimes import security_report

    default = [(p.n, p.fold, p.rate) for p in GRIDS["default"]]
    for name, regime in (("provable-johnson", "johnson"), ("provable-unique", "unique")):
        points = parse_grid(name)
        assert [(p.n, p.fold, p.rate) for p in points] == default
        for point in points:
            report = security_report(point.config())
            assert report.provable_bits == 100 and report.derived_under.cli_name == regime
            assert str(point) == f"{point.n}:{point.fold}:{point.rate}/{regime}"
            assert parse_grid(str(point)) == [point]
    with pytest.raises(ConfigError, match="provable grids are the whir-p3-metal profile's"):
        parse_grid("provable-johnson", "p3-whir")
