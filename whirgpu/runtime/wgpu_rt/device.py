"""The WebGPU runtime: ``WgpuRuntime`` opens one device of an adapter (features, multiply, limits) and closes it;
``DawnRuntime`` is that runtime on Dawn, overriding only what Dawn does differently."""

from __future__ import annotations

import gc
import os
import re

from ...errors import BackendUnavailable
from ...devices.limits import DeviceLimits
from ...devices.overrides import resolve_binding
from ..base import Runtime
from ..upload import UploadPlan
from . import adapters
from .buffers import Buffers
from .pipelines import Pipelines

MUL_VARIANTS = ("emulated", "u64")
COLLECT_EVERY = {"wgpu": 8, "dawn": 1}  # runtimes opened between two collections of dropped devices
_opened = {"wgpu": 0, "dawn": 0}


class NativePass:
    """webgpu.h's compute-pass calls (set pipeline, set bind group, dispatch) of one implementation's C library,
    called directly on the handles of wgpu-py objects (``handle``). wgpu-py's methods wrap each call in an error
    capture; encoding a replayed proof's hundreds of launches paid for that on the host. What these calls get
    wrong is reported when the pass ends or the encoder finishes (calls made through wgpu-py)."""

    def __init__(self, lib, null):
        self.set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        self.set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
        self.dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
        self.null = null

    @staticmethod
    def handle(obj):
        """The C handle of a wgpu-py pass encoder, pipeline or bind group."""
        return obj._internal


def _collect_dropped_devices(impl: str) -> None:
    """Run Python's cycle collector before every ``COLLECT_EVERY[impl]``-th runtime of ``impl`` opens a device.
    wgpu-py's and wgpudawn's device objects refer to themselves through their queues, so a dropped runtime's
    device, and its buffers, are freed only by that collector, which large device allocations never trigger.
    Dawn on lavapipe crashes (inside lavapipe, at a bind-group creation) once a process holds about 22 Dawn
    devices, so every Dawn runtime collects first; wgpu-native (60 live devices tested) only every 8th."""
    _opened[impl] += 1
    if _opened[impl] % COLLECT_EVERY[impl] == 0:
        gc.collect()


