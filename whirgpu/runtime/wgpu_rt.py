"""WGSL kernels through wgpu-py's API (Vulkan, Metal, D3D12; never an OpenGL adapter), on either WebGPU
implementation (``IMPLS``): ``wgpu`` (wgpu-native, naga; the ``wgpu`` package) or ``dawn`` (Dawn, Chrome's
engine, Tint; the ``wgpudawn`` package, which has wgpu-py's API). ``WgpuRuntime`` drives the module its class's
``name`` names (imported as itself: ``wgpudawn`` is never installed as ``wgpu``); ``DawnRuntime`` is that runtime
on Dawn, overriding only what Dawn does differently. The module-level helpers take the implementation's name
(default ``wgpu``).

Environment: ``WHIRGPU_ADAPTER`` picks an adapter whose summary contains the given text;
``WHIRGPU_MUL=emulated|u64|auto`` picks the BabyBear multiply (auto: u64 when the adapter has shader-int64, which
Dawn never offers).

Storage modes: PRIVATE buffers are plain ``STORAGE|COPY_SRC|COPY_DST`` buffers (on Metal, wgpu puts them in
Private memory). SHARED buffers are host-mapped when the adapter offers ``mappable-primary-buffers`` and has
unified memory (adapter type IntegratedGPU or CPU): they get ``MAP_READ`` as well (never MAP_WRITE, which Metal
makes write-combined, slow to read) and ``read`` maps them directly instead of copying into a staging buffer.
Elsewhere (a discrete GPU, or no such feature) SHARED falls back to a plain storage buffer and
``zero_copy_shared`` is False.

Uploads (either mode) are staged: a buffer cannot be bound while mapped. Writes below ``UploadPlan.threshold``
(1 MiB) use ``queue.write_buffer``; larger ones go through the runtime's ring of persistent
``MAP_WRITE|COPY_SRC`` staging buffers (``upload``: 4 slots of ``UploadPlan.chunk_for`` bytes, made at the first
such write): each chunk is
written into the mapped range (``_experimental_get_mapped_range``, which wgpu-py and wgpudawn both have) by a
threaded numpy copy, unmapped, and copied by a submission of its own that is not waited for. The ring replaces
``write_buffer``'s fresh staging buffer per call, whose first touch and single-threaded copy capped uploads at
1-4 GB/s on an H100.
"""

from __future__ import annotations

import gc
import importlib
import os
import re
import sys
import tempfile
import weakref
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import activity
from ..devices.limits import DeviceLimits, StorageMode
from ..errors import BackendUnavailable, ConfigError, DeviceLimitError, DeviceOutOfMemory, ShaderCompileError
from ..kernels.compose import compose, map_diagnostic
from ..kernels.registry import spec
from ..devices.overrides import resolve_binding
from .wgpu_native_setup import prepare_wgpu_native
from .base import (PARAMS_WORDS, Batch, RtBuffer, Runtime, allocation_size, binding_range, check_binding_sizes, check_range,
                   grid_for)
from .upload import UploadPlan, chunk_ranges, copy_into

NATIVE_APIS = ("Vulkan", "Metal", "D3D12")
WANTED_FEATURES = ("shader-int64", "subgroup", "timestamp-query")
# A feature's spellings (canonical name first): wgpu-native says "subgroup", Dawn (and the WebGPU spec) "subgroups".
# Limits and runtimes report canonical names; a device is asked for the adapter's own spelling.
FEATURE_ALIASES = {"subgroup": ("subgroup", "subgroups")}
ZERO_COPY_FEATURE = "mappable-primary-buffers"
UNIFIED_TYPES = ("IntegratedGPU", "CPU")  # adapter types with unified memory (Metal: IntegratedGPU iff UMA)
MAP_ALIGNMENT = 8  # wgpu's map offset alignment (the size must be a multiple of 4)
MUL_VARIANTS = ("emulated", "u64")
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "Unknown": 3, "CPU": 4}
PARAMS_SLOT_BYTES = 4 * PARAMS_WORDS  # per-dispatch params slot; a multiple of every uniform offset alignment
BIND_GROUP_CACHE = 4096  # bind groups kept (least recently used dropped first); a proof uses about 500


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
    "dawn": Impl("dawn", "wgpudawn", "Dawn", "pip install 'whirgpu[dawn]' (wgpudawn>=0.32,<0.33)"),
}
DAWN_NOISE = b"artificially reduced"  # Dawn's two limit warnings on stderr at adapter creation (harmless)


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


