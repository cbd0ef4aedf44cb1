"""Backend selection: ``select_backend(name, config)`` returns a ready backend and the one-line reason it was chosen.

Names: ``cpu`` (the numpy reference, always available), ``wgpu`` (WGSL kernels through wgpu on the adapter
``WHIRGPU_ADAPTER`` names, else the best one), ``metal`` (the hand-written MSL kernels through Metal, macOS
only), ``msl-cpu`` (the same MSL kernels compiled as C++ and run on the CPU: a verification backend, slow) and
``auto``. An explicitly named backend that cannot run raises. ``WHIRGPU_BACKEND`` overrides ``auto``.

Every name takes a storage policy (``STORAGE_POLICIES``: hybrid, shared, private; None: ``WHIRGPU_STORAGE``,
else hybrid), validated for every backend and used by the GPU ones; the cpu backend ignores it (its reason line
says so when one was asked for).

``auto``'s rule: the wgpu backend when a hardware adapter exists (a software rasteriser such as lavapipe or
llvmpipe is not a GPU here; ``wgpu`` forces it) and, given a ``WhirConfig``, the configuration fits the device
(``fit_problem``); otherwise the CPU, with the reason in one line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import BackendUnavailable, ConfigError, DeviceLimitError
from .base import (
    STORAGE_ENV,
    STORAGE_POLICIES,
    Backend,
    Commitment,
    DeviceBuffer,
    DeviceLimits,
    StorageMode,
    TransferStats,
    resolve_storage,
)
from .cpu import CpuBackend

BACKEND_NAMES = ("auto", "cpu", "wgpu", "metal", "msl-cpu")
# Buffers the commitment kernels (NTT, Merkle leaves) bind whole; every other buffer may be bound in windows.
WHOLE_BINDINGS = ("codeword 0", "merkle tree 0")
CPU_FALLBACK = "using the numpy reference"

__all__ = [
    "BACKEND_NAMES",
    "Backend",
    "BackendChoice",
    "Commitment",
    "CpuBackend",
    "DeviceBuffer",
    "DeviceLimits",
    "STORAGE_POLICIES",
    "StorageMode",
    "TransferStats",
    "fit_problem",
    "select_backend",
]


@dataclass
class BackendChoice:
    """The backend a proof will use and why (one line, for the CLI and ``--json``)."""

    backend: Backend
    reason: str


def fit_problem(limits: DeviceLimits, config, budget: bool = True) -> str | None:
    """Why ``config`` (a ``WhirConfig``) does not fit a device with ``limits``, or None when it fits.

    Checks, in order: every planned buffer against ``max_buffer_size``; the leaf-level bindings the commitment
    kernels need whole (``WHOLE_BINDINGS``) against ``max_storage_binding_size`` (other buffers are windowed);
    and, with ``budget`` and a known ``recommended_working_set``, the peak total against it."""
    from .memory import plan_buffers  # noqa: PLC0415 - the planner imports the protocol's parameters

    needs = plan_buffers(config)
    where = f"on {limits.name}"
    for need in needs:
        if need.nbytes > limits.max_buffer_size:
            return f"{need.name} needs {need.nbytes} bytes, over max_buffer_size {limits.max_buffer_size} {where}"
    for need in needs:
        if need.name in WHOLE_BINDINGS and need.binding_bytes > limits.max_storage_binding_size:
            return (f"{need.name} needs one binding of {need.binding_bytes} bytes, over max_storage_binding_size "
                    f"{limits.max_storage_binding_size} {where}")
    peak = sum(need.nbytes for need in needs)
    if budget and limits.recommended_working_set and peak > limits.recommended_working_set:
        return (f"the proof needs {peak} bytes of device memory at its peak, over recommended_working_set "
                f"{limits.recommended_working_set} {where}")
    return None


def _describe(backend: Backend) -> str:
    limits = backend.limits()
    mul = getattr(getattr(backend, "rt", None), "mul", None)
    return f"{limits.name}, {mul} multiply" if mul else limits.name  # wgpu's summary already names the type


def _runtime(name: str):
    """A fresh runtime for a GPU backend name (imports are deferred: each runtime has its own dependencies)."""
    if name == "wgpu":
        from ..runtime.wgpu_rt import WgpuRuntime

        return WgpuRuntime()
    if name == "metal":
        from ..runtime.metal_rt import MetalRuntime

        return MetalRuntime()
    from ..runtime.msl_cpu_rt import MslCpuRuntime

    return MslCpuRuntime()


def _open_gpu(name: str, config, why: str, storage: str) -> BackendChoice:
    """A GPU-kernel backend on runtime ``name``, or BackendUnavailable / DeviceLimitError (hard limits only:
    this was asked for)."""
    from .gpu import GpuBackend  # noqa: PLC0415

    backend = GpuBackend(_runtime(name), storage=storage)
    if config is not None:
        problem = fit_problem(backend.limits(), config, budget=False)
        if problem:
            raise DeviceLimitError(problem)
    return BackendChoice(backend, f"{why}; {_describe(backend)}")


def _auto(config, storage: str) -> BackendChoice:
    try:
        from ..runtime.wgpu_rt import WgpuRuntime, choose_adapter  # noqa: PLC0415

        adapter = choose_adapter()
        if adapter.info.get("adapter_type") == "CPU":
            which = ("WHIRGPU_ADAPTER picks" if os.environ.get("WHIRGPU_ADAPTER")
                     else "no hardware GPU: the best adapter is")
            return BackendChoice(CpuBackend(), f"{which} {adapter.summary}, a software rasteriser "
                                               f"(--backend wgpu forces it); {CPU_FALLBACK}")
        from .gpu import GpuBackend  # noqa: PLC0415

        backend = GpuBackend(WgpuRuntime(), storage=storage)
    except BackendUnavailable as exc:
        return BackendChoice(CpuBackend(), f"{exc}; {CPU_FALLBACK}")
    if config is not None:
        problem = fit_problem(backend.limits(), config)
        if problem:
            return BackendChoice(CpuBackend(), f"{problem}; {CPU_FALLBACK}")
    fits = "the configuration fits" if config is not None else "no configuration to check"
    return BackendChoice(backend, f"GPU found: {_describe(backend)}; {fits}")


def _storage_ignored(choice: BackendChoice, storage: str, explicit: str | None) -> BackendChoice:
    """The cpu backend takes a storage policy and ignores it: say so when one was asked for."""
    if explicit is not None and isinstance(choice.backend, CpuBackend):
        choice.reason += f"; storage policy {storage} ignored (no device memory)"
    return choice


def select_backend(name: str | Backend = "auto", config=None, storage: str | None = None) -> BackendChoice:
    """Resolve a backend name (or pass a ready ``Backend`` through). ``config`` (a ``WhirConfig``) lets ``auto``
    check that the proof fits the device and an explicit ``wgpu`` refuse one that cannot run. ``storage`` is the
    GPU storage policy (None: ``WHIRGPU_STORAGE``, else hybrid); a bad name is a ConfigError naming the choices."""
    explicit = storage if storage is not None else os.environ.get(STORAGE_ENV) or None
    if isinstance(name, Backend):  # a ready backend keeps its own policy; an argument must agree with it
        if storage is not None and resolve_storage(storage) != (name.storage or resolve_storage(storage)):
            raise ConfigError(f"storage={storage!r}, but the given {name.name} backend uses {name.storage!r}")
        return BackendChoice(name, "given by the caller")
    storage = resolve_storage(storage)
    return _storage_ignored(_select(name, config, storage), storage, explicit)


def _select(name: str, config, storage: str) -> BackendChoice:
    requested = name
    if name == "auto" and os.environ.get("WHIRGPU_BACKEND"):
        name = os.environ["WHIRGPU_BACKEND"]
        if name not in BACKEND_NAMES or name == "auto":
            raise BackendUnavailable(
                f"WHIRGPU_BACKEND={name!r} is not a backend; choose one of {', '.join(BACKEND_NAMES[1:])}"
            )
    why = "requested" if requested == name else f"WHIRGPU_BACKEND={name}"
    if name == "cpu":
        return BackendChoice(CpuBackend(), why)
    if name in ("wgpu", "metal", "msl-cpu"):
        return _open_gpu(name, config, why, storage)
    if name == "auto":
        return _auto(config, storage)
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
