"""``whirgpu bench --kernels``: calibration numbers are sane, and the per-kernel report of a tiny proof accounts
for every kernel the proof launched (checked against the runtime's own kernel times)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys

import pytest

from tests.backend.conftest import open_runtime
from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.bench import kernel_report, kernels, proof_profile
from whirgpu.bench.backends import BackendSpec
from whirgpu.bench.grid import GridPoint
from whirgpu.kernels import calibrate

RUNTIMES = [("wgpu", "u64"), ("msl-cpu", "mulhi")]
POINT = GridPoint(10, 4, 1)


@pytest.fixture(scope="module", params=RUNTIMES, ids=[f"{n}-{m}" for n, m in RUNTIMES])
def runtime(request):
    return open_runtime(*request.param)


def test_calibration_is_plausible(runtime):
    cal = calibrate.calibrate(runtime, runs=3)
    assert cal.runtime == runtime.name and cal.mul == runtime.mul and cal.timing
    for value, low, high in ((cal.copy_bytes_per_s, 1e7, 1e14), (cal.products_per_s, 1e6, 1e15),
                             (cal.read_bytes_per_s, 1e6, 1e14), (cal.write_bytes_per_s, 1e6, 1e14),
                             (cal.dispatch_s, 1e-8, 0.1), (cal.round_trip_s, 1e-7, 1.0),
                             (cal.read_latency_s, 1e-8, 0.1)):
        assert math.isfinite(value) and low < value < high, cal
    assert cal.round_trip_s >= cal.dispatch_s * 0.5  # a round trip holds a dispatch and the submit and wait
    assert cal.sizes["copy_bytes"] <= runtime.limits().max_storage_binding_size
    assert list(cal.upload_bytes_per_s) == [str(n) for n in calibrate.UPLOAD_BYTES]  # 16 and 64 MiB, in order
    assert all(math.isfinite(bps) and 1e6 < bps < 1e14 for bps in cal.upload_bytes_per_s.values()), cal
    json.dumps(cal.to_dict())


def _labels_of_a_proof(rt) -> dict[str, int]:
    """Launches per kernel label of one proof of POINT, from the runtime's own kernel times."""
    prover = Prover(POINT.config(), backend=GpuBackend(rt))  # the path the profile times: Prover.prove
    instance = random_canonical_instance(POINT.n, 0)
    prover.prove(*instance)
    rt.set_profiling(True)
    try:
        rt.kernel_times()
        prover.prove(*instance)
        labels: dict[str, int] = {}
        for label, _ in rt.kernel_times():
            labels[label] = labels.get(label, 0) + 1
        return labels
    finally:
        rt.set_profiling(False)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """run_kernels on POINT for cpu, wgpu:u64 and msl-cpu (and metal off macOS: unavailable), markdown output."""
    for name, mul in RUNTIMES:
        open_runtime(name, mul)  # skips (or fails under WHIRGPU_REQUIRE) when a runtime is unavailable
    specs = [BackendSpec("cpu"), BackendSpec("wgpu", "u64"), BackendSpec("msl-cpu")]
    if sys.platform != "darwin":
        specs.append(BackendSpec("metal"))
    path = tmp_path_factory.mktemp("kernels") / "kernels.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = kernels.run_kernels([POINT], specs, 1, None, str(path), markdown=True, quiet=True)
    return rc, json.loads(path.read_text()), out.getvalue()


def _backend(data: dict, spec: str) -> dict:
    return next(b for b in data["backends"] if b["spec"] == spec)


def test_skips_are_noted(report):
    rc, data, text = report
    assert rc == 0
    assert _backend(report[1], "cpu")["skipped"] == kernels.CPU_NOTE
    assert f"cpu: skipped ({kernels.CPU_NOTE})" in text
    if sys.platform != "darwin":
        assert _backend(report[1], "metal")["skipped"]


@pytest.mark.parametrize("spec,name,mul", [("wgpu:u64", "wgpu", "u64"), ("msl-cpu", "msl-cpu", "mulhi")])
def test_kernels_account_for_the_proof(report, spec, name, mul):
    entry = _backend(report[1], spec)
    assert entry["skipped"] is None and entry["kernel_timing"]
    (point,) = entry["points"]
    assert point["error"] is None and point["point"] == str(POINT)
    rows = point["kernels"]
    assert sum(k["ms"] for k in rows) == pytest.approx(point["gpu_ms"])
    assert sum(k["share"] for k in rows) == pytest.approx(1.0)
    assert point["wall_ms"] > 0 and point["overhead_estimate_ms"] > 0
    assert point["other_ms"] == pytest.approx(max(0.0, point["wall_ms"] - point["gpu_ms"]))  # never negative
    assert point["gpu_exceeds_wall"] == (point["gpu_ms"] > point["wall_ms"])
    assert {k["label"]: k["launches"] for k in rows} == _labels_of_a_proof(open_runtime(name, mul))
    assert point["counts"]["dispatches"] == sum(k["launches"] for k in rows)
    assert point["counts"]["submissions"] > 0 and point["counts"]["reads"] == 1  # the proof region, at the end
    modelled = {k["label"]: k for k in rows if k["unit"]}
    for label in ("transpose_pad", "ntt.ntt_local", "merkle_leaves", "sumcheck.sumcheck_base",
                  "sumcheck_fold.sumcheck_fold_base"):
        assert modelled[label]["fraction"] > 0 and modelled[label]["ceiling"] in ("copy", "mul")
    unmodelled = [k for k in rows if k["label"] in ("pow_search", "transcript")]
    assert len(unmodelled) == 2 and all(k["fraction"] is None for k in unmodelled)


