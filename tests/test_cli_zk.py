"""``whirgpu prove --profile p3-whir --zk`` and ``whirgpu verify`` on hiding documents: the oracle's
``prove-tables --zk`` flags mean the same here (golden-zk z01 and z04 are reproduced from their MANIFEST commands
with --mask-seed, and the oracle's own ``verify`` accepts what is written), masks come from the OS CSPRNG unless
--mask-seed says otherwise (and then every output says so), and every refusal is one line."""

from __future__ import annotations

import json
import subprocess

import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.cli import commands as cli

from .backend.conftest import open_runtime
from .conftest import golden_p3_bytes, webgpu_adapter
from .protocol.p3_tables_cases import NO_ORACLE, ORACLE

Z01 = "z01_kb_n12_k4_r2_s32_p0_cb_e2_mask7.json"
Z04 = "z04_kb_prefix_10x3-8x2-8x1_k4_r2_s32_p0_cb_zktables.json"
# the MANIFEST commands in whirgpu's words (--fold / --rate are -k / -r; cb is capacity)
Z01_FLAGS = ["--field", "koalabear", "--tables", "12x1", "-k", "4", "-r", "2", "--security", "32", "--pow-bits", "0",
             "--soundness", "capacity", "--seed", "1", "--evaluations", "2", "--mask-seed", "7", "--ell-zk", "4",
             "--mask-log-inv-rate", "1"]
Z04_FLAGS = ["--field", "koalabear", "--tables", "10x3,8x2,8x1", "--open", "0:0,1/0:2/1:1,0/2:0", "-k", "4", "-r",
             "2", "--security", "32", "--pow-bits", "0", "--soundness", "capacity", "--seed", "4", "--mask-seed",
             "9", "--ell-zk", "4", "--mask-log-inv-rate", "1"]
SMALL = ["--tables", "9x2,8x1", "-k", "4", "-r", "2", "--security", "32", "--pow-bits", "0", "--seed", "3"]
TEXTS = {"extension_field", "instance_draw", "mmcs", "notes", "notes_v2", "proof_field_encoding", "protocol",
         "self_check", "stdrng_kat"}
SEEDED_LINE = "NOT hiding against anyone who knows the seed"


def run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name,flags", [(Z01, Z01_FLAGS), (Z04, Z04_FLAGS)])
def test_seeded_prove_is_the_oracles_document(name, flags, tmp_path, capsys):
    out = tmp_path / "zk.json"
    code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", *flags, "--witness", "--out", out], capsys)
    assert code == 0, err
    assert "seeded masks (--mask-seed" in stdout and SEEDED_LINE in stdout
    assert "backend: cpu (--zk: the cpu backend unless --backend names a GPU one" in stdout
    golden = json.loads(golden_p3_bytes(name))
    written = json.loads(out.read_text())
    assert set(golden) - set(written) == TEXTS and set(written) - set(golden) == {"hiding"}
    for key in golden.keys() - TEXTS:
        assert written[key] == golden[key], key
    code, stdout, _ = run(["verify", out], capsys)
    assert code == 0 and stdout.startswith("accept ") and "zk=seeded(mask_seed=" in stdout


@pytest.mark.skipif(not ORACLE.is_file(), reason=NO_ORACLE)
def test_the_oracle_accepts_what_is_written(tmp_path, capsys):
    seeded, hiding = tmp_path / "seeded.json", tmp_path / "hiding.json"
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--mask-seed", "5", "--out", seeded], capsys)[0] == 0
    result = subprocess.run([str(ORACLE), "verify", "--in", str(seeded)], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("accept"), result.stdout + result.stderr
    # a CSPRNG document records no seed (neither the masks' nor the instance's), which the oracle's params reader
    # requires: with both inserted, upstream's verifier (--whir-only) accepts the proof itself
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--out", hiding], capsys)[0] == 0
    doc = json.loads(hiding.read_text())
    assert "mask_seed" not in doc["params"] and "seed" not in doc["params"]
    doc["params"].update(mask_seed=0, seed=3)
    patched = tmp_path / "patched.json"
    patched.write_text(json.dumps(doc))
    result = subprocess.run([str(ORACLE), "verify", "--in", str(patched), "--whir-only"], capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("accept"), result.stdout + result.stderr


def test_two_unseeded_proofs_differ_and_both_verify(tmp_path, capsys):
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--out", path], capsys)
        assert code == 0, err
        assert "hiding, masks from the OS CSPRNG" in stdout and "--mask-seed" not in stdout
    a, b = (json.loads(p.read_text()) for p in paths)
    assert a["claimed_values_canonical"] == b["claimed_values_canonical"]
    assert a["commitment"] != b["commitment"] and a["proof_postcard_hex"] != b["proof_postcard_hex"]
    assert "mask_seed" not in a and "mask_rng" not in a and "tables" not in a and "seed" not in a["params"]
    assert "note: the columns are SmallRng(3)'s draw" in stdout
    code, stdout, _ = run(["verify", *paths], capsys)
    assert code == 0 and stdout.count(": accept ") == 2 and stdout.count("zk=hiding") == 2


def test_json_summary_and_the_seeded_warning(tmp_path, capsys):
    code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--mask-seed", "2", "--json", "--out",
                             tmp_path / "z.json"], capsys)
    assert code == 0
    summary = json.loads(stdout)
    assert summary["zk"] is True and summary["hiding"] is False and SEEDED_LINE in summary["masks"]
    assert SEEDED_LINE in err