@contextmanager
def _filtered_stderr(noise: bytes):
    """Run the body with file descriptor 2 in a temporary file, then write back every line but those holding
    ``noise`` (Dawn prints its warnings from C++, below sys.stderr)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = b"".join(line for line in tmp.read().splitlines(keepends=True) if noise not in line)
            if kept:
                os.write(2, kept)


def enumerate_adapters(impl: str = "wgpu") -> list[Any]:
    """Every adapter ``impl`` enumerates, in its order (Dawn's limit warnings dropped). wgpu-native's instance
    starts no OpenGL backend (``wgpu_native_setup``) unless something in the process created it first.
    BackendUnavailable when the package is missing or the driver stack cannot enumerate."""
    module = import_webgpu(impl)
    os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")  # Mesa warns without it
    try:
        if impl == "dawn":
            with _filtered_stderr(DAWN_NOISE):
                return module.gpu.enumerate_adapters_sync()
        return module.gpu.enumerate_adapters_sync()
    except Exception as exc:  # noqa: BLE001 - a broken driver stack is 'unavailable', not a crash
        raise BackendUnavailable(f"{_impl(impl).label} could not enumerate adapters: {exc}") from None


def list_adapters(impl: str = "wgpu") -> list[Any]:
    """Every native (non-OpenGL) adapter of ``impl``, best first. Fresh objects on every call (a Dawn adapter
    opens one device only)."""
    native = [a for a in enumerate_adapters(impl) if a.info.get("backend_type") in NATIVE_APIS]
    return sorted(native, key=lambda a: _TYPE_RANK.get(a.info.get("adapter_type"), 3))


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
    adapters = list_adapters(impl)
    wanted = os.environ.get("WHIRGPU_ADAPTER")
    if wanted:
        matching = [a for a in adapters if wanted.lower() in a.summary.lower()]
        if not matching:
            names = "; ".join(a.summary for a in adapters) or "none"
            raise BackendUnavailable(f"WHIRGPU_ADAPTER={wanted!r} matches no {_impl(impl).label} adapter "
                                     f"(found: {names})")
        return matching[0]
    if not adapters:
        hint = " (Dawn needs Mesa >= 25 for lavapipe)" if impl == "dawn" else ""
        raise BackendUnavailable(f"{_impl(impl).label} found no Vulkan, Metal or D3D12 adapter (install a GPU "
                                 f"driver, or Mesa's lavapipe: apt-get install mesa-vulkan-drivers libvulkan1{hint})")
    return adapters[0]


def _adapter_at(impl: str, index: int):
    """Adapter ``index`` of ``list_adapters(impl)`` (best first), or BackendUnavailable naming how many there are."""
    adapters = list_adapters(impl)
    if not 0 <= index < len(adapters):
        raise BackendUnavailable(f"{_impl(impl).label} has {len(adapters)} adapter(s); there is no adapter {index}")
    return adapters[index]


def _limits(adapter, lim, features, max_groups_per_dim: int, max_binding_bytes: int,
            zero_copy: bool, impl: str) -> DeviceLimits:
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


def _wanted_features(adapter) -> list[str]:
    """The adapter's spellings of the ``WANTED_FEATURES`` it offers."""
    return [name for name in (feature_name(adapter.features, f) for f in WANTED_FEATURES) if name]


def adapter_limits(adapter, impl: str | None = None) -> DeviceLimits:
    """The limits a default runtime on ``adapter`` reports, read without opening a device (the runtime's device
    gets the adapter's limits and the features of ``WANTED_FEATURES`` it offers, plus zero-copy where
    ``zero_copy_support`` allows). ``impl``: the adapter's implementation (None: from the adapter object)."""
    zero_copy, _ = zero_copy_support(adapter)
    features = _wanted_features(adapter) + ([ZERO_COPY_FEATURE] if zero_copy else [])
    lim = adapter.limits
    binding = resolve_binding(lim["max-storage-buffer-binding-size"])  # what a runtime opened now would use
    return binding.apply(_limits(adapter, lim, features, lim["max-compute-workgroups-per-dimension"],
                                 binding.size, zero_copy, impl or impl_of(adapter)))


class _WgpuBatch(Batch):
    """Records dispatches and copies; everything is encoded at ``submit``, after one write of all params slots,
    so a batch may interleave copies and dispatches and batches may be built side by side."""

    def __init__(self, rt: "WgpuRuntime"):
        self.rt = rt
        self.params_words: np.ndarray | None = None  # (capacity, PARAMS_WORDS): the runtime's, lent while recording
        self.n_params = 0
        self.ops: list[tuple] = []

    def _params_row(self, slot: int) -> np.ndarray:
        """Row ``slot`` of the params table: the runtime's host table is lent to one recording batch at a time
        (one allocation per runtime rather than one per dispatch), grown by doubling."""
        if self.params_words is None:
            self.params_words, self.rt._params_host = self.rt._params_host, None
            if self.params_words is None:
                self.params_words = np.zeros((64, PARAMS_WORDS), np.uint32)
        if slot >= len(self.params_words):
            grown = np.zeros((2 * len(self.params_words), PARAMS_WORDS), np.uint32)
            grown[:slot] = self.params_words[:slot]
            self.params_words = grown
        return self.params_words[slot]

    def dispatch(self, kernel, buffers, params, n_groups):
        slot = None
        if params is not None:
            slot = self.n_params
            row, words = self._params_row(slot), np.asarray(params, np.uint32).reshape(-1)
            row[:words.size] = words
            row[words.size:] = 0  # zero-padded: kernels may read the whole struct
            self.n_params += 1
        grid = grid_for(n_groups, self.rt.max_groups_per_dim)
        self.ops.append(("dispatch", kernel, tuple(binding_range(b) for b in buffers), slot, grid))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.ops.append(("copy", src, src_offset, dst, dst_offset, nbytes))

    def submit(self):
        rt = self.rt
        params_buf = None
        if self.n_params:
            params_buf = rt._params_buffer(self.n_params * PARAMS_SLOT_BYTES)
            rt.device.queue.write_buffer(params_buf, 0, self.params_words[:self.n_params])
        encoder = rt.device.create_command_encoder()
        timing = rt.profiler.start(sum(op[0] == "dispatch" for op in self.ops)) if rt.profiler else None
        cpass = None
        held = []  # this submission's bind groups, alive until it is submitted (the cache may evict them sooner)
        for op in self.ops:
            if op[0] == "copy":
                if cpass is not None:
                    cpass.end()
                    cpass = None
                _, src, src_offset, dst, dst_offset, nbytes = op
                encoder.copy_buffer_to_buffer(src.handle, src_offset, dst.handle, dst_offset, nbytes)
                continue
            _, kernel, bindings, slot, (gx, gy) = op
            pipeline, layout, label = kernel.resolve()
            if timing is not None:  # one pass per dispatch, so each kernel gets its own begin/end timestamps
                if cpass is not None:
                    cpass.end()
                cpass = encoder.begin_compute_pass(timestamp_writes=timing.writes(label))
            elif cpass is None:
                cpass = encoder.begin_compute_pass()
            params_at = (params_buf, slot * PARAMS_SLOT_BYTES) if slot is not None else None
            cpass.set_pipeline(pipeline)
            held.append(rt._bind_group(layout, bindings, params_at))
            cpass.set_bind_group(0, held[-1])
            cpass.dispatch_workgroups(gx, gy, 1)
        if cpass is not None:
            cpass.end()
        if timing is not None:
            timing.resolve(encoder)
        rt.device.queue.submit([encoder.finish()])
        self.ops = []
        rt._params_host, self.params_words, self.n_params = self.params_words, None, 0


class _Profiler:
    """GPU timestamps around every dispatch (``timestamp-query``): per-kernel nanoseconds, collected per batch
    and read back by ``WgpuRuntime.kernel_times``."""

    def __init__(self, rt: "WgpuRuntime"):
        self.rt = rt
        self.period = rt._timestamp_period()  # nanoseconds per tick
        self.pending: list[tuple[Any, list[str]]] = []

    def start(self, n_dispatches: int) -> "_BatchTiming":
        return _BatchTiming(self, max(1, n_dispatches))

    def collect(self) -> list[tuple[str, float]]:
        out = []
        for buffer, labels in self.pending:
            ticks = self.rt.read(buffer).view(np.uint64)
            out.extend((label, float(ticks[2 * i + 1] - ticks[2 * i]) * self.period)
                       for i, label in enumerate(labels))
        self.pending = []
        return out


class _BatchTiming:
    def __init__(self, profiler: _Profiler, n: int):
        rt = profiler.rt
        self.profiler = profiler
        self.query_set = rt.device.create_query_set(type="timestamp", count=2 * n)
        usage = rt.wgpu.BufferUsage
        self.buffer = rt.device.create_buffer(size=16 * n, usage=usage.QUERY_RESOLVE | usage.COPY_SRC)
        self.labels: list[str] = []

    def writes(self, label: str) -> dict:
        i = len(self.labels)
        self.labels.append(label)
        return {"query_set": self.query_set, "beginning_of_pass_write_index": 2 * i,
                "end_of_pass_write_index": 2 * i + 1}

    def resolve(self, encoder) -> None:
        if not self.labels:
            return
        encoder.resolve_query_set(self.query_set, 0, 2 * len(self.labels), self.buffer, 0)
        self.profiler.pending.append((RtBuffer(self.buffer, 16 * len(self.labels), StorageMode.PRIVATE),
                                      self.labels))


COLLECT_EVERY = {"wgpu": 8, "dawn": 1}  # runtimes opened between two collections of dropped devices
_opened = {"wgpu": 0, "dawn": 0}


def _collect_dropped_devices(impl: str) -> None:
    """Run Python's cycle collector before every ``COLLECT_EVERY[impl]``-th runtime of ``impl`` opens a device.
    wgpu-py's and wgpudawn's device objects refer to themselves through their queues, so a dropped runtime's
    device, and its buffers, are freed only by that collector, which large device allocations never trigger.
    Dawn on lavapipe crashes (inside lavapipe, at a bind-group creation) once a process holds about 22 Dawn
    devices, so every Dawn runtime collects first; wgpu-native (60 live devices tested) only every 8th."""
    _opened[impl] += 1
    if _opened[impl] % COLLECT_EVERY[impl] == 0:
        gc.collect()


_POOL = None
COMPILE_THREADS = 8  # pipelines compiled at once (the first proof records about 20 before its first submission)


def _compile_pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=min(COMPILE_THREADS, os.cpu_count() or 1),
                                   thread_name_prefix="whirgpu-compile")
    return _POOL


