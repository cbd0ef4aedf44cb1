"""The ``whirgpu`` command line, driven in-process (``cli.main``) and once as ``python -m whirgpu``.

Contract under test (cli.py): exit 0 on success / accept; 1 on a reject or a whirgpu error, printed as ONE line
('reject: ...' on stdout for verify, 'error: ...' on stderr otherwise); 2 for argparse usage errors and files
that cannot be read or written ('error: ...' on stderr); never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from whirgpu.cli import commands as cli
from whirgpu.cli.parameter_flags import params_from_args
from whirgpu.api import random_instance
from whirgpu.backends import STORAGE_POLICIES, select_backend
from whirgpu.field import P
from whirgpu.protocol.params import ProtocolParameters, SoundnessType, WhirConfig, format_schedule
from whirgpu.protocol.regimes import security_report
from whirgpu.profiles.whir_p3_metal.serialize import load, proof_to_json_tree

from .conftest import REPO, golden_file, load_golden, load_golden_p3, webgpu_adapter

GOLDEN_N12 = "n12_f4_r1_s32_p0_cb.json"
# Small and fast: M = 0, fsr = 6, JohnsonBound, a 4-bit final PoW.
SMALL = ["-n", "8", "-k", "2", "-r", "1", "--security", "32", "--pow-bits", "5", "--soundness", "johnson"]
# For tampering, every part of a proof exists: M = 1 (9-bit round PoW), fsr = 4 (8-bit final PoW), OOD samples.
ROUND = ["-n", "12", "-k", "4", "-r", "1", "--security", "32", "--pow-bits", "10"]


def small_config() -> WhirConfig:
    """SMALL's configuration, as `prove` derives it."""
    args = cli._build_parser().parse_args(["prove", *SMALL, "--seed", "0"])
    return WhirConfig.from_params(params_from_args(args))


def run(argv, capsys):
    """main(argv) in-process -> (exit code, stdout, stderr); argparse's SystemExit becomes its code."""
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def accepted(out: str) -> bool:
    """`verify`'s acceptance: one line whose first word is accept (it goes on to say what was accepted)."""
    return one_line(out).split()[0] == "accept"


def verifies(argv, capsys) -> bool:
    code, out, err = run(argv, capsys)
    return (code, err) == (0, "") and accepted(out)


