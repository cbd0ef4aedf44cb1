"""WGSL kernels through wgpu-py (Vulkan, Metal, D3D12; never the OpenGL adapter).

Environment: ``WHIRGPU_ADAPTER`` picks an adapter whose summary contains the given text;
``WHIRGPU_MUL=emulated|u64|auto`` picks the BabyBear multiply (auto: u64 when the adapter has shader-int64).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..backends.base import DeviceLimits, StorageMode
from ..errors import BackendUnavailable, DeviceLimitError, DeviceOutOfMemory, ShaderCompileError
from ..kernels.compose import compose, map_diagnostic
from .base import Batch, RtBuffer, Runtime, grid_for

NATIVE_APIS = ("Vulkan", "Metal", "D3D12")
WANTED_FEATURES = ("shader-int64", "subgroup", "timestamp-query")
MUL_VARIANTS = ("emulated", "u64")
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "Unknown": 3, "CPU": 4}
PARAMS_SLOT_BYTES = 256  # per-dispatch params slot; a multiple of every device's uniform offset alignment


def _import_wgpu():
    try:
        import wgpu  # noqa: PLC0415 - optional dependency
    except ImportError as exc:
        raise BackendUnavailable(f"the wgpu package is not installed ({exc}); pip install 'whirgpu[gpu]'") from None
    return wgpu


def list_adapters() -> list[Any]:
    """Every native (non-OpenGL) adapter, best first."""
    wgpu = _import_wgpu()
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
    try:
        adapters = wgpu.gpu.enumerate_adapters_sync()
    except Exception as exc:  # noqa: BLE001 - a broken driver stack is 'unavailable', not a crash
        raise BackendUnavailable(f"wgpu could not enumerate adapters: {exc}") from None
    native = [a for a in adapters if a.info.get("backend_type") in NATIVE_APIS]
    return sorted(native, key=lambda a: _TYPE_RANK.get(a.info.get("adapter_type"), 3))


def choose_adapter():
    adapters = list_adapters()
    wanted = os.environ.get("WHIRGPU_ADAPTER")
    if wanted:
        matching = [a for a in adapters if wanted.lower() in a.summary.lower()]
        if not matching:
            names = "; ".join(a.summary for a in adapters) or "none"
            raise BackendUnavailable(f"WHIRGPU_ADAPTER={wanted!r} matches no adapter (found: {names})")
        return matching[0]
    if not adapters:
        raise BackendUnavailable("no Vulkan, Metal or D3D12 adapter found (install a GPU driver, or Mesa's "
                                 "lavapipe: apt-get install mesa-vulkan-drivers libvulkan1)")
    return adapters[0]


class _WgpuBatch(Batch):
    def __init__(self, rt: "WgpuRuntime"):
        self.rt = rt
        self.encoder = rt.device.create_command_encoder()
        self.params_words: list[np.ndarray] = []
        self.pending: list[tuple[Any, list[RtBuffer], int | None, tuple[int, int]]] = []

    def dispatch(self, kernel, buffers, params, n_groups):
        slot = None
        if params is not None:
            words = np.zeros(PARAMS_SLOT_BYTES // 4, np.uint32)
            p = np.asarray(params, np.uint32).reshape(-1)
            words[: p.size] = p
            slot = len(self.params_words)
            self.params_words.append(words)
        grid = grid_for(n_groups, self.rt.max_groups_per_dim)
        self.pending.append((kernel, list(buffers), slot, grid))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self._flush_dispatches()
        self.encoder.copy_buffer_to_buffer(src.handle, src_offset, dst.handle, dst_offset, nbytes)

    def _flush_dispatches(self):
        if not self.pending:
            return
        rt = self.rt
        params_buf = None
        if self.params_words:
            params_buf = rt._params_buffer(len(self.params_words) * PARAMS_SLOT_BYTES)
            rt.device.queue.write_buffer(params_buf, 0, np.concatenate(self.params_words))
        cpass = self.encoder.begin_compute_pass()
        for kernel, buffers, slot, (gx, gy) in self.pending:
            pipeline, layout = kernel
            entries = [{"binding": i, "resource": {"buffer": b.handle, "offset": 0, "size": b.nbytes}}
                       for i, b in enumerate(buffers)]
            if slot is not None:
                entries.append({"binding": len(buffers), "resource": {
                    "buffer": params_buf, "offset": slot * PARAMS_SLOT_BYTES, "size": PARAMS_SLOT_BYTES}})
            bind_group = rt.device.create_bind_group(layout=layout, entries=entries)
            cpass.set_pipeline(pipeline)
            cpass.set_bind_group(0, bind_group)
            cpass.dispatch_workgroups(gx, gy, 1)
        cpass.end()
        self.pending = []
        self.params_words = []

    def submit(self):
        self._flush_dispatches()
        self.rt.device.queue.submit([self.encoder.finish()])


class WgpuRuntime(Runtime):
    """One wgpu device. ``mul`` overrides WHIRGPU_MUL; ``max_groups_per_dim`` and ``max_binding_bytes`` lower
    the device limits (tests use them to force the 2-D grid and split-binding paths at small sizes)."""

    name = "wgpu"
    lang = "wgsl"

    def __init__(self, mul: str | None = None, max_groups_per_dim: int | None = None,
                 max_binding_bytes: int | None = None):
        wgpu = _import_wgpu()
        self.wgpu = wgpu
        self.adapter = choose_adapter()
        features = [f for f in WANTED_FEATURES if f in self.adapter.features]
        try:
            self.device = self.adapter.request_device_sync(required_features=features)
        except Exception as exc:  # noqa: BLE001
            raise BackendUnavailable(f"could not open {self.adapter.summary}: {exc}") from None
        self.features = tuple(sorted(self.device.features))
        requested = (mul or os.environ.get("WHIRGPU_MUL") or "auto").lower()
        if requested == "auto":
            requested = "u64" if "shader-int64" in self.device.features else "emulated"
        if requested not in MUL_VARIANTS:
            raise BackendUnavailable(f"WHIRGPU_MUL={requested!r}: choose one of auto, {', '.join(MUL_VARIANTS)}")
        if requested == "u64" and "shader-int64" not in self.device.features:
            raise BackendUnavailable(f"the u64 multiply needs shader-int64, which {self.adapter.summary} lacks")
        self.mul = requested
        device_limits = self.device.limits
        self.max_groups_per_dim = min(max_groups_per_dim or 1 << 30,
                                      device_limits["max-compute-workgroups-per-dimension"])
        self.max_binding_bytes = min(max_binding_bytes or 1 << 62, device_limits["max-storage-buffer-binding-size"])
        self._kernels: dict[tuple, Any] = {}
        self._staging = None
        self._params = None

    # -- identity and limits -----------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        lim = self.device.limits
        info = self.adapter.info
        return DeviceLimits(
            name=self.adapter.summary,
            api=info.get("backend_type", "?"),
            device_type=info.get("adapter_type", "?"),
            max_buffer_size=lim["max-buffer-size"],
            max_storage_binding_size=self.max_binding_bytes,
            max_workgroup_storage=lim["max-compute-workgroup-storage-size"],
            max_invocations_per_workgroup=lim["max-compute-invocations-per-workgroup"],
            max_workgroups_per_dimension=self.max_groups_per_dim,
            has_u64="shader-int64" in self.device.features,
            has_native_mulhi=False,
            unified_memory=info.get("adapter_type") in ("IntegratedGPU", "CPU"),
            has_timestamps="timestamp-query" in self.device.features,
            features=self.features,
        )

    # -- memory ------------------------------------------------------------------------------------------------
    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        nbytes = max(4, -(-int(nbytes) // 4) * 4)
        limit = self.device.limits["max-buffer-size"]
        if nbytes > limit:
            raise DeviceLimitError(f"a buffer of {nbytes} bytes exceeds max-buffer-size {limit} "
                                   f"on {self.adapter.summary}")
        usage = self.wgpu.BufferUsage
        try:
            handle = self.device.create_buffer(size=nbytes, usage=usage.STORAGE | usage.COPY_SRC | usage.COPY_DST)
        except Exception as exc:  # noqa: BLE001
            raise DeviceOutOfMemory(f"could not allocate {nbytes} bytes on {self.adapter.summary}: {exc}") from None
        return RtBuffer(handle, nbytes, mode)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data, dtype=np.uint32)
        if offset + data.nbytes > buffer.nbytes:
            raise ValueError(f"write of {data.nbytes} bytes at {offset} overruns a {buffer.nbytes}-byte buffer")
        if data.nbytes == 0:
            return  # wgpu rejects empty writes
        self.device.queue.write_buffer(buffer.handle, offset, data)

    def _staging_buffer(self, nbytes: int):
        if self._staging is None or self._staging.size < nbytes:
            usage = self.wgpu.BufferUsage
            size = max(nbytes, 1 << 16)
            self._staging = self.device.create_buffer(size=size, usage=usage.MAP_READ | usage.COPY_DST)
        return self._staging

    def _params_buffer(self, nbytes: int):
        if self._params is None or self._params.size < nbytes:
            usage = self.wgpu.BufferUsage
            self._params = self.device.create_buffer(size=max(nbytes, 1 << 14), usage=usage.UNIFORM | usage.COPY_DST)
        return self._params

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        nbytes = buffer.nbytes - offset if nbytes is None else nbytes
        staging = self._staging_buffer(nbytes)
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer_to_buffer(buffer.handle, offset, staging, 0, nbytes)
        self.device.queue.submit([encoder.finish()])
        staging.map_sync(self.wgpu.MapMode.READ, 0, nbytes)
        try:
            out = np.frombuffer(staging.read_mapped(0, nbytes, copy=False), dtype=np.uint32).copy()
        finally:
            staging.unmap()
        return out

    # -- kernels -----------------------------------------------------------------------------------------------
    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None):
        key = (stem, entry, tuple(sorted((constants or {}).items())))
        cached = self._kernels.get(key)
        if cached is not None:
            return cached
        source = compose("wgsl", stem, (("bb_mul", self.mul),))
        try:
            module = self.device.create_shader_module(code=source.text)
            pipeline = self.device.create_compute_pipeline(
                layout="auto",
                compute={"module": module, "entry_point": entry or stem, "constants": dict(constants or {})},
            )
        except Exception as exc:  # noqa: BLE001 - naga/driver diagnostics arrive as various wgpu errors
            raise ShaderCompileError(f"kernel {stem} ({self.mul} multiply): {map_diagnostic(str(exc), source)}") \
                from None
        compiled = (pipeline, pipeline.get_bind_group_layout(0))
        self._kernels[key] = compiled
        return compiled

    def batch(self) -> Batch:
        return _WgpuBatch(self)

    def wait(self) -> None:
        from wgpu.backends.wgpu_native import ffi, lib  # noqa: PLC0415

        lib.wgpuDevicePoll(self.device._internal, True, ffi.NULL)
