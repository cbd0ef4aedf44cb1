"""What every prover of the public API has around its proofs, written once for both profiles (``Prover``,
``P3Prover``): the backend it owns and closes, the ``with`` block, and ``prove_many``'s ``devices=`` and
``processes=`` options, which hand the proofs to ``many.devices`` and ``many.processes``.

Contract (``ProverSurface``, a base class; the subclass's ``__init__`` calls ``ProverSurface.__init__(self,
backend, owned)`` once its backend is chosen):
- ``backend``: the backend proofs run on; a ``BackendUnavailable`` naming the prover's class once it is closed.
  ``closed``; ``storage`` (the backend's policy, None on the cpu backend); ``device`` (the WebGPU device of a wgpu
  or dawn backend, None elsewhere).
- ``close()``: stops the worker processes, then closes a backend the prover opened (one passed in ready-made is
  only let go of); idempotent. ``with prover:`` closes it at the end of the block; a closed prover refuses to
  enter one.
- ``stop_workers()``, ``worker_proofs``: the worker processes of ``prove_many(processes=...)``, kept from the
  first such call until ``close()`` (or until the devices, the number of processes or the options change).
- ``prove_many(instances, in_flight=2, devices=None, processes=None, batch=None, **options)``: a generator. With
  neither ``devices`` nor ``processes``, the subclass's ``_prove_here(instances, in_flight, batch, **options)``
  (``batch``: the most proofs of one shape run in the same launches, default ``MANY_INSTANCES``); else the proofs
  made elsewhere, in input order, byte for byte what ``prove`` makes. The subclass says how it is rebuilt on
  another backend: ``_rebuilder(for_processes, options)`` returns a callable ``make(backend=...)`` (picklable
  when ``for_processes``) giving a prover with ``backend``, ``prove(evaluations, points)`` and
  ``prove_many(instances, in_flight)`` over the same (evaluations, points) instances under those ``options``
  (a sorted tuple of (name, value) pairs, hashable).
"""

from __future__ import annotations

import gc
from abc import ABC, abstractmethod

from ..backends.base import Backend
from ..errors import BackendUnavailable, ConfigError
from ..protocol.prover import MANY_INSTANCES


