"""Proofs from worker processes: ``ProcessProvers`` runs ``processes`` Python processes per device, each with a
prover of its own on that device, and yields their proofs in input order.

Why processes: one Python process records a proof's launches in about 5-7 ms of host time (20:4:1 on an H200),
while the device runs it in about 4; in-process ``prove_many`` overlaps the two but stays bound by the host. Two
or more processes record side by side (no shared interpreter lock) and the device interleaves their submissions.

Contract:
- ``ProcessProvers(make_prover, recipes, processes)``: ``make_prover(backend=...)`` builds each worker's prover (a
  picklable callable: ``whirgpu.Prover`` or ``P3Prover`` with their parameters bound, passed in so that this
  module imports no prover above it); ``recipes`` is one ``BackendRecipe`` per device (what a worker opens); ``processes`` workers per device, started with the ``spawn`` method (never ``fork``: a forked GPU driver
  is undefined), each opening its backend once and keeping it. Worker w opens ``recipes[w % len(recipes)]``.
- ``prove(instances, ahead)``: yields one ``ProofFile`` per (evaluations, points) of ``instances`` (any iterable,
  read at most ``ahead`` instances ahead of the proof being yielded), byte for byte what the prover's ``prove``
  makes (each worker calls ``prove(evaluations, points)``; what it returns must pickle).
  Evaluations and points must be host data (a numpy array or a sequence), not a GPU buffer: a numpy table of
  ``SHARE_BYTES`` or more is copied into a shared-memory block the worker maps (blocks are reused from proof to
  proof), anything else travels pickled. An instance that fails raises its own error (a ``ConfigError`` for bad
  input) in its turn, after the proofs before it; a worker that cannot open its device, or that died, raises
  ``BackendUnavailable`` (after a death ``broken`` is set and the provers take no more work).
- ``landed``: proofs made per (device the worker opened, worker pid), to check where the work went.
- ``close()``: stops the workers (idempotent); closing the iteration early cancels the proofs not yet started.
- ``shared_pool(processes, initializer)``: a stateless spawned pool kept for the process's later calls (what
  ``verify_many(processes=...)`` uses); ``forget_pool`` drops one whose worker died.
- ``check_main_guard(call)``: before workers are spawned (by both of the above), a one-line ConfigError naming
  ``call``, the script and the line when the call runs in the top-level code of a ``__main__`` script outside an
  ``if __name__ == "__main__":`` block: a spawned worker re-runs that code, and multiprocessing's own
  RuntimeError (in every worker, then a broken pool) would be all the caller saw.
"""

from __future__ import annotations

import ast
import inspect
import multiprocessing
import os
import sys
import threading
import weakref
from collections import Counter, deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing import shared_memory
from typing import Iterable, Iterator

import numpy as np

from ..errors import BackendUnavailable, ConfigError

SHARE_BYTES = 1 << 20  # a table this large goes through shared memory: pickling it costs the parent ~1 ms per 4 MiB


@dataclass(frozen=True)
class BackendRecipe:
    """What a worker process opens: the backend ``name`` (cpu, wgpu, dawn, msl-cpu, metal), the multiply
    variant, the adapter (None: the implementation's best, as ``choose_adapter`` picks it), the storage policy and
    a lowered binding limit (None: the device's, or what the environment says)."""

    name: str
    mul: str | None = None
    adapter_index: int | None = None
    storage: str | None = None
    max_binding_bytes: int | None = None

    @classmethod
    def of(cls, backend, adapter_index: int | None = None) -> "BackendRecipe":
        """The recipe that reopens ``backend``'s device kind in another process (``adapter_index``: another
        adapter of the same implementation)."""
        rt = getattr(backend, "rt", None)
        if rt is None:
            return cls(backend.name)
        binding = getattr(rt, "_binding", None)
        lowered = binding.size if binding is not None and binding.lowered_by == "max_binding_bytes" else None
        index = adapter_index if adapter_index is not None else getattr(rt, "adapter_index", None)
        return cls(rt.name, getattr(rt, "mul", None), index, backend.storage, lowered)

    def open(self):
        """A new backend as the recipe says (in the worker process)."""
        from ..backends.cpu import CpuBackend  # noqa: PLC0415 - a worker imports what it opens
        from ..backends.gpu import GpuBackend  # noqa: PLC0415

        if self.name == "cpu":
            return CpuBackend()
        if self.name in ("wgpu", "dawn"):
            from ..runtime.wgpu_rt import DawnRuntime, WgpuRuntime  # noqa: PLC0415

            kind = DawnRuntime if self.name == "dawn" else WgpuRuntime
            runtime = kind(mul=self.mul, adapter_index=self.adapter_index, max_binding_bytes=self.max_binding_bytes)
        elif self.name == "msl-cpu":
            from ..runtime.msl_cpu_rt import MslCpuRuntime  # noqa: PLC0415

            runtime = MslCpuRuntime(mul=self.mul, max_binding_bytes=self.max_binding_bytes)
        elif self.name == "metal":
            from ..runtime.metal_rt import MetalRuntime  # noqa: PLC0415

            runtime = MetalRuntime(mul=self.mul, max_binding_bytes=self.max_binding_bytes)
        else:
            raise BackendUnavailable(f"worker processes cannot open a {self.name!r} backend")
        return GpuBackend(runtime, storage=self.storage)


