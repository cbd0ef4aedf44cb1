"""Backend selection: ``select_backend(name, config)`` returns a ready backend and the one-line reason it was chosen.

Names: ``cpu`` (the numpy reference, always available), ``wgpu`` (WGSL kernels through wgpu-native on the
adapter ``WHIRGPU_ADAPTER`` names, else the best one), ``dawn`` (the same WGSL through Dawn, the ``wgpudawn``
package, on the same choice of adapter), ``metal`` (the hand-written MSL kernels through Metal, macOS only),
``msl-cpu`` (the same MSL kernels compiled as C++ and run on the CPU: a verification backend, slow) and ``auto``.
An explicitly named backend that cannot run raises. ``WHIRGPU_BACKEND`` overrides ``auto``.

Every name takes a storage policy (``STORAGE_POLICIES``: hybrid, shared, private; None: ``WHIRGPU_STORAGE``,
else hybrid), validated for every backend and used by the GPU ones; the cpu backend ignores it (its reason line
says so when one was asked for).

Given a ``WhirConfig``, the device planner (``whirgpu.devices.planner.plan_device``) decides on the runtime's limits
BEFORE the backend allocates anything. ``auto`` takes the wgpu backend (the dawn backend when wgpu-native is not
installed and wgpudawn is) on the adapter that backend would open only when the proof fits it (hard limits, ``WHIRGPU_MAX_GPU_BYTES``, the recommended working set) AND the
adapter's class is expected to beat the numpy reference at this size (``GPU_MIN_VARIABLES``; never for a
software rasteriser such as lavapipe or llvmpipe); otherwise the CPU, with the planner's reason in one line. An
explicitly requested GPU backend ignores the speed threshold and the working set, and raises
``DeviceLimitError`` for a hard limit or ``WHIRGPU_MAX_GPU_BYTES``.

Every runtime opened here, and the adapter limits ``auto`` decides on, use the storage-binding limit
``whirgpu.devices.overrides.resolve_binding`` gives (``--max-binding`` / ``WHIRGPU_MAX_BINDING_BYTES`` lower it; a bad value
is a ConfigError); an explicit GPU backend's reason names a lowered limit.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import BackendUnavailable, ConfigError, DeviceLimitError
from .base import (
    CPU_FALLBACK,
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
from .host_memory import check_cpu_proof

BACKEND_NAMES = ("auto", "cpu", "wgpu", "dawn", "metal", "msl-cpu")
GPU_BACKENDS = ("wgpu", "dawn", "metal", "msl-cpu")  # the names that run the kernels

__all__ = [
    "BACKEND_NAMES",
    "CPU_FALLBACK",
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
    """Why ``config`` (a ``WhirConfig``) should not run on a device with ``limits``, or None when it fits: the
    first problem of the device planner's plan (a buffer over ``max_buffer_size``, a whole binding over
    ``max_storage_binding_size``, the peak over ``WHIRGPU_MAX_GPU_BYTES`` and, with ``budget``, over the
    recommended working set). ``budget=False`` is what an explicitly requested backend refuses."""
    from ..devices.planner import plan_device  # noqa: PLC0415 - the planner imports the protocol's parameters

    return plan_device(config, limits).refusal(explicit=not budget)


def _describe(backend: Backend) -> str:
    limits = backend.limits()
    mul = getattr(getattr(backend, "rt", None), "mul", None)
    return f"{limits.name}, {mul} multiply" if mul else limits.name  # wgpu's summary already names the type


def _runtime(name: str):
    """A fresh runtime for a GPU backend name (imports are deferred: each runtime has its own dependencies)."""
    if name == "wgpu":
        from ..runtime.wgpu_rt import WgpuRuntime

        return WgpuRuntime()
    if name == "dawn":
        from ..runtime.wgpu_rt import DawnRuntime

        return DawnRuntime()
    if name == "metal":
        from ..runtime.metal_rt import MetalRuntime

        return MetalRuntime()
    from ..runtime.msl_cpu_rt import MslCpuRuntime

    return MslCpuRuntime()


def _open_gpu(name: str, config, why: str, storage: str) -> BackendChoice:
    """A GPU-kernel backend on runtime ``name``, or BackendUnavailable / DeviceLimitError (hard limits and
    WHIRGPU_MAX_GPU_BYTES only: this was asked for), decided on the runtime's limits before any allocation."""
    from ..devices.overrides import binding_text  # noqa: PLC0415
    from ..devices.planner import max_gpu_bytes_from_env, plan_device  # noqa: PLC0415
    from .gpu import GpuBackend  # noqa: PLC0415
    from .memory import human_bytes  # noqa: PLC0415

    runtime = _runtime(name)
    plan = None
    if config is not None:
        plan = plan_device(config, runtime.limits(), storage)
        problem = plan.refusal(explicit=True)
        if problem:
            raise DeviceLimitError(problem)
    else:
        max_gpu_bytes_from_env()  # a bad value is an error whether or not there is a plan to check it against
    backend = GpuBackend(runtime, storage=storage)
    if plan is not None:
        runtime.prefetch(plan.memory.kernels)  # the proof's pipelines compile while its instance is made
    limits = runtime.limits()
    lowered = f"; max_storage_binding_size {binding_text(limits, human_bytes)}" if limits.binding_lowered_by else ""
    return BackendChoice(backend, f"{why}; {_describe(backend)}{lowered}")