def _first_compile_note(rt) -> str:
    """What a slow first compile says once (``activity.doing``'s announce): what, where, and why it is slow."""
    pending = sum(1 for kernel in rt._kernels.values() if kernel._done is None)
    return (f"compiling WGSL pipelines for {IMPLS[rt.name].label} on {rt.adapter.summary} ({pending} pending; first "
            f"use in this process; the GPU driver's shader cache makes later processes faster; `whirgpu warmup` "
            f"fills it ahead)")


class _Kernel:
    """A pipeline whose compilation has started: ``resolve()`` waits for it and returns (pipeline, bind group
    layout, label), raising ShaderCompileError (with the composed source's file:line) if it failed."""

    def __init__(self, rt: "WgpuRuntime", stem: str, label: str, source, entry: str, overrides: dict[str, int]):
        self._rt = weakref.ref(rt)  # the runtime caches its kernels: no cycle through them
        self.stem = stem
        self.label = label
        self._source = source
        self._done = None
        self._wait = rt._compile(source.text, entry, overrides)

    def resolve(self):
        if self._done is None:
            rt = self._rt()
            try:
                with activity.doing(f"compiling kernel {self.label} ({IMPLS[rt.name].label})",
                                    announce=_first_compile_note(rt), key="wgsl-compile",
                                    after=activity.SLOW_COMPILE_S):
                    pipeline = self._wait()
            except Exception as exc:  # noqa: BLE001 - naga/driver diagnostics arrive as various wgpu errors
                rt._kernels = {k: v for k, v in rt._kernels.items() if v is not self}  # a later call tries again
                message = map_diagnostic(rt._compile_message(str(exc)), self._source)
                raise ShaderCompileError(f"kernel {self.stem} ({rt.mul} multiply, {IMPLS[rt.name].label}): "
                                         f"{message}") from None
            self._done = (pipeline, pipeline.get_bind_group_layout(0), self.label)
        return self._done