_WORKER_PROVER = None  # the worker process's prover, or the error that kept it from opening (_start_worker)
_WORKER_DEVICE = ""  # the device the worker's prover opened, as ProcessProvers.landed names it


def _start_worker(make_prover, recipes: tuple[BackendRecipe, ...], counter) -> None:
    global _WORKER_PROVER, _WORKER_DEVICE
    with counter.get_lock():
        index, counter.value = counter.value, counter.value + 1
    try:
        recipe = recipes[index % len(recipes)]
        _WORKER_PROVER = make_prover(backend=recipe.open())
        adapter = getattr(getattr(_WORKER_PROVER.backend, "rt", None), "adapter", None)
        where = "best adapter" if recipe.adapter_index is None else f"adapter {recipe.adapter_index}"
        _WORKER_DEVICE = f"{recipe.name} {where}" + (f" ({adapter.summary})" if adapter is not None else "")
    except Exception as exc:  # noqa: BLE001 - kept for the first task: a failed initializer only says "broken"
        _WORKER_PROVER = exc


@dataclass(frozen=True)
class _SharedTable:
    """A table in the shared-memory block ``name``: ``shape`` and ``dtype`` (numpy's ``dtype.str``) from byte 0."""

    name: str
    shape: tuple
    dtype: str


def _prove_in_worker(evaluations, points):
    """(the proof, (the worker's device, its pid)): where each proof was made travels with it."""
    if isinstance(_WORKER_PROVER, Exception):
        raise _WORKER_PROVER
    where = (_WORKER_DEVICE, os.getpid())
    if not isinstance(evaluations, _SharedTable):
        return _WORKER_PROVER.prove(evaluations, points), where
    block = shared_memory.SharedMemory(name=evaluations.name)
    try:
        table = np.ndarray(evaluations.shape, np.dtype(evaluations.dtype), buffer=block.buf)
        return _WORKER_PROVER.prove(table, points), where
    finally:
        del table
        try:
            block.close()
        except BufferError:  # a view still held somewhere: the mapping goes when it does
            pass


class _Blocks:
    """The parent's shared-memory blocks, reused: ``lend(array)`` copies a large C-contiguous numpy array into a
    free block (a new one when none fits) and returns what the worker maps, else None; ``give_back`` frees it."""

    def __init__(self):
        self.free: list = []
        self._lock = threading.Lock()  # two threads may iterate prove_many(processes=...) of one prover at once

    def lend(self, array):
        if not (isinstance(array, np.ndarray) and array.nbytes >= SHARE_BYTES and array.dtype.kind in "ui"):
            return None
        with self._lock:
            fits = [b for b in self.free if b.size >= array.nbytes]
            block = min(fits, key=lambda b: b.size) if fits else None
            if block is not None:
                self.free.remove(block)
        if block is None:
            block = shared_memory.SharedMemory(create=True, size=array.nbytes)
        np.ndarray(array.shape, array.dtype, buffer=block.buf)[...] = array
        return block, _SharedTable(block.name, array.shape, array.dtype.str)

    def give_back(self, block) -> None:
        with self._lock:
            self.free.append(block)

    def close(self) -> None:
        with self._lock:
            blocks, self.free = self.free, []
        for block in blocks:
            block.close()
            block.unlink()


class ProcessProvers:
    """Worker processes proving for one configuration (module contract)."""

    def __init__(self, make_prover, recipes: list[BackendRecipe], processes: int):
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ConfigError(f"processes must be a positive int, got {processes!r:.40}")
        check_main_guard(f"prove_many(processes={processes})")
        context = multiprocessing.get_context("spawn")
        self.recipes = tuple(recipes)
        self.workers = processes * len(self.recipes)
        self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context, initializer=_start_worker,
                                         initargs=(make_prover, self.recipes, context.Value("i", 0)))
        self._blocks = _Blocks()
        self.broken = False  # a worker died: these provers take no more work (Prover starts new ones)
        self.landed: Counter = Counter()  # (device, worker pid) -> proofs made there, since these provers started
        # Blocks are unlinked when the workers stop, or when these provers are collected or the interpreter exits
        # without close(): never left behind in /dev/shm.
        self._unlink = weakref.finalize(self, self._blocks.close)

    def prove(self, instances: Iterable, ahead: int) -> Iterator:
        pool = self._pool
        if pool is None:
            raise BackendUnavailable("these worker processes are closed")
        blocks = self._blocks
        pending: deque = deque()  # (future, the shared block it reads or None)

        def oldest():
            future, block = pending.popleft()
            try:
                proof, where = _result(future)
                self.landed[where] += 1
                return proof
            except BackendUnavailable:
                self.broken = True
                raise
            finally:
                if block is not None:
                    blocks.give_back(block)

        try:
            for evaluations, points in instances:
                if type(evaluations).__name__ == "GPUBuffer":
                    raise ConfigError("a GPU buffer cannot be sent to worker processes: pass the table as a numpy "
                                      "array, or prove it in this process (processes=None)")
                lent = blocks.lend(evaluations)
                block, sent = lent if lent is not None else (None, evaluations)
                try:
                    future = pool.submit(_prove_in_worker, sent, points)
                except BrokenProcessPool as exc:
                    if block is not None:
                        blocks.give_back(block)
                    self.broken = True
                    raise BackendUnavailable(f"a prover worker process stopped earlier (crashed or killed): {exc}; "
                                             f"the next prove_many starts new workers") from None
                pending.append((future, block))
                while len(pending) >= ahead:
                    yield oldest()
            while pending:
                yield oldest()
        finally:
            for future, _ in pending:  # closed early or failed: the proofs not started are dropped
                future.cancel()
            for future, block in pending:  # a block goes back only once no worker can be reading it
                if block is not None:
                    if not future.cancelled():
                        try:
                            future.result()
                        except BaseException:  # noqa: BLE001 - dropped with the proof
                            pass
                    blocks.give_back(block)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            self._unlink()


