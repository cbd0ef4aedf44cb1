"""What the two command-line front ends (``whirgpu.cli`` and ``whirgpu.bench.cli``) share: the options that open
a backend, reading a JSON file with a one-line error, and the per-phase breakdown of a proof. Below both, so
neither imports the other for them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ..backends.base import STORAGE_POLICIES
from ..errors import ConfigError, FileError
from ..devices.overrides import MAX_BINDING_ENV, MAX_BINDING_OPTION, MIN_BINDING_BYTES


def add_storage_flag(p: argparse.ArgumentParser) -> None:
    """--storage, shared by every command that opens a backend (choices: STORAGE_POLICIES)."""
    p.add_argument("--storage", default=None, choices=STORAGE_POLICIES,
                   help="GPU buffer storage policy (default hybrid, or WHIRGPU_STORAGE): hybrid keeps inputs and "
                        "outputs in host-visible memory and intermediates device-only; shared / private put every "
                        "buffer in one mode, to measure the difference. The cpu backend ignores it")


def add_max_binding_flag(p: argparse.ArgumentParser) -> None:
    """--max-binding, shared by every command that opens a GPU runtime (whirgpu.devices.overrides)."""
    p.add_argument(MAX_BINDING_OPTION, dest="max_binding", default=None, metavar="SIZE",
                   help=f"lower the storage-binding limit of every GPU runtime to SIZE bytes (as {MAX_BINDING_ENV}, "
                        "which it overrides: 1073741824, 512M, 1.5GiB; suffixes are powers of 1024; a multiple of "
                        f"4, at least {MIN_BINDING_BYTES}), to reproduce a small-binding device (128M: WebGPU's "
                        "default) on a large one; a value above a device's own limit leaves the device's")


def read_bytes(path: str | Path) -> bytes:
    """The bytes of ``path`` (``-``: standard input); a one-line FileError when it cannot be read."""
    if str(path) == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise FileError(f"cannot read {path}: {exc.strerror or exc}") from None


def output_path(value: str | None, default: str, flag: str) -> Path:
    """Where an output flag ``flag`` writes: ``default`` when the flag is not given (None), else ``value``; a
    one-line FileError for an empty (or blank) value, which names no file (``Path("")`` would be the current
    folder)."""
    if value is None:
        return Path(default)
    if not value.strip():
        raise FileError(f"{flag} {value!r} names no file: give a path (without {flag}: {default})")
    return Path(value)


def check_writable(path: str | Path | None, flag: str) -> None:
    """Fail before the work whose result goes to ``path``, not after it: a FileError naming ``flag`` unless the
    file can be opened for writing (tried for real; a file that did not exist is removed again, one that did is
    left untouched). An empty (or blank) ``path`` is refused: it names no file."""
    if path is None:
        return
    if not str(path).strip():
        raise FileError(f"{flag} {str(path)!r} names no file: give a path")
    path = Path(path)
    existed = path.exists()
    if path.is_dir():
        raise FileError(f"{flag} {path}: is a folder")
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise FileError(f"{flag} {path}: cannot write there: {exc.strerror or exc}") from None
    if not existed:
        path.unlink(missing_ok=True)


def read_json_file(path: str | Path):
    """The JSON document in ``path``; a one-line FileError when it cannot be read, ConfigError when it is not
    JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise FileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON: {exc}") from None


def write_statement(path: str | Path, points, values) -> None:
    """The statement file ``verify --statement`` reads: ``{"points": (m, n, 4), "values": (m, 4)}`` canonical
    integers; a one-line FileError when it cannot be written."""
    doc = {"points": np.asarray(points, dtype=np.int64).tolist(), "values": np.asarray(values, dtype=np.int64).tolist()}
    try:
        Path(path).write_text(json.dumps(doc))
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None


def phases_ms(phase_seconds: dict[str, float], total_seconds: float) -> dict[str, float]:
    """Per-phase milliseconds plus 'other': transcript hashing, query sampling and Python overhead."""
    phases = {k: round(v * 1e3, 3) for k, v in sorted(phase_seconds.items()) if v > 0}
    phases["other"] = round(max(0.0, total_seconds - sum(phase_seconds.values())) * 1e3, 3)
    return phases
