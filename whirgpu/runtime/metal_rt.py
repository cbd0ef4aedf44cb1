"""The MSL kernels on Apple's Metal, driven through ``_objc`` (cffi, no PyObjC). macOS only.

Not yet run on Apple hardware by this project: the calling pattern follows ``docs/ARCHITECTURE.md`` (Metal
runtime) and is exercised on Linux against a fake Objective-C runtime (``tests/backend/test_metal_runtime.py``).

- Kernels: each stem's composed MSL (the text msl-cpu also compiles) becomes one ``MTLLibrary`` per
  (stem, multiply); a pipeline per (stem, entry, constants) is specialised with every function constant of the
  stem (registry defaults overlaid by the caller's) and launched with the registry's threads per threadgroup.
- Memory: ``StorageMode.SHARED`` is ``MTLResourceStorageModeShared`` (host-visible, read and written in place);
  ``PRIVATE`` is ``MTLResourceStorageModePrivate``, reached by blits through Shared staging buffers: reads
  through one reused buffer, writes through the ``upload.UploadPlan`` ring of chunk-sized ones (a chunk's blit
  is committed without waiting, so the GPU copies it while the host fills the next). Hazard tracking stays on,
  so Metal orders encoders and command buffers that touch the same buffer.
- Submission: one command buffer per batch (one per protocol step), consecutive dispatches in one serial
  compute encoder, copies in blit encoders; host reads and SHARED writes first wait for everything submitted,
  PRIVATE writes are blits queued behind it.

Environment: ``WHIRGPU_MSL_MUL=mulhi|u64|emulated`` (default mulhi).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ..devices.limits import DeviceLimits, StorageMode
from ..errors import BackendUnavailable, DeviceLimitError, DeviceOutOfMemory, KernelFault, ShaderCompileError
from ..kernels.compose import compose, map_diagnostic
from ..kernels.registry import spec
from ..devices.overrides import resolve_binding
from . import _objc
from ._objc import autorelease_pool, error_message, is_nil, nsstring, release, send
from .base import (PARAMS_WORDS, Batch, RtBuffer, Runtime, allocation_size, binding_range, check_binding_sizes,
                   check_range, grid_for, params_words)
from .program import Copy, Dispatch
from .upload import UploadPlan, chunk_ranges, copy_into

MUL_VARIANTS = ("mulhi", "u64", "emulated")
PARAMS_BYTES = 4 * PARAMS_WORDS  # the shared params layout; passed with setBytes (copied at encode time)
STAGING_BYTES = 64 << 20  # largest single readback blit through the staging buffer; bigger reads go in chunks
STAGING_MIN = 1 << 20  # the readback staging buffer's smallest size
STORAGE_OPTIONS = {StorageMode.SHARED: 0, StorageMode.PRIVATE: 32}  # MTLResourceStorageMode{Shared,Private}
MTL_DATA_TYPE_UINT = 33
STATUS_COMPLETED, STATUS_ERROR = 4, 5
# MTLGPUFamily values, highest first within each line of families
GPU_FAMILIES = {
    "apple": tuple((f"apple{n}", 1000 + n) for n in range(10, 0, -1)),
    "mac": (("mac2", 2002),),
    "metal": (("metal4", 5002), ("metal3", 5001)),
}



def read_staging_bytes(nbytes: int) -> int:
    """Bytes of the Shared staging buffer a read of ``nbytes`` from a Private buffer needs (in blits of at most
    ``STAGING_BYTES``; the runtime keeps one, made anew only for a larger read)."""
    return max(min(int(nbytes), STAGING_BYTES), STAGING_MIN)


def upload_chunk(plan: UploadPlan, nbytes: int, mode: StorageMode) -> int:
    """The upload ring's chunk a write of ``nbytes`` (> 0) to a buffer in ``mode`` goes through; 0: a Shared
    buffer is written in place. The ring holds ``plan.slots`` chunks of the largest chunk so far."""
    return plan.chunk_for(nbytes) if mode is StorageMode.PRIVATE else 0

@dataclass(frozen=True)
class _Kernel:
    pipeline: Any
    threads: int
    label: str




class _MetalBatch(Batch):
    """Records launches; ``submit`` encodes them into one command buffer and commits it (no wait)."""

    def __init__(self, rt: "MetalRuntime"):
        self.rt = rt
        self.ops: list = []  # runtime.program Dispatch (bindings as ranges, params padded) and Copy steps

    def dispatch(self, kernel, buffers, params, n_groups):
        bindings = tuple(binding_range(b) for b in buffers)
        check_binding_sizes(bindings, self.rt.max_binding_bytes, self.rt.device_name)
        self.ops.append(Dispatch(kernel, bindings, params_words(params), int(n_groups)))

    def copy(self, src, src_offset, dst, dst_offset, nbytes):
        self.ops.append(Copy(src, src_offset, dst, dst_offset, nbytes))

    def submit(self):
        ops, self.ops = self.ops, []
        if not ops:
            return
        # Metal times command buffers, not kernels: while the runtime profiles, each launch gets its own
        for group in ([op] for op in ops) if self.rt.profiling else (ops,):
            self._commit(group)

    def _commit(self, ops: list) -> None:
        """Encode ``ops`` into one command buffer and commit it (labelled with its kernels' labels)."""
        rt = self.rt
        labels = list(dict.fromkeys(op.kernel.label if isinstance(op, Dispatch) else "copy" for op in ops))
        with autorelease_pool():
            cb = send(rt.queue, "commandBuffer")
            encoder, kind = None, None
            for op in ops:
                wanted = "compute" if isinstance(op, Dispatch) else "blit"
                if kind != wanted:
                    if encoder is not None:
                        send(encoder, "endEncoding")
                    encoder = send(cb, "computeCommandEncoder" if wanted == "compute" else "blitCommandEncoder")
                    kind = wanted
                if isinstance(op, Copy):
                    send(encoder, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:",
                         op.src.handle, op.src_offset, op.dst.handle, op.dst_offset, op.nbytes)
                    continue
                kernel, (gx, gy) = op.kernel, grid_for(op.groups, rt.max_groups_per_dim)
                send(encoder, "setComputePipelineState:", kernel.pipeline)
                for slot, (buffer, offset, _) in enumerate(op.bindings):
                    send(encoder, "setBuffer:offset:atIndex:", buffer.handle, offset, slot)
                send(encoder, "setBytes:length:atIndex:", rt.ffi.from_buffer(op.params), PARAMS_BYTES,
                     len(op.bindings))
                send(encoder, "dispatchThreadgroups:threadsPerThreadgroup:", rt.size(gx, gy, 1),
                     rt.size(kernel.threads, 1, 1))
            send(encoder, "endEncoding")
            send(cb, "commit")
            rt.inflight.append((_objc.retain(cb), "+".join(labels)))  # outlives the pool until wait()


class MetalRuntime(Runtime):
    """The system default Metal device. ``mul`` overrides WHIRGPU_MSL_MUL; ``max_groups_per_dim`` and
    ``max_binding_bytes`` lower the device limits (as in the other runtimes, for tests; ``max_binding_bytes``
    None: ``--max-binding`` or ``WHIRGPU_MAX_BINDING_BYTES``). ``upload``: how PRIVATE writes are staged
    (``upload.UploadPlan``; its threshold does not apply: every PRIVATE write is staged)."""

    name = "metal"
    lang = "msl"

    def __init__(self, mul: str | None = None, max_groups_per_dim: int | None = None,
                 max_binding_bytes: int | None = None, upload: UploadPlan | None = None):
        bridge = _objc.bridge()  # BackendUnavailable off macOS
        self.ffi = bridge.ffi
        self.mul = (mul or os.environ.get("WHIRGPU_MSL_MUL") or "mulhi").lower()
        if self.mul not in MUL_VARIANTS:
            raise BackendUnavailable(f"WHIRGPU_MSL_MUL={self.mul!r}: choose one of {', '.join(MUL_VARIANTS)}")
        self.device = bridge.metal.MTLCreateSystemDefaultDevice()  # +1
        if is_nil(self.device):
            raise BackendUnavailable("MTLCreateSystemDefaultDevice returned nil: this Mac has no Metal device")
        self.queue = send(self.device, "newCommandQueue")  # +1
        self._release = _objc.releaser()
        self.inflight: list[tuple[Any, str]] = []  # committed command buffers (retained) and their labels
        self.profiling = False  # set_profiling: one command buffer per launch
        self._times: list[tuple[str, float]] = []
        self._libraries: dict[tuple[str, str], Any] = {}
        self._kernels: dict[tuple, _Kernel] = {}
        self._staging: RtBuffer | None = None
        self.upload = upload or UploadPlan()
        self._uploads: list[RtBuffer] = []  # the upload ring's Shared staging buffers, made at the first use
        self._upload_blits: list[Any] = []  # per slot, the retained command buffer of its last blit, or None
        self._next_upload = 0
        with autorelease_pool():
            self.device_name = _objc.to_str(send(self.device, "name"))
            self.max_buffer = int(send(self.device, "maxBufferLength"))
            threads = send(self.device, "maxThreadsPerThreadgroup")
            unified = bool(send(self.device, "hasUnifiedMemory"))
            self.families = tuple(next((name for name, value in line if send(self.device, "supportsFamily:", value)),
                                       None) for line in GPU_FAMILIES.values())
            self._limits = DeviceLimits(
                name=self.device_name, api="Metal (MSL)",
                device_type="IntegratedGPU" if unified else "DiscreteGPU",
                max_buffer_size=self.max_buffer,
                max_storage_binding_size=self.max_buffer,  # Metal binds up to a whole buffer; lowered below
                max_workgroup_storage=int(send(self.device, "maxThreadgroupMemoryLength")),
                max_invocations_per_workgroup=int(threads.width),
                max_workgroups_per_dimension=min(max_groups_per_dim or (1 << 32) - 1, (1 << 32) - 1),
                subgroup_size=32, has_u64=True, has_native_mulhi=True,
                unified_memory=unified,
                recommended_working_set=int(send(self.device, "recommendedMaxWorkingSetSize")),
                has_timestamps=True,
                features=tuple(f for f in self.families if f) + (f"mul-{self.mul}",))
        self._limits = resolve_binding(self.max_buffer, max_binding_bytes).apply(self._limits)
        self.max_binding_bytes = self._limits.max_storage_binding_size
        self.max_groups_per_dim = self._limits.max_workgroups_per_dimension

    def size(self, width: int, height: int, depth: int):
        """An MTLSize passed by value."""
        return self.ffi.new("MTLSize *", (width, height, depth))[0]

    def limits(self) -> DeviceLimits:
        return self._limits

    # -- memory ------------------------------------------------------------------------------------------------
    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        """A new buffer, released by ``free`` or when the RtBuffer's handle is garbage collected."""
        nbytes = allocation_size(nbytes)
        if nbytes > self.max_buffer:
            raise DeviceLimitError(f"a buffer of {nbytes} bytes exceeds maxBufferLength {self.max_buffer} "
                                   f"on {self.device_name}")
        handle = send(self.device, "newBufferWithLength:options:", nbytes, STORAGE_OPTIONS[mode])  # +1
        if is_nil(handle):
            raise DeviceOutOfMemory(f"could not allocate {nbytes} bytes ({mode.value}) on {self.device_name}")
        return RtBuffer(self.ffi.gc(handle, self._release, size=nbytes), nbytes, mode)

    def free(self, buffer: RtBuffer) -> None:
        """Release ``buffer`` now (command buffers already committed keep their own reference)."""
        if buffer.handle is not None:
            self.ffi.gc(buffer.handle, None)  # detach the collector's release: this is the one
            release(buffer.handle)
            buffer.handle = None

    def _contents(self, buffer: RtBuffer):
        pointer = send(buffer.handle, "contents")
        if is_nil(pointer):
            raise ValueError(f"a {buffer.mode.value} buffer has no host-visible contents")
        return self.ffi.cast("char *", pointer)

    def _staging_buffer(self, nbytes: int) -> RtBuffer:
        if self._staging is None or self._staging.nbytes < nbytes:
            if self._staging is not None:
                self.free(self._staging)
            self._staging = self.alloc(read_staging_bytes(nbytes), StorageMode.SHARED)
        return self._staging

    def _blit(self, src: RtBuffer, src_offset: int, dst: RtBuffer, dst_offset: int, nbytes: int):
        """Commit one blit in a command buffer of its own and return that (autoreleased) command buffer; call it
        inside an autorelease pool."""
        cb = send(self.queue, "commandBuffer")
        blit = send(cb, "blitCommandEncoder")
        send(blit, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:",
             src.handle, src_offset, dst.handle, dst_offset, nbytes)
        send(blit, "endEncoding")
        send(cb, "commit")
        return cb

    def _blit_now(self, src: RtBuffer, src_offset: int, dst: RtBuffer, dst_offset: int, nbytes: int,
                  label: str) -> None:
        with autorelease_pool():
            self._finish(self._blit(src, src_offset, dst, dst_offset, nbytes), label)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data, dtype=np.uint32)
        check_range("write", buffer, data.nbytes, offset)
        if data.nbytes == 0:
            return
        raw = data.view(np.uint8).reshape(-1)
        if buffer.mode is StorageMode.SHARED:
            self.wait()  # submitted work may still read or write this buffer
            self.ffi.memmove(self._contents(buffer) + offset, self.ffi.from_buffer(raw), data.nbytes)
            return
        # No wait: each chunk's blit is committed behind everything committed so far, which hazard tracking
        # orders it after; only a staging slot's own previous blit must be done before the slot is refilled.
        chunk = upload_chunk(self.upload, raw.nbytes, buffer.mode)
        for start, size in chunk_ranges(raw.nbytes, chunk):
            slot = self._upload_slot(chunk)
            staging = self._uploads[slot]
            copy_into(np.frombuffer(self.ffi.buffer(self._contents(staging), size), np.uint8),
                      raw[start:start + size], self.upload.threads)
            with autorelease_pool():
                cb = self._blit(staging, 0, buffer, offset + start, size)
                self.inflight.append((_objc.retain(cb), "write"))  # wait() checks its status and releases it
                self._upload_blits[slot] = _objc.retain(cb)  # the slot's own reference, until it is refilled

    def _upload_slot(self, chunk: int) -> int:
        """The index of the next upload staging buffer of at least ``chunk`` bytes, free to fill (waits for the blit
        that last read it). The ring is made whole at the first call, and anew for a larger ``chunk``, so that
        writes no larger than an earlier one allocate nothing."""
        if not self._uploads or self._uploads[0].nbytes < chunk:
            for slot, staging in enumerate(self._uploads):
                self._drop_upload_blit(slot)
                self.free(staging)
            self._uploads = [self.alloc(chunk, StorageMode.SHARED) for _ in range(self.upload.slots)]
            self._upload_blits = [None] * self.upload.slots
            self._next_upload = 0
        slot = self._next_upload
        self._next_upload = (slot + 1) % self.upload.slots
        self._drop_upload_blit(slot)
        return slot

    def _drop_upload_blit(self, slot: int) -> None:
        """Wait for the slot's last blit and release the slot's reference to it."""
        cb, self._upload_blits[slot] = self._upload_blits[slot], None
        if cb is not None:
            send(cb, "waitUntilCompleted")  # a failure is raised by wait(), which holds the same command buffer
            release(cb)

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        nbytes = buffer.nbytes - offset if nbytes is None else nbytes
        check_range("read", buffer, nbytes, offset)
        out = np.empty(nbytes // 4, np.uint32)
        if nbytes == 0:
            return out
        self.wait()
        raw = out.view(np.uint8)
        if buffer.mode is StorageMode.SHARED:
            self.ffi.memmove(self.ffi.from_buffer(raw), self._contents(buffer) + offset, nbytes)
            return out
        for start in range(0, nbytes, STAGING_BYTES):
            size = min(STAGING_BYTES, nbytes - start)
            staging = self._staging_buffer(size)
            self._blit_now(buffer, offset + start, staging, 0, size, "read")
            self.ffi.memmove(self.ffi.from_buffer(raw[start:start + size]), self._contents(staging), size)
        return out

    # -- kernels -----------------------------------------------------------------------------------------------
    def _library(self, stem: str, field: str = "babybear"):
        key = (stem, self.mul, field)
        library = self._libraries.get(key)
        if library is not None:
            return library
        source = compose("msl", stem, (("bb_mul", self.mul),), field)
        with autorelease_pool():  # the NSError is autoreleased: read it before the pool drains
            text, err = nsstring(source.text), self.ffi.new("id *")
            try:
                library = send(self.device, "newLibraryWithSource:options:error:", text, self.ffi.NULL, err)
            finally:
                release(text)
            if is_nil(library):  # err may hold warnings even on success: decide on the library alone
                raise ShaderCompileError(f"kernel {stem} ({self.mul} multiply, Metal): "
                                         f"{map_diagnostic(error_message(err[0]), source)[:4000]}")
        self._libraries[key] = library
        return library

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear") -> _Kernel:
        entry = entry or stem
        key = (stem, entry, tuple(sorted((constants or {}).items())), field)
        cached = self._kernels.get(key)
        if cached is not None:
            return cached
        kernel_spec = spec(stem)
        if entry not in kernel_spec.entries:
            raise ShaderCompileError(f"kernel {stem} has no entry point {entry} "
                                     f"(it has: {', '.join(kernel_spec.entries)})")
        values = kernel_spec.constant_values(constants)
        threads = kernel_spec.workgroup_size(entry, constants)
        label = stem if entry == stem else f"{stem}.{entry}"
        library = self._library(stem, field)
        with autorelease_pool():
            constant_values = send(send(_objc.cls("MTLFunctionConstantValues"), "alloc"), "init")  # +1
            name, err = nsstring(entry), self.ffi.new("id *")
            words = [self.ffi.new("uint32_t *", value) for value in values.values()]  # alive until compiled
            try:
                for word, constant in zip(words, values):
                    send(constant_values, "setConstantValue:type:atIndex:", word, MTL_DATA_TYPE_UINT,
                         kernel_spec.constants[constant][0])
                function = send(library, "newFunctionWithName:constantValues:error:", name, constant_values, err)
            finally:
                release(name)
                release(constant_values)
            if is_nil(function):
                raise ShaderCompileError(f"kernel {label} ({self.mul} multiply, Metal): {error_message(err[0])}")
            try:
                pipeline = send(self.device, "newComputePipelineStateWithFunction:error:", function, err)
            finally:
                release(function)  # the pipeline keeps what it needs
            if is_nil(pipeline):
                raise ShaderCompileError(f"kernel {label} ({self.mul} multiply, Metal pipeline): "
                                         f"{error_message(err[0])}")
        most = int(send(pipeline, "maxTotalThreadsPerThreadgroup"))
        if threads > most:
            release(pipeline)
            raise DeviceLimitError(f"kernel {label} needs {threads} threads per threadgroup (registry workgroup "
                                   f"size), over the pipeline's maxTotalThreadsPerThreadgroup {most} "
                                   f"on {self.device_name}")
        compiled = self._kernels[key] = _Kernel(pipeline, threads, label)
        return compiled

    # -- submission --------------------------------------------------------------------------------------------
    def batch(self) -> Batch:
        return _MetalBatch(self)

    def _finish(self, cb, label: str) -> None:
        """Wait for one committed command buffer, record its GPU time, raise KernelFault if it failed."""
        send(cb, "waitUntilCompleted")  # cffi drops the GIL for the call
        status = int(send(cb, "status"))
        if status != STATUS_COMPLETED:
            why = error_message(send(cb, "error")) if status == STATUS_ERROR else f"status {status}"
            raise KernelFault(f"command buffer {label} (Metal) failed: {why}")
        self._times.append((label, float(send(cb, "GPUEndTime")) - float(send(cb, "GPUStartTime"))))

    def wait(self) -> None:
        """Wait for every committed command buffer and release it; the first failure is raised after all."""
        inflight, self.inflight = self.inflight, []
        failure = None
        with autorelease_pool():
            for cb, label in inflight:
                try:
                    self._finish(cb, label)
                except KernelFault as exc:
                    failure = failure or exc
                finally:
                    release(cb)
        if failure is not None:
            raise failure

    def gpu_times(self) -> list[tuple[str, float]]:
        """(label, GPU seconds) per command buffer finished since the last call (waits first). A batch's label
        joins its kernels' labels; transfers are 'write' and 'read'."""
        self.wait()
        times, self._times = self._times, []
        return times

    def set_profiling(self, on: bool) -> None:
        """Command buffer times are always recorded; while profiling, every launch is a command buffer of its own
        (so ``kernel_times`` has one entry per kernel)."""
        self.profiling = bool(on)

    def kernel_times(self) -> list[tuple[str, float]]:
        """``gpu_times`` in nanoseconds, per command buffer (not per kernel: Metal times command buffers)."""
        return [(label, seconds * 1e9) for label, seconds in self.gpu_times()]

    def close(self) -> None:
        """Wait, then release every object this runtime owns (buffers it handed out are released by their own
        ``free`` or garbage collection)."""
        if getattr(self, "queue", None) is None:
            return
        try:
            self.wait()
        finally:
            for kernel in self._kernels.values():
                release(kernel.pipeline)
            for library in self._libraries.values():
                release(library)
            if self._staging is not None:
                self.free(self._staging)
            for slot, staging in enumerate(self._uploads):
                self._drop_upload_blit(slot)
                self.free(staging)
            self._kernels, self._libraries, self._staging, self._uploads = {}, {}, None, []
            release(self.queue)
            release(self.device)
            self.queue = self.device = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser (e.g. at interpreter exit)
            pass


def metal_device_summary() -> tuple[dict | None, str | None]:
    """(summary, None) for the default Metal device, or (None, why there is none). The summary has ``name``,
    ``limits`` (DeviceLimits as a dict), ``family`` (highest Apple/Mac/Metal families) and ``unified_memory``."""
    try:
        rt = MetalRuntime()
    except BackendUnavailable as exc:
        return None, str(exc)
    try:
        limits = rt.limits()
        return {"name": limits.name, "limits": asdict(limits), "mul": rt.mul,
                "family": [f for f in rt.families if f], "unified_memory": limits.unified_memory}, None
    finally:
        rt.close()
