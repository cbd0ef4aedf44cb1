"""The WebGPU runtime's pipelines and launches: kernels composed and compiled side by side (``_Kernel``), batches
that record dispatches and copies and encode them at submission, bind groups cached, GPU timestamps per dispatch."""

from __future__ import annotations

import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from ... import activity
from ...errors import BackendUnavailable, ShaderCompileError
from ...kernels.compose import ComposedSource, compose, map_diagnostic
from ...kernels.instancing import STRIDE_BINDING, STRIDE_VEC4S, instanced_wgsl
from ...kernels.registry import spec
from ...devices.limits import StorageMode
from ..base import PARAMS_WORDS, Batch, RtBuffer, binding_range, check_binding_sizes, grid_for
from .adapters import IMPLS
from .encode import PARAMS_SLOT_BYTES, CopyStep, DispatchStep, PendingDispatch, RecordedBatch, encode

BIND_GROUP_CACHE = 4096  # bind groups kept (least recently used dropped first); a proof uses about 500


PARAMS_MIN = 1 << 14  # the launch-parameter uniform buffer's smallest size


def params_buffer_bytes(nbytes: int) -> int:
    """Bytes of the launch-parameter buffer a batch of ``nbytes`` of params slots (``PARAMS_SLOT_BYTES`` per
    dispatch that has params) needs; the runtime keeps one, made anew only for a larger batch."""
    return max(int(nbytes), PARAMS_MIN)


class _WgpuBatch(Batch):
    """Records dispatches and copies; everything is encoded at ``submit``, after one write of all params slots,
    so a batch may interleave copies and dispatches and batches may be built side by side."""

    def __init__(self, rt):  # rt: the WgpuRuntime
        self.rt = rt
        self.params_words: np.ndarray | None = None  # (capacity, PARAMS_WORDS): the runtime's, lent while recording
        self.n_params = 0
        self.ops: list = []  # _Pending dispatches and encode.CopyStep copies

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
        self.ops.append(PendingDispatch(kernel, tuple(binding_range(b) for b in buffers), slot, grid))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.ops.append(CopyStep(src.handle, src_offset, dst.handle, dst_offset, nbytes))

    def submit(self):
        rt = self.rt
        params_buf = None
        if self.n_params:
            params_buf = rt._params_buffer(self.n_params * PARAMS_SLOT_BYTES)
            rt.device.queue.write_buffer(params_buf, 0, self.params_words[:self.n_params])
        steps = []  # holds this submission's bind groups until it is submitted (the cache may evict them sooner)
        for op in self.ops:
            if isinstance(op, CopyStep):
                steps.append(op)
                continue
            pipeline, layout, label = op.kernel.resolve()
            params_at = (params_buf, op.params_slot * PARAMS_SLOT_BYTES) if op.params_slot is not None else None
            gx, gy = op.grid
            steps.append(DispatchStep(pipeline, rt._bind_group(layout, op.bindings, params_at), gx, gy, label))
        encode(rt, steps)
        self.ops = []
        rt._params_host, self.params_words, self.n_params = self.params_words, None, 0


class KernelProfiler:
    """GPU timestamps around every dispatch (``timestamp-query``): per-kernel nanoseconds, collected per batch
    and read back by ``WgpuRuntime.kernel_times``."""

    def __init__(self, rt):  # rt: the WgpuRuntime
        self.rt = rt
        self.period = rt.timestamp_period()  # nanoseconds per tick
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
    def __init__(self, profiler: KernelProfiler, n: int):
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

    def __init__(self, rt, stem: str, label: str, source, entry: str, overrides: dict[str, int]):
        self._rt = weakref.ref(rt)  # the runtime caches its kernels: no cycle through them
        self.stem = stem
        self.label = label
        self._source = source
        self._done = None
        self._wait = rt._compile(source.text, entry, overrides)

    def source_text(self) -> str:
        """The composed WGSL it compiles (``instancing.layout_of`` reads its bindings)."""
        return self._source.text

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
                message = map_diagnostic(rt.compile_message(str(exc)), self._source)
                raise ShaderCompileError(f"kernel {self.stem} ({rt.mul} multiply, {IMPLS[rt.name].label}): "
                                         f"{message}") from None
            self._done = (pipeline, pipeline.get_bind_group_layout(0), self.label)
        return self._done


