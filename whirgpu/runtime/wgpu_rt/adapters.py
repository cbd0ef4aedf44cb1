"""WebGPU implementations and their adapters, before any device opens: importing wgpu-native or Dawn, listing and
choosing native adapters, their features, zero-copy support and the limits a runtime on them reports."""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any

from ...errors import BackendUnavailable
from ...devices.limits import DeviceLimits
from ...devices.overrides import resolve_binding
from ..wgpu_native_setup import prepare_wgpu_native
from . import absence

NATIVE_APIS = ("Vulkan", "Metal", "D3D12")
WANTED_FEATURES = ("shader-int64", "subgroup", "timestamp-query")
# A feature's spellings (canonical name first): wgpu-native says "subgroup", Dawn (and the WebGPU spec) "subgroups".
# Limits and runtimes report canonical names; a device is asked for the adapter's own spelling.
FEATURE_ALIASES = {"subgroup": ("subgroup", "subgroups")}
ZERO_COPY_FEATURE = "mappable-primary-buffers"
UNIFIED_TYPES = ("IntegratedGPU", "CPU")  # adapter types with unified memory (Metal: IntegratedGPU iff UMA)
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "Unknown": 3, "CPU": 4}


@dataclass(frozen=True)
class Impl:
    """A WebGPU implementation with wgpu-py's API: the backend ``name``, the ``module`` to import, what it is
    called in messages (``label``) and how to install it (``install``)."""

    name: str
    module: str
    label: str
    install: str


IMPLS = {
    "wgpu": Impl("wgpu", "wgpu", "wgpu-native", "reinstall whirgpu or pip install 'wgpu>=0.32,<0.33'"),
    "dawn": Impl("dawn", "wgpudawn", "Dawn", "pip install 'wgpudawn>=0.32,<0.33' (the dawn extra)"),
}
DAWN_NOISE = absence.NOISE[0]  # Dawn's two limit warnings on stderr at adapter creation (harmless)


def _impl(impl: str) -> Impl:
    if impl not in IMPLS:
        raise ValueError(f"unknown WebGPU implementation {impl!r}; choose one of {', '.join(IMPLS)}")
    return IMPLS[impl]


def import_webgpu(impl: str = "wgpu"):
    """The module of implementation ``impl`` (``wgpu`` or ``wgpudawn``); BackendUnavailable when it is missing.
    wgpu-native is prepared for a fast start on first import (``wgpu_native_setup``: no OpenGL backend, C types
    resolved without parsing)."""
    which = _impl(impl)
    try:
        module = importlib.import_module(which.module)
    except ImportError as exc:
        raise BackendUnavailable(f"the {which.module} package is not installed ({exc}); {which.install}") from None
    if impl == "wgpu":
        prepare_wgpu_native()
    return module


def impl_of(adapter) -> str:
    """Which implementation an adapter object comes from."""
    return "dawn" if type(adapter).__module__.startswith("wgpudawn") else "wgpu"


def feature_name(features, canonical: str) -> str | None:
    """The spelling under which ``features`` (an adapter's or device's set) offers ``canonical``, or None."""
    return next((name for name in FEATURE_ALIASES.get(canonical, (canonical,)) if name in features), None)


def canonical_features(features) -> tuple[str, ...]:
    """``features`` with every alias replaced by its canonical name, sorted."""
    aliases = {alias: canonical for canonical, names in FEATURE_ALIASES.items() for alias in names}
    return tuple(sorted({aliases.get(str(f), str(f)) for f in features}))


def enumerate_explained(impl: str = "wgpu", drivers: tuple[str, ...] = ()) -> tuple[list[Any], str]:
    """(every adapter ``impl`` enumerates, in its order; "" when one of them is native (Vulkan, Metal, D3D12),
    else why there is none, one clause: ``absence.reason``, ``drivers`` as it takes them). Dawn's own lines on
    stderr are caught (``absence.captured_fd2``): its limit warnings and the messages the reason says are
    dropped, anything else is written back to stderr. wgpu-native's instance starts no OpenGL backend
    (``wgpu_native_setup``) unless something in the process created it first. BackendUnavailable when the
    package is missing or the driver stack cannot enumerate."""
    module = import_webgpu(impl)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # Mesa warns without it
    caught: list[bytes] = []
    try:
        if impl == "dawn":
            with absence.captured_fd2(caught):
                adapters = module.gpu.enumerate_adapters_sync()
        else:
            adapters = module.gpu.enumerate_adapters_sync()
    except Exception as exc:  # noqa: BLE001 - a broken driver stack is 'unavailable', not a crash
        _write_back(absence.split_messages(b"".join(caught)), keep_absence=True)
        raise BackendUnavailable(f"{_impl(impl).label} could not enumerate adapters: {exc}") from None
    messages = absence.split_messages(b"".join(caught))
    if any(a.info.get("backend_type") in NATIVE_APIS for a in adapters):
        _write_back(messages, keep_absence=True)
        return adapters, ""
    return adapters, absence.reason(messages, drivers)


def _write_back(messages: list, keep_absence: bool) -> None:
    """Write ``messages`` back to file descriptor 2 but for Dawn's limit warnings (and, unless ``keep_absence``,
    those the absence reason says)."""
    kept = b"".join(m.raw for m in messages if not absence.is_noise(m) and (keep_absence or not absence.is_absence(m)))
    if kept:
        os.write(2, kept)


def enumerate_adapters(impl: str = "wgpu") -> list[Any]:
    """Every adapter ``impl`` enumerates, in its order (``enumerate_explained`` without the reason)."""
    return enumerate_explained(impl)[0]


