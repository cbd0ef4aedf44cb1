"""Reading what a user hands over within a cap, and writing what whirgpu produces without harming what was there.

Contract:
- ``read_capped(source, cap, what, error)``: the bytes of a file (a path) or a binary stream (``sys.stdin.buffer``),
  reading at most ``cap + 1`` bytes (a regular file larger than ``cap`` is refused from its size, unread). Past
  the cap, ``error`` (an exception class) of one line: ``{what} larger than {cap} bytes ...`` (``too_large``).
  A file that cannot be read is a ``FileError``. ``head``, when given, is called with the first bytes read (the
  first chunk, up to 1 MiB, before any more is read) and may raise to refuse the input at once (a stream that
  cannot begin a document of the kind asked for is not read to its cap). ``check_size(data, cap, what, error)``:
  the same refusal for bytes already in memory.
- ``write_atomic(path, data)``: ``data`` (bytes, str as UTF-8, or a function that writes to a binary file object)
  goes to a temporary file in ``path``'s folder, which then replaces ``path`` (``os.replace``). A write that
  fails (a full disk, an interrupt) leaves ``path`` as it was and no temporary file behind, and is a
  ``FileError`` of one line. A new file gets the mode the umask gives; an existing one keeps its mode. A path that
  exists and is not a regular file (``/dev/stdout``, a FIFO) is written in place.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from .errors import FileError

_READ_CHUNK = 1 << 20


def too_large(what: str, cap: int, why: str = "") -> str:
    """The one-line refusal of an input past its cap."""
    return f"{what} larger than {cap} bytes" + (f" ({why})" if why else "")


def check_size(data, cap: int, what: str, error: type[Exception], why: str = "") -> None:
    """Refuse ``data`` (bytes or str) longer than ``cap``."""
    if len(data) > cap:
        raise error(too_large(what, cap, why))


def _read_stream(stream, cap: int, what: str, error: type[Exception], why: str, head=None) -> bytes:
    chunks, total = [], 0
    while total <= cap:
        chunk = stream.read(min(_READ_CHUNK, cap + 1 - total))
        if not chunk:
            break
        if head is not None and not chunks:
            head(chunk)
        chunks.append(chunk)
        total += len(chunk)
    if total > cap:
        raise error(too_large(what, cap, why))
    return b"".join(chunks)


def read_capped(source, cap: int, what: str, error: type[Exception], why: str = "", head=None) -> bytes:
    """The bytes ``source`` (a path, or a binary stream with ``read``) holds, at most ``cap`` of them."""
    if hasattr(source, "read"):
        return _read_stream(source, cap, what, error, why, head)
    try:
        with open(source, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError(21, "Is a directory")
            if stat.S_ISREG(info.st_mode) and info.st_size > cap:
                raise error(too_large(what, cap, why))
            return _read_stream(f, cap, what, error, why, head)
    except OSError as exc:
        if isinstance(exc, error):
            raise
        raise FileError(f"cannot read {os.fspath(source)!s:.200}: {exc.strerror or exc}") from None


def _write_all(f, data: bytes) -> None:
    f.write(data)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path, data) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (see the module contract)."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    try:
        info = path.stat()
    except OSError:
        info = None
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):  # a device or a pipe: nothing to replace
            with open(path, "wb") as f:
                payload(f) if callable(payload) else _write_all(f, payload)
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:
        raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            payload(f) if callable(payload) else _write_all(f, payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise FileError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