def test_one_polynomial_with_n(tmp_path, capsys):
    out = tmp_path / "one.json"
    code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", "-n", "10", "-k", "4", "-r", "2", "--security",
                             "32", "--pow-bits", "0", "--seed", "1", "--openings", "3", "--out", out], capsys)
    assert code == 0, err
    doc = json.loads(out.read_text())
    assert doc["params"]["tables"] == "10x1" and len(doc["points_canonical"]) == 3


def test_a_tampered_document_is_rejected(tmp_path, capsys):
    out = tmp_path / "z.json"
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--out", out], capsys)[0] == 0
    doc = json.loads(out.read_text())
    doc["claimed_values_canonical"][0][0] ^= 1
    out.write_text(json.dumps(doc))
    code, stdout, _ = run(["verify", out], capsys)
    assert code == 1 and stdout.startswith("reject: ") and "claimed_values_canonical" in stdout


REFUSALS = {
    "suffix": (["--layout", "suffix"], "--layout suffix: --zk stacks the tables in the prefix layout"),
    "next row": (["--open", "0:0:1"], "next-row opening of table 0 is refused"),
    "transcript points": (["--points", "transcript"], "--zk opens at prescribed points only"),
    "ell_zk": (["--ell-zk", "2"], "MaskLengthTooSmall"),
    "mask rate": (["--mask-log-inv-rate", "0"], "MaskRateTooHigh"),
    "mask seed": (["--mask-seed", "-1"], "--mask-seed -1: a u64 is expected"),
    "open and evaluations": (["--open", "0:0", "--evaluations", "2"], "give --open or --evaluations, not both"),
    "statement": (["--statement-out", "s.json"], "--statement-out does not apply to --zk"),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_refusals_are_one_line(case, tmp_path, capsys):
    extra, words = REFUSALS[case]
    code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", *SMALL, *extra, "--out", tmp_path / "z.json"],
                            capsys)
    assert code == 1 and words in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_slack_and_flags_without_zk(capsys):
    code, _, err = run(["prove", "--profile", "p3-whir", "--zk", "--tables", "12x1", "--seed", "1"], capsys)
    assert code == 1 and "RandomnessExceedsSlack" in err and "try -r 2" in err and err.count("\n") == 1
    for flag in (["--mask-seed", "1"], ["--ell-zk", "4"], ["--mask-log-inv-rate", "1"], ["--evaluations", "2"]):
        code, _, err = run(["prove", "--profile", "p3-whir", "--tables", "10x1", "--seed", "1", *flag], capsys)
        assert code == 1 and f"{flag[0]} needs --zk" in err
    code, _, err = run(["prove", "--zk", "-n", "10", "--seed", "1"], capsys)
    assert code == 1 and "--zk needs --profile p3-whir" in err


BENCH = ["bench", "--tables", "9x2,8x1", "--zk", "--fold", "4", "--rate", "2", "--pow-bits", "0", "--runs", "1",
         "--warmup", "0"]


def _assert_timed(row, backend):
    assert row["backend"] == backend and row["error"] is None and row["skipped"] is None and row["verified"] is True
    assert len(row["plain_ms"]) == len(row["zk_ms"]) == 1 and row["zk_median_ms"] > 0 and row["plain_median_ms"] > 0
    assert row["ratio"] == pytest.approx(row["zk_median_ms"] / row["plain_median_ms"])
    assert row["zk_proof_bytes"] > row["plain_proof_bytes"] > 0 and len(row["plain_proof_sha256"]) == 64


