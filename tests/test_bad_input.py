"""Every bad input is one clear line, never ``internal error``: each ``WHIRGPU_*`` variable (named in its
message), files that cannot be read or written (stderr, exit 2, checked before any work), a cpu proof too large
for the host's memory (refused up front, both sizes named), and wrong types at the public API (a
``WhirGpuError`` subclass)."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import whirgpu
from whirgpu.cli import commands as cli
from whirgpu.backends import host_memory
from whirgpu.errors import ConfigError, DeviceOutOfMemory, ProofFormatError, WhirGpuError
from whirgpu.protocol.params import ProtocolParameters, WhirConfig

from .conftest import REPO
from .test_cli import one_line, run

SMALL = ["-n", "8", "-k", "2", "-r", "1", "--security", "32", "--pow-bits", "5"]
HAS_CXX = shutil.which("c++") is not None


@pytest.fixture(autouse=True)
def _clean_env(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("WHIRGPU_BACKEND", "WHIRGPU_DEBUG", "WHIRGPU_STORAGE", "WHIRGPU_MAX_GPU_BYTES",
                 "WHIRGPU_MAX_BINDING_BYTES", "WHIRGPU_MUL", "WHIRGPU_MSL_MUL", "WHIRGPU_ADAPTER",
                 "WHIRGPU_MSL_CPU_WORKERS"):
        monkeypatch.delenv(name, raising=False)


# ---- environment variables -------------------------------------------------------------------------------------

# (variable, bad value, backend the command asks for or None, whether it needs a C++ compiler). Each one is
# refused before or at the runtime's start, so no device does work.
BAD_ENV = [
    ("WHIRGPU_BACKEND", "zzz", None, False),
    ("WHIRGPU_STORAGE", "zzz", "cpu", False),
    ("WHIRGPU_MAX_GPU_BYTES", "lots", None, False),
    ("WHIRGPU_MAX_BINDING_BYTES", "lots", "msl-cpu", True),
    ("WHIRGPU_DEBUG", "maybe", "cpu", False),
    ("WHIRGPU_MSL_MUL", "fast", "msl-cpu", True),
    ("WHIRGPU_MSL_CPU_WORKERS", "abc", "msl-cpu", True),
    ("WHIRGPU_MSL_CPU_WORKERS", "0", "msl-cpu", True),
    ("WHIRGPU_CACHE_DIR", "/dev/null/x", "msl-cpu", True),
    ("WHIRGPU_ADAPTER", "no-such-adapter-anywhere", "wgpu", False),
]
# Read elsewhere than whirgpu's prove path (by the wgpu runtime once a device is open): checked below directly.
OTHER_ENV = {"WHIRGPU_MUL"}


@pytest.mark.parametrize("variable,value,backend,needs_cxx", BAD_ENV, ids=[f"{v}={x}" for v, x, _, _ in BAD_ENV])
def test_a_bad_variable_is_one_line_naming_it(variable, value, backend, needs_cxx, monkeypatch, capsys):
    if needs_cxx and not HAS_CXX:
        pytest.skip("msl-cpu needs a C++ compiler")
    monkeypatch.setenv(variable, value)
    argv = ["prove", *SMALL, "--seed", "0", *(["--backend", backend] if backend else [])]
    code, out, err = run(argv, capsys)
    if variable == "WHIRGPU_ADAPTER" and "wgpu" in err and "not installed" in err:
        pytest.skip(err.strip())
    line = one_line(err)
    assert code == 1 and variable in line and repr(value) in line, line
    assert "internal error" not in line


def test_every_variable_read_is_checked_and_documented():
    """Each WHIRGPU_* name whirgpu/ reads is in BAD_ENV (or checked in its own test) and in the README's table."""
    read = set()
    for path in (REPO / "whirgpu").rglob("*.py"):
        text = path.read_text()
        read |= set(re.findall(r"environ(?:\.get)?[\[(]\s*\"(WHIRGPU_\w+)\"", text))
        read |= set(re.findall(r"^\w+_ENV = \"(WHIRGPU_\w+)\"", text, flags=re.M))
    assert read >= {"WHIRGPU_DEBUG", "WHIRGPU_CACHE_DIR", "WHIRGPU_MSL_CPU_WORKERS"}
    checked = {v for v, *_ in BAD_ENV} | OTHER_ENV
    assert read <= checked, f"not tested: {sorted(read - checked)}"
    table = (REPO / "README.md").read_text()
    assert all(f"| `{name}=" in table for name in read), [n for n in read if f"| `{n}=" not in table]


def test_workers_variable(monkeypatch):
    from whirgpu.runtime.msl_cpu_rt import workers_from_env

    monkeypatch.setenv("WHIRGPU_MSL_CPU_WORKERS", " 3 ")
    assert workers_from_env() == 3
    monkeypatch.setenv("WHIRGPU_MSL_CPU_WORKERS", "")
    assert workers_from_env() is None
    for bad in ("abc", "-2", "0", "1.5"):
        monkeypatch.setenv("WHIRGPU_MSL_CPU_WORKERS", bad)
        with pytest.raises(ConfigError, match=f"WHIRGPU_MSL_CPU_WORKERS='{re.escape(bad)}'"):
            workers_from_env()


