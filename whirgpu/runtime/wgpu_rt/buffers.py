"""The WebGPU runtime's buffers: allocation in a storage mode, the caller's buffers adopted, uploads (small ones
through the queue, large ones through the ring of mapped staging buffers) and readback (mapped or staged)."""

from __future__ import annotations

import time
import weakref
from typing import Any

import numpy as np

from ...errors import ConfigError, DeviceLimitError, DeviceOutOfMemory
from ...devices.limits import StorageMode
from ..base import RtBuffer, allocation_size, check_range, picked
from ..program import Copy, write_bytes
from ..upload import UploadPlan, chunk_ranges, copy_into
from .adapters import IMPLS
from .stage import STAGE_LIMIT, WriteStage, mapped_bytes

MAP_ALIGNMENT = 8  # wgpu's map offset alignment (the size must be a multiple of 4)
READ_STAGING_MIN = 1 << 16  # the readback staging buffer's smallest size
READ_LATER_GRAIN = 256  # read_later's staging buffers are whole multiples of this
# How long a read_later's words spin on non-blocking device polls before blocking. A blocking wait wakes two
# threads when the device finishes (wgpu-py's poll thread, then the waiter): 0.1-0.4 ms on the H200 machine's host,
# a fifth of a small proof's host share; spinning also keeps the core's clock up for the host work that follows.
# A proof's readback is waited for only once its host work is done, so the spin is short; past this it blocks.
# Not on a CPU adapter (lavapipe): its device work runs on the host's cores, one of which the spin would take.
# Not on Dawn: its map callbacks do not fire on a device poll, so a spin there would run to its bound.
READ_SPIN_SECONDS = 0.02


def read_staging_bytes(nbytes: int) -> int:
    """Bytes of the readback staging buffer a staged ``read`` of ``nbytes`` needs (the runtime keeps one, made
    anew only for a larger read)."""
    return max(int(nbytes), READ_STAGING_MIN)


