"""The installed command: every console script pyproject.toml declares, imported and called as the installed
script calls it (``module:attr``, then ``sys.exit(attr())`` with the script's argv), and a wheel of this checkout
installed into a fresh venv, its ``whirgpu`` run from a folder outside the checkout: ``--version``, a cpu proof
and its verification, a p3-whir proof that ``verify`` tells apart by itself (tests/installed.py)."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from .conftest import REPO

SMALL_PROOF = ["-n", "10", "-k", "2", "-r", "1", "--seed", "0", "--backend", "cpu"]
SMALL_P3_PROOF = ["--profile", "p3-whir", "-n", "10", "--seed", "1", "--backend", "cpu"]


def console_scripts() -> dict[str, str]:
    """pyproject.toml's ``[project.scripts]``: {name: "module:attr"}."""
    text = (REPO / "pyproject.toml").read_text()
    section = text.split("\n[project.scripts]\n", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^([\w.-]+)\s*=\s*"([\w.]+:[\w.]+)"\s*$', section, flags=re.M))


def _version() -> str:
    return re.search(r'^version = "([^"]+)"$', (REPO / "pyproject.toml").read_text(), flags=re.M).group(1)


def test_the_project_declares_the_whirgpu_script():
    assert console_scripts() == {"whirgpu": "whirgpu.cli:main"}


@pytest.mark.parametrize("name", sorted(console_scripts()))
def test_an_entry_point_runs_as_its_installed_script_does(name, monkeypatch, capsys):
    module, _, attr = console_scripts()[name].partition(":")
    function = importlib.import_module(module)
    for part in attr.split("."):
        function = getattr(function, part)
    monkeypatch.setattr(sys, "argv", [name, "--version"])
    with pytest.raises(SystemExit) as exited:
        sys.exit(function())
    assert exited.value.code in (0, None)
    assert capsys.readouterr().out == f"whirgpu {_version()}\n"


def test_every_installed_script_runs(installed, tmp_path):
    for name in console_scripts():
        done = installed.run([installed.bin / name, "--version"], cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, f"whirgpu {_version()}\n", ""), name


def test_the_installed_command_proves_and_verifies_outside_the_checkout(installed, tmp_path):
    assert REPO not in tmp_path.resolve().parents
    whirgpu = installed.bin / "whirgpu"

    def run(*argv):
        done = installed.run([whirgpu, *argv], cwd=tmp_path)
        assert done.returncode == 0, f"whirgpu {' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}"
        return done.stdout

    assert run("prove", *SMALL_PROOF, "--out", "p.whir").splitlines()[0] == "backend: cpu (requested)"
    assert (tmp_path / "p.whir").stat().st_size > 0
    assert run("verify", "p.whir").startswith("accept n=10 fold=2 rate=1 ")
    assert "wrote " in run("prove", *SMALL_P3_PROOF, "--out", "p3.json")
    verdict = run("verify", "p3.json")
    assert verdict.startswith("accept n=10 ") and " profile=p3-whir " in verdict
