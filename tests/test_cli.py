"""The command line, in process and once as a real subprocess: every command, accept/reject, clean errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from whirgpu.cli import main
from whirgpu.protocol.params import ProtocolParameters, WhirConfig

from .conftest import REPO, golden_dir


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


@pytest.mark.parametrize("command", [[], ["params"], ["prove"], ["verify"]])
def test_help(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main(command + ["--help"])
    assert exc.value.code == 0
    assert "usage: whirgpu" in capsys.readouterr().out


def test_params_table_and_json(capsys):
    code, out, _ = run(capsys, "params", "-n", "20", "-k", "4", "-r", "1")
    assert code == 0 and "round" in out and "queries" in out
    code, out, _ = run(capsys, "params", "-n", "20", "-k", "4", "-r", "1", "--json")
    expected = WhirConfig.from_params(ProtocolParameters.default(num_variables=20, folding_factor=4,
                                                                 starting_log_inv_rate=1)).to_json_dict()
    assert code == 0 and json.loads(out) == json.loads(json.dumps(expected))


@pytest.mark.parametrize("fmt", ["binary", "whir-p3-json"])
def test_prove_then_verify(capsys, tmp_path, fmt):
    out_file = tmp_path / "proof"
    code, out, _ = run(capsys, "prove", "-n", "10", "-k", "2", "-r", "1", "--security", "32", "--seed", "5",
                       "--format", fmt, "--out", str(out_file))
    assert code == 0 and "backend: cpu" in out and out_file.stat().st_size > 0
    code, out, _ = run(capsys, "verify", str(out_file))
    assert (code, out.strip()) == (0, "accept")
    data = bytearray(out_file.read_bytes())
    data[len(data) // 2] ^= 0x01  # flip one bit in the middle of the proof
    out_file.write_bytes(bytes(data))
    code, out, _ = run(capsys, "verify", str(out_file))
    assert code == 1 and out.startswith("reject: ")


def test_prove_from_golden_reproduces_it(capsys, tmp_path, golden):
    source = golden / "n12_f4_r1_s32_p0_cb.json"
    out_file = tmp_path / "p.json"
    code, _, _ = run(capsys, "prove", "--from", str(source), "--format", "whir-p3-json", "--out", str(out_file))
    assert code == 0
    ours, theirs = json.loads(out_file.read_text()), json.loads(source.read_text())
    assert ours["proof"] == theirs["proof"] and ours["params"] == theirs["params"]


@pytest.mark.parametrize("content", [None, b"", b"\x00\x01garbage" * 50, b"{}"])
def test_verify_bad_files(capsys, tmp_path, content):
    path = tmp_path / "bad"
    if content is not None:
        path.write_bytes(content)
    code, out, _ = run(capsys, "verify", str(path))
    assert code == 1 and out.startswith("reject: ") and len(out.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,needle", [
    (["params", "-n", "27", "-k", "1", "-r", "2"], "27"),
    (["params", "-n", "10", "-k", "2", "-r", "1", "--soundness", "bogus"], "bogus"),
    (["params", "-n", "3", "-k", "4", "-r", "1"], "4"),
    (["params", "-n", "-1", "-k", "1", "-r", "1"], "-1"),
    (["prove", "--seed", "1"], "--num-variables"),
    (["prove", "--from", "/nonexistent/file.json"], "cannot read"),
])
def test_bad_input_is_one_clean_line(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1 and needle in err


def test_prove_from_non_json(capsys, tmp_path):
    path = tmp_path / "x.json"
    path.write_text("not json")
    code, _, err = run(capsys, "prove", "--from", str(path))
    assert code == 1 and "not JSON" in err


def test_console_entry_point_runs_as_a_process(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proof = tmp_path / "p.whir"
    done = subprocess.run([sys.executable, "-m", "whirgpu", "prove", "-n", "8", "-k", "2", "-r", "1", "--security",
                           "32", "--seed", "1", "--out", str(proof)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, "-m", "whirgpu", "verify", str(proof)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "accept")