def read_later_bytes(nbytes: int) -> int:
    """Bytes of the staging buffer a staged ``read_later`` of ``nbytes`` takes (kept per size for reuse)."""
    return max(READ_LATER_GRAIN, -(-int(nbytes) // READ_LATER_GRAIN) * READ_LATER_GRAIN)


def upload_chunk(plan: UploadPlan, nbytes: int) -> int:
    """The upload ring's chunk a write of ``nbytes`` (> 0) goes through; 0: below ``plan.threshold`` it goes
    through ``queue.write_buffer`` instead. The ring holds ``plan.slots`` chunks of the largest chunk so far."""
    return plan.chunk_for(nbytes) if nbytes >= plan.threshold else 0


class Buffers:
    """``WgpuRuntime``'s memory: ``alloc`` / ``free``, ``adopt``, ``write`` (staged), ``read``."""

    # -- identity -------------------------------------------------------------------------------------------------
    def init_buffers(self, upload: UploadPlan | None) -> None:
        """This mixin's state: staging buffers (readback, read_later's by size, the upload ring) and the
        adopted caller buffers; made lazily at first use."""
        self._staging = None
        self._read_stagings: dict[int, list] = {}  # read_later's staging buffers by size, free ones
        self.upload = upload or UploadPlan()
        self._uploads: list[Any] = []  # the upload staging ring (MAP_WRITE|COPY_SRC buffers), made at the first use
        self._upload_maps: list[Any] = []  # per slot, the map promise asked for after its last copy (or None)
        self._next_upload = 0
        self.stages: set = set()  # the open write stages of recorded programs (``stage``), closed with the runtime
        self._adopted: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # caller's buffer -> its RtBuffer
        spins = self.name == "wgpu" and self.adapter.info.get("adapter_type") != "CPU"
        self.read_spin_seconds = READ_SPIN_SECONDS if spins else 0.0  # read_later's spin (``spin_on``)

    def close_buffers(self) -> None:
        """Destroy every staging buffer (after the device's work is done)."""
        self.settle_maps()
        for stage in list(self.stages):
            stage.close()
        for cached in (self._staging, *self._uploads, *(b for free in self._read_stagings.values() for b in free)):
            if cached is not None:
                cached.destroy()
        self._staging, self._uploads, self._upload_maps, self._read_stagings = None, [], [], {}

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
        chunk = upload_chunk(self.upload, data.nbytes)
        if not chunk:
            self.device.queue.write_buffer(buffer.handle, offset, data)
            return
        raw = data.view(np.uint8).reshape(-1)
        chunks = chunk_ranges(raw.nbytes, chunk)
        self._ask_maps(chunk, len(chunks))
        try:
            for i, (start, size) in enumerate(chunks):
                slot = self._upload_slot(chunk)
                staging = self._uploads[slot]
                # The mapped range is valid until unmap; nothing touches this view after the copy.
                copy_into(mapped_bytes(staging, size), raw[start:start + size], self.upload.threads)
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
            self.settle_maps()

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

    def settle_maps(self) -> None:
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
            self.settle_maps()  # before their buffers go
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
            size = read_staging_bytes(nbytes)
            self._staging = self.device.create_buffer(size=size, usage=usage.MAP_READ | usage.COPY_DST)
        return self._staging

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

    def read_later(self, buffer: RtBuffer, nbytes: int):
        """``Runtime.read_later``: the words are copied into a staging buffer of their own and its map is asked
        for now, so it resolves when the work submitted so far is done, not the work submitted after it (a proof
        in flight is read back while the next one runs)."""
        if buffer.mode is StorageMode.SHARED and self.zero_copy_shared or nbytes == 0:
            return lambda pick=None: picked(self.read(buffer, nbytes), pick)
        check_range("read", buffer, nbytes, 0)
        size = read_later_bytes(nbytes)
        free = self._read_stagings.setdefault(size, [])
        if free:
            staging = free.pop()
        else:
            usage = self.wgpu.BufferUsage
            staging = self.device.create_buffer(size=size, usage=usage.MAP_READ | usage.COPY_DST)
        encoder = self.device.create_command_encoder()
        encoder.copy_buffer_to_buffer(buffer.handle, 0, staging, 0, nbytes)
        self.device.queue.submit([encoder.finish()])
        return self._map_later(staging, nbytes, free.append)

    def _map_later(self, staging, nbytes: int, done):
        """Ask for ``staging``'s map now (its copy submitted): the function that waits for it and gives the words,
        the staging unmapped and handed to ``done`` after."""
        mapped = staging.map_async(self.wgpu.MapMode.READ, 0, nbytes)
        # the upload slots' maps asked with it: they resolve in the same poll (their copies came before), so the
        # next proof's input finds its slot mapped and is written while the device runs earlier work, where a map
        # asked then would wait for all of it (wgpu-native's poll drains the queue)
        self._ask_maps(0, len(self._uploads))

        def words(pick=None) -> np.ndarray:
            try:
                self.spin_on(mapped)
                mapped.sync_wait()
                view = np.frombuffer(staging.read_mapped(0, nbytes, copy=False), dtype=np.uint32)
                if pick is None:
                    return view.copy()
                view.setflags(write=False)
                return pick(view)  # on the mapped words: only what it takes is copied
            finally:
                if staging.map_state != "unmapped":
                    staging.unmap()
                done(staging)
                self.settle_maps()  # no map is left pending past the read (close_buffers' reason)

        return words

    def staged_read(self, buffer: RtBuffer, nbytes: int) -> "StagedRead | None":
        """``Runtime.staged_read``: a staging buffer of its own (freed by ``close``) that the program's last
        submission copies ``buffer``'s first ``nbytes`` into; None where ``read_later`` reads in place."""
        if buffer.mode is StorageMode.SHARED and self.zero_copy_shared or nbytes == 0:
            return None
        check_range("read", buffer, nbytes, 0)
        usage = self.wgpu.BufferUsage
        size = read_later_bytes(nbytes)
        staging = self.device.create_buffer(size=size, usage=usage.MAP_READ | usage.COPY_DST)
        return StagedRead(self, Copy(buffer, 0, RtBuffer(staging, size, StorageMode.SHARED), 0, int(nbytes)))

    def write_stage(self, writes: list) -> "WriteStage | None":
        """``Runtime.write_stage``: a ``stage.WriteStage`` of its own for the program's ``writes``; None where they
        write more than ``stage.STAGE_LIMIT`` bytes (staging that is pinned host memory; the ring takes them)."""
        if sum(write_bytes(w) for w in writes) > STAGE_LIMIT:
            return None
        stage = WriteStage(self, writes)
        self.stages.add(stage)
        return stage

    def spin_on(self, promise) -> None:
        """Poll the device without blocking while ``promise`` (a map's) is pending, up to ``read_spin_seconds``:
        the map's callback then runs on this thread's poll (or the poll thread's) with no wake-up between. The
        promise's own state (the buffer's ``map_state`` turns "mapped" only once the promise is waited for). Only
        where the implementation polls that way (wgpu-native through wgpu-py: ``device._poll``; not Dawn)."""
        if not self.read_spin_seconds or not hasattr(self.device, "_poll") or not hasattr(promise, "_state"):
            return
        end = time.perf_counter() + self.read_spin_seconds
        while promise._state == "pending" and time.perf_counter() < end:
            self.device._poll(False)

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

    def free(self, buffer: RtBuffer) -> None:
        buffer.handle.destroy()  # the device memory goes now, not when the collector finds the Python object


class StagedRead:
    """``Buffers.staged_read``'s readback: ``copy`` (a ``program.Copy`` into the staging buffer, the last launch of
    the submission it reads after), ``later()`` once that is submitted (``read_later``'s words function; call it
    before the copy is submitted again: the staging is mapped until then), ``close()``."""

    def __init__(self, rt: Buffers, copy: Copy):
        self.rt, self.copy = rt, copy

    def later(self):
        return self.rt._map_later(self.copy.dst.handle, self.copy.nbytes, lambda staging: None)

    def close(self) -> None:
        self.copy.dst.handle.destroy()