class ProverSurface(ABC):
    """A prover's backend, its lifecycle and its proofs elsewhere (module contract)."""

    def __init__(self, backend: Backend, owned: bool):
        self._backend: Backend | None = backend
        self._owns_backend = owned  # a backend passed in stays the caller's to close
        self._workers = None  # (key, processes.ProcessProvers) of prove_many(processes=...), kept until close()

    @property
    def backend(self) -> Backend:
        """The backend proofs run on; a ``BackendUnavailable`` once the prover is closed."""
        if self._backend is None:
            name = type(self).__name__
            raise BackendUnavailable(f"this {name} is closed (close() or the end of its with block released its "
                                     f"device): make a new {name}")
        return self._backend

    @property
    def closed(self) -> bool:
        return self._backend is None

    def close(self) -> None:
        """Release the backend's device memory (its pooled buffers) and the runtime's device now, instead of when
        the garbage collector finds them; idempotent. A closed prover refuses to prove. A backend passed in
        ready-made is only let go of: its owner closes it."""
        self.stop_workers()
        backend, self._backend = self._backend, None
        if backend is not None and self._owns_backend:
            backend.close()
            del backend
            # The backend, its transfer-counting wrapper, the runtime's kernel and bind-group caches and the
            # WebGPU objects refer to one another in cycles that hold the driver's memory until Python's cycle
            # collector runs, which large device allocations never trigger: collect them now (tens of ms).
            gc.collect()

    def stop_workers(self) -> None:
        """Stop the worker processes ``prove_many(processes=...)`` started (waits for the proofs they run);
        idempotent. The next such call starts new ones."""
        workers, self._workers = self._workers, None
        if workers is not None:
            workers[1].close()

    @property
    def worker_proofs(self) -> dict:
        """Proofs made per (device, worker pid) by the worker processes of ``prove_many(processes=...)`` since
        they started (where the work landed); empty without workers."""
        return dict(self._workers[1].landed) if self._workers is not None else {}

    def __enter__(self):
        self.backend  # noqa: B018 - a closed prover refuses to enter a with block as it refuses to prove
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @property
    def storage(self) -> str | None:
        """The storage policy the backend uses (None on the cpu backend, which has no device memory)."""
        return self.backend.storage

    @property
    def device(self):
        """The WebGPU device (a ``wgpu.GPUDevice``) of a wgpu or dawn prover; None on the other backends."""
        return getattr(self.backend, "device", None)

    def prove_many(self, instances, in_flight: int = 2, devices=None, processes: int | None = None,
                   batch: int | None = None, **options):
        """See the module contract; the subclasses document their instances and options."""
        self.backend  # noqa: B018 - a closed prover refuses at the first proof, as prove does
        if processes is None and devices is None:
            yield from self._prove_here(instances, in_flight, MANY_INSTANCES if batch is None else batch, **options)
            return
        if batch is not None:
            raise ConfigError("batch= applies to proofs on this prover's backend; with devices= or processes= each "
                              f"device or worker batches up to {MANY_INSTANCES} proofs itself")
        options = tuple(sorted(options.items()))
        if processes is not None:
            yield from self._prove_in_processes(instances, in_flight, devices, processes, options)
        else:
            yield from self._prove_on_devices(instances, in_flight, devices, options)

    # -- what a subclass says ------------------------------------------------------------------------------------
    @abstractmethod
    def _prove_here(self, instances, in_flight: int, batch: int, **options):
        """The proofs of ``instances`` on this prover's backend, ``in_flight`` at a time (up to ``batch`` of a
        shape in the same launches: ``WhirProver.prove_many_points``), in input order."""

    @abstractmethod
    def _rebuilder(self, for_processes: bool, options: tuple):
        """A callable ``make(backend=...)`` giving this prover on another backend (module contract)."""

    # -- proofs elsewhere ----------------------------------------------------------------------------------------
    def _prove_in_processes(self, instances, in_flight: int, devices, processes: int, options: tuple):
        from .processes import BackendRecipe, ProcessProvers  # noqa: PLC0415

        if isinstance(in_flight, bool) or not isinstance(in_flight, int) or in_flight < 1:
            raise ConfigError(f"in_flight must be a positive int, got {in_flight!r:.40}")
        if devices is None:
            recipes = [BackendRecipe.of(self.backend)]
        elif devices == "all":
            from .devices import adapter_count  # noqa: PLC0415

            recipes = [BackendRecipe.of(self.backend, i) for i in range(adapter_count(self.backend))]
        elif _backend_list(devices):
            recipes = [BackendRecipe.of(b) for b in devices]
        else:
            raise ConfigError(f'devices must be None, "all" or a non-empty list of backends, got {devices!r:.60}')
        key = (tuple(recipes), processes, options)
        if self._workers is None or self._workers[0] != key or self._workers[1].broken:
            self.stop_workers()
            self._workers = (key, ProcessProvers(self._rebuilder(True, options), recipes, processes))
        workers = self._workers[1]
        yield from workers.prove(instances, workers.workers * in_flight)

    def _prove_on_devices(self, instances, in_flight: int, devices, options: tuple):
        from .devices import all_devices, prove_on_devices  # noqa: PLC0415

        if devices == "all":
            backends, owned = all_devices(self.backend), True
        elif _backend_list(devices):
            backends, owned = list(devices), False
        else:
            raise ConfigError(f'devices must be None, "all" or a non-empty list of backends, got {devices!r:.60}')
        try:
            yield from prove_on_devices(self._rebuilder(False, options), backends, instances, in_flight)
        finally:
            if owned:
                for backend in backends:
                    backend.close()


def _backend_list(devices) -> bool:
    return isinstance(devices, (list, tuple)) and bool(devices) and all(isinstance(b, Backend) for b in devices)