class WgpuRuntime(Pipelines, Buffers, Runtime):
    """One device of the WebGPU implementation ``name`` (wgpu-native here; ``DawnRuntime``: Dawn). ``mul``
    overrides WHIRGPU_MUL; ``max_groups_per_dim`` and ``max_binding_bytes`` lower the device limits (tests use
    them to force the 2-D grid and split-binding paths at small sizes; ``max_binding_bytes`` None:
    ``--max-binding`` or ``WHIRGPU_MAX_BINDING_BYTES``, see ``whirgpu.devices.overrides.resolve_binding``).
    ``zero_copy``: host-mapped SHARED buffers (None: when ``zero_copy_support`` says so; False: never, e.g. to
    compare; True: required). ``upload``: how large writes are staged (``upload.UploadPlan``; tests shrink it so
    small arrays take every path). ``adapter_index``: open adapter i of ``list_adapters`` (best first; the
    devices of a multi-GPU host) instead of ``choose_adapter``'s."""

    queue_ordered_writes = True  # writes go through the device queue, after the work submitted before them

    name = "wgpu"  # also the key of IMPLS: which module this runtime drives
    lang = "wgsl"

    def __init__(self, mul: str | None = None, max_groups_per_dim: int | None = None,
                 max_binding_bytes: int | None = None, zero_copy: bool | None = None,
                 upload: UploadPlan | None = None, adapter_index: int | None = None):
        _collect_dropped_devices(self.name)
        self.wgpu = adapters.import_webgpu(self.name)
        self.adapter = (adapters.choose_adapter(self.name) if adapter_index is None
                        else adapters.adapter_at(self.name, adapter_index))
        self.adapter_index = adapter_index
        features = adapters.wanted_features(self.adapter)
        available, self.zero_copy_reason = adapters.zero_copy_support(self.adapter)
        if zero_copy and not available:
            raise BackendUnavailable(f"zero-copy shared buffers need {adapters.ZERO_COPY_FEATURE} and unified memory; "
                                     f"{self.adapter.summary}: {self.zero_copy_reason}")
        self.zero_copy_shared = available if zero_copy is None else bool(zero_copy)
        if self.zero_copy_shared:
            features.append(adapters.ZERO_COPY_FEATURE)
        elif available:
            self.zero_copy_reason = "turned off by the caller"
        try:
            self.device = self._request_device(features)
        except Exception as exc:  # noqa: BLE001
            raise BackendUnavailable(f"{adapters.IMPLS[self.name].label} could not open {self.adapter.summary}: "
                                     f"{exc}") from None
        self.features = adapters.canonical_features(self.device.features)
        requested = (mul or os.environ.get("WHIRGPU_MUL") or "auto").lower()
        if requested == "auto":
            requested = "u64" if "shader-int64" in self.device.features else "emulated"
        if requested not in MUL_VARIANTS:
            raise BackendUnavailable(f"WHIRGPU_MUL={requested!r}: choose one of auto, {', '.join(MUL_VARIANTS)}")
        if requested == "u64" and "shader-int64" not in self.device.features:
            asked = "" if mul else "WHIRGPU_MUL=u64: "  # say where the request came from when it was the environment
            raise BackendUnavailable(f"{asked}the u64 multiply needs shader-int64, which {self.adapter.summary} lacks "
                                     f"through {adapters.IMPLS[self.name].label}")
        self.mul = requested
        device_limits = self.device.limits
        self.max_groups_per_dim = min(max_groups_per_dim or 1 << 30,
                                      device_limits["max-compute-workgroups-per-dimension"])
        self._binding = resolve_binding(device_limits["max-storage-buffer-binding-size"], max_binding_bytes)
        self.max_binding_bytes = self._binding.size
        self.offset_alignment = int(device_limits["min-storage-buffer-offset-alignment"])
        self.init_buffers(upload)
        self.init_pipelines()

    # -- what differs between implementations ---------------------------------------------------------------
    def _request_device(self, features: list[str]):
        return self.adapter.request_device_sync(required_features=features)

    def timestamp_period(self) -> float:
        """Nanoseconds per timestamp tick (the profiler's unit)."""
        from wgpu.backends.wgpu_native import lib  # noqa: PLC0415

        return float(lib.wgpuQueueGetTimestampPeriod(self.device.queue._internal))

    def compile_message(self, message: str) -> str:
        """A shader compiler's message with source positions written as wgsl:LINE:COLUMN."""
        return message  # naga already writes them so

    def native_pass(self) -> NativePass:
        """This implementation's compute-pass calls, made directly (``NativePass``)."""
        from wgpu.backends.wgpu_native import ffi, lib  # noqa: PLC0415

        return NativePass(lib, ffi.NULL)

    def wait(self) -> None:
        from wgpu.backends.wgpu_native import ffi, lib  # noqa: PLC0415

        lib.wgpuDevicePoll(self.device._internal, True, ffi.NULL)  # on_submitted_work_done_sync is broken there

    # -- identity and limits -----------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._binding.apply(adapters.limits_of(self.adapter, self.device.limits, self.features,
                                                      self.max_groups_per_dim, self.max_binding_bytes,
                                                      self.zero_copy_shared, self.name))

    # -- lifetime --------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Wait for submitted work, destroy the cached buffers and the device, and drop every reference to them.
        wgpu-py's and wgpudawn's devices refer to themselves through their queues (see
        ``_collect_dropped_devices``), so the device's handle is released explicitly rather than left to the
        cycle collector; its memory is freed by ``destroy`` either way."""
        device = getattr(self, "device", None)
        if device is None:
            return
        try:
            self.wait()
        finally:
            self.close_buffers()
            self.close_pipelines()
            self.device = None
            device.destroy()
            release = getattr(device, "_release", None)  # breaks the device <-> queue cycle where wgpu-py has it
            if release is not None:
                release()


class DawnRuntime(WgpuRuntime):
    """``WgpuRuntime`` on Dawn (``wgpudawn``): Tint compiles the same WGSL that browsers run. Dawn offers no
    shader-int64, so the multiply is always the emulated one; its resolved timestamps are nanoseconds."""

    checks_aliasing = True  # refuses a launch whose writable binding overlaps another in the same buffer

    name = "dawn"

    def _request_device(self, features: list[str]):
        from wgpudawn.backends.dawn.extras import request_device_sync  # noqa: PLC0415

        # Dawn rounds timestamps down to a coarse quantum unless told not to; profiles want them exact.
        return request_device_sync(self.adapter, required_features=features,
                                   disable_toggles=["timestamp_quantization"])

    def _compile(self, source_text: str, entry: str, overrides: dict[str, int]):
        # Dawn's objects are not thread-safe: the module is made here, and Dawn compiles the pipeline on its own
        # worker threads (createComputePipelineAsync); the promise is waited for at resolve.
        try:
            module = self.device.create_shader_module(code=source_text)
            promise = self.device.create_compute_pipeline_async(
                layout="auto", compute={"module": module, "entry_point": entry, "constants": overrides})
        except Exception as exc:  # noqa: BLE001 - raised again at resolve, with the source position mapped
            error = exc

            def fail():
                raise error

            return fail
        return promise.sync_wait

    def native_pass(self) -> NativePass:
        from wgpudawn.backends.dawn import ffi, lib  # noqa: PLC0415

        return NativePass(lib, ffi.NULL)

    def timestamp_period(self) -> float:
        return 1.0  # Dawn converts ticks to nanoseconds when it resolves a query set (the WebGPU contract)

    def compile_message(self, message: str) -> str:
        # Tint names an unlabelled source "": ":LINE:COL error: ..." -> "wgsl:LINE:COL error: ..."
        return re.sub(r"(^|\s):(\d+):(\d+)\b", r"\1wgsl:\2:\3", message)

    def wait(self) -> None:
        self.device.queue.on_submitted_work_done_sync()
