"""Backend specs for benchmarks: ``NAME[:MUL]`` -> a ready backend, so one run can compare multiply variants.

Specs: ``cpu`` (the numpy reference); ``wgpu``, ``wgpu:u64``, ``wgpu:emulated`` (WGSL through wgpu-native; bare
``wgpu`` takes ``WHIRGPU_MUL``, else u64 when the adapter has shader-int64); ``dawn``, ``dawn:emulated`` (the same
WGSL through Dawn, which has no shader-int64: ``dawn:u64`` is refused); ``metal``, ``metal:mulhi|u64|emulated``
(MSL through Metal, macOS); ``msl-cpu``, ``msl-cpu:mulhi|u64|emulated`` (the MSL kernels on the CPU: slow, a
verification backend). Unlike ``--backend auto``, a benchmark opens a software WebGPU adapter (lavapipe) too: it
is labelled as such in the device description.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from ..backends import Backend, CpuBackend
from ..backends.memory import human_bytes
from ..errors import BackendUnavailable, ConfigError
from ..devices.overrides import binding_text

RUNTIMES = ("wgpu", "dawn", "metal", "msl-cpu")
WEBGPU = ("wgpu", "dawn")  # the WGSL runtimes
SPEC_NAMES = ("cpu",) + RUNTIMES


@dataclass(frozen=True)
class BackendSpec:
    """``name`` (cpu / wgpu / dawn / metal / msl-cpu) and the multiply variant ``mul`` (None: the runtime's default)."""

    name: str
    mul: str | None = None

    def __str__(self) -> str:
        return f"{self.name}:{self.mul}" if self.mul else self.name

    @property
    def is_gpu(self) -> bool:
        """True for every kernel backend (msl-cpu included: it runs the GPU kernels)."""
        return self.name != "cpu"


def _mul_variants(name: str) -> tuple[str, ...]:
    if name == "dawn":
        return ("emulated",)  # Dawn offers no shader-int64
    if name == "wgpu":
        from ..runtime.wgpu_rt import MUL_VARIANTS  # noqa: PLC0415
    elif name == "metal":
        from ..runtime.metal_rt import MUL_VARIANTS  # noqa: PLC0415
    else:
        from ..runtime.msl_cpu_rt import MUL_VARIANTS  # noqa: PLC0415
    return MUL_VARIANTS


def parse_spec(text: str) -> BackendSpec:
    """``NAME[:MUL]`` -> BackendSpec; a ConfigError naming the choices for an unknown name or multiply."""
    name, _, mul = text.strip().partition(":")
    if name not in SPEC_NAMES:
        raise ConfigError(f"unknown backend {name!r} in {text.strip()!r}; choose from {', '.join(SPEC_NAMES)} "
                          f"(with :MUL for a multiply variant, e.g. wgpu:u64)")
    if not mul:
        return BackendSpec(name)
    if name == "cpu":
        raise ConfigError(f"{text.strip()!r}: the cpu backend has no multiply variants")
    if name == "dawn" and mul == "u64":
        raise ConfigError(f"{text.strip()!r}: Dawn has no shader-int64 (its WGSL has no u64), so it runs only the "
                          "emulated multiply: use dawn or dawn:emulated")
    variants = _mul_variants(name)
    if mul not in variants:
        raise ConfigError(f"{text.strip()!r}: {name} multiplies are {', '.join(variants)}")
    return BackendSpec(name, mul)


def parse_specs(text: str) -> list[BackendSpec]:
    """A comma-separated list of specs, duplicates dropped, order kept."""
    specs = [parse_spec(item) for item in text.split(",") if item.strip()]
    if not specs:
        raise ConfigError("no backends given")
    return list(dict.fromkeys(specs))


def default_specs() -> list[BackendSpec]:
    """cpu, wgpu, and metal on macOS: the backends a user compares (msl-cpu is opt-in, being slow)."""
    specs = [BackendSpec("cpu"), BackendSpec("wgpu")]
    if sys.platform == "darwin":
        specs.append(BackendSpec("metal"))
    return specs


def open_runtime(spec: BackendSpec):
    """A fresh runtime for a kernel backend spec; BackendUnavailable when it cannot run here."""
    if spec.name == "wgpu":
        from ..runtime.wgpu_rt import WgpuRuntime  # noqa: PLC0415

        return WgpuRuntime(mul=spec.mul)
    if spec.name == "dawn":
        from ..runtime.wgpu_rt import DawnRuntime  # noqa: PLC0415

        return DawnRuntime(mul=spec.mul)
    if spec.name == "metal":
        from ..runtime.metal_rt import MetalRuntime  # noqa: PLC0415

        return MetalRuntime(mul=spec.mul)
    if spec.name == "msl-cpu":
        from ..runtime.msl_cpu_rt import MslCpuRuntime  # noqa: PLC0415

        return MslCpuRuntime(mul=spec.mul)
    raise BackendUnavailable(f"{spec} has no kernel runtime")


def open_backend(spec: BackendSpec, storage: str | None = None) -> Backend:
    """A ready backend for ``spec`` (storage: the GPU storage policy; the cpu backend ignores it).
    BackendUnavailable, with the reason, when it cannot run here."""
    if spec.name == "cpu":
        return CpuBackend()
    from ..backends.gpu import GpuBackend  # noqa: PLC0415

    return GpuBackend(open_runtime(spec), storage=storage)


def describe(backend: Backend) -> str:
    """One line naming the device, whether it is a software adapter, and for kernel backends the multiply variant,
    e.g. ``llvmpipe (LLVM 15.0.6, 256 bits) via Vulkan, software adapter, u64 multiply``, and the storage-binding
    limit when it was lowered (``max storage binding 64 KiB (lowered by --max-binding; device: 128 MiB)``)."""
    limits = backend.limits()
    name, kind = limits.name, limits.device_type
    parts = []
    if backend.name in WEBGPU and kind == "CPU":
        # the adapter summary already says "(CPU)", which reads as if the numpy reference ran
        parts += [name.replace(f" ({kind})", ""), "software adapter"]
    elif kind and kind.lower() not in name.lower():
        parts.append(f"{name} [{kind}]")
    else:
        parts.append(name)
    mul = getattr(getattr(backend, "rt", None), "mul", None)
    if mul:
        parts.append(f"{mul} multiply")
    if limits.binding_lowered_by:  # a small-binding device reproduced on a large one: its times are not the device's
        parts.append(f"max storage binding {binding_text(limits, human_bytes)}")
    return ", ".join(parts)


def open_specs(specs: list[BackendSpec], storage: str | None, explicit: bool
               ) -> tuple[dict[str, Backend], dict[str, str]]:
    """Open every spec, in order -> ({spec: backend}, {spec: why it was skipped}).

    ``explicit`` (the user listed them): a spec that cannot open raises BackendUnavailable naming it and why.
    Otherwise (the default list) it is skipped with its reason."""
    opened: dict[str, Backend] = {}
    skipped: dict[str, str] = {}
    for spec in specs:
        try:
            opened[str(spec)] = open_backend(spec, storage)
        except BackendUnavailable as exc:
            if explicit:
                raise BackendUnavailable(f"backend {spec} cannot run here: {exc}") from None
            skipped[str(spec)] = str(exc)
    return opened, skipped