def test_cache_dir_that_cannot_be_created(monkeypatch, tmp_path):
    from whirgpu.runtime.msl_cpu_rt import _cache_dir

    monkeypatch.setenv("WHIRGPU_CACHE_DIR", str(tmp_path / "a-file" / "below"))
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ConfigError, match="WHIRGPU_CACHE_DIR=.*cannot create"):
        _cache_dir()
    monkeypatch.setenv("WHIRGPU_CACHE_DIR", str(tmp_path / "ok"))
    assert _cache_dir() == tmp_path / "ok" / "msl-cpu" and _cache_dir().is_dir()


def test_bad_mul_names_the_variable(monkeypatch):
    pytest.importorskip("wgpu")
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    monkeypatch.setenv("WHIRGPU_MUL", "fast")
    try:
        WgpuRuntime()
    except WhirGpuError as exc:
        assert "WHIRGPU_MUL='fast'" in str(exc) or "adapter" in str(exc)
    else:
        pytest.fail("WHIRGPU_MUL=fast was accepted")


def test_debug_switch(monkeypatch):
    for value, on in (("1", True), ("yes", True), ("0", False), ("", False), ("off", False)):
        monkeypatch.setenv("WHIRGPU_DEBUG", value)
        assert cli.debug_from_env() is on
    monkeypatch.setenv("WHIRGPU_DEBUG", "2")
    with pytest.raises(ConfigError, match="WHIRGPU_DEBUG='2'"):
        cli.debug_from_env()


# ---- files -----------------------------------------------------------------------------------------------------

def test_a_missing_proof_is_a_file_error_not_a_reject(capsys):
    code, out, err = run(["verify", "missing.whir"], capsys)
    assert code == 2 and out == ""
    assert one_line(err) == "error: cannot read missing.whir: No such file or directory"


def test_a_folder_is_a_file_error(capsys, tmp_path):
    code, out, err = run(["verify", tmp_path], capsys)
    assert code == 2 and out == "" and "cannot read" in one_line(err)


def test_a_false_proof_stays_a_reject(capsys, tmp_path):
    (tmp_path / "junk.whir").write_bytes(b"WHIRGPU\x01garbage")
    code, out, err = run(["verify", "junk.whir"], capsys)
    assert code == 1 and one_line(out).startswith("reject: ") and err == ""


def test_verify_reads_standard_input(capsys, monkeypatch):
    assert run(["prove", *SMALL, "--seed", "0", "--backend", "cpu", "-o", "p.whir"], capsys)[0] == 0
    data = Path("p.whir").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(["verify", "-"], capsys)
    assert code == 0 and out.startswith("accept n=8 ")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data[:-4])))
    code, out, _ = run(["verify", "-"], capsys)
    assert code == 1 and out.startswith("reject: ")


def test_prove_checks_its_output_before_proving(capsys, monkeypatch):
    def never(*_args, **_kwargs):
        raise AssertionError("proved although the output cannot be written")

    monkeypatch.setattr(whirgpu.api.Prover, "prove_monty", never)
    code, out, err = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu", "-o", "nodir/x.whir"], capsys)
    assert code == 2 and out == ""
    assert one_line(err).startswith("error: --out nodir/x.whir: cannot write there")
    assert not Path("nodir").exists()


def test_prove_from_a_missing_file(capsys):
    code, out, err = run(["prove", "--from", "nothing.json"], capsys)
    assert code == 2 and "cannot read nothing.json" in one_line(err)


@pytest.mark.parametrize("flag", ["--json", "--plot"])
def test_bench_checks_its_outputs_before_running(flag, capsys, monkeypatch):
    import whirgpu.bench.cli as bench_cli

    monkeypatch.setattr(bench_cli, "_run", lambda args: pytest.fail("ran the grid"))
    code, out, err = run(["bench", "--grid", "8:2:1", "--backends", "cpu", flag, "/proc/no/x.out"], capsys)
    assert code == 2 and out == ""
    assert one_line(err).startswith(f"error: {flag} /proc/no/x.out: cannot write there")


def test_writable_check_leaves_no_file_and_keeps_an_existing_one(tmp_path):
    from whirgpu.cli.options import check_writable

    check_writable(tmp_path / "new.json", "--json")
    assert not (tmp_path / "new.json").exists()
    (tmp_path / "old.json").write_text("kept")
    check_writable(tmp_path / "old.json", "--json")
    assert (tmp_path / "old.json").read_text() == "kept"
    with pytest.raises(whirgpu.FileError, match="is a folder"):
        check_writable(tmp_path, "--out")


# ---- memory ----------------------------------------------------------------------------------------------------

def _config(n, k, r) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                             starting_log_inv_rate=r))


