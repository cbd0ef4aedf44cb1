"""Where whirgpu keeps what it compiles on this machine: ``$WHIRGPU_CACHE_DIR``, else ``$XDG_CACHE_HOME/whirgpu``,
else ``~/.cache/whirgpu``. Its ``msl-cpu`` folder holds the msl-cpu runtime's kernels and the host's compiled
Poseidon2 permutation (``native/permute``).

- ``root()``: that folder (not created).
- ``folder(name)``: ``root() / name``, created; a one-line ConfigError naming ``WHIRGPU_CACHE_DIR`` (or the
  default folder) when it cannot be created or written.
- ``check(value)``: the startup check of a ``WHIRGPU_CACHE_DIR`` value, leaving nothing behind: a ConfigError when
  the folder exists but is not a folder or nothing can be created in it, or when it does not exist and nothing can
  be created in the nearest existing folder above it. "Can be created" is tried for real (an empty probe folder,
  made and removed at once), not read from permission bits: root passes every ``os.access`` check, while
  ``/proc``, a read-only mount or a full quota refuses the write itself.

Imports nothing of whirgpu but its errors (the CLI checks the environment before anything heavy is imported).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import ConfigError

CACHE_DIR_ENV = "WHIRGPU_CACHE_DIR"


def root() -> Path:
    """The cache folder (module docstring), not created."""
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "whirgpu"))


def folder(name: str) -> Path:
    """``root() / name``, created; a one-line ConfigError naming ``WHIRGPU_CACHE_DIR`` (or the default folder) when
    it cannot be created or written."""
    env = os.environ.get(CACHE_DIR_ENV)
    path = root() / name
    source = f"{CACHE_DIR_ENV}={env!r}" if env else f"the {name} cache folder {path} (set {CACHE_DIR_ENV})"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{source}: cannot create {exc.filename or path}: {exc.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ConfigError(f"{source}: {path} is not writable")
    return path


def _creation_refused(folder: Path) -> str | None:
    """Why nothing can be created in ``folder`` (the OS's words), or None when an empty probe folder could be made
    there (it is removed at once)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".whirgpu-probe-", dir=folder))
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def check(value: str) -> None:
    """A ConfigError naming ``WHIRGPU_CACHE_DIR`` and ``value`` unless a folder is there in which whirgpu can
    create files, or one can be created there (both tried for real, module docstring); leaves nothing behind."""
    allowed = "give a folder whirgpu may create and write (compiled kernels are kept there)"
    path = Path(value).expanduser()
    if not value.strip():
        return  # empty: the default folder
    if path.exists():
        if not path.is_dir():
            raise ConfigError(f"{CACHE_DIR_ENV}={value!r} is not a folder: {allowed}")
        why = _creation_refused(path)
        if why:
            raise ConfigError(f"{CACHE_DIR_ENV}={value!r} is not writable ({why}): {allowed}")
        return
    above = path.absolute().parent
    while not above.exists() and above != above.parent:
        above = above.parent
    if not above.is_dir():
        raise ConfigError(f"{CACHE_DIR_ENV}={value!r}: cannot create it below {above}, which is not a folder: "
                          f"{allowed}")
    why = _creation_refused(above)
    if why:
        raise ConfigError(f"{CACHE_DIR_ENV}={value!r}: cannot create it in {above} ({why}): {allowed}")
