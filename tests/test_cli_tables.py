"""``whirgpu prove --profile p3-whir --tables ...`` and ``whirgpu verify`` on ``p3-whir-oracle/v2`` documents: the
oracle's flags mean the same here (t01 and t04 are reproduced from their MANIFEST commands), ``verify`` prints what
a table proof proved, and the table flags pin it under ``--expect``."""

from __future__ import annotations

import json
import subprocess

import pytest

from whirgpu.cli import commands as cli

from .conftest import REPO, golden_p3_bytes

T01 = "t01_kb_suffix_10x2_k4_s32_p0_cb.json"
T02 = "t02_kb_prefix_10x3-8x2-8x1_k4_s32_p0_cb_next.json"
T04 = "t04_kb_prefix_11x4-9x1_k3_s90_p0_cb_prescribed.json"
# the MANIFEST commands, in whirgpu's words (the oracle's --fold / --rate are -k / -r, cb is capacity)
T01_FLAGS = ["--field", "koalabear", "--tables", "10x2", "--layout", "suffix", "--open", "0:0,1", "-k", "4", "-r",
             "1", "--security", "32", "--pow-bits", "0", "--soundness", "capacity", "--seed", "0", "--points",
             "transcript"]
T04_FLAGS = ["--field", "koalabear", "--tables", "11x4,9x1", "--layout", "prefix", "--open", "0:0,3:2/0:1/1:0:0",
             "-k", "3", "-r", "1", "--security", "90", "--pow-bits", "0", "--soundness", "capacity", "--seed", "5",
             "--points", "prescribed"]
TEXTS = {"extension_field", "instance_draw", "mmcs", "next_semantics", "notes", "notes_v2", "points_derivation",
         "proof_field_encoding", "protocol", "self_check"}


def run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out = capsys.readouterr()
    return code, out.out, out.err


def _golden_file(name: str, tmp_path):
    path = tmp_path / name
    path.write_bytes(golden_p3_bytes(name))
    return path


@pytest.mark.parametrize("name,flags,witness", [(T01, T01_FLAGS, True), (T04, T04_FLAGS, False)])
def test_prove_reproduces_the_oracles_document(name, flags, witness, tmp_path, capsys):
    out = tmp_path / "proof.json"
    code, stdout, err = run(["prove", "--profile", "p3-whir", *flags, *(["--witness"] if witness else []),
                             "--out", out], capsys)
    assert code == 0, err
    assert "p3-whir-oracle/v2" in stdout
    golden = json.loads(golden_p3_bytes(name))
    written = json.loads(out.read_text())
    assert set(golden) - set(written) == TEXTS | (set() if witness else {"tables", "stacking"})
    for key in written:
        assert written[key] == golden[key], key
    if witness:  # the text itself: the oracle's compact sorted JSON
        text = json.dumps({k: golden[k] for k in written}, sort_keys=True, separators=(",", ":"))
        assert out.read_text() == text
    code, stdout, _ = run(["verify", out], capsys)
    assert code == 0 and stdout.startswith("accept ") and f"tables={golden['params']['tables']}" in stdout


def test_verify_prints_what_a_table_proof_proved(tmp_path, capsys):
    code, stdout, _ = run(["verify", _golden_file(T02, tmp_path)], capsys)
    assert code == 0
    assert ("tables=10x3,8x2,8x1 layout=prefix open=0:0,1:1/0:2:/1:0:/2:0:0 points_from=transcript (no "
            "expectations given") in stdout


