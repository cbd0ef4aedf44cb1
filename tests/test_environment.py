"""Every ``WHIRGPU_*`` variable is checked when the CLI starts, whatever the command: a bad value (or a name
nothing reads) is one ``error:`` line naming the variable, its value and what is allowed, exit 1, even for a
command that never opens the backend that reads it (``params``). The Python API checks at ``select_backend``."""

from __future__ import annotations

import re

import pytest

import whirgpu
from whirgpu import cache_dir, environment
from whirgpu.cli import commands as cli
from whirgpu.environment import VARIABLES, check_environment
from whirgpu.errors import ConfigError
from whirgpu.protocol.parameters import ProtocolParameters

from .conftest import REPO
from .test_cli import one_line, run

PARAMS = ["params", "-n", "8", "-k", "2", "-r", "1"]

# (variable, bad value, a word of what is allowed that the line must carry)
BAD = [
    ("WHIRGPU_BACKEND", "zzz", "msl-cpu"),
    ("WHIRGPU_BACKEND", "auto", "wgpu"),
    ("WHIRGPU_MUL", "fast", "emulated"),
    ("WHIRGPU_MSL_MUL", "fast", "mulhi"),
    ("WHIRGPU_MSL_CPU_WORKERS", "abc", "positive integer"),
    ("WHIRGPU_MSL_CPU_WORKERS", "0", "positive integer"),
    ("WHIRGPU_MAX_BINDING_BYTES", "lots", "byte count"),
    ("WHIRGPU_MAX_BINDING_BYTES", "1000", "multiple of 4"),
    ("WHIRGPU_MAX_GPU_BYTES", "lots", "byte count"),
    ("WHIRGPU_CACHE_DIR", "/dev/null/x", "folder"),
    ("WHIRGPU_STORAGE", "zzz", "hybrid"),
    ("WHIRGPU_DEBUG", "maybe", "1"),
    ("WHIRGPU_REQUIRE", "wgpu,gpu", "msl-cpu"),
    ("WHIRGPU_BACKNED", "cpu", "did you mean WHIRGPU_BACKEND?"),
]
GOOD = [
    ("WHIRGPU_BACKEND", "cpu"), ("WHIRGPU_MUL", "U64"), ("WHIRGPU_MUL", ""), ("WHIRGPU_MSL_MUL", "emulated"),
    ("WHIRGPU_MSL_CPU_WORKERS", " 3 "), ("WHIRGPU_MAX_BINDING_BYTES", "128M"), ("WHIRGPU_MAX_GPU_BYTES", "1.5GiB"),
    ("WHIRGPU_STORAGE", "SHARED"), ("WHIRGPU_DEBUG", "off"), ("WHIRGPU_ADAPTER", "anything at all"),
    ("WHIRGPU_REQUIRE", "wgpu, dawn,msl-cpu"), ("WHIRGPU_GOLDEN", "/nowhere"), ("WHIRGPU_BENCH_MSL_CPU", "1"),
]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in list(__import__("os").environ):
        if name.startswith("WHIRGPU_"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("variable,value,allowed", BAD, ids=[f"{v}={x}" for v, x, _ in BAD])
def test_a_bad_variable_stops_any_command(variable, value, allowed, monkeypatch, capsys):
    monkeypatch.setenv(variable, value)
    code, out, err = run(PARAMS, capsys)
    line = one_line(err)
    assert code == 1 and out == "" and line.startswith(f"error: {variable}={value!r}"), line
    assert allowed in line, line


@pytest.mark.parametrize("variable,value", GOOD, ids=[f"{v}={x}" for v, x in GOOD])
def test_good_values_pass(variable, value, monkeypatch, capsys):
    monkeypatch.setenv(variable, value)
    code, out, err = run(PARAMS, capsys)
    assert code == 0 and err == "" and "folding 2," in out


def test_the_api_checks_when_it_opens_a_backend(monkeypatch):
    params = ProtocolParameters.default(num_variables=8, folding_factor=2, starting_log_inv_rate=1)
    monkeypatch.setenv("WHIRGPU_MUL", "fast")
    with pytest.raises(ConfigError, match="WHIRGPU_MUL='fast' is not a WGSL multiply; choose one of auto, emulated"):
        whirgpu.Prover(params, backend="cpu")
    monkeypatch.delenv("WHIRGPU_MUL")
    whirgpu.Prover(params, backend="cpu").close()


def test_the_first_bad_variable_by_name():
    with pytest.raises(ConfigError, match="^WHIRGPU_MSL_MUL="):
        check_environment({"WHIRGPU_STORAGE": "x", "WHIRGPU_MSL_MUL": "y", "HOME": "/"})
    check_environment({"WHIRGPU_STORAGE": "x"}, skip=("WHIRGPU_STORAGE",))


def test_every_variable_named_anywhere_is_known():
    """Each WHIRGPU_* name in the package, the tests or the benchmarks is in VARIABLES (so none is refused as
    unknown), and each the package reads is in the README's table."""
    named = set()
    for folder in ("whirgpu", "tests", "benchmarks"):
        for path in (REPO / folder).rglob("*.py"):
            named |= set(re.findall(r"\b(WHIRGPU_[A-Z][A-Z0-9_]*[A-Z0-9])\b", path.read_text()))
    named -= {"WHIRGPU_BACKNED"}  # this file's typo
    assert named <= set(VARIABLES), sorted(named - set(VARIABLES))
    table = (REPO / "README.md").read_text()
    package = [name for name, v in VARIABLES.items() if v.reader == "package"]
    assert all(f"| `{name}=" in table for name in package), [n for n in package if f"| `{n}=" not in table]


def test_the_allowed_values_are_the_readers_own():
    from whirgpu.backends import BACKEND_NAMES
    from whirgpu.backends.base import STORAGE_POLICIES
    from whirgpu.runtime import metal_rt, msl_cpu_rt, wgpu_rt

    assert environment.BACKENDS == BACKEND_NAMES[1:]
    assert environment.STORAGE_POLICIES == tuple(STORAGE_POLICIES)
    assert environment.MSL_MULS == msl_cpu_rt.MUL_VARIANTS == metal_rt.MUL_VARIANTS
    assert environment.WGSL_MULS == ("auto",) + wgpu_rt.MUL_VARIANTS
    assert environment.SWITCH == cli.DEBUG_VALUES


def test_cache_dir_check_creates_nothing(tmp_path):
    cache_dir.check(str(tmp_path / "a" / "b"))
    assert not (tmp_path / "a").exists()
    (tmp_path / "file").write_text("")
    for bad in (tmp_path / "file", tmp_path / "file" / "below"):
        with pytest.raises(ConfigError, match=f"WHIRGPU_CACHE_DIR='{re.escape(str(bad))}'"):
            cache_dir.check(str(bad))