def _top_level_line() -> tuple[str, int, bool] | None:
    """(script, line, in a worker) of the statement of the ``__main__`` script's top-level code that the caller
    runs under, or None when it runs under none (a function called from elsewhere, ``python -c``, a notebook:
    no script file a worker would re-run). ``in a worker``: the script runs as ``__mp_main__``, a spawned worker
    re-running it."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None)
    if name is not None and (name == "__main__" or name.endswith(".__main__")):
        return None  # `python -m package`: multiprocessing does not re-run a package's __main__ in its workers
    script = getattr(main, "__file__", None)
    if not script:
        return None
    script = os.path.abspath(script)
    frame = inspect.currentframe()
    try:
        while frame is not None:
            if (frame.f_code.co_name == "<module>" and os.path.abspath(frame.f_code.co_filename) == script
                    and frame.f_globals.get("__name__") in ("__main__", "__mp_main__")):
                return script, frame.f_lineno, frame.f_globals["__name__"] == "__mp_main__"
            frame = frame.f_back
        return None
    finally:
        del frame  # no reference cycle through the frames


def _guarded(script: str, line: int) -> bool:
    """Whether ``line`` of ``script`` (a line of its top-level code) is inside an ``if`` that tests ``__name__``,
    at any depth (under a ``try`` or ``with`` too); True, too, when the source cannot be read: nothing to say."""
    try:
        with open(script, encoding="utf-8") as source:
            tree = ast.parse(source.read())
    except (OSError, SyntaxError, ValueError):  # UnicodeDecodeError is a ValueError
        return True
    return any(isinstance(node, ast.If) and node.lineno <= line <= (node.end_lineno or node.lineno)
               and any(isinstance(name, ast.Name) and name.id == "__name__" for name in ast.walk(node.test))
               for node in ast.walk(tree))


def check_main_guard(call: str) -> None:
    """A ConfigError naming ``call`` when spawned workers would re-run the caller (module contract)."""
    where = _top_level_line()
    if where is None:
        return
    script, line, in_worker = where
    if in_worker or not _guarded(script, line):
        raise ConfigError(f"{call} runs at the top level of {script} (line {line}), which every spawned worker "
                          'process re-runs: put the call under `if __name__ == "__main__":`, or pass processes=1')


_SHARED: dict[tuple, ProcessPoolExecutor] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(processes: int, initializer=None) -> ProcessPoolExecutor:
    """A pool of ``processes`` spawned workers with no state but what ``initializer`` (a module-level function,
    run once in each worker: imports, caches) leaves (for work such as ``verify_many``'s chunks), started at the
    first call and reused by later calls with the same arguments for the life of this process
    (``concurrent.futures`` joins it at exit)."""
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"processes must be a positive int, got {processes!r:.40}")
    with _SHARED_LOCK:
        pool = _SHARED.get((processes, initializer))
        if pool is None:
            check_main_guard(f"verify_many(processes={processes})")
            pool = _SHARED[processes, initializer] = ProcessPoolExecutor(
                max_workers=processes, mp_context=multiprocessing.get_context("spawn"), initializer=initializer)
    return pool


def forget_pool(pool: ProcessPoolExecutor) -> None:
    """Drop ``pool`` from the shared ones (a worker of it died: the next ``shared_pool`` call starts a new one)."""
    with _SHARED_LOCK:
        for key, value in list(_SHARED.items()):
            if value is pool:
                del _SHARED[key]
    pool.shutdown(wait=False, cancel_futures=True)


def _result(future):
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise BackendUnavailable(f"a prover worker process stopped (it could not open its device, or crashed): "
                                 f"{exc}") from None