def test_bench_times_zk_beside_plain(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code, stdout, err = run([*BENCH, "--backends", "cpu", "--json", out], capsys)
    assert code == 0, err
    assert "ratio zk / plain" in stdout and "cpu: numpy reference" in stdout
    result = json.loads(out.read_text())
    assert result["kind"] == "zk" and result["settings"]["backends"] == ["cpu"]
    assert result["settings"]["layout"] == "prefix" and result["settings"]["num_variables"] == 11
    (row,) = result["rows"]
    _assert_timed(row, "cpu")
    assert "--zk" in result["command"] and "--backends cpu" in result["command"]
    code, _, err = run(["bench", "--zk"], capsys)
    assert code == 1 and "--zk refines --tables" in err


def _require(runtime: str) -> None:
    """Skip (fail under WHIRGPU_REQUIRE) when ``runtime`` cannot run here, as the GPU suites do."""
    if runtime == "wgpu":
        webgpu_adapter("wgpu")
    else:
        open_runtime(runtime, "mulhi")


@pytest.mark.parametrize("gpu", ["wgpu", "msl-cpu"])
def test_bench_zk_on_a_gpu_backend(gpu, tmp_path, capsys):
    """``--backends cpu,GPU``: a row per backend, both timed and verified, the plain proofs the same bytes."""
    _require(gpu)
    spec = "wgpu" if gpu == "wgpu" else "msl-cpu:mulhi"
    out = tmp_path / "bench.json"
    code, stdout, err = run([*BENCH, "--backends", f"cpu,{spec}", "--json", out], capsys)
    assert code == 0, err
    result = json.loads(out.read_text())
    assert result["settings"]["backends"] == ["cpu", spec]
    cpu, device = result["rows"]
    _assert_timed(cpu, "cpu")
    _assert_timed(device, spec)
    assert device["plain_proof_sha256"] == cpu["plain_proof_sha256"]
    assert device["device"] and "numpy" not in device["device"] and f"{spec}: {device['device']}" in stdout
    assert stdout.count("ratio zk / plain") == 2 and stdout.count("both proofs verified") == 2


class _Broken(CpuBackend):
    def commit(self, table, log_folding, log_height):
        raise RuntimeError("no codeword today")


class _NoTables(CpuBackend):
    proves_tables = False


def _zk_bench_inputs():
    from whirgpu.profiles.p3_whir.expectations import p3_expected_config
    from whirgpu.profiles.p3_whir.tables.spec import TablesSpec
    from whirgpu.profiles.p3_whir.zk.config import ZkWhirConfig

    spec = TablesSpec.parse("9x2,8x1", None, "prefix", "prescribed")
    config = p3_expected_config(11, 4, 2, security_level=32, pow_bits=0, field="koalabear")
    return spec, config, ZkWhirConfig.derive(config.num_variables, config.params, config.field)


def test_a_failing_backend_is_its_row_and_plain_proofs_are_compared(monkeypatch):
    from whirgpu.bench import zk as bench_zk

    spec, config, zk_config = _zk_bench_inputs()
    bench = bench_zk.run_zk_bench(spec, config, zk_config, {"cpu": CpuBackend(), "plain": _NoTables(),
                                                             "broken": _Broken(), "cpu'": CpuBackend()}, 1, 0, 1)
    ok, skipped, broken, again = bench.rows
    assert ok.verified and not ok.error and again.verified and not again.error
    assert again.plain_proof_sha256 == ok.plain_proof_sha256
    assert skipped.skipped and "does not prove stacked tables" in skipped.skipped and not skipped.zk_ms
    assert "no codeword today" in broken.error and broken.verified is None and bench.has_errors
    lines = bench_zk.render_zk_bench(bench)
    assert "  skipped: the cpu backend does not prove stacked tables" in lines
    assert any("! error: proving failed: RuntimeError: no codeword today" in line for line in lines)
    assert bench.to_json()["rows"][2]["error"] == broken.error
    # a backend whose plain proof is other bytes fails (here: the postcard the second backend reports is altered)
    postcards = []
    real = bench_zk.pcs_proof_to_postcard

    def altered(proof):
        postcards.append(None)
        return real(proof) + b"\x00" * (len(postcards) - 1)

    monkeypatch.setattr(bench_zk, "pcs_proof_to_postcard", altered)
    bench = bench_zk.run_zk_bench(spec, config, zk_config, {"cpu": CpuBackend(), "other": CpuBackend()}, 1, 0, 1)
    first, other = bench.rows
    assert not first.error and "its plain proof differs from cpu's" in other.error and bench.has_errors


BENCH_REFUSALS = {
    "suffix": (["--layout", "suffix"], "--zk: HidingWhirPcs has the prefix layout and prescribed points only"),
    "transcript points": (["--points", "transcript"], "prefix layout and prescribed points only"),
    "next row": (["--open", "0:0:1"], "--zk opens current columns only; next-row openings are refused"),
    "unknown backend": (["--backends", "cpu,vulkan"], "unknown backend 'vulkan'"),
}


@pytest.mark.parametrize("case", BENCH_REFUSALS)
def test_bench_zk_refusals_are_one_line(case, capsys):
    extra, words = BENCH_REFUSALS[case]
    code, stdout, err = run([*BENCH, *extra], capsys)
    assert code == 1 and stdout == "" and words in err and err.count("\n") == 1, err


def test_verify_pins_a_hiding_documents_tables(tmp_path, capsys):
    out = tmp_path / "z.json"
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--open", "0:0,1/1:0", "--out", out], capsys)[0] == 0
    pins = ["--expect", "11:4:2", "--security", "32", "--pow-bits", "0", "--tables", "9x2,8x1", "--open", "0:0,1/1:0"]
    code, stdout, _ = run(["verify", out, *pins, "--layout", "prefix", "--points", "prescribed"], capsys)
    assert code == 0 and "points=2" in stdout
    assert "(as expected: parameters, tables, layout, schedule, points)" in stdout
    code, stdout, _ = run(["verify", out, *pins], capsys)  # the default layout is suffix: not what this proves
    assert code == 1 and "statement.layout" in stdout


def test_verify_zk_demands_a_hiding_document(tmp_path, capsys):
    hiding, seeded, plain = tmp_path / "h.json", tmp_path / "s.json", tmp_path / "p.json"
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--out", hiding], capsys)[0] == 0
    assert run(["prove", "--profile", "p3-whir", "--zk", *SMALL, "--mask-seed", "1", "--out", seeded], capsys)[0] == 0
    assert run(["prove", "--profile", "p3-whir", "--tables", "9x2,8x1", "-k", "4", "--security", "32", "--pow-bits",
                "0", "--seed", "3", "--out", plain], capsys)[0] == 0
    code, stdout, _ = run(["verify", "--zk", hiding, seeded, plain], capsys)
    lines = stdout.splitlines()
    assert code == 1 and "accept" in lines[0] and "(as expected: zero knowledge (hiding))" in lines[0]
    assert "reject: not what the verifier expects (zk)" in lines[1] and "seeded" in lines[1]
    assert "reject: not what the verifier expects (zk)" in lines[2] and "without zero knowledge" in lines[2]


def test_a_gpu_backend_proves_the_seeded_documents_bytes(tmp_path, capsys):
    """``--backend wgpu`` proves with ``ZkBackendProver``: the same document as the cpu backend's, byte for byte."""
    docs = []
    for backend in ("cpu", "wgpu"):
        out = tmp_path / f"{backend}.json"
        code, stdout, err = run(["prove", "--profile", "p3-whir", "--zk", *Z01_FLAGS, "--backend", backend, "--out",
                                 out], capsys)
        assert code == 0, err
        assert f"backend: {backend} (" in stdout
        docs.append(out.read_bytes())
    assert docs[0] == docs[1]
    assert run(["verify", tmp_path / "wgpu.json"], capsys)[0] == 0


def test_tables_and_zk_default_to_the_oracles_seed_0(tmp_path, capsys):
    """Without --seed, --tables and --zk prove the oracle's default instance (SmallRng(0)), as prove-tables does;
    a plain prove still needs an instance and says which flags give one."""
    args = ["prove", "--profile", "p3-whir", "--zk", "--tables", "10x2,8x1", "--open", "0:0,1/1:0", "-k", "4", "-r",
            "2", "--security", "32", "--pow-bits", "0", "--mask-seed", "3"]
    code, _, err = run([*args, "--seed", "0", "--out", str(tmp_path / "s0.json")], capsys)
    assert code == 0, err
    code, _, err = run([*args, "--out", str(tmp_path / "default.json")], capsys)
    assert code == 0, err
    assert (tmp_path / "s0.json").read_bytes() == (tmp_path / "default.json").read_bytes()
    plain = ["prove", "--profile", "p3-whir", "--tables", "8x2", "-k", "2", "--security", "32", "--pow-bits", "0"]
    assert run([*plain, "--seed", "0", "--out", str(tmp_path / "t0.json")], capsys)[0] == 0
    assert run([*plain, "--out", str(tmp_path / "t.json")], capsys)[0] == 0
    assert (tmp_path / "t0.json").read_bytes() == (tmp_path / "t.json").read_bytes()
    code, _, err = run(["prove", "-n", "8", "-k", "2", "-r", "1"], capsys)
    assert code == 2 and "prove: one of the arguments --seed --from is required" in err
