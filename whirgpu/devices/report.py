"""What ``whirgpu devices`` reports: every adapter each WebGPU implementation (wgpu-native, then Dawn)
enumerates, the CPU reference, and what ``auto`` would pick.

``gather()`` returns one JSON-ready dict; the CLI only formats it:

- ``adapters``: one entry per adapter wgpu enumerates, in wgpu's order (its OpenGL backend is not started:
  ``wgpu_native_setup``; when another part of the process started it first, OpenGL adapters show, unused), then one per
  adapter Dawn enumerates (``wgpudawn``), in Dawn's order. Each has ``runtime`` ("wgpu" or "dawn": the backend
  that opens it), ``name`` (the summary), ``api`` (backend_type), ``device_type`` (adapter_type), ``used``
  (False for APIs the backend never opens), ``note`` ("", why it is not used, or that auto skips a software
  rasteriser), ``selected`` (the adapter ``--backend <runtime>`` would open), ``limits`` (``LIMIT_KEYS``, in
  bytes or counts), ``features`` ({name: bool} for ``INTERESTING_FEATURES``, under wgpu-native's names: Dawn's
  ``subgroups`` counts as ``subgroup``), ``all_features`` (sorted, as the implementation spells them) and
  ``mul`` (the multiply ``WHIRGPU_MUL=auto`` chooses: u64 iff shader-int64, which Dawn never has) and
  ``storage`` (what the shared and private storage modes mean there; "" for an unused adapter) and ``lowered``
  (``{"max_storage_binding_size": {"by": "WHIRGPU_MAX_BINDING_BYTES" or "--max-binding", "device": the device's
  own bytes}}`` when the storage-binding limit in ``limits`` is lowered below the device's, else ``{}``; an unused
  adapter keeps its own) and ``driver`` (the implementation's description of the driver, e.g. ``Mesa 25.0.7``).
  On macOS the Metal device follows the WebGPU adapters as one more entry (``runtime`` "metal", ``api``
  "Metal (MSL)", ``used`` True, ``mul`` the multiply WHIRGPU_MSL_MUL picks; when Metal cannot be opened,
  ``used`` is False and ``note`` says why); elsewhere there is no such entry.
- ``cpu``: the numpy reference, with the same keys as an adapter.
- ``msl_cpu``: ``{"available": bool, "name": the runtime's description or "msl-cpu", "note": why not,
  "max_storage_binding_size": bytes or None, "lowered": as an adapter's}`` for the verification backend that runs
  the MSL kernels on the CPU (it needs a C++ compiler).
- ``max_binding_bytes``: None, or ``{"bytes": N, "source": "WHIRGPU_MAX_BINDING_BYTES" or "--max-binding"}``, the
  storage-binding limit the user asks every runtime to lower its own to (a larger one leaves the device's).
- ``wgpu_error`` / ``dawn_error``: None, or why wgpu / Dawn offers no adapter: the package is missing, the driver
  stack is broken, or ``no adapter (REASON)`` when it enumerates no Vulkan, Metal or D3D12 adapter, REASON one
  clause (``runtime.wgpu_rt.absence.reason``: the Vulkan loader did not load, the driver lacks what Dawn
  requires, ...). Dawn's own lines on stderr are not shown.
- ``auto``: ``{"backend": name or None, "reason": one line}``; backend is None when ``auto`` itself fails
  (e.g. a bad ``WHIRGPU_BACKEND``).
"""

from __future__ import annotations

import sys

from ..errors import BackendUnavailable, WhirGpuError
from .overrides import BindingLimit, binding_override, resolve_binding

INTERESTING_FEATURES = ("shader-int64", "subgroup", "timestamp-query", "mappable-primary-buffers")
# DeviceLimits field -> wgpu limit name
LIMIT_KEYS = {
    "max_buffer_size": "max-buffer-size",
    "max_storage_binding_size": "max-storage-buffer-binding-size",
    "max_workgroup_storage": "max-compute-workgroup-storage-size",
    "max_invocations_per_workgroup": "max-compute-invocations-per-workgroup",
    "max_workgroups_per_dimension": "max-compute-workgroups-per-dimension",
}


def _lowered(lowered_by: str, device: int) -> dict:
    """An entry's ``lowered``: what lowered the storage-binding limit and the device's own, or {}."""
    return {"max_storage_binding_size": {"by": lowered_by, "device": device}} if lowered_by else {}