class Pipelines:
    """``WgpuRuntime``'s kernels and launches: ``kernel`` / ``kernel_async``, ``batch``, profiling."""

    def init_pipelines(self) -> None:
        """This mixin's state: compiled kernels, cached bind groups, the params buffers, the profiler."""
        self._kernels: dict[tuple, Any] = {}
        self._compiling: list = []  # wgpu-native's compilations on the pool, not yet known to be done
        self._bind_groups: dict[tuple, tuple[Any, tuple]] = {}
        self._params = None
        self._strides = None  # zeros: the strides of every one-instance launch (``_zero_strides``)
        self._params_host: np.ndarray | None = None  # the batches' params table, between recordings
        self.profiler: KernelProfiler | None = None
        self.native_calls = self.native_pass()  # a pass's dispatches as direct C calls (encode.py)

    def close_pipelines(self) -> None:
        """Settle the compilations still going (``settle_compiles``), drop the kernels and bind groups and destroy
        the params buffer."""
        self.settle_compiles()
        for buffer in (self._params, self._strides):
            if buffer is not None:
                buffer.destroy()
        self._kernels, self._bind_groups, self._params, self.profiler = {}, {}, None, None
        self._strides = None
        self.native_calls = None

    # -- profiling ---------------------------------------------------------------------------------------------
    def set_profiling(self, on: bool) -> None:
        """Time every dispatch with GPU timestamps (one compute pass each); needs ``timestamp-query``."""
        if on and "timestamp-query" not in self.device.features:
            raise BackendUnavailable(f"{self.adapter.summary} has no timestamp-query feature")
        self.profiler = KernelProfiler(self) if on else None

    def kernel_times(self) -> list[tuple[str, float]]:
        """(kernel label, GPU nanoseconds) for every dispatch submitted since the last call (waits)."""
        return self.profiler.collect() if self.profiler else []

    # -- launches ----------------------------------------------------------------------------------------------
    def _params_buffer(self, nbytes: int):
        if self._params is None or self._params.size < nbytes:
            usage = self.wgpu.BufferUsage
            self._params = self.device.create_buffer(size=params_buffer_bytes(nbytes),
                                                     usage=usage.UNIFORM | usage.COPY_DST)
        return self._params

    def _zero_strides(self):
        """The uniform every one-instance launch binds as its strides (zeros), made once."""
        if self._strides is None:
            usage = self.wgpu.BufferUsage
            self._strides = self.device.create_buffer(size=16 * STRIDE_VEC4S, usage=usage.UNIFORM | usage.COPY_DST)
            self.device.queue.write_buffer(self._strides, 0, np.zeros(4 * STRIDE_VEC4S, np.uint32))
        return self._strides

    def _bind_group(self, layout, bindings: tuple[tuple[RtBuffer, int, int], ...], params_at):
        """A cached bind group. The value holds the RtBuffer objects themselves, so an id in a key can never be
        reused by another buffer while its group is cached (backends pool their buffers, so groups recur)."""
        key = (id(layout), tuple((id(b), off, n) for b, off, n in bindings),
               None if params_at is None else (id(params_at[0]), params_at[1]))
        hit = self._bind_groups.pop(key, None)
        if hit is None:
            hit = (self.new_bind_group(layout, bindings, params_at), (layout, bindings, params_at))
            if len(self._bind_groups) >= BIND_GROUP_CACHE:
                self._bind_groups.pop(next(iter(self._bind_groups)))
        self._bind_groups[key] = hit  # re-inserted last: the dict's order is least recently used first
        return hit[0]

    def new_bind_group(self, layout, bindings: tuple[tuple[RtBuffer, int, int], ...], params_at, strides_at=None):
        """A new bind group: ``bindings`` at slots 0.., the params slot ``params_at`` (buffer, offset) after them,
        the instances' strides ``strides_at`` (buffer, offset; None: zeros, one instance) at
        ``instancing.STRIDE_BINDING``."""
        check_binding_sizes(bindings, self.max_binding_bytes, self.adapter.summary)
        entries = [{"binding": i, "resource": {"buffer": b.handle, "offset": off, "size": n}}
                   for i, (b, off, n) in enumerate(bindings)]
        if params_at is not None:
            entries.append({"binding": len(bindings), "resource": {
                "buffer": params_at[0], "offset": params_at[1], "size": PARAMS_SLOT_BYTES}})
        if strides_at is None:
            strides_at = (self._zero_strides(), 0)
        entries.append({"binding": STRIDE_BINDING, "resource": {
            "buffer": strides_at[0], "offset": strides_at[1], "size": 16 * STRIDE_VEC4S}})
        return self.device.create_bind_group(layout=layout, entries=entries)

    instances = True

    def instanced_kernel(self, kernel):
        """``kernel`` itself: every WebGPU kernel is compiled instanced (``kernel_async``)."""
        return kernel

    def recorded_batch(self, launches: list) -> RecordedBatch:
        """``launches`` (a program's ``Dispatch`` / ``Copy`` steps, ``Runtime.recorded_batch``) as a batch that
        can be submitted again and again, its params and bind groups its own."""
        return RecordedBatch(self, launches)

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
        the host goes on encoding. Compile errors raise at ``resolve`` (at the latest, at submission). Every
        kernel is compiled instanced (``kernels.instancing``): a launch without strides (``new_bind_group``
        binds zeros) is one instance, as written; one with strides runs several (``prove_many``'s batches)."""
        key = (stem, entry, tuple(sorted((constants or {}).items())), field)
        cached = self._kernels.get(key)
        if cached is not None:
            return cached
        source = compose("wgsl", stem, (("bb_mul", self.mul),), field)
        text = instanced_wgsl(source.text)
        extra = text.count("\n") - source.text.count("\n")
        source = ComposedSource(text, source.line_map + tuple(("<instancing>", i + 1) for i in range(extra)))
        kernel_spec = spec(stem)
        kernel_spec.constant_values(constants)  # rejects names the stem does not have
        overrides = {str(kernel_spec.constants[name][0]): int(v) for name, v in (constants or {}).items()}
        label = stem if entry is None or entry == stem else f"{stem}.{entry}"
        compiled = _Kernel(self, stem, label, source, entry or stem, overrides)
        self._kernels[key] = compiled
        return compiled

    def prefetch(self, kernels) -> int:
        """``Runtime.prefetch``: each kernel's compilation started (``kernel_async``) and not waited for; a
        kernel already asked for is not compiled again. A kernel that fails to compile raises at its first use."""
        started = 0
        for stem, entry, constants, field in kernels:
            started += (stem, entry, tuple(constants), field) not in self._kernels
            self.kernel_async(stem, entry, dict(constants), field)
        return started

    def _compile(self, source_text: str, entry: str, overrides: dict[str, int]):
        """Start compiling one pipeline; returns a function that waits for it and gives the pipeline. wgpu-native
        compiles synchronously, in the calling thread, releasing the GIL: each compilation runs on a worker
        thread of its own (wgpu-native's device is thread-safe)."""
        def build():
            module = self.device.create_shader_module(code=source_text)
            return self.device.create_compute_pipeline(
                layout="auto", compute={"module": module, "entry_point": entry, "constants": overrides})

        future = _compile_pool().submit(build)
        self._compiling = [f for f in self._compiling if not f.done()] + [future]
        return future.result

    def settle_compiles(self) -> None:
        """Before the device goes: compilations not yet started are cancelled, running ones waited for (their
        errors dropped), so that no worker thread compiles on a destroyed device (``prefetch`` starts kernels a
        proof may never use)."""
        compiling, self._compiling = self._compiling, []
        for future in compiling:
            if not future.cancel():
                try:
                    future.result()
                except Exception:  # noqa: BLE001 - the kernel is dropped with the device; nobody asks for it now
                    pass

    def batch(self) -> Batch:
        return _WgpuBatch(self)