def test_markdown_and_rich_render(report):
    _, data, text = report
    assert "| kernel | launches | ms | share | rate | of ceiling |" in text
    assert "| quantity | value | measured with |" in text
    assert "wgpu:u64 10:4:1" in text and "msl-cpu 10:4:1" in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        kernel_report.print_kernel_report(data, markdown=False)
    assert "merkle_leaves" in out.getvalue() and "copy bandwidth" in out.getvalue()
    assert "| table upload |" in text and "64 MiB, shared buffer, write + wait" in text


def test_a_runtime_without_timestamps_shows_only_host_overheads(monkeypatch, tmp_path):
    open_runtime("msl-cpu", "mulhi")
    monkeypatch.setattr(calibrate, "kernel_timing", lambda rt: None)
    monkeypatch.setattr(proof_profile, "kernel_timing", lambda rt: None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = kernels.run_kernels([POINT], [BackendSpec("msl-cpu")], 1, None, str(tmp_path / "k.json"), True, True)
    entry = _backend(json.loads((tmp_path / "k.json").read_text()), "msl-cpu")
    assert rc == 1 and entry["points"] == [] and entry["kernel_timing"] is None
    assert entry["calibration"]["copy_bytes_per_s"] is None and entry["calibration"]["dispatch_s"] > 0
    assert "cannot time kernels" in out.getvalue() and "copy bandwidth" not in out.getvalue()
    assert "readback latency" in out.getvalue()


def test_the_json_report_loads_back(report, tmp_path, capsys):
    """``bench --kernels --json`` writes what ``bench --load`` reads: the same tables, printed again."""
    from whirgpu.cli import commands as cli

    _, data, text = report
    assert data["schema"] == kernels.SCHEMA
    path = tmp_path / "k.json"
    path.write_text(json.dumps(data))
    legacy = tmp_path / "legacy.json"  # written before the schema existed
    legacy.write_text(json.dumps({k: v for k, v in data.items() if k != "schema"}))
    for source in (path, legacy):
        assert cli.main(["bench", "--load", str(source), "--markdown"]) == 0
        assert capsys.readouterr().out == text
    assert cli.main(["bench", "--load", str(path), "--plot", str(tmp_path / "x.png")]) == 1
    assert "renders their tables only" in capsys.readouterr().err
    merged = tmp_path / "merged.json"
    assert cli.main(["bench", "--load", str(path), str(legacy), "--markdown", "--json", str(merged)]) == 0
    assert [b["spec"] for b in json.loads(merged.read_text())["backends"]] == [b["spec"] for b in data["backends"]]


def test_overhead_is_never_negative():
    """On lavapipe the timed proofs' kernels can add up to more than an untimed proof's wall time."""
    from types import SimpleNamespace

    counts = SimpleNamespace(submissions=3, dispatches=100, copies=0, reads=1, read_bytes=64, writes=1,
                             write_bytes=64)
    profile = SimpleNamespace(wall_ms=40.0, wall_ms_runs=[40.0], timed_wall_ms=70.0, gpu_ms=44.0,
                              gpu_ms_runs=[44.0], counts=counts, kernels=[])
    cal = SimpleNamespace(round_trip_s=1e-4, dispatch_s=1e-5, read_latency_s=1e-4, read_bytes_per_s=1e9,
                          write_bytes_per_s=1e9, copy_bytes_per_s=1e9, products_per_s=1e9)
    entry = kernels._point_entry(proof_profile_point(), profile, cal)
    assert entry["other_ms"] == 0.0 and entry["gpu_exceeds_wall"]
    line = kernel_report._point_summary(entry)
    assert "other 0.0 ms" in line and "not measurable" in line and "-" not in line.split("other")[1].split("ms")[0]
    entry["other_ms"] = -4.0  # a report written before the clamp
    assert "other -" not in kernel_report._point_summary(entry)
    profile.gpu_ms = 30.0
    entry = kernels._point_entry(proof_profile_point(), profile, cal)
    assert entry["other_ms"] == 10.0 and not entry["gpu_exceeds_wall"]
    assert "= GPU 30.0 ms + other 10.0 ms" in kernel_report._point_summary(entry)


def proof_profile_point():
    from whirgpu.bench.grid import parse_point

    return parse_point("10:2:1")