def one_line(text: str) -> str:
    lines = text.splitlines()
    assert len(lines) == 1, f"expected one line, got {text!r}"
    return lines[0]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Nothing a test writes lands in the checkout (prove's default output is ./proof.whir)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WHIRGPU_BACKEND", raising=False)
    monkeypatch.delenv("WHIRGPU_DEBUG", raising=False)
    monkeypatch.delenv("WHIRGPU_STORAGE", raising=False)


@pytest.fixture(scope="module")
def round_proofs(tmp_path_factory):
    """One proof with an intermediate round and grinding, in both formats: {'binary': path, 'whir-p3-json': path}."""
    folder = tmp_path_factory.mktemp("proofs")
    paths = {}
    for fmt, name in (("binary", "p.whir"), ("whir-p3-json", "p.json")):
        paths[fmt] = folder / name
        argv = ["prove", *ROUND, "--seed", "5", "--backend", "cpu", "--format", fmt, "-o", str(paths[fmt])]
        assert cli.main(argv) == 0
    return paths


# ---- help ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [[], *[[c] for c in cli.COMMANDS]], ids=lambda c: " ".join(c) or "top")
def test_help_exits_0(command, capsys):
    code, out, err = run([*command, "--help"], capsys)
    assert code == 0
    assert out.startswith("usage: whirgpu") and err == ""
    if not command:
        for name in cli.COMMANDS:
            assert name in out


def test_no_command_is_a_usage_error(capsys):
    code, _, err = run([], capsys)
    assert code == 2 and "usage:" in err


# ---- params ----------------------------------------------------------------------------------------------------

def test_params_table(capsys):
    code, out, err = run(["params", "-n", 12, "-k", 4, "-r", 1, "--security", 32, "--pow-bits", 0], capsys)
    assert code == 0 and err == ""
    config = WhirConfig.from_params(
        ProtocolParameters.default(num_variables=12, folding_factor=4, security_level=32, pow_bits=0)
    )
    assert out == format_schedule(config)
    rows = [line.split() for line in out.splitlines()]
    assert [r[0] for r in rows if r and r[0] in ("initial", "0", "final")] == ["initial", "0", "final"]


def test_params_json_is_the_config_and_matches_the_reference(capsys):
    golden = load_golden(GOLDEN_N12)
    code, out, err = run(["params", "-n", 12, "-k", 4, "-r", 1, "--security", 32, "--pow-bits", 0, "--json"], capsys)
    assert code == 0 and err == ""
    doc = json.loads(out)
    params = ProtocolParameters.default(num_variables=12, folding_factor=4, security_level=32, pow_bits=0)
    security = doc.pop("security")  # every figure names its regime: the report beside the configuration
    assert doc == WhirConfig.from_params(params).to_json_dict()
    assert security == security_report(WhirConfig.from_params(params)).to_json_dict()
    assert (security["derived_under"], security["conjectural"], security["headline_bits"]) == ("capacity", True, 32)
    assert security["provable_bits"] < 32
    # and the numbers are the reference's own (the golden file was made with these parameters)
    assert doc["derived"] == golden["derived"]
    instance_keys = ("num_points", "seed")
    assert doc["params"] == {k: v for k, v in golden["params"].items() if k not in instance_keys}


@pytest.mark.parametrize("name", ["kb_n16_k5_r1_s90_p16_cb_e1_seed0.json", "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json",
                                  "bb_n12_k4_r1_s90_p0_cb_e1_seed0.json"])
def test_params_of_the_p3_whir_profile_are_upstreams(name, capsys):
    """`params --profile p3-whir --field F --json` prints upstream's derived config (golden-p3); the table names
    the profile and field."""
    golden = load_golden_p3(name)
    p = golden["params"]
    argv = ["params", "--profile", "p3-whir", "--field", golden["field"], "-n", p["num_variables"], "-k",
            p["folding_factor"], "-r", p["starting_log_inv_rate"], "--security", p["security_level"], "--pow-bits",
            p["pow_bits"], "--soundness", p["soundness_type"]]
    code, out, err = run([*argv, "--json"], capsys)
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc.pop("security")["derived_under"] == SoundnessType.parse(golden["params"]["soundness_type"]).cli_name
    assert doc == golden["config"]
    code, out, err = run(argv, capsys)
    assert (code, err) == (0, "")
    assert out.startswith(f"WHIR schedule (p3-whir profile, {golden['field']}): n = {p['num_variables']}")


@pytest.mark.parametrize("argv, message", [
    (["--profile", "p3-whir", "--field", "koalabear", "-n", 14, "-k", 3, "-r", 2, "--security", 100, "--pow-bits", 0,
      "--soundness", "jb"], "PowBitsExceedBudget: derived proof-of-work of 16 bits exceeds the 0-bit grinding budget"),
    (["--field", "koalabear", "-n", 14, "-k", 3, "-r", 2], "--field koalabear needs --profile p3-whir"),
    (["--profile", "p3-whir", "-n", 14, "-k", 3, "-r", 2, "--initial-reduction", 2],
     "--initial-reduction is not a p3-whir parameter"),
])
def test_params_of_the_p3_whir_profile_refuse_with_the_reason(argv, message, capsys):
    code, out, err = run(["params", *argv], capsys)
    assert code == 1
    assert message in one_line(out + err)


def test_params_defaults_and_soundness_names(capsys):
    code, out, _ = run(["params", "-n", 16, "-k", 4, "-r", 1, "--json"], capsys)
    assert code == 0
    params = json.loads(out)["params"]
    assert (params["security_level"], params["pow_bits"], params["soundness_type"]) == (100, 16, "CapacityBound")
    assert params["rs_domain_initial_reduction_factor"] == 3
    for name, full in (("unique", "UniqueDecoding"), ("jb", "JohnsonBound"), ("CapacityBound", "CapacityBound")):
        code, out, _ = run(["params", "-n", 10, "-k", 2, "-r", 1, "--soundness", name, "--json"], capsys)
        assert code == 0 and json.loads(out)["params"]["soundness_type"] == full


# ---- prove and verify ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["binary", "whir-p3-json"])
def test_prove_seed_then_verify(fmt, tmp_path, capsys):
    out_file = tmp_path / f"proof.{fmt}"
    code, out, err = run(["prove", *SMALL, "--seed", 3, "--format", fmt, "-o", out_file], capsys)
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith("backend: ")
    assert f"wrote {out_file} ({out_file.stat().st_size} bytes, {fmt})" in out

    pf = load(out_file.read_bytes())
    assert pf.seed == 3
    assert (pf.params.num_variables, pf.params.soundness_type.name, pf.params.pow_bits) == (8, "JohnsonBound", 5)
    poly, statement = random_instance(8, 3)
    assert np.array_equal(pf.statement.points, statement.points)
    assert np.array_equal(pf.statement.values, statement.values)

    for extra in ([], ["--format", fmt]):
        code, out, err = run(["verify", out_file, *extra], capsys)
        assert (code, err) == (0, "") and accepted(out)


def test_both_formats_hold_the_same_proof(round_proofs):
    binary, text = load(round_proofs["binary"].read_bytes()), load(round_proofs["whir-p3-json"].read_bytes())
    assert proof_to_json_tree(binary.proof) == proof_to_json_tree(text.proof)
    assert round_proofs["binary"].read_bytes().startswith(b"WHIRGPU")
    assert json.loads(round_proofs["whir-p3-json"].read_text())["format"] == "whir-p3-json/v1"
    assert WhirConfig.from_params(binary.params).n_rounds == 1


def test_verify_with_the_wrong_format_flag_rejects(round_proofs, capsys):
    code, out, _ = run(["verify", round_proofs["whir-p3-json"], "--format", "binary"], capsys)
    assert code == 1 and one_line(out).startswith("reject: ") and "magic" in out
    code, out, _ = run(["verify", round_proofs["binary"], "--format", "whir-p3-json"], capsys)
    assert code == 1 and one_line(out).startswith("reject: ") and "not JSON" in out


def test_prove_json_summary(tmp_path, capsys):
    out_file = tmp_path / "p.whir"
    code, out, err = run(["prove", *SMALL, "--seed", 0, "--json", "-o", out_file], capsys)
    assert code == 0 and err == ""
    summary = json.loads(out)
    assert summary["proof_bytes"] == out_file.stat().st_size
    assert summary["format"] == "binary" and summary["out"] == str(out_file)
    auto = select_backend("auto", small_config())
    assert (summary["backend"], summary["backend_reason"]) == (auto.backend.name, auto.reason)
    assert summary["num_variables"] == 8 and summary["instance"] == "random instance, seed 0"
    phases = summary["phases_ms"]
    assert phases and all(v >= 0 for v in phases.values())
    assert sum(phases.values()) <= summary["prove_ms"] * 1.01 + 1


def test_prove_default_output_name(tmp_path, capsys):
    code, _, _ = run(["prove", *SMALL, "--seed", 1, "--format", "whir-p3-json"], capsys)
    assert code == 0 and (tmp_path / "proof.json").is_file()
    code, out, _ = run(["verify", "proof.json"], capsys)
    assert code == 0 and accepted(out)


def test_prove_from_golden_reproduces_its_proof(tmp_path, capsys):
    out_file = tmp_path / "n12.json"
    code, out, err = run(["prove", "--from", golden_file(GOLDEN_N12), "--format", "whir-p3-json",
                          "-o", out_file], capsys)
    assert code == 0 and err == ""
    ours, theirs = json.loads(out_file.read_text()), load_golden(GOLDEN_N12)
    assert ours["proof"] == theirs["proof"]
    for key in ("format", "params", "points_canonical", "claimed_values_canonical", "proof_field_encoding",
                "derived", "domain_separator_canonical", "proof_canonical"):
        assert ours[key] == theirs[key], key
    code, out, _ = run(["verify", out_file], capsys)
    assert code == 0 and accepted(out)


def test_verify_golden_file(capsys):
    for name in (GOLDEN_N12, "n16_f4_r1_s100_p16_cb_pow.json"):
        assert verifies(["verify", golden_file(name)], capsys)


# ---- backends and devices --------------------------------------------------------------------------------------

def _wgpu_or_skip():
    from whirgpu.errors import BackendUnavailable
    from whirgpu.runtime.wgpu_rt import choose_adapter

    try:
        return choose_adapter()
    except BackendUnavailable as exc:
        required = {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",")}
        if "wgpu" in required:
            pytest.fail(f"wgpu is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"wgpu unavailable: {exc}")


def test_prove_on_wgpu_matches_the_cpu_proof(tmp_path, capsys):
    adapter = _wgpu_or_skip()
    files = {}
    for backend in ("cpu", "wgpu"):
        files[backend] = tmp_path / f"{backend}.whir"
        code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", backend, "-o", files[backend]], capsys)
        assert code == 0 and err == ""
        backend_lines = [line for line in out.splitlines() if line.startswith("backend: ")]
        assert len(backend_lines) == 1 and backend_lines[0].startswith(f"backend: {backend} (requested")
        assert verifies(["verify", files[backend]], capsys)
    assert adapter.summary in out
    assert files["wgpu"].read_bytes() == files["cpu"].read_bytes()


def test_prove_on_dawn_matches_the_cpu_proof_and_keeps_stderr_clean(tmp_path):
    """In a fresh process (Dawn warns once per process, at its first adapter): the proof is the cpu backend's,
    and Dawn's two 'artificially reduced' limit warnings stay off stderr."""
    from whirgpu.errors import BackendUnavailable
    from whirgpu.runtime.wgpu_rt import choose_adapter

    try:
        adapter = choose_adapter("dawn")
    except BackendUnavailable as exc:
        if "dawn" in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",")}:
            pytest.fail(f"dawn is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"dawn unavailable: {exc}")
    env = {k: v for k, v in os.environ.items() if k not in ("WHIRGPU_BACKEND", "WHIRGPU_MUL", "WHIRGPU_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    files = {}
    for backend in ("cpu", "dawn"):
        files[backend] = tmp_path / f"{backend}.whir"
        done = subprocess.run([sys.executable, "-m", "whirgpu", "prove", *SMALL, "--seed", "4", "--backend", backend,
                               "-o", str(files[backend])], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=120)
        assert (done.returncode, done.stderr) == (0, "")
        assert done.stdout.startswith(f"backend: {backend} (requested")
    assert f"{adapter.summary}, emulated multiply" in done.stdout
    assert files["dawn"].read_bytes() == files["cpu"].read_bytes()
    done = subprocess.run([sys.executable, "-m", "whirgpu", "devices"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    assert (done.returncode, done.stderr) == (0, "") and "[--backend dawn opens this one]" in done.stdout


def test_prove_on_msl_cpu_matches_the_cpu_proof(tmp_path, capsys):
    from whirgpu.errors import BackendUnavailable
    from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime

    try:
        MslCpuRuntime()
    except BackendUnavailable as exc:
        if "msl-cpu" in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",")}:
            pytest.fail(f"msl-cpu is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"msl-cpu unavailable: {exc}")
    files = {}
    for backend in ("cpu", "msl-cpu"):
        files[backend] = tmp_path / f"{backend}.whir"
        code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", backend, "-o", files[backend]], capsys)
        assert code == 0 and err == ""
        assert [line for line in out.splitlines() if line.startswith("backend: ")][0].startswith(
            f"backend: {backend} (requested")
    assert "MSL on the CPU" in out
    assert verifies(["verify", files["msl-cpu"]], capsys)
    assert files["msl-cpu"].read_bytes() == files["cpu"].read_bytes()


def test_prove_storage_policies_on_wgpu(tmp_path, capsys):
    """--storage picks the GPU storage policy: the same proof under each; the JSON summary names the policy and
    counts the bytes moved; the text output says the same in one line."""
    _wgpu_or_skip()
    config = small_config()
    poly_bytes = 4 << config.num_variables
    files, summaries = {}, {}
    for policy in STORAGE_POLICIES:
        files[policy] = tmp_path / f"{policy}.whir"
        code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", "wgpu", "--storage", policy, "--json",
                              "-o", files[policy]], capsys)
        assert code == 0 and err == ""
        summaries[policy] = summary = json.loads(out)
        assert summary["storage"] == policy
        assert summary["bytes_uploaded"] >= poly_bytes
        assert summary["bytes_downloaded"] >= 32  # at least the root (openings: tests/backend/test_storage.py)
        assert summary["bytes_copied"] > 0
    assert len({f.read_bytes() for f in files.values()}) == 1
    assert len({(s["bytes_uploaded"], s["bytes_downloaded"]) for s in summaries.values()}) == 1
    assert summaries["private"]["bytes_copied"] >= summaries["shared"]["bytes_copied"]
    code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", "wgpu", "-o", tmp_path / "t.whir"], capsys)
    assert code == 0 and err == ""
    lines = [line for line in out.splitlines() if line.startswith("transfers: ")]
    hybrid = summaries["hybrid"]
    assert lines == [f"transfers: {hybrid['bytes_uploaded']} bytes uploaded, {hybrid['bytes_downloaded']} "
                     f"downloaded, {hybrid['bytes_copied']} copied on the device (storage hybrid)"]
    assert (tmp_path / "t.whir").read_bytes() == files["hybrid"].read_bytes()


def test_prove_storage_from_the_environment(tmp_path, capsys, monkeypatch):
    _wgpu_or_skip()
    monkeypatch.setenv("WHIRGPU_STORAGE", "private")
    code, out, _ = run(["prove", *SMALL, "--seed", 4, "--backend", "wgpu", "--json"], capsys)
    assert code == 0 and json.loads(out)["storage"] == "private"
    code, out, _ = run(["prove", *SMALL, "--seed", 4, "--backend", "wgpu", "--storage", "shared", "--json"], capsys)
    assert code == 0 and json.loads(out)["storage"] == "shared"  # the flag beats the environment


def test_prove_storage_on_cpu_is_accepted_and_ignored(tmp_path, capsys):
    code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", "cpu", "--storage", "private", "--json"],
                         capsys)
    assert code == 0 and err == ""
    summary = json.loads(out)
    assert summary["storage"] is None and "storage policy private ignored" in summary["backend_reason"]
    assert summary["bytes_uploaded"] == summary["bytes_downloaded"] == summary["bytes_copied"] == 0


def test_prove_on_cpu_prints_no_transfers_line(capsys):
    """The cpu backend has no device memory: a 'transfers: 0 bytes ...' line would say nothing, so there is none
    (the --json summary keeps its fields, all 0, for scripts)."""
    code, out, _ = run(["prove", *SMALL, "--seed", 4, "--backend", "cpu"], capsys)
    assert code == 0 and "proved n=8" in out and "wrote " in out
    assert not [line for line in out.splitlines() if line.startswith("transfers")]


def test_version(capsys):
    import whirgpu

    code, out, err = run(["--version"], capsys)
    assert (code, out, err) == (0, f"whirgpu {whirgpu.__version__}\n", "")
    assert whirgpu.__version__.count(".") == 2 and "--version" in run(["--help"], capsys)[1]


def test_prove_bad_storage_names_the_choices(capsys, monkeypatch):
    code, _, err = run(["prove", *SMALL, "--seed", 4, "--backend", "cpu", "--storage", "fast"], capsys)
    assert code == 2 and "--storage" in err and all(p in err for p in STORAGE_POLICIES)
    monkeypatch.setenv("WHIRGPU_STORAGE", "fast")
    code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", "cpu"], capsys)
    line = one_line(err)
    assert code == 1 and out == "" and line.startswith("error: WHIRGPU_STORAGE='fast'")
    assert all(p in line for p in STORAGE_POLICIES)


def test_prove_help_lists_the_storage_policies(capsys):
    code, out, _ = run(["prove", "--help"], capsys)
    assert code == 0 and "--storage" in out and "{" + ",".join(STORAGE_POLICIES) + "}" in out


def test_devices_prints_an_adapters_storage_line():
    entry = {"runtime": "wgpu", "name": "gpu", "note": "", "selected": False, "api": "Metal",
             "device_type": "IntegratedGPU",
             "limits": {key: 1 for key in cli.LIMIT_LABELS}, "features": {}, "mul": "u64",
             "storage": "shared = host-mapped storage buffers"}
    lines = cli._format_device("[0]", entry)
    assert [line.split(None, 1) for line in lines if line.strip().startswith("storage")] == \
        [["storage", "shared = host-mapped storage buffers"]]


def test_prove_on_metal_elsewhere_is_a_one_line_error(capsys):
    if sys.platform == "darwin":
        pytest.skip("macOS has Metal: tests/backend/test_metal_runtime.py covers it")
    code, out, err = run(["prove", *SMALL, "--seed", 4, "--backend", "metal"], capsys)
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "macOS" in err


def test_prove_auto_says_why_in_one_line(capsys):
    code, out, _ = run(["prove", *SMALL, "--seed", 0, "--backend", "auto"], capsys)
    assert code == 0
    choice = select_backend("auto", small_config())
    assert out.splitlines()[0] == f"backend: {choice.backend.name} ({choice.reason})"


def test_devices_text_and_json_agree(capsys):
    code, out, err = run(["devices", "--json"], capsys)
    assert code == 0 and err == ""
    report = json.loads(out)
    code, text, err = run(["devices"], capsys)
    assert code == 0 and err == ""
    lines = text.splitlines()
    heads = [line for line in lines if line.startswith("[")]
    assert heads[-2].startswith("[cpu] ")  # the reference comes after every adapter, then msl-cpu
    msl_cpu = report["msl_cpu"]
    assert heads[-1] == (f"[msl-cpu] {msl_cpu['name']}  [verification backend: --backend msl-cpu]"
                         if msl_cpu["available"] else f"[msl-cpu] unavailable: {msl_cpu['note']}")
    assert [h.split("] ", 1)[1].split("  [")[0] for h in heads[:-1]] == \
        [a["name"] for a in report["adapters"]] + [report["cpu"]["name"]]
    for entry in report["adapters"]:
        if entry["api"] == "OpenGL":
            assert not entry["used"] and entry["note"] == "not used (OpenGL)"
    multiplies = [line.split()[-1] for line in lines if line.strip().startswith("multiply (auto)")]
    assert multiplies == [a["mul"] for a in report["adapters"]] + [report["cpu"]["mul"]]
    labels = {"wgpu": "wgpu-native (--backend wgpu)", "dawn": "Dawn (--backend dawn)"}
    implementations = [line.split(None, 1)[1] for line in lines if line.strip().startswith("implementation ")]
    assert implementations == [labels[a["runtime"]] for a in report["adapters"] if a["runtime"] in labels]
    for runtime in labels:
        selected = [a["name"] for a in report["adapters"] if a["runtime"] == runtime and a["selected"]]
        assert [h.split("] ", 1)[1].split("  [")[0] for h in heads
                if h.endswith(f"[--backend {runtime} opens this one]")] == selected
        if report[f"{runtime}_error"]:
            assert f"{runtime}: {report[f'{runtime}_error']}" in lines
    auto = report["auto"]
    assert lines[-1] == f"auto would pick: {auto['backend']} — {auto['reason']}"


def test_devices_with_dawn_only(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wgpu", None)  # `import wgpu` now fails; wgpudawn still imports
    code, out, err = run(["devices", "--json"], capsys)
    assert code == 0 and err == ""
    report = json.loads(out)
    webgpu_adapter("dawn")  # present means an adapter opens, not only that wgpudawn imports (else skip or fail)
    assert {a["runtime"] for a in report["adapters"] if a["api"] != "Metal (MSL)"} == {"dawn"}
    assert all(not a["features"]["shader-int64"] and a["mul"] == "emulated" for a in report["adapters"]
               if a["runtime"] == "dawn")
    assert report["auto"]["reason"].startswith("Dawn (wgpu is not installed, wgpudawn is): ")
    code, out, err = run(["devices"], capsys)
    assert code == 0 and out.startswith("wgpu: the wgpu package is not installed")
    assert out.splitlines()[1].startswith("[0] ") and "[--backend dawn opens this one]" in out


def test_devices_without_wgpu(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "wgpu", None)  # `import wgpu` now fails
    monkeypatch.setitem(sys.modules, "wgpudawn", None)  # and so does `import wgpudawn`
    code, out, err = run(["devices", "--json"], capsys)
    assert code == 0 and err == ""
    report = json.loads(out)
    wgpu_rows = [a for a in report["adapters"] if a["api"] != "Metal (MSL)"]  # macOS lists Metal without wgpu
    assert wgpu_rows == [] and "not installed" in report["wgpu_error"]
    assert report["auto"]["backend"] == "cpu"
    code, out, err = run(["devices"], capsys)
    assert code == 0 and out.startswith("wgpu: the wgpu package is not installed")
    rows = [line for line in out.splitlines()
            if line.startswith("[") and "Metal (MSL)" not in line and not line.startswith("[msl-cpu]")]
    assert rows == [f"[cpu] {report['cpu']['name']}  [always available]"]
    assert out.splitlines()[-1].startswith("auto would pick: cpu — the wgpu package is not installed")
    assert "dawn: the wgpudawn package is not installed" in out


# ---- verify: tampered, missing and garbage files ---------------------------------------------------------------

def _bump(node: list, index: int) -> None:
    node[index] = (node[index] + 1) % P


JSON_TAMPERINGS = {
    "claimed value": lambda d: _bump(d["claimed_values_canonical"][0], 0),
    "point": lambda d: _bump(d["points_canonical"][0][3], 2),
    "initial commitment": lambda d: _bump(d["proof"]["initial_commitment"]["cap"][0], 5),
    "initial OOD answer": lambda d: _bump(d["proof"]["initial_ood_answers"][0]["value"], 1),
    "initial sumcheck h0": lambda d: _bump(d["proof"]["initial_sumcheck"]["polynomial_evaluations"][1][0]["value"], 0),
    "round PoW witness": lambda d: _bump(d["proof"]["rounds"][0], "pow_witness"),
    "final PoW witness": lambda d: _bump(d["proof"], "final_pow_witness"),
    "round query value": lambda d: _bump(d["proof"]["rounds"][0]["queries"][0]["values"], 3),
    "round Merkle sibling": lambda d: _bump(d["proof"]["rounds"][0]["queries"][-1]["proof"][2], 7),
    "round commitment": lambda d: _bump(d["proof"]["rounds"][0]["commitment"]["cap"][0], 0),
    "round sumcheck h2":
        lambda d: _bump(d["proof"]["rounds"][0]["sumcheck"]["polynomial_evaluations"][0][1]["value"], 3),
    "final polynomial": lambda d: _bump(d["proof"]["final_poly"][0]["value"], 0),
    "final query value": lambda d: _bump(d["proof"]["final_queries"][0]["values"][0]["value"], 2),
    "final sumcheck": lambda d: _bump(d["proof"]["final_sumcheck"]["polynomial_evaluations"][-1][0]["value"], 0),
    "dropped query": lambda d: d["proof"]["final_queries"].pop(),
    "query type": lambda d: d["proof"]["rounds"][0]["queries"][0].update(type="extension"),
    "value >= p": lambda d: d["proof"]["final_poly"][0]["value"].__setitem__(0, P),
    "string for a number": lambda d: d["proof"]["rounds"][0]["ood_answers"][0]["value"].__setitem__(0, "1"),
    "missing key": lambda d: d["proof"].pop("final_queries"),
    "unknown soundness": lambda d: d["params"].update(soundness_type="Fancy"),
    "fold above n": lambda d: d["params"].update(folding_factor={"Constant": 13}),
    "n + r - fold > 27": lambda d: d["params"].update(num_variables=40),
    "wrong format tag": lambda d: d.update(format="whir-p3-json/v9"),
    "not an object": lambda d: d.clear(),
}


@pytest.mark.parametrize("what", list(JSON_TAMPERINGS))
def test_verify_rejects_tampered_json(what, round_proofs, tmp_path, capsys):
    doc = json.loads(round_proofs["whir-p3-json"].read_text())
    JSON_TAMPERINGS[what](doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, err = run(["verify", bad], capsys)
    assert code == 1, out
    assert one_line(out).startswith("reject: ") and err == ""


@pytest.mark.parametrize("offset", ["statement", "commitment", "middle", "last word"])
def test_verify_rejects_tampered_binary(offset, round_proofs, tmp_path, capsys):
    data = bytearray(round_proofs["binary"].read_bytes())
    header_end = 12 + int.from_bytes(data[8:12], "little")
    position = {"statement": header_end + 4, "commitment": header_end + 4 * (12 * 4 + 4) + 8,
                "middle": (header_end + len(data)) // 2 // 4 * 4, "last word": len(data) - 4}[offset]
    data[position] ^= 0x01  # a small change: the word stays below p
    bad = tmp_path / "bad.whir"
    bad.write_bytes(bytes(data))
    code, out, err = run(["verify", bad], capsys)
    assert code == 1 and one_line(out).startswith("reject: ") and err == ""


@pytest.mark.parametrize("cut", [0, 7, 12, 100, -4, -1])
def test_verify_rejects_truncated_binary(cut, round_proofs, tmp_path, capsys):
    data = round_proofs["binary"].read_bytes()
    bad = tmp_path / "cut.whir"
    bad.write_bytes(data[:cut])
    code, out, err = run(["verify", bad], capsys)
    assert code == 1 and one_line(out).startswith("reject: ") and err == ""


def test_verify_rejects_trailing_bytes(round_proofs, tmp_path, capsys):
    bad = tmp_path / "long.whir"
    bad.write_bytes(round_proofs["binary"].read_bytes() + b"\0\0\0\0")
    code, out, _ = run(["verify", bad], capsys)
    assert code == 1 and one_line(out) == "reject: 4 trailing bytes after the proof"


@pytest.mark.parametrize("content", [b"", bytes(np.random.default_rng(1).integers(0, 256, 4096, np.uint8)),
                                     b"WHIRGPU\x01", b"{}", b"[1, 2]", b"\xff\xfe\x00"],
                         ids=["empty", "random", "magic only", "empty object", "list", "not utf-8"])
def test_verify_rejects_unreadable_files(content, tmp_path, capsys):
    path = tmp_path / "proof.bin"
    path.write_bytes(content)
    code, out, err = run(["verify", path], capsys)
    assert code == 1 and err == ""
    assert one_line(out).startswith("reject: ")


def test_verify_a_missing_file_or_a_directory_is_a_file_error(tmp_path, capsys):
    """Not a reject: a script must tell a false proof (exit 1) from a file it cannot read (exit 2)."""
    code, out, err = run(["verify", tmp_path / "proof.bin"], capsys)
    assert (code, out) == (2, "") and one_line(err) == f"error: cannot read {tmp_path / 'proof.bin'}: " \
                                                       "No such file or directory"
    code, out, err = run(["verify", tmp_path], capsys)
    assert (code, out) == (2, "") and one_line(err) == f"error: cannot read {tmp_path}: Is a directory"


def test_verify_several_files_gives_every_readable_one_its_verdict(round_proofs, tmp_path, capsys):
    """One unreadable file among several: the others keep their verdicts, it is named, the exit status the worst."""
    good, missing = round_proofs["binary"], tmp_path / "missing.whir"
    code, out, err = run(["verify", good, missing], capsys)
    lines = out.splitlines()
    assert code == 2 and err == "" and len(lines) == 2
    assert lines[0].startswith(f"{good}: accept ")
    assert lines[1] == f"{missing}: error: cannot read {missing}: No such file or directory"
    garbage = tmp_path / "garbage.whir"
    garbage.write_bytes(b"nothing")
    code, out, _ = run(["verify", good, garbage], capsys)
    assert code == 1 and out.splitlines()[1].startswith(f"{garbage}: reject: ")


@pytest.mark.parametrize("params", [5, None, ["num_variables"], {"num_variables": "12"}])
def test_verify_rejects_a_params_block_that_is_not_an_object(params, round_proofs, tmp_path, capsys):
    doc = json.loads(round_proofs["whir-p3-json"].read_text())
    doc["params"] = params
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, out, _ = run(["verify", bad], capsys)
    assert code == 1 and one_line(out).startswith("reject: ")


# ---- bad parameters and inputs ---------------------------------------------------------------------------------

BAD = {
    "n + r - fold > 27": (["params", "-n", 30, "-k", 2, "-r", 1],
                          "num_variables 30 + starting_log_inv_rate 1 - folding factor 2 = 29 exceeds TWO_ADICITY 27"),
    "n + r - fold > 27 (prove)": (["prove", "-n", 27, "-k", 1, "-r", 2, "--seed", 0], "= 28 exceeds TWO_ADICITY 27"),
    "unknown soundness": (["params", "-n", 8, "-k", 2, "-r", 1, "--soundness", "strong"],
                          "unknown soundness type 'strong'"),
    "unknown soundness (prove)": (["prove", *SMALL[:-1], "bogus", "--seed", 0], "unknown soundness type 'bogus'"),
    "fold > n": (["params", "-n", 3, "-k", 4, "-r", 1], "folding factor 4 is greater than num_variables 3"),
    "fold > n (prove)": (["prove", "-n", 2, "-k", 3, "-r", 1, "--seed", 0],
                         "folding factor 3 is greater than num_variables 2"),
    "negative n": (["params", "-n", -3, "-k", 1, "-r", 1], "num_variables must be >= 1, got -3"),
    "zero fold": (["params", "-n", 8, "-k", 0, "-r", 1], "folding factor must be >= 1, got 0"),
    "negative fold": (["params", "-n", 8, "-k", -2, "-r", 1], "folding factor must be >= 1, got -2"),
    "negative rate": (["params", "-n", 8, "-k", 2, "-r", -1], "starting_log_inv_rate must be >= 1, got -1"),
    "negative security": (["params", "-n", 8, "-k", 2, "-r", 1, "--security", -3],
                          "security_level must be >= 1, got -3"),
    "negative pow": (["params", "-n", 8, "-k", 2, "-r", 1, "--pow-bits", -1], "pow_bits must be >= 0, got -1"),
    "pow >= security": (["params", "-n", 8, "-k", 2, "-r", 1, "--security", 20, "--pow-bits", 20],
                        "pow_bits 20 must be below security_level 20"),
    "negative reduction": (["params", "-n", 8, "-k", 2, "-r", 1, "--initial-reduction", -1],
                           "rs_domain_initial_reduction_factor must be >= 0, got -1"),
    "reduction > fold": (["params", "-n", 8, "-k", 2, "-r", 1, "--initial-reduction", 3],
                         "rs_domain_initial_reduction_factor 3 is greater than the first folding factor 2"),
    "negative seed": (["prove", *SMALL, "--seed", -1], "--seed -1 is not a u64 seed"),
    "seed >= 2^64": (["prove", *SMALL, "--seed", 1 << 64], f"--seed {1 << 64} is not a u64 seed"),
    "seed without n": (["prove", "-k", 2, "-r", 1, "--seed", 1], "--seed needs --num-variables"),
    "seed without rate": (["prove", "-n", 8, "-k", 2, "--seed", 1], "--seed needs --rate"),
}


@pytest.mark.parametrize("what", list(BAD))
def test_bad_parameters(what, capsys):
    argv, message = BAD[what]
    code, _, err = run(argv, capsys)
    assert code == 1
    line = one_line(err)
    assert line.startswith("error: ") and message in line, line


@pytest.mark.parametrize("argv", [["params", "-n", "eight", "-k", 2, "-r", 1], ["params", "-k", 2, "-r", 1],
                                  ["prove", *SMALL], ["prove", *SMALL, "--seed", 1, "--from", "x.json"],
                                  ["prove", *SMALL, "--seed", 1, "--backend", "quantum"],
                                  ["verify"], ["frobnicate"]])
def test_usage_errors_exit_2(argv, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and "usage: whirgpu" in err and "error: " in err


def _from_error(source, capsys, *flags, exit_code=1):
    code, _, err = run(["prove", "--from", source, *flags], capsys)
    assert code == exit_code
    line = one_line(err)
    assert line.startswith("error: ")
    return line


def test_from_nonexistent_file(tmp_path, capsys):
    assert _from_error(tmp_path / "nope.json", capsys, exit_code=2) == f"error: cannot read {tmp_path / 'nope.json'}: " \
                                                          "No such file or directory"


def test_from_non_json_file(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text("this is not json")
    assert _from_error(path, capsys).startswith(f"error: {path} is not JSON: expecting value (line 1, column 1)")
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    assert f"error: {path} is not JSON" in _from_error(path, capsys)


def test_from_json_that_is_not_an_instance(round_proofs, tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text("[1, 2, 3]")
    assert "expected an object" in _from_error(path, capsys)
    # a proof file has the parameters and claims but not the polynomial
    line = _from_error(round_proofs["whir-p3-json"], capsys)
    assert "polynomial_evals_canonical must list 2^12 = 4096 values" in line
    doc = load_golden(GOLDEN_N12)
    doc["polynomial_evals_canonical"][7] = P
    path.write_text(json.dumps(doc))
    assert "polynomial_evals_canonical: evaluations[7] = 2013265921 is not a canonical field element" in \
        _from_error(path, capsys)
    doc["polynomial_evals_canonical"][7] = True
    path.write_text(json.dumps(doc))
    assert "polynomial_evals_canonical must hold integers" in _from_error(path, capsys)
    doc = load_golden(GOLDEN_N12)
    doc["params"]["folding_factor"] = {"Constant": 20}
    path.write_text(json.dumps(doc))
    assert "folding factor 20 is greater than num_variables 12" in _from_error(path, capsys)


@pytest.mark.parametrize("flags", [["-n", 12], ["-k", 4], ["-r", 1], ["--security", 32], ["--pow-bits", 0],
                                   ["--soundness", "johnson"], ["--initial-reduction", 3]], ids=lambda f: f[0])
def test_from_refuses_parameter_flags(flags, capsys):
    line = _from_error(golden_file(GOLDEN_N12), capsys, *flags)
    dest = {"-n": "--num-variables", "-k": "--folding-factor", "-r": "--rate"}.get(flags[0], flags[0])
    assert line == f"error: --from takes its parameters from the file; drop {dest}"


# ---- the console script, end to end ----------------------------------------------------------------------------

def test_console_script_entry_point_is_main():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["whirgpu"].partition(":")
    assert (module, attr) == ("whirgpu.cli", "main")


def test_python_m_whirgpu_end_to_end(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("WHIRGPU_BACKEND", "WHIRGPU_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))

    def whirgpu(*argv):
        return subprocess.run([sys.executable, "-m", "whirgpu", *map(str, argv)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)

    proof = tmp_path / "p.json"
    done = whirgpu("prove", *SMALL, "--seed", 2, "--format", "whir-p3-json", "-o", proof)
    assert done.returncode == 0, done.stderr
    assert f"wrote {proof}" in done.stdout
    done = whirgpu("verify", proof)
    assert (done.returncode, done.stderr) == (0, "") and accepted(done.stdout)

    doc = json.loads(proof.read_text())
    doc["proof"]["final_poly"][0]["value"][0] = (doc["proof"]["final_poly"][0]["value"][0] + 1) % P
    proof.write_text(json.dumps(doc))
    done = whirgpu("verify", proof)
    assert done.returncode == 1 and one_line(done.stdout).startswith("reject: ")
    assert "Traceback" not in done.stdout + done.stderr

    done = whirgpu("params", "-n", 40, "-k", 1, "-r", 1)
    assert done.returncode == 1 and done.stdout == ""
    assert one_line(done.stderr).startswith("error: num_variables 40")


def test_prove_refuses_before_drawing_the_instance(monkeypatch, capsys):
    """A configuration the device cannot hold is refused before 2^n values are drawn (at n = 29 the draw alone
    took 40 s), with the one-line reason."""
    import whirgpu.api as api

    monkeypatch.setattr(api, "random_instance", lambda *a: pytest.fail("drew the instance of a refused proof"))
    monkeypatch.setenv("WHIRGPU_MAX_GPU_BYTES", "1K")
    code, _, err = run(["prove", "-n", "12", "-k", "4", "-r", "1", "--seed", "1", "--backend", "msl-cpu"], capsys)
    if code and "unavailable" in err:
        pytest.skip(err)
    assert code == 1 and err.startswith("error: the proof needs ") and "WHIRGPU_MAX_GPU_BYTES" in err


def test_from_a_file_whose_claims_are_false_writes_no_proof(tmp_path, capsys):
    """One polynomial value changed, the claims kept: the file claims what the polynomial does not satisfy, so
    proving it would write a false proof. The prover computes the claims and refuses, naming the point."""
    doc = load_golden(GOLDEN_N12)
    doc["polynomial_evals_canonical"][5] = (doc["polynomial_evals_canonical"][5] + 1) % P
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(doc))
    out = tmp_path / "edited.whir"
    line = _from_error(path, capsys, "--out", str(out))
    assert "claimed_values_canonical[0] = [" in line and "the polynomial's value at points_canonical[0] is [" in line
    assert not out.exists()


# Every way `prove` takes its instance (a seed, a file), in both formats, on the cpu backend and on a GPU runtime
# that computes the claims on the device: each proof written is one `verify` accepts, as is, under the parameters
# it was asked for, and about the statement the file declares.
PROVE_PATHS = [
    (["--seed", "0", *SMALL], "binary", "cpu"),
    (["--seed", "3", *SMALL], "whir-p3-json", "cpu"),
    (["--seed", "1", *SMALL], "binary", "wgpu"),
    (["--from", "GOLDEN"], "whir-p3-json", "cpu"),
    (["--from", "GOLDEN"], "binary", "dawn"),
]


@pytest.mark.parametrize("source,fmt,backend", PROVE_PATHS, ids=lambda v: v if isinstance(v, str) else v[0])
def test_every_prove_path_writes_a_proof_verify_accepts(source, fmt, backend, capsys):
    if backend in ("wgpu", "dawn"):
        try:
            select_backend(backend)
        except Exception as exc:  # noqa: BLE001 - an unavailable runtime skips, unless required
            if backend in os.environ.get("WHIRGPU_REQUIRE", ""):
                raise
            pytest.skip(f"{backend} unavailable: {exc}")
    argv = [str(golden_file(GOLDEN_N12)) if a == "GOLDEN" else a for a in source]
    code, _, err = run(["prove", *argv, "--format", fmt, "--backend", backend, "--out", "p.proof"], capsys)
    assert code == 0, err
    assert verifies(["verify", "p.proof"], capsys)
    if source[0] == "--seed":
        n, k, r = SMALL[1], SMALL[3], SMALL[5]
        assert verifies(["verify", "p.proof", "--expect", f"{n}:{k}:{r}", *SMALL[6:]], capsys)
    else:
        doc = load_golden(GOLDEN_N12)
        statement = {"points": doc["points_canonical"], "values": doc["claimed_values_canonical"]}
        with open("claim.json", "w") as f:
            json.dump(statement, f)
        assert verifies(["verify", "p.proof", "--statement", "claim.json"], capsys)


# ---- verify --profile p3-whir ------------------------------------------------------------------------------------

P3_DOCS = ["kb_n16_k5_r1_s90_p16_cb_e1_seed0.json", "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json",
           "bb_n12_k4_r1_s90_p0_cb_e1_seed0.json"]


def _p3_file(tmp_path, name: str, change=None):
    doc = load_golden_p3(name)
    if change is not None:
        change(doc)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("name", P3_DOCS)
def test_verify_accepts_upstream_p3_whir_proofs(name, tmp_path, capsys):
    p = load_golden_p3(name)["params"]
    code, out, err = run(["verify", _p3_file(tmp_path, name), "--profile", "p3-whir"], capsys)
    assert (code, err) == (0, "")
    assert one_line(out).startswith(f"accept n={p['num_variables']} fold={p['folding_factor']} ")
    assert f" profile=p3-whir field={load_golden_p3(name)['field']} " in one_line(out)
    expect = ["--expect", f"{p['num_variables']}:{p['folding_factor']}:{p['starting_log_inv_rate']}", "--security",
              p["security_level"], "--pow-bits", p["pow_bits"], "--soundness", p["soundness_type"], "--field",
              load_golden_p3(name)["field"], "--openings", p["evaluations"]]
    if p["points"] == "prescribed":  # --expect takes points drawn from the transcript unless the statement names them
        code, out, _ = run(["verify", _p3_file(tmp_path, name), *expect], capsys)
        assert code == 1 and "(statement.points): points drawn from the transcript expected" in out
        statement = tmp_path / "statement.json"
        statement.write_text(json.dumps({"points": load_golden_p3(name)["points_canonical"]}))
        expect += ["--statement", statement]
    code, out, err = run(["verify", _p3_file(tmp_path, name), "--profile", "p3-whir", *expect], capsys)
    assert (code, err) == (0, "") and "(as expected: parameters" in out


def test_verify_rejects_a_changed_p3_whir_proof(tmp_path, capsys):
    def change(doc):
        value = doc["proof"]["whir"]["initial_sumcheck"]["polynomial_evaluations"][0][0]["value"]
        value[0] = (value[0] + 1) % 0x7F000001

    code, out, _ = run(["verify", _p3_file(tmp_path, P3_DOCS[0], change), "--profile", "p3-whir"], capsys)
    assert code == 1 and one_line(out).startswith("reject: ")


@pytest.mark.parametrize("argv, message, code", [
    (["--expect", "16:4:1", "--security", 90], "reject: not what the verifier expects (params.folding_factor)", 1),
    (["--expect", "16:5:1", "--field", "babybear"], "reject: not what the verifier expects (params.field)", 1),
    (["--expect", "16:5:1", "--openings", 2], "(statement.num_points): 2 opening point(s) expected, got 1", 1),
    (["--expect", "16:5:1", "--initial-reduction", 1], "--initial-reduction refines a whir-p3-metal", 1),
    (["--min-security", 91, "--assume", "capacity"], "(min_security): security expected at least 91 bits", 1),
    (["--min-security", 90, "--assume", "capacity"], "accept n=16 fold=5 rate=1 security=90 regime=capacity(assumed)",
     0),
    (["--min-security", 90], "provable (Johnson bound; weakest step: ", 1),
    (["--backend", "cpu"], "accept n=16 fold=5 rate=1", 0),  # its openings checked on the host, its verdict given
])
def test_verify_p3_whir_expectations_and_refusals(argv, message, code, tmp_path, capsys):
    """Each expectation is checked, and named, the same way whether the profile is recognised or asserted."""
    for profile in ([], ["--profile", "p3-whir"]):  # recognised from the document, or asserted: the same verdict
        rc, out, err = run(["verify", _p3_file(tmp_path, P3_DOCS[0]), *profile, *argv], capsys)
        assert rc == code
        assert message in one_line(out + err)


def test_verify_format_flag_names_the_default_profiles_encodings(tmp_path, capsys):
    path = _p3_file(tmp_path, P3_DOCS[0])
    code, out, _ = run(["verify", path, "--format", "binary"], capsys)
    assert code == 1 and one_line(out).startswith("reject: not a whirgpu binary proof (bad magic")
    code, _, err = run(["verify", path, "--format", "whir-p3-json", "--profile", "p3-whir"], capsys)
    assert code == 1 and "error: --format whir-p3-json names a whir-p3-metal encoding; --profile p3-whir" in err


@pytest.mark.parametrize("profile", [[], ["--profile", "p3-whir", "--openings", 2]])
def test_prove_writes_the_statement_verify_reads(profile, tmp_path, capsys):
    """`prove --statement-out` writes what the proof proves; `verify --statement` accepts it, and a changed value
    is rejected naming it."""
    proof, statement = tmp_path / "p.proof", tmp_path / "s.json"
    code, out, err = run(["prove", "-n", 8, "-k", 2, "-r", 1, "--seed", 4, "--backend", "cpu", "--out", proof,
                          "--statement-out", statement, *profile], capsys)
    assert code == 0 and f"; statement {statement}" in out
    stated = json.loads(statement.read_text())
    assert set(stated) == {"points", "values"} and len(stated["points"]) == len(stated["values"])
    code, out, _ = run(["verify", proof, "--statement", statement], capsys)
    assert code == 0 and "(as expected: statement)" in out
    stated["values"][0][0] = (stated["values"][0][0] + 1) % 0x78000001
    statement.write_text(json.dumps(stated))
    code, out, _ = run(["verify", proof, "--statement", statement], capsys)
    assert code == 1 and "(statement.values)" in out
    code, _, err = run(["prove", "-n", 8, "-k", 2, "-r", 1, "--seed", 4, "--backend", "cpu", "--out", proof,
                        "--statement-out", tmp_path, *profile], capsys)
    assert code == 2 and one_line(err).startswith(f"error: --statement-out {tmp_path}: is a folder")
