"""whirgpu as a user installs it: a wheel of this checkout in a fresh virtual environment.

``install_wheel(root)`` builds the wheel (hatchling's ``build_wheel`` when hatchling is importable, as the
``test`` extra provides; else ``pip wheel``, which fetches hatchling), creates ``root/venv`` with the system's
site-packages visible (numpy, wgpu and the rest are not downloaded again, and pip comes from there: the venv
needs no ensurepip) and installs the wheel into it with ``--no-deps``. It then checks, from a folder outside the
checkout and without PYTHONPATH, that ``import whirgpu`` in the venv loads the venv's copy, that the copy's
modules are this checkout's byte for byte, and that ``whirgpu`` on the venv's PATH is the venv's script;
anything else fails the session fixture that calls it (tests/conftest.py, ``installed``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
_DROPPED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "WHIRGPU_BACKEND", "WHIRGPU_DEBUG")


@dataclass(frozen=True)
class Installed:
    """A venv holding a wheel of this checkout: ``bin`` has its ``python3`` and its console scripts."""

    root: Path
    venv: Path

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python3"

    def env(self) -> dict:
        """This process's environment with the venv activated: its bin first on PATH, no PYTHONPATH."""
        env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
        env["PATH"] = os.pathsep.join([str(self.bin), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(self.venv)
        return env

    def run(self, argv: list, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
        """``argv`` (its first word found on the venv's PATH) in ``cwd``, output captured as text."""
        return subprocess.run([str(a) for a in argv], cwd=cwd, env=self.env(), capture_output=True, text=True,
                              timeout=timeout)


def _check(done: subprocess.CompletedProcess, what: str) -> str:
    if done.returncode != 0:
        raise RuntimeError(f"{what} exited {done.returncode}: {(done.stderr or done.stdout)[-2000:]}")
    return done.stdout


def build_wheel(out: Path) -> Path:
    """A wheel of this checkout in ``out``."""
    try:
        import hatchling.build  # noqa: F401, PLC0415 - only whether it is here
        code = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"
        _check(subprocess.run([sys.executable, "-c", code, str(out)], cwd=REPO, capture_output=True, text=True,
                              timeout=300), "hatchling's build_wheel")
    except ImportError:
        _check(subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
                              capture_output=True, text=True, timeout=600), "pip wheel")
    (wheel,) = out.glob("whirgpu-*.whl")
    return wheel


def install_wheel(root: Path) -> Installed:
    """Build, create the venv, install, and check it (module docstring)."""
    wheel = build_wheel(root)
    installed = Installed(root, root / "venv")
    venv.create(installed.venv, system_site_packages=True, with_pip=False, symlinks=os.name != "nt")
    _check(installed.run([installed.python, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          "--disable-pip-version-check", wheel], cwd=root), "pip install of the wheel")
    outside = root / "elsewhere"
    outside.mkdir()
    code = ("import shutil, whirgpu; from pathlib import Path; "
            "print(Path(whirgpu.__file__).parent); print(shutil.which('whirgpu'))")
    package, script = _check(installed.run([installed.python, "-c", code], cwd=outside),
                             "import whirgpu in the venv").split()
    package = Path(package)
    if installed.venv.resolve() not in package.resolve().parents:
        raise RuntimeError(f"the venv imports whirgpu from {package}, not from {installed.venv}")
    if Path(script) != installed.bin / "whirgpu":
        raise RuntimeError(f"whirgpu on the venv's PATH is {script}, not {installed.bin / 'whirgpu'}")
    ours = {p.relative_to(REPO / "whirgpu"): p.read_bytes() for p in (REPO / "whirgpu").rglob("*.py")}
    theirs = {p.relative_to(package): p.read_bytes() for p in package.rglob("*.py")}
    if ours != theirs:
        differ = sorted(str(p) for p in set(ours) ^ set(theirs) | {p for p in ours if ours[p] != theirs.get(p)})
        raise RuntimeError(f"the wheel's modules are not this checkout's: {len(differ)} differ, e.g. {differ[:3]}")
    return installed
