"""A C shared library compiled once per machine into the cache folder, without making anyone wait for it.

``NativeLibrary(stem, source, flags, cdef, what)`` is one library: ``source`` compiled by ``$CC`` (else ``cc``)
with ``flags`` into ``<cache>/msl-cpu/<stem>-<hash of source>.so`` and loaded through cffi's ABI mode (``cdef``).

- ``poll()``: never waits on a compiler. (loaded, pending): the loaded (ffi, lib) when the library is loaded or
  on disk; otherwise None, with ``pending`` True after starting its build in the background (once per process)
  when a compiler exists. Without a compiler, or after a failed build, it says so once (``activity.notice``)
  and the caller keeps its reference path.
- ``CompiledFunction(library, make)``: the function ``make((ffi, lib))`` makes from a loaded library, as the
  compiled ChaCha and pruning use it: ``get()`` never waits (None until loaded), ``build_now()`` builds first.
- ``when_loaded(callback)``: ``callback((ffi, lib))`` once the library is loaded: at once if it is, else from the
  build's thread when the background build ends well (never when it fails).
- ``load()``: waits: builds the library now if needed (or waits for the build under way, this process's or
  another's) and loads it; None without a compiler, a usable cache folder, or after a failed build.
- ``ensure(retry_failed)``: ``load()`` for ``whirgpu warmup``: ("cached" | "built", path), a
  ``BackendUnavailable`` when there is no compiler, a ``ShaderCompileError`` naming the compiler's log when the
  build fails (``retry_failed`` first forgets an earlier failure).

The build is a detached process (a small Python program running the compiler, then renaming its output into
place): a short command (a first proof takes about a second) exits while the compiler runs on, and the next
process finds the library. A lock file (``.building``, stale after ``STALE_LOCK_S``) keeps concurrent processes
from compiling the same library twice; a failed build leaves its compiler output in ``.failed``, so later
processes do not retry it (``whirgpu warmup`` does).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable

from .. import activity, cache_dir
from ..errors import BackendUnavailable, ShaderCompileError, WhirGpuError

BUILD_TIMEOUT_S = 300  # the compiler's time limit
STALE_LOCK_S = BUILD_TIMEOUT_S + 60  # a lock older than this belongs to a build that died
POLL_S = 0.1

# The detached build: compile, then rename into place (or keep the compiler's output as the failure log); always
# remove the source, the partial output and the lock. The compiler runs in a session of its own so that a timeout
# kills its children (cc1, as, ld) with it.
_BUILDER = r"""
import os, signal, subprocess, sys
compiler, source, partial, target, lock, failed, timeout, *flags = sys.argv[1:]
try:
    try:
        child = subprocess.Popen([compiler, *flags, "-x", "c", source, "-o", partial], stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            out, code = child.communicate(timeout=float(timeout))[0], child.returncode
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            out, code = ("the compiler ran past %s s" % timeout).encode(), -1
    except OSError as exc:
        out, code = str(exc).encode(), -1
    if code == 0:
        os.replace(partial, target)
    else:
        with open(failed + ".part", "wb") as log:
            log.write(b"%s exited with %d:\n" % (compiler.encode(), code) + out[-8000:])
        os.replace(failed + ".part", failed)
finally:
    for path in (source, partial, lock):
        try:
            os.unlink(path)
        except OSError:
            pass
"""


class NativeLibrary:
    """One C library built once per machine (module docstring). ``what`` names it in notes ("the C Poseidon2
    permutation"); ``fallback`` says what runs without it ("the numpy permutation")."""

    def __init__(self, stem: str, source: str, flags: tuple[str, ...], cdef: str, what: str, fallback: str):
        self.stem, self.source, self.flags, self.cdef = stem, source, tuple(flags), cdef
        self.what, self.fallback = what, fallback
        self.digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        self._lock = threading.Lock()
        self._loaded = None  # (ffi, lib) once loaded in this process
        self._thread: threading.Thread | None = None
        self._callbacks: list[Callable] = []

    # ---- where and with what --------------------------------------------------------------------------------
    def compiler_name(self) -> str:
        return os.environ.get("CC") or "cc"

    def compiler(self) -> str | None:
        """The C compiler's path, or None when ``$CC`` (else ``cc``) is not on PATH."""
        return shutil.which(self.compiler_name())

    def paths(self) -> tuple[Path, Path, Path]:
        """(library, lock, failure log) in the cache folder (created; ConfigError when it cannot be)."""
        folder = cache_dir.folder("msl-cpu")
        base = f"{self.stem}-{self.digest}"
        return folder / f"{base}.so", folder / f"{base}.building", folder / f"{base}.failed"

    def wait_for_background(self, timeout: float | None = None) -> bool:
        """Wait for this process's background build (tests, warmup); True when none runs any more."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    # ---- not waiting ----------------------------------------------------------------------------------------
    def loaded_now(self):
        """(ffi, lib) when loaded (``poll`` once it is there; no compiler lookup after), else None. Never waits."""
        return self._loaded if self._loaded is not None else self.poll()[0]

    def poll(self):
        """(loaded, pending): (ffi, lib) now, or None; ``pending`` True when it is None because the build runs in
        the background (this call started it, or an earlier one did). Never waits on a compiler."""
        compiler = self.compiler()
        if compiler is None:
            self._say_no_compiler()
            return None, False
        if self._loaded is not None:
            return self._loaded, False
        try:
            target, _, failed = self.paths()
        except WhirGpuError as exc:
            activity.notice(f"{self.what} cannot be cached ({exc}); {self.fallback} is used", key=self.stem)
            return None, False
        if target.is_file():
            return self._load(target), False
        if failed.is_file():
            self._say_failed(failed)
            return None, False
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._background, args=(compiler,), daemon=True,
                                                name=f"whirgpu-build-{self.stem}")
                self._thread.start()
        return None, True

    def when_loaded(self, callback: Callable) -> None:
        """``callback((ffi, lib))`` once loaded: now if it is, else when the background build ends well."""
        with self._lock:
            loaded = self._loaded
            if loaded is None:
                self._callbacks.append(callback)
                return
        callback(loaded)

    def _background(self, compiler: str) -> None:
        try:
            error = self._build(compiler)
            loaded = None if error else self._load(self.paths()[0])
        except Exception:  # noqa: BLE001 - a background build that fails leaves the reference path in charge
            loaded = None
        with self._lock:
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks if loaded is not None else ():
            callback(loaded)

    # ---- waiting --------------------------------------------------------------------------------------------
    def load(self):
        """(ffi, lib), building it now if needed; None without a compiler or cache folder, or after a failed
        build (each said once)."""
        try:
            return self.ensure(retry_failed=False)[2]
        except BackendUnavailable:
            self._say_no_compiler()
        except ShaderCompileError:
            pass  # ensure said it
        except WhirGpuError as exc:
            activity.notice(f"{self.what} cannot be cached ({exc}); {self.fallback} is used", key=self.stem)
        return None

    def ensure(self, retry_failed: bool = False):
        """("cached" | "built", library path, (ffi, lib)): builds now if needed (module docstring)."""
        compiler = self.compiler()
        if compiler is None:
            raise BackendUnavailable(self._no_compiler_text())
        target, _, failed = self.paths()
        if retry_failed and failed.is_file():
            failed.unlink()
        how = "cached"
        if not target.is_file():
            if failed.is_file():
                self._say_failed(failed)
                raise ShaderCompileError(self._failed_text(failed))
            how = "built"
            with activity.doing(f"building {self.what} with {self.compiler_name()} (once per machine)"):
                error = self._build(compiler)
            if error:
                self._say_failed(failed)
                raise ShaderCompileError(error)
        loaded = self._load(target)
        if loaded is None:
            raise ShaderCompileError(f"{self.what}: {target} could not be loaded; delete it to rebuild")
        return how, target, loaded

    # ---- the build ------------------------------------------------------------------------------------------
    def _build(self, compiler: str) -> str | None:
        """Build the library unless it is on disk, or wait for the build another thread or process runs;
        None when the library is there, else a one-line error."""
        target, lock, failed = self.paths()
        deadline = time.monotonic() + STALE_LOCK_S
        while not target.is_file():
            if self._claim(lock):
                self._spawn(compiler, target, lock, failed).wait()
                break
            if failed.is_file() and not lock.exists():
                break
            if time.monotonic() > deadline:
                return f"{self.what}: gave up waiting for the build that holds {lock}"
            time.sleep(POLL_S)
        return None if target.is_file() else self._failed_text(failed)

    @staticmethod
    def _claim(lock: Path) -> bool:
        """Take the build lock (True), or leave it to its holder (False); a stale lock is taken over."""
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                try:
                    if time.time() - lock.stat().st_mtime < STALE_LOCK_S:
                        return False
                    lock.unlink()
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as out:
                out.write(f"{os.getpid()}\n")
            return True
        return False

    def _spawn(self, compiler: str, target: Path, lock: Path, failed: Path) -> subprocess.Popen:
        """Start the detached build (``_BUILDER``); it removes ``lock``, the source and the partial output when it
        ends (this call does, when it cannot start it)."""
        made: list[str] = []
        try:
            fd, source = tempfile.mkstemp(suffix=".c", prefix=f"{self.stem}-", dir=target.parent)
            made.append(source)
            with os.fdopen(fd, "w") as out:
                out.write(self.source)
            fd, partial = tempfile.mkstemp(suffix=".so.part", prefix=f"{self.stem}-", dir=target.parent)
            made.append(partial)
            os.close(fd)
            return subprocess.Popen([sys.executable, "-I", "-c", _BUILDER, compiler, source, partial, str(target),
                                     str(lock), str(failed), str(BUILD_TIMEOUT_S), *self.flags],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True, close_fds=True)
        except BaseException:
            for path in (*made, str(lock)):
                Path(path).unlink(missing_ok=True)
            raise

    def _load(self, target: Path):
        with self._lock:
            if self._loaded is None:
                try:
                    import cffi  # noqa: PLC0415

                    ffi = cffi.FFI()
                    ffi.cdef(self.cdef)
                    self._loaded = ffi, ffi.dlopen(str(target))
                except Exception:  # noqa: BLE001 - an unloadable file leaves the reference path in charge
                    return None
            return self._loaded

    # ---- what the user is told ------------------------------------------------------------------------------
    def _no_compiler_text(self) -> str:
        return (f"no C compiler ({self.compiler_name()!r} is not on PATH; set CC to choose one): {self.fallback} "
                f"is used (the same results, slower); install one (e.g. apt install gcc) and run `whirgpu warmup` "
                f"to build {self.what}")

    def _failed_text(self, failed: Path) -> str:
        try:
            first = next((line for line in failed.read_text(errors="replace").splitlines()[1:] if line.strip()), "")
        except OSError:
            first = ""
        return (f"{self.what} failed to build with {self.compiler_name()} ({first.strip()[:200] or 'no output'}; "
                f"log: {failed})")

    def _say_no_compiler(self) -> None:
        activity.notice(self._no_compiler_text(), key=self.stem)

    def _say_failed(self, failed: Path) -> None:
        activity.notice(f"{self._failed_text(failed)}: {self.fallback} is used; `whirgpu warmup` retries",
                        key=self.stem)


class CompiledFunction:
    """A function made by ``make((ffi, lib))`` from a ``NativeLibrary`` once it is loaded. ``get()``: the function,
    or None while the library is not loaded (the first call starts its build in the background; it never waits
    on a compiler). ``build_now(retry_failed)``: ("cached" | "built", library path), building now, then installed."""

    def __init__(self, library: NativeLibrary, make: Callable):
        self.library, self._make = library, make
        self.function: Callable | None = None
        self._asked = False

    def _install(self, loaded) -> None:
        self.function = self._make(loaded)

    def get(self) -> Callable | None:
        if self.function is None and not self._asked:
            self._asked = True
            loaded, pending = self.library.poll()
            if loaded is not None:
                self._install(loaded)
            elif pending:
                self.library.when_loaded(self._install)
        return self.function

    def build_now(self, retry_failed: bool = True):
        how, path, loaded = self.library.ensure(retry_failed=retry_failed)
        self._install(loaded)
        return how, path
