"""A verification batch's Merkle roots on a backend: ``compute_roots_on(backend, openings)``.

Contract: ``ref.merkle.compute_roots_batched``'s (``openings`` a list of (rows (N, width), index (N,), siblings
(N, depth, 8)), one (N, 8) uint32 array of Montgomery roots per entry, word for word the reference's), for whir-p3's
Poseidon2 (``constants`` None or ``Poseidon2Constants.smallrng(1)``; the kernels carry no other set). ``backend``:
- a ``GpuBackend`` (wgpu, dawn, metal, msl-cpu): the ``merkle_paths`` kernel (``kernels/paths.py``), one thread per
  opening, under the backend's ``proof_lock`` (a proof on another thread finishes first), its buffers from and back
  to the backend's pool;
- a ``CpuBackend``: the reference on the host (the verifier's compiled permutation where there is one);
- a name (``BACKEND_NAMES``: "auto", "cpu", "wgpu", "dawn", "metal", "msl-cpu") resolved by ``select_backend`` as
  ``Prover`` resolves it (``auto``: a GPU worth using, else the CPU; an explicit GPU name that cannot run raises
  ``BackendUnavailable``), opened at its first use and kept for later calls with the same name (a device opened
  and its kernel compiled per batch would cost more than the hashing; pass a ``Backend`` to own its lifetime).
Anything else is a ``ConfigError``. A GPU path that fails raises; nothing falls back to the host.
"""

from __future__ import annotations

import threading

import numpy as np

from ..errors import ConfigError
from ..kernels import paths
from ..ref.poseidon2_constants import Poseidon2Constants
from .base import Backend
from .cpu import CpuBackend


def _check_constants(constants) -> None:
    default = Poseidon2Constants.smallrng(1)
    if constants is None or constants is default:
        return
    same = constants.params == default.params and all(
        np.array_equal(getattr(constants, name), getattr(default, name))
        for name in ("external_initial", "external_terminal", "internal"))
    if not same:
        raise ConfigError("compute_roots_on: the GPU kernels carry whir-p3's Poseidon2 constants (SmallRng(1), "
                          f"BabyBear width 16) only, not {constants.params.name}'s given set")


def _host_roots(openings, constants) -> list[np.ndarray]:
    from ..native.permute import fast_permute_lanes  # noqa: PLC0415 - the verifier's compiled permutation
    from ..ref import merkle  # noqa: PLC0415

    permute = fast_permute_lanes() if constants is None or constants is Poseidon2Constants.smallrng(1) else None
    return merkle.compute_roots_batched(openings, constants, permute=permute)


_OPENED: dict[str, Backend] = {}  # backends opened by name, kept for the process's later batches
_OPENING = threading.Lock()


def opened_backend(name: str) -> Backend:
    """The backend ``select_backend(name)`` resolves, opened at the first call and the same object after."""
    with _OPENING:
        backend = _OPENED.get(name)
        if backend is None:
            from . import select_backend  # noqa: PLC0415 - the package imports this module's neighbours

            backend = _OPENED[name] = select_backend(name).backend
    return backend


def compute_roots_on(backend: str | Backend, openings, constants: Poseidon2Constants | None = None
                     ) -> list[np.ndarray]:
    """The roots of ``openings`` computed on ``backend`` (module contract)."""
    if isinstance(backend, str):
        return compute_roots_on(opened_backend(backend), openings, constants)
    if isinstance(backend, CpuBackend):
        return _host_roots(openings, constants)
    from .gpu import GpuBackend  # noqa: PLC0415 - the GPU backend's runtimes are optional dependencies

    if not isinstance(backend, GpuBackend):
        raise ConfigError(f"compute_roots_on: backend must be a backend name or a Backend, got "
                          f"{type(backend).__name__}")
    _check_constants(constants)
    with backend.proof_lock:
        if backend.state.session is not None:
            raise ConfigError("compute_roots_on: the backend is inside a proof on this thread")
        return paths.compute_roots(backend.state.drivers, openings, release=backend.state.pool.free)