def _adapter_entry(adapter, selected_key, impl: str = "wgpu") -> dict:
    from ..runtime.wgpu_rt.adapters import NATIVE_APIS, feature_name, storage_summary  # noqa: PLC0415

    info = adapter.info
    api = info.get("backend_type", "?")
    features = set(adapter.features)
    used = api in NATIVE_APIS
    software = info.get("adapter_type") == "CPU"
    limits = {key: int(adapter.limits[wgpu_key]) for key, wgpu_key in LIMIT_KEYS.items()}
    device_binding = limits["max_storage_binding_size"]  # an unused adapter is never opened: nothing lowers it
    binding = resolve_binding(device_binding) if used else BindingLimit(device_binding, device_binding)
    limits["max_storage_binding_size"] = binding.size
    note = f"not used ({api})" if not used else "software rasteriser: auto skips it" if software else ""
    return {
        "runtime": impl,
        "name": adapter.summary,
        "api": api,
        "device_type": info.get("adapter_type", "?"),
        "used": used,
        "note": note,
        "selected": used and (adapter.summary, api) == selected_key,
        "limits": limits,
        "features": {name: feature_name(features, name) is not None for name in INTERESTING_FEATURES},
        "all_features": sorted(features),
        "mul": "u64" if "shader-int64" in features else "emulated",
        "storage": storage_summary(adapter) if used else "",
        "lowered": _lowered(binding.lowered_by, binding.device),
        "driver": str(info.get("description", "")),
    }


def _cpu_entry() -> dict:
    from ..backends.cpu import CpuBackend  # noqa: PLC0415

    limits = CpuBackend().limits()
    return {
        "runtime": "cpu",
        "name": limits.name,
        "api": limits.api,
        "device_type": limits.device_type,
        "used": True,
        "note": "always available",
        "selected": False,
        "limits": {key: getattr(limits, key) for key in LIMIT_KEYS},
        "features": {},
        "all_features": [],
        "mul": "numpy",
        "storage": "host memory: storage policies have no effect",
        "lowered": {},
    }


def list_webgpu_adapters(impl: str = "wgpu", drivers: tuple[str, ...] = ()) -> tuple[list[dict], str | None]:
    """(entries, error): every adapter the WebGPU implementation ``impl`` (wgpu or dawn) enumerates, and None; or
    the entries and ``no adapter (REASON)`` when none of them is native (``enumerate_explained``; ``drivers``:
    the Vulkan drivers wgpu-native described, to name the one Dawn refused); or no entries and the reason none
    could be listed."""
    from ..runtime.wgpu_rt.adapters import choose_adapter, enumerate_explained  # noqa: PLC0415

    try:
        adapters, why = enumerate_explained(impl, drivers)
    except BackendUnavailable as exc:
        return [], str(exc)
    try:
        chosen = choose_adapter(impl)
        selected_key = (chosen.summary, chosen.info.get("backend_type"))
    except BackendUnavailable:
        selected_key = None
    return [_adapter_entry(a, selected_key, impl) for a in adapters], (f"no adapter ({why})" if why else None)


def list_metal() -> list[dict]:
    """The Metal device as one entry on macOS (marked unused, with the reason, if it cannot be opened); elsewhere
    nothing."""
    if sys.platform != "darwin":
        return []
    from ..runtime.metal_rt import metal_device_summary  # noqa: PLC0415

    summary, why = metal_device_summary()
    limits = (summary or {}).get("limits", {})
    return [{
        "runtime": "metal",
        "name": summary["name"] if summary else "Metal",
        "api": "Metal (MSL)",
        "device_type": limits.get("device_type", "?"),
        "used": summary is not None,
        "note": "" if summary else f"unavailable: {why}",
        "selected": False,
        "limits": {key: int(limits.get(key, 0)) for key in LIMIT_KEYS},
        "features": {},
        "all_features": sorted(limits.get("features", ())),
        "mul": summary["mul"] if summary else "-",
        "lowered": _lowered(limits.get("binding_lowered_by", ""), limits.get("device_storage_binding_size", 0)),
    }]


def msl_cpu_entry() -> dict:
    """Whether ``--backend msl-cpu`` can run here (a C++ compiler is on PATH), without compiling anything."""
    from ..runtime.msl_cpu_rt import MslCpuRuntime  # noqa: PLC0415

    try:
        limits = MslCpuRuntime().limits()
    except BackendUnavailable as exc:
        return {"available": False, "name": "msl-cpu", "note": str(exc), "max_storage_binding_size": None,
                "lowered": {}}
    return {"available": True, "name": limits.name, "note": "",
            "max_storage_binding_size": limits.max_storage_binding_size,
            "lowered": _lowered(limits.binding_lowered_by, limits.device_storage_binding_size)}


def gather() -> dict:
    """Everything ``whirgpu devices`` shows (see the module docstring for the keys)."""
    from ..backends import select_backend  # noqa: PLC0415

    override = binding_override()  # a bad value is an error before anything is listed
    adapters, error = list_webgpu_adapters("wgpu")
    drivers = tuple(f"{a['driver']} ({a['name']})" for a in adapters if a["api"] == "Vulkan")
    dawn_adapters, dawn_error = list_webgpu_adapters("dawn", drivers)
    adapters = adapters + dawn_adapters + list_metal()
    try:
        choice = select_backend("auto")
        auto = {"backend": choice.backend.name, "reason": choice.reason}
    except WhirGpuError as exc:
        auto = {"backend": None, "reason": str(exc)}
    return {"adapters": adapters, "wgpu_error": error, "dawn_error": dawn_error, "cpu": _cpu_entry(),
            "msl_cpu": msl_cpu_entry(), "auto": auto,
            "max_binding_bytes": override and {"bytes": override[0], "source": override[1]}}
