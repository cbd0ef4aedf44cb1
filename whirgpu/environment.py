"""Every ``WHIRGPU_*`` environment variable, checked at startup whatever backend runs.

``check_environment()`` raises ``ConfigError`` with one line naming the first bad variable, its value and what is
allowed: for a value its reader would refuse (the same rule, checked before any backend opens), and for a
``WHIRGPU_*`` name that nothing reads (a typo such as ``WHIRGPU_BACKNED`` would otherwise be ignored without a
word; the line suggests the closest name). It reads only the environment and, for ``WHIRGPU_CACHE_DIR``, tries
creating an empty probe folder there (removed at once: ``cache_dir.check``), so it costs microseconds.

Where it runs: the CLI's ``main`` before any command (``error: ...``, exit 1), and ``backends.select_backend``,
through which every prover of the Python API opens its backend (``Prover``, ``P3Prover``, ``verify_many(backend=)``,
the planner's ``devices --plan``); there it leaves ``WHIRGPU_BACKEND`` to ``select_backend`` itself, which refuses
a bad one as ``BackendUnavailable`` as it always has. Verifying on the host (``whirgpu.verify``) opens no backend
and reads none of these variables, so it does not check them.

``VARIABLES``: name -> ``Variable`` (what is allowed, the check, who reads it: ``package`` for ``whirgpu/``, or
``tests`` for the test suite and benchmarks). Imports nothing of whirgpu but its errors and two leaf modules, so
the CLI can check before anything heavy loads; the allowed names of the backends, storage policies and multiply
variants are written here again, and a test keeps them equal to the runtimes' own.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

from . import cache_dir
from .errors import ConfigError
from .devices.overrides import MAX_BINDING_ENV, MAX_GPU_BYTES_ENV, parse_binding_bytes, parse_bytes

PREFIX = "WHIRGPU_"
BACKENDS = ("cpu", "wgpu", "dawn", "metal", "msl-cpu")  # backends.BACKEND_NAMES without auto
STORAGE_POLICIES = ("hybrid", "shared", "private")  # backends.base.STORAGE_POLICIES
WGSL_MULS = ("auto", "emulated", "u64")  # wgpu_rt: auto and its MUL_VARIANTS
MSL_MULS = ("mulhi", "u64", "emulated")  # metal_rt / msl_cpu_rt MUL_VARIANTS
SWITCH = {"1": True, "true": True, "yes": True, "on": True, "": False, "0": False, "false": False, "no": False,
          "off": False}  # cli.DEBUG_VALUES
RUNTIMES = ("wgpu", "dawn", "metal", "msl-cpu")  # what WHIRGPU_REQUIRE may list (tests/backend/conftest)


@dataclass(frozen=True)
class Variable:
    """One variable: ``allowed`` (the values, as the README's table gives them), ``check`` (raises ConfigError
    for a bad value; None: any text), ``reader``: ``package`` or ``tests``."""

    allowed: str
    check: Callable[[str, str], None] | None
    reader: str = "package"


def _one_of(choices: tuple[str, ...], what: str, default: str = "", lower: bool = True):
    def check(name: str, value: str) -> None:
        got = value.lower() if lower else value
        if value and got not in choices:
            raise ConfigError(f"{name}={value!r} is not {what}; choose one of {', '.join(choices)}"
                              + (f" (unset: {default})" if default else ""))
    return check


def _bytes(parse):
    def check(name: str, value: str) -> None:
        if value.strip():
            parse(value.strip(), name)
    return check


def _switch(name: str, value: str) -> None:
    if value.strip().lower() not in SWITCH:
        raise ConfigError(f"{name}={value!r} is not a switch: give 1 (on) or 0 (off), or true/false, yes/no, on/off")


def _positive(name: str, value: str) -> None:
    text = value.strip()
    if not text:
        return
    try:
        number = int(text)
    except ValueError:
        number = 0
    if number < 1:
        raise ConfigError(f"{name}={text!r} is not a thread count: give a positive integer")


def _cache(name: str, value: str) -> None:
    cache_dir.check(value)


def _runtimes(name: str, value: str) -> None:
    bad = [part.strip() for part in value.split(",") if part.strip() and part.strip() not in RUNTIMES]
    if bad:
        raise ConfigError(f"{name}={value!r} names {', '.join(map(repr, bad))}, not a runtime: give a "
                          f"comma-separated list of {', '.join(RUNTIMES)}")


VARIABLES: dict[str, Variable] = {
    "WHIRGPU_BACKEND": Variable("|".join(BACKENDS), _one_of(BACKENDS, "a backend", lower=False)),
    "WHIRGPU_ADAPTER": Variable("TEXT (any; an adapter whose name contains it, checked when one is opened)", None),
    "WHIRGPU_MUL": Variable("|".join(WGSL_MULS), _one_of(WGSL_MULS, "a WGSL multiply", "auto")),
    "WHIRGPU_MSL_MUL": Variable("|".join(MSL_MULS), _one_of(MSL_MULS, "an MSL multiply", "mulhi")),
    "WHIRGPU_MSL_CPU_WORKERS": Variable("a positive integer", _positive),
    "WHIRGPU_CACHE_DIR": Variable("a folder whirgpu may create and write", _cache),
    "WHIRGPU_STORAGE": Variable("|".join(STORAGE_POLICIES), _one_of(STORAGE_POLICIES, "a storage policy", "hybrid")),
    MAX_GPU_BYTES_ENV: Variable("a byte count (536870912, 512M, 1.5GiB)", _bytes(parse_bytes)),
    MAX_BINDING_ENV: Variable("a byte count, a multiple of 4, at least 4096", _bytes(parse_binding_bytes)),
    "WHIRGPU_DEBUG": Variable("1|0 (true/false, yes/no, on/off)", _switch),
    "WHIRGPU_REQUIRE": Variable(",".join(RUNTIMES) + " (any of them, comma-separated)", _runtimes, "tests"),
    "WHIRGPU_GOLDEN": Variable("a folder of golden files (any text)", None, "tests"),
    "WHIRGPU_EXHAUSTIVE": Variable("1|0: run every test, not the default tier (tests/conftest.py)", _switch, "tests"),
    "WHIRGPU_BENCH_MSL_CPU": Variable("1 to add the msl-cpu rows (any text; empty or 0: off)", None, "tests"),
}


def check_environment(environ: Mapping[str, str] | None = None, skip: Iterable[str] = ()) -> None:
    """Raise ``ConfigError`` (one line: the variable, its value, what is allowed) for the first bad ``WHIRGPU_*``
    variable of ``environ`` (default ``os.environ``) in name order, unless its name is in ``skip``."""
    environ = os.environ if environ is None else environ
    skipped = set(skip)
    for name in sorted(key for key in environ if key.startswith(PREFIX)):
        if name in skipped:
            continue
        value = environ[name]
        variable = VARIABLES.get(name)
        if variable is None:
            close = difflib.get_close_matches(name, list(VARIABLES), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]}? " if close else ""
            raise ConfigError(f"{name}={value!r} is not a whirgpu variable ({hint}whirgpu reads "
                              f"{', '.join(sorted(n for n, v in VARIABLES.items() if v.reader == 'package'))})")
        if variable.check is not None:
            variable.check(name, value)