def test_expectations_pin_tables_layout_schedule_and_points(tmp_path, capsys):
    path = _golden_file(T02, tmp_path)
    expect = ["verify", path, "--expect", "12:4:1", "--security", "32", "--pow-bits", "0", "--tables",
              "10x3,8x2,8x1", "--layout", "prefix"]
    code, stdout, _ = run([*expect, "--open", "0:0,1|1;0:2;1:0;2:0:0"], capsys)
    assert code == 0 and "as expected: parameters, tables, layout, schedule, points" in stdout
    for extra, check in ((["--open", "0:0,1:1/0:2/1:1/2:0:0"], "statement.schedule"),
                         (["--open", "0:0,1:1/0:2/1:0/2:0:0", "--points", "prescribed"], "statement.points"),
                         ([], "statement.schedule")):
        code, stdout, _ = run([*expect, *extra], capsys)
        assert code == 1 and stdout.startswith(f"reject: not what the verifier expects ({check})"), stdout
    code, stdout, _ = run(["verify", path, "--expect", "12:4:1", "--security", "32", "--pow-bits", "0"], capsys)
    assert code == 1 and "(statement.tables)" in stdout
    code, _, err = run(["verify", path, "--expect", "11:4:1", "--tables", "10x3,8x2,8x1"], capsys)
    assert code == 1 and "stack to n = 12" in err


@pytest.mark.parametrize("argv,needle", [
    (["prove", "--profile", "p3-whir", "--layout", "prefix", "--seed", "0", "-n", "8"], "--layout refines --tables"),
    (["prove", "--tables", "8x2", "--seed", "0"], "--tables needs --profile p3-whir"),
    (["prove", "--profile", "p3-whir", "--tables", "8x2", "-n", "7", "--seed", "0"], "stack to n = 9"),
    (["prove", "--profile", "p3-whir", "--tables", "8x2", "--open", "0:2", "--seed", "0"], "current column 2 >= "),
    (["prove", "--profile", "p3-whir", "--tables", "27x1", "--seed", "0"], "above the limit 26"),
    (["prove", "--profile", "p3-whir", "--tables", "8x2", "--openings", "2", "--seed", "0"], "--openings"),
    (["verify", "x.json", "--tables", "8x2"], "--tables refines --expect"),
    (["verify", "x.json", "--expect", "9:5:1", "--open", "0:0"], "--open refines --tables"),
])
def test_table_flags_where_they_do_not_apply(argv, needle, capsys, tmp_path):
    code, _, err = run([*argv, "--out", tmp_path / "p.json"] if argv[0] == "prove" else argv, capsys)
    assert code == 1 and needle in err and err.count("\n") == 1, err


ORACLE = REPO.parent / "shared" / "oracle-p3" / "bin" / "oracle-p3"
# shapes not in the goldens: (tables, layout, open, points, fold, field, seed)
OTHER_SHAPES = [("9x3,7x2,2x1", "prefix", "2:0:0/0:0,2:1;1::1", "transcript", 3, "koalabear", 11),
                ("8x1,8x2,6x3", "suffix", "1:1|0/0:0/2:2,0,1:", "prescribed", 4, "babybear", 4),
                ("5x2", "suffix", None, "transcript", 2, "koalabear", 9)]


@pytest.mark.skipif(not ORACLE.is_file(), reason=f"the prebuilt oracle {ORACLE} is not here (CI has no ../shared)")
@pytest.mark.parametrize("tables,layout,opened,points,fold,field,seed", OTHER_SHAPES)
def test_same_flags_same_document_as_the_oracle(tables, layout, opened, points, fold, field, seed, tmp_path, capsys):
    flags = ["--tables", tables, "--layout", layout, "--points", points, "--security", "32", "--pow-bits", "0",
             "--seed", str(seed), "--field", field] + ([] if opened is None else ["--open", opened])
    theirs, ours = tmp_path / "oracle.json", tmp_path / "ours.json"
    done = subprocess.run([str(ORACLE), "prove-tables", *flags, "--fold", str(fold), "--out", str(theirs)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    code, _, err = run(["prove", "--profile", "p3-whir", *flags, "-k", fold, "--witness", "--out", ours], capsys)
    assert code == 0, err
    golden, written = json.loads(theirs.read_text()), json.loads(ours.read_text())
    for key in written:
        assert written[key] == golden[key], key
    done = subprocess.run([str(ORACLE), "verify", "--in", str(ours)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.stdout.strip() == "accept", done.stdout + done.stderr
    code, stdout, _ = run(["verify", theirs], capsys)
    assert code == 0 and f"open={golden['params']['open']} " in stdout
