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
from ..errors import ConfigError, FileError, ProofFormatError
from ..devices.overrides import MAX_BINDING_ENV, MAX_BINDING_OPTION, MIN_BINDING_BYTES
from ..files import read_capped, write_atomic
from ..protocol.bounded_json import loads_bounded
from ..protocol.document_limits import MAX_INPUT_JSON_BYTES, MAX_PROOF_DOCUMENT_BYTES, PROOF_CAP_REASON
from ..profiles.whir_p3_metal.serialize import check_document_head


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
    """The proof document in ``path`` (``-``: standard input), at most ``MAX_PROOF_DOCUMENT_BYTES`` of it: a
    one-line FileError when it cannot be read, a ProofFormatError past the cap (read no further than cap + 1)."""
    source = sys.stdin.buffer if str(path) == "-" else path
    return read_capped(source, MAX_PROOF_DOCUMENT_BYTES, "proof document", ProofFormatError, PROOF_CAP_REASON,
                       head=check_document_head)


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


def read_json_file(path: str | Path, cap: int = MAX_INPUT_JSON_BYTES):
    """The JSON document in ``path``, read by the one bounded reader (``bounded_json.loads_bounded``) from at most
    ``cap`` bytes; a one-line FileError when it cannot be read, ConfigError when it is larger than ``cap`` or not
    JSON within the reader's limits."""
    data = read_capped(path, cap, str(path), ConfigError, "the most a statement or settings file may hold"
                       if cap == MAX_INPUT_JSON_BYTES else "the largest input the limits allow")
    try:
        return loads_bounded(data, str(path))
    except ProofFormatError as exc:
        raise ConfigError(str(exc).replace(f"{path}: not JSON", f"{path} is not JSON", 1)) from None


def write_statement(path: str | Path, points, values) -> None:
    """The statement file ``verify --statement`` reads: ``{"points": (m, n, 4), "values": (m, 4)}`` canonical
    integers, written atomically (``files.write_atomic``); a one-line FileError when it cannot be written."""
    doc = {"points": np.asarray(points, dtype=np.int64).tolist(), "values": np.asarray(values, dtype=np.int64).tolist()}
    write_atomic(path, json.dumps(doc))


def phases_ms(phase_seconds: dict[str, float], total_seconds: float) -> dict[str, float]:
    """Per-phase milliseconds plus 'other': transcript hashing, query sampling and Python overhead."""
    phases = {k: round(v * 1e3, 3) for k, v in sorted(phase_seconds.items()) if v > 0}
    phases["other"] = round(max(0.0, total_seconds - sum(phase_seconds.values())) * 1e3, 3)
    return phases