def list_explained(impl: str = "wgpu") -> tuple[list[Any], str]:
    """(every native (non-OpenGL) adapter of ``impl``, best first; "" or why there is none, as
    ``enumerate_explained``). Fresh objects on every call (a Dawn adapter opens one device only)."""
    adapters, why = enumerate_explained(impl)
    native = [a for a in adapters if a.info.get("backend_type") in NATIVE_APIS]
    return sorted(native, key=lambda a: _TYPE_RANK.get(a.info.get("adapter_type"), 3)), why


def list_adapters(impl: str = "wgpu") -> list[Any]:
    """Every native (non-OpenGL) adapter of ``impl``, best first (``list_explained`` without the reason)."""
    return list_explained(impl)[0]


def zero_copy_support(adapter) -> tuple[bool, str]:
    """(whether SHARED buffers can be host-mapped storage buffers on ``adapter``, why or why not)."""
    kind = adapter.info.get("adapter_type", "?")
    if ZERO_COPY_FEATURE not in adapter.features:
        return False, f"no {ZERO_COPY_FEATURE} feature"
    if kind not in UNIFIED_TYPES:
        return False, f"{kind}: no unified memory ({ZERO_COPY_FEATURE} would put storage in host memory)"
    return True, f"{ZERO_COPY_FEATURE}, unified memory ({kind})"


def storage_summary(adapter) -> str:
    """One line for ``whirgpu devices``: what StorageMode.SHARED means on ``adapter``."""
    ok, why = zero_copy_support(adapter)
    if ok:
        return f"shared = host-mapped storage buffers, zero-copy readback ({why}); private = device storage"
    return f"shared = private = device storage, readback through a staging copy ({why})"


def choose_adapter(impl: str = "wgpu"):
    """The adapter a runtime on ``impl`` opens: the first whose summary contains ``WHIRGPU_ADAPTER``, else the
    best (discrete before integrated before software)."""
    adapters, why = list_explained(impl)
    wanted = os.environ.get("WHIRGPU_ADAPTER")
    if wanted:
        matching = [a for a in adapters if wanted.lower() in a.summary.lower()]
        if not matching:
            names = "; ".join(a.summary for a in adapters) or "none"
            raise BackendUnavailable(f"WHIRGPU_ADAPTER={wanted!r} matches no {_impl(impl).label} adapter "
                                     f"(found: {names})")
        return matching[0]
    if not adapters:
        hint = f" (Dawn needs Mesa >= {absence.DAWN_MESA} for lavapipe)" if impl == "dawn" else ""
        raise BackendUnavailable(f"{_impl(impl).label} found no Vulkan, Metal or D3D12 adapter ({why}; install a "
                                 "GPU driver, or Mesa's lavapipe: apt-get install mesa-vulkan-drivers libvulkan1"
                                 f"{hint})")
    return adapters[0]


def adapter_at(impl: str, index: int):
    """Adapter ``index`` of ``list_adapters(impl)`` (best first), or BackendUnavailable naming how many there are."""
    adapters = list_adapters(impl)
    if not 0 <= index < len(adapters):
        raise BackendUnavailable(f"{_impl(impl).label} has {len(adapters)} adapter(s); there is no adapter {index}")
    return adapters[index]


def limits_of(adapter, lim, features, max_groups_per_dim: int, max_binding_bytes: int,
              zero_copy: bool, impl: str) -> DeviceLimits:
    """The ``DeviceLimits`` of ``adapter`` given its (or its device's) limits ``lim`` and ``features`` and the
    runtime's own settings."""
    info = adapter.info
    return DeviceLimits(
        name=adapter.summary,
        api=info.get("backend_type", "?"),
        device_type=info.get("adapter_type", "?"),
        max_buffer_size=lim["max-buffer-size"],
        max_storage_binding_size=max_binding_bytes,
        max_workgroup_storage=lim["max-compute-workgroup-storage-size"],
        max_invocations_per_workgroup=lim["max-compute-invocations-per-workgroup"],
        max_workgroups_per_dimension=max_groups_per_dim,
        has_u64="shader-int64" in features,
        has_native_mulhi=False,
        unified_memory=info.get("adapter_type") in UNIFIED_TYPES,
        has_timestamps="timestamp-query" in features,
        zero_copy_shared=zero_copy,
        offset_alignment=int(lim["min-storage-buffer-offset-alignment"]),
        features=canonical_features(features),
        runtime=impl,
    )


def wanted_features(adapter) -> list[str]:
    """The adapter's spellings of the ``WANTED_FEATURES`` it offers."""
    return [name for name in (feature_name(adapter.features, f) for f in WANTED_FEATURES) if name]


def adapter_limits(adapter, impl: str | None = None) -> DeviceLimits:
    """The limits a default runtime on ``adapter`` reports, read without opening a device (the runtime's device
    gets the adapter's limits and the features of ``WANTED_FEATURES`` it offers, plus zero-copy where
    ``zero_copy_support`` allows). ``impl``: the adapter's implementation (None: from the adapter object)."""
    zero_copy, _ = zero_copy_support(adapter)
    features = wanted_features(adapter) + ([ZERO_COPY_FEATURE] if zero_copy else [])
    lim = adapter.limits
    binding = resolve_binding(lim["max-storage-buffer-binding-size"])  # what a runtime opened now would use
    return binding.apply(limits_of(adapter, lim, features, lim["max-compute-workgroups-per-dimension"],
                                 binding.size, zero_copy, impl or impl_of(adapter)))