def test_cpu_estimate_grows_with_the_first_commitment():
    assert host_memory.cpu_proof_bytes(_config(20, 4, 1)) < host_memory.cpu_proof_bytes(_config(22, 4, 1))
    assert host_memory.cpu_proof_bytes(_config(20, 4, 1)) < host_memory.cpu_proof_bytes(_config(20, 2, 1))
    assert host_memory.cpu_proof_bytes(_config(20, 4, 1)) < host_memory.cpu_proof_bytes(_config(20, 4, 2))
    assert host_memory.available_bytes() is None or host_memory.available_bytes() > 0


def test_cpu_proof_over_the_available_memory_is_refused_up_front():
    config = _config(20, 4, 1)
    needed = host_memory.cpu_proof_bytes(config)
    host_memory.check_cpu_proof(config, available=needed)
    with pytest.raises(DeviceOutOfMemory) as info:
        host_memory.check_cpu_proof(config, available=needed - 1)
    assert f"{needed} bytes" in str(info.value) and f"{needed - 1} bytes" in str(info.value)
    assert isinstance(info.value, MemoryError)


def test_cli_refuses_a_cpu_proof_the_host_cannot_hold(capsys, monkeypatch):
    monkeypatch.setattr(host_memory, "available_bytes", lambda: 1 << 20)
    monkeypatch.setattr(whirgpu.api.Prover, "prove_monty", lambda *a: pytest.fail("proved"))
    code, out, err = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu"], capsys)
    line = one_line(err)
    assert code == 1 and "needs about" in line and "1048576 bytes (1 MiB) is available" in line


def test_a_memory_error_during_a_proof_is_one_line_with_the_size(capsys, monkeypatch):
    def exhausted(*_args):
        raise MemoryError("Unable to allocate 16.0 GiB for an array with shape (4294967296,) and data type uint32")

    monkeypatch.setattr(whirgpu.api.Prover, "prove_monty", exhausted)
    code, _, err = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu"], capsys)
    assert code == 1 and "out of memory" in one_line(err) and "16.0 GiB" in err


# ---- the public API --------------------------------------------------------------------------------------------

WRONG = [None, 1.5, "x", [1], object(), {"a": 1}, -1, True]


@pytest.fixture(scope="module")
def proof():
    params = ProtocolParameters.default(num_variables=8, folding_factor=2, starting_log_inv_rate=1,
                                        security_level=32, pow_bits=0)
    return whirgpu.Prover(params, backend="cpu").prove(np.arange(256), np.zeros((1, 8), np.int64))


@pytest.mark.parametrize("value", WRONG, ids=repr)
def test_wrong_types_raise_whirgpu_errors(value, proof):
    calls = [
        lambda: whirgpu.dump(value, "binary"),
        lambda: whirgpu.dump(proof, value),
        lambda: whirgpu.load(value),
        lambda: whirgpu.verify(value),
        lambda: whirgpu.claimed_values(value),
        lambda: whirgpu.random_instance(value, 0),
        lambda: whirgpu.random_instance(4, value if value != -1 else 1 << 64),
        lambda: whirgpu.Prover(value, backend="cpu"),
        lambda: whirgpu.Prover(proof.params, backend=value),
        lambda: whirgpu.Prover(proof.params, backend="cpu", storage=value),
        lambda: whirgpu.Prover(proof.params, backend="cpu").prove(value, np.zeros((1, 8), np.int64)),
        lambda: whirgpu.Prover(proof.params, backend="cpu").prove_monty(np.zeros(256, np.uint32), value),
    ]
    for i, call in enumerate(calls):
        try:
            call()
        except WhirGpuError:
            pass
        except Exception as exc:  # noqa: BLE001 - the point of the test
            pytest.fail(f"call {i} with {value!r}: {type(exc).__name__}: {exc}")


def test_a_proof_file_with_wrong_parts(proof):
    broken = whirgpu.ProofFile(proof.params, None, proof.proof)
    with pytest.raises(ProofFormatError, match="statement: expected Statement, got NoneType"):
        whirgpu.dump(broken, "binary")
    with pytest.raises(ProofFormatError):
        whirgpu.claimed_values(broken)
    assert whirgpu.claimed_values(proof) == whirgpu.claimed_values(whirgpu.load(whirgpu.dump(proof, "binary")))


# ---- the folding factor, as people and documents read it ---------------------------------------------------------

def test_folding_factor_reads_the_same_in_text_and_json(capsys):
    from whirgpu.protocol.params import Constant, ConstantFromSecondRound

    assert str(Constant(4)) == "4" and str(ConstantFromSecondRound(4, 2)) == "4 then 2"
    code, out, _ = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu"], capsys)
    assert code == 0 and " fold=2 rate=1 " in out and "Constant" not in out
    code, out, _ = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu", "--json"], capsys)
    proved = json.loads(out)["folding_factor"]
    code, out, _ = run(["params", *SMALL, "--json"], capsys)
    assert proved == json.loads(out)["params"]["folding_factor"] == {"Constant": 2}
    code, out, _ = run(["params", *SMALL], capsys)
    assert "folding 2," in out and "Constant" not in out