def _auto_impl() -> tuple[str, str]:
    """(the WebGPU implementation auto uses, what to say about it): wgpu-native, or Dawn when only wgpudawn is
    installed."""
    from ..runtime.wgpu_rt.adapters import import_webgpu  # noqa: PLC0415

    try:
        import_webgpu("wgpu")
    except BackendUnavailable:
        try:
            import_webgpu("dawn")
        except BackendUnavailable:
            return "wgpu", ""  # neither: the error names the wgpu package
        return "dawn", "Dawn (wgpu is not installed, wgpudawn is): "
    return "wgpu", ""


def _auto(config, storage: str) -> BackendChoice:
    from ..devices.planner import (device_class, max_gpu_bytes_from_env, plan_device, smallest_gpu_variables,  # noqa: PLC0415
                           software_reason)

    max_gpu_bytes_from_env()
    smallest = smallest_gpu_variables()
    if config is not None and (smallest is None or config.num_variables < smallest):
        # No device class would take the proof: no GPU stack is imported or started (0.5-1 s of a process).
        return BackendChoice(CpuBackend(), f"n={config.num_variables} is below {smallest}, the smallest size at "
                                           f"which any GPU is expected to beat the numpy reference for a first "
                                           f"proof (no GPU probed); {CPU_FALLBACK}")
    try:
        from ..runtime import wgpu_rt  # noqa: PLC0415
        from ..runtime.wgpu_rt import adapters  # noqa: PLC0415

        impl, via = _auto_impl()
        adapter = adapters.choose_adapter(impl)
        limits = adapters.adapter_limits(adapter, impl)  # decide before opening a device
        wanted = os.environ.get("WHIRGPU_ADAPTER")
        which = via + (f"WHIRGPU_ADAPTER={wanted!r}: " if wanted else "no hardware GPU: ")
        if config is None:
            if device_class(limits) == "software":
                return BackendChoice(CpuBackend(), which + software_reason(limits))
        else:
            plan = plan_device(config, limits, storage)
            if plan.decision != "gpu":
                prefix = which if plan.device_class == "software" and not plan.problems else via
                return BackendChoice(CpuBackend(), prefix + plan.reason)
        from .gpu import GpuBackend  # noqa: PLC0415

        runtime = wgpu_rt.DawnRuntime() if impl == "dawn" else wgpu_rt.WgpuRuntime()
        backend = GpuBackend(runtime, storage=storage)
        if config is not None:
            runtime.prefetch(plan.memory.kernels)  # as _open_gpu
    except BackendUnavailable as exc:
        return BackendChoice(CpuBackend(), f"{exc}; {CPU_FALLBACK}")
    fits = plan.reason if config is not None else "no configuration to check"
    return BackendChoice(backend, f"{via}GPU found: {_describe(backend)}; {fits}")


def _storage_ignored(choice: BackendChoice, storage: str, explicit: str | None) -> BackendChoice:
    """The cpu backend takes a storage policy and ignores it: say so when one was asked for."""
    if explicit is not None and isinstance(choice.backend, CpuBackend):
        choice.reason += f"; storage policy {storage} ignored (no device memory)"
    return choice


def select_backend(name: str | Backend = "auto", config=None, storage: str | None = None) -> BackendChoice:
    """Resolve a backend name (or pass a ready ``Backend`` through). ``config`` (a ``WhirConfig``) lets ``auto``
    check that the proof fits the device and an explicit GPU backend refuse one that cannot run. ``storage`` is the
    GPU storage policy (None: ``WHIRGPU_STORAGE``, else hybrid); a bad name is a ConfigError naming the choices.
    A cpu proof (asked for, or auto's fallback) whose estimated host memory (``host_memory.cpu_proof_bytes``)
    exceeds the memory available raises ``DeviceOutOfMemory`` naming both sizes."""
    from ..environment import check_environment  # noqa: PLC0415 - every WHIRGPU_* variable (its docstring)

    check_environment(skip=("WHIRGPU_BACKEND",))  # _select refuses a bad WHIRGPU_BACKEND itself
    explicit = storage if storage is not None else os.environ.get(STORAGE_ENV) or None
    if isinstance(name, Backend):  # a ready backend keeps its own policy; an argument must agree with it
        if storage is not None and resolve_storage(storage) != (name.storage or resolve_storage(storage)):
            raise ConfigError(f"storage={storage!r}, but the given {name.name} backend uses {name.storage!r}")
        return BackendChoice(name, "given by the caller")
    storage = resolve_storage(storage)
    choice = _storage_ignored(_select(name, config, storage), storage, explicit)
    if config is not None and isinstance(choice.backend, CpuBackend):
        check_cpu_proof(config)  # refused now, not as a MemoryError a minute into the proof
    return choice


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
    if name in GPU_BACKENDS:
        return _open_gpu(name, config, why, storage)
    if name == "auto":
        return _auto(config, storage)
    raise BackendUnavailable(f"unknown backend {name!r}; choose one of {', '.join(BACKEND_NAMES)}")