class WgpuRuntime(Runtime):
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
        self.wgpu = import_webgpu(self.name)
        self.adapter = choose_adapter(self.name) if adapter_index is None else _adapter_at(self.name, adapter_index)
        self.adapter_index = adapter_index
        features = _wanted_features(self.adapter)
        available, self.zero_copy_reason = zero_copy_support(self.adapter)
        if zero_copy and not available:
            raise BackendUnavailable(f"zero-copy shared buffers need {ZERO_COPY_FEATURE} and unified memory; "
                                     f"{self.adapter.summary}: {self.zero_copy_reason}")
        self.zero_copy_shared = available if zero_copy is None else bool(zero_copy)
        if self.zero_copy_shared:
            features.append(ZERO_COPY_FEATURE)
        elif available:
            self.zero_copy_reason = "turned off by the caller"
        try:
            self.device = self._request_device(features)
        except Exception as exc:  # noqa: BLE001
            raise BackendUnavailable(f"{IMPLS[self.name].label} could not open {self.adapter.summary}: {exc}") \
                from None
        self.features = canonical_features(self.device.features)
        requested = (mul or os.environ.get("WHIRGPU_MUL") or "auto").lower()
        if requested == "auto":
            requested = "u64" if "shader-int64" in self.device.features else "emulated"
        if requested not in MUL_VARIANTS:
            raise BackendUnavailable(f"WHIRGPU_MUL={requested!r}: choose one of auto, {', '.join(MUL_VARIANTS)}")
        if requested == "u64" and "shader-int64" not in self.device.features:
            asked = "" if mul else "WHIRGPU_MUL=u64: "  # say where the request came from when it was the environment
            raise BackendUnavailable(f"{asked}the u64 multiply needs shader-int64, which {self.adapter.summary} lacks "
                                     f"through {IMPLS[self.name].label}")
        self.mul = requested
        device_limits = self.device.limits
        self.max_groups_per_dim = min(max_groups_per_dim or 1 << 30,
                                      device_limits["max-compute-workgroups-per-dimension"])
        self._binding = resolve_binding(device_limits["max-storage-buffer-binding-size"], max_binding_bytes)
        self.max_binding_bytes = self._binding.size
        self._kernels: dict[tuple, Any] = {}
        self._bind_groups: dict[tuple, tuple[Any, tuple]] = {}
        self.offset_alignment = int(device_limits["min-storage-buffer-offset-alignment"])
        self._staging = None
        self.upload = upload or UploadPlan()
        self._uploads: list[Any] = []  # the upload staging ring (MAP_WRITE|COPY_SRC buffers), made at the first use
        self._upload_maps: list[Any] = []  # per slot, the map promise asked for after its last copy (or None)
        self._next_upload = 0
        self._params = None
        self._params_host: np.ndarray | None = None  # the batches' params table, between recordings
        self._adopted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # caller's buffer -> its RtBuffer
        self.profiler: _Profiler | None = None

    # -- what differs between implementations ---------------------------------------------------------------
    def _request_device(self, features: list[str]):
        return self.adapter.request_device_sync(required_features=features)

    def _timestamp_period(self) -> float:
        from wgpu.backends.wgpu_native import lib  # noqa: PLC0415

        return float(lib.wgpuQueueGetTimestampPeriod(self.device.queue._internal))

    def _compile_message(self, message: str) -> str:
        return message  # naga already writes positions as wgsl:LINE:COLUMN

    def wait(self) -> None:
        from wgpu.backends.wgpu_native import ffi, lib  # noqa: PLC0415

        lib.wgpuDevicePoll(self.device._internal, True, ffi.NULL)  # on_submitted_work_done_sync is broken there

    # -- profiling ---------------------------------------------------------------------------------------------
    def set_profiling(self, on: bool) -> None:
        """Time every dispatch with GPU timestamps (one compute pass each); needs ``timestamp-query``."""
        if on and "timestamp-query" not in self.device.features:
            raise BackendUnavailable(f"{self.adapter.summary} has no timestamp-query feature")
        self.profiler = _Profiler(self) if on else None

    def kernel_times(self) -> list[tuple[str, float]]:
        """(kernel label, GPU nanoseconds) for every dispatch submitted since the last call (waits)."""
        return self.profiler.collect() if self.profiler else []

    # -- identity and limits -----------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._binding.apply(_limits(self.adapter, self.device.limits, self.features, self.max_groups_per_dim,
                                           self.max_binding_bytes, self.zero_copy_shared, self.name))

    def adopt(self, handle, nbytes: int) -> RtBuffer:
        """A buffer the caller created on this runtime's ``device``, as the RtBuffer of its first ``nbytes`` bytes:
        bound read-only by the kernels that take it, never written, pooled or freed here. ConfigError naming the
        problem for a buffer of another device (or implementation), without STORAGE usage, or too small."""
        label = IMPLS[self.name].label
        if getattr(handle, "_device", None) is not self.device:
            raise ConfigError(f"the buffer was not created on this prover's device ({self.adapter.summary} through "
                              f"{label}): create it with prover.device")
        usage = self.wgpu.BufferUsage
        if not int(handle.usage) & int(usage.STORAGE):
            names = [name for name in ("MAP_READ", "MAP_WRITE", "COPY_SRC", "COPY_DST", "INDEX", "VERTEX", "UNIFORM",
                                       "STORAGE", "INDIRECT", "QUERY_RESOLVE") if int(handle.usage) & int(usage[name])]
            raise ConfigError(f"the buffer needs STORAGE usage to be read by the prover's kernels (it has "
                              f"{' | '.join(names) or 'none'})")
        if int(handle.size) < nbytes:
            raise ConfigError(f"the buffer holds {int(handle.size)} bytes; the table needs {nbytes}")
        # The same RtBuffer for the same buffer, so proofs of one caller's table reuse their cached bind groups.
        adopted = self._adopted.get(handle)
        if adopted is None or adopted.nbytes != nbytes:
            adopted = self._adopted[handle] = RtBuffer(handle, int(nbytes), StorageMode.PRIVATE)
        return adopted

    # -- memory ------------------------------------------------------------------------------------------------
    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        nbytes = allocation_size(nbytes)
        limit = self.device.limits["max-buffer-size"]
        if nbytes > limit:
            raise DeviceLimitError(f"a buffer of {nbytes} bytes exceeds max-buffer-size {limit} "
                                   f"on {self.adapter.summary}")
        usage = self.wgpu.BufferUsage
        flags = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        if mode is StorageMode.SHARED and self.zero_copy_shared:
            flags |= usage.MAP_READ  # MAP_READ only: MAP_WRITE makes Metal's Shared memory write-combined
        try:
            handle = self.device.create_buffer(size=nbytes, usage=flags)
        except Exception as exc:  # noqa: BLE001
            raise DeviceOutOfMemory(f"could not allocate {nbytes} bytes on {self.adapter.summary}: {exc}") from None
        return RtBuffer(handle, nbytes, mode)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data, dtype=np.uint32)
        check_range("write", buffer, data.nbytes, offset)
        if offset % 4:  # refused here, before a staging slot is touched; wgpu would refuse the copy
            raise ValueError(f"write at byte offset {offset}: wgpu writes need offsets that are multiples of 4")
        if data.nbytes == 0:
            return  # wgpu rejects empty writes
        if data.nbytes < self.upload.threshold:
            self.device.queue.write_buffer(buffer.handle, offset, data)
            return
        raw = data.view(np.uint8).reshape(-1)
        chunk = self.upload.chunk_for(raw.nbytes)
        chunks = chunk_ranges(raw.nbytes, chunk)
        self._ask_maps(chunk, len(chunks))
        try:
            for i, (start, size) in enumerate(chunks):
                slot = self._upload_slot(chunk)
                staging = self._uploads[slot]
                # The mapped range is valid until unmap; nothing touches this view after the copy.
                copy_into(np.frombuffer(staging._experimental_get_mapped_range(0, size), np.uint8),
                          raw[start:start + size], self.upload.threads)
                staging.unmap()
                encoder = self.device.create_command_encoder()
                encoder.copy_buffer_to_buffer(staging, 0, buffer.handle, offset + start, size)
                # Submitted at once, not waited for: the device copies this chunk while the host fills the next.
                # Queue order keeps it after earlier submissions and write_buffer calls and before later ones.
                self.device.queue.submit([encoder.finish()])
                if i + len(self._uploads) < len(chunks):
                    # This write comes back to the slot: its map is asked for now, so it resolves once this copy
                    # is done (a map_sync at its next use would wait for every chunk queued by then).
                    self._upload_maps[slot] = staging.map_async(self.wgpu.MapMode.WRITE)
        finally:
            # No map is left pending past the call: a runtime dropped with one (the poll thread still waiting on
            # its device) crashed wgpu-native later in the process. The slots this write used stay unmapped, their
            # copies in flight; the next write asks for their maps together and waits for each at its use.
            self._settle_maps()

    def _ask_maps(self, chunk: int, count: int) -> None:
        """Ask, together, for the maps of the next ``count`` slots (at most all) that are unmapped, the ones a
        write of ``count`` chunks takes first: one device poll then answers them all, and none is left over."""
        if not self._uploads or self._uploads[0].size < chunk:
            return  # _upload_slot makes the ring anew, mapped
        for k in range(min(count, len(self._uploads))):
            slot = (self._next_upload + k) % len(self._uploads)
            staging = self._uploads[slot]
            if staging.map_state == "unmapped" and self._upload_maps[slot] is None:
                self._upload_maps[slot] = staging.map_async(self.wgpu.MapMode.WRITE)

    def _settle_maps(self) -> None:
        for slot, pending in enumerate(self._upload_maps):
            if pending is not None:
                self._upload_maps[slot] = None
                pending.sync_wait()

    def write_staged(self, buffer: RtBuffer) -> bool:
        return True  # queue.write_buffer and the upload slots both copy through a staging buffer

    def _upload_slot(self, chunk: int) -> int:
        """The index of the next upload staging buffer of at least ``chunk`` bytes, mapped for writing (waits for
        the copy that last read it). The ring is made whole, mapped, at the first call, and anew for a larger
        ``chunk``, so that writes no larger than an earlier one allocate nothing."""
        plan = self.upload
        if not self._uploads or self._uploads[0].size < chunk:
            self._settle_maps()  # before their buffers go
            for old in self._uploads:
                old.destroy()
            usage = self.wgpu.BufferUsage
            self._uploads = [self.device.create_buffer(
                size=chunk, usage=usage.MAP_WRITE | usage.COPY_SRC, mapped_at_creation=True)
                for _ in range(plan.slots)]
            self._upload_maps = [None] * plan.slots
            self._next_upload = 0
        slot = self._next_upload
        staging = self._uploads[slot]
        self._next_upload = (slot + 1) % plan.slots
        pending, self._upload_maps[slot] = self._upload_maps[slot], None
        if pending is not None:
            pending.sync_wait()  # waits for the copy that last read the slot
        if staging.map_state != "mapped":  # a write that failed between its map and its unmap
            staging.map_sync(self.wgpu.MapMode.WRITE)
        return slot

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

    def _bind_group(self, layout, bindings: tuple[tuple[RtBuffer, int, int], ...], params_at):
        """A cached bind group. The value holds the RtBuffer objects themselves, so an id in a key can never be
        reused by another buffer while its group is cached (backends pool their buffers, so groups recur)."""
        key = (id(layout), tuple((id(b), off, n) for b, off, n in bindings),
               None if params_at is None else (id(params_at[0]), params_at[1]))
        hit = self._bind_groups.pop(key, None)
        if hit is None:
            check_binding_sizes(bindings, self.max_binding_bytes, self.adapter.summary)
            entries = [{"binding": i, "resource": {"buffer": b.handle, "offset": off, "size": n}}
                       for i, (b, off, n) in enumerate(bindings)]
            if params_at is not None:
                entries.append({"binding": len(bindings), "resource": {
                    "buffer": params_at[0], "offset": params_at[1], "size": PARAMS_SLOT_BYTES}})
            hit = (self.device.create_bind_group(layout=layout, entries=entries), (layout, bindings, params_at))
            if len(self._bind_groups) >= BIND_GROUP_CACHE:
                self._bind_groups.pop(next(iter(self._bind_groups)))
        self._bind_groups[key] = hit  # re-inserted last: the dict's order is least recently used first
        return hit[0]

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        nbytes = buffer.nbytes - offset if nbytes is None else nbytes
        if nbytes == 0:
            return np.zeros(0, np.uint32)
        check_range("read", buffer, nbytes, offset)
        if buffer.mode is StorageMode.SHARED and self.zero_copy_shared:
            return self._read_mapped(buffer, nbytes, offset)
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

    def _read_mapped(self, buffer: RtBuffer, nbytes: int, offset: int) -> np.ndarray:
        """Map the buffer itself (waits for the work that uses it), copy the words out, unmap."""
        start = offset - offset % MAP_ALIGNMENT
        size = -(-(offset + nbytes - start) // 4) * 4
        buffer.handle.map_sync(self.wgpu.MapMode.READ, start, size)
        try:
            view = buffer.handle.read_mapped(start, size, copy=False)
            out = np.frombuffer(view, dtype=np.uint8)[offset - start:offset - start + nbytes].copy()
        finally:
            buffer.handle.unmap()
        return out.view(np.uint32)

    # -- kernels ---------------------------------------------------------------------------------------------
    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear"):
        """The compiled kernel (compiled now if not yet: compile errors raise here)."""
        compiled = self.kernel_async(stem, entry, constants, field)
        compiled.resolve()
        return compiled

    def kernel_async(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
                     field: str = "babybear"):
        """The kernel, its compilation started and not waited for (``_Kernel``): batches take it as it is and
        wait for it only when they are submitted, so the pipelines a proof records compile side by side while
        the host goes on encoding. Compile errors raise at ``resolve`` (at the latest, at submission)."""
        key = (stem, entry, tuple(sorted((constants or {}).items())), field)
        cached = self._kernels.get(key)
        if cached is not None:
            return cached
        source = compose("wgsl", stem, (("bb_mul", self.mul),), field)
        kernel_spec = spec(stem)
        kernel_spec.constant_values(constants)  # rejects names the stem does not have
        overrides = {str(kernel_spec.constants[name][0]): int(v) for name, v in (constants or {}).items()}
        label = stem if entry is None or entry == stem else f"{stem}.{entry}"
        compiled = _Kernel(self, stem, label, source, entry or stem, overrides)
        self._kernels[key] = compiled
        return compiled

    def _compile(self, source_text: str, entry: str, overrides: dict[str, int]):
        """Start compiling one pipeline; returns a function that waits for it and gives the pipeline. wgpu-native
        compiles synchronously, in the calling thread, releasing the GIL: each compilation runs on a worker
        thread of its own (wgpu-native's device is thread-safe)."""
        def build():
            module = self.device.create_shader_module(code=source_text)
            return self.device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": entry, "constants": overrides})

        return _compile_pool().submit(build).result

    def batch(self) -> Batch:
        return _WgpuBatch(self)


    # -- lifetime --------------------------------------------------------------------------------------------
    def free(self, buffer: RtBuffer) -> None:
        buffer.handle.destroy()  # the device memory goes now, not when the collector finds the Python object

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
            self._settle_maps()
            for cached in (self._staging, self._params, *self._uploads):
                if cached is not None:
                    cached.destroy()
            self._uploads, self._upload_maps = [], []
            self._kernels, self._bind_groups = {}, {}
            self._staging = self._params = self.profiler = None
            self.device = None
            device.destroy()
            release = getattr(device, "_release", None)  # breaks the device <-> queue cycle where wgpu-py has it
            if release is not None:
                release()


class DawnRuntime(WgpuRuntime):
    """``WgpuRuntime`` on Dawn (``wgpudawn``): Tint compiles the same WGSL that browsers run. Dawn offers no
    shader-int64, so the multiply is always the emulated one; its resolved timestamps are nanoseconds."""

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

    def _timestamp_period(self) -> float:
        return 1.0  # Dawn converts ticks to nanoseconds when it resolves a query set (the WebGPU contract)

    def _compile_message(self, message: str) -> str:
        # Tint names an unlabelled source "": ":LINE:COL error: ..." -> "wgsl:LINE:COL error: ..."
        return re.sub(r"(^|\s):(\d+):(\d+)\b", r"\1wgsl:\2:\3", message)

    def wait(self) -> None:
        self.device.queue.on_submitted_work_done_sync()
