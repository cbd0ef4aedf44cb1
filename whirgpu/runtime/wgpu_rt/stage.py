"""A recorded program's own write stage (``Runtime.write_stage``): one ``MAP_WRITE|COPY_SRC`` buffer holding a slot
per ``Write`` of the program, so that a run copies all its words on the host at once and the device copies each
slot into its destination where the write stood, ahead of the launches that followed it (``PreparedProgram``
sends a staged run as one submission).

Why a program has its own: the runtime's upload ring (``buffers``) has a few slots, and a write that finds its slot
still in use waits, on wgpu-native, for every submitted launch (its blocking poll drains the queue). K instances
of a batch write 4K inputs, so the ring made each batch's uploads wait for the batch before it to finish: the host
could not fill batch i + 1 while the device ran batch i. A stage is reused only by its own program's next run,
which its caller starts after the previous run's readback, whose words settle the stage's map (resolved by then:
the copies came first), so no map is left pending past a read.

Contracts: slots start at multiples of ``SLOT_ALIGN`` bytes in write order; ``fill`` takes exactly the recorded
sizes (``ValueError`` naming the write otherwise, before anything is copied), leaves the stage unmapped, and
must be followed by the submissions holding ``copies`` and then ``sent()``; ``close()`` waits for a map still
pending and destroys the buffer (the runtime closes the stages still open when it closes).
"""

from __future__ import annotations

import numpy as np

from ..program import Copy, Write, write_bytes
from ..base import RtBuffer
from ..upload import copy_many
from ...devices.limits import StorageMode

SLOT_ALIGN = 256  # bytes: every slot starts on a cache line, and wgpu's copy offsets need multiples of 4
STAGE_LIMIT = 512 << 20  # bytes: a program writing more goes through the runtime's ring (host memory is pinned)


def mapped_bytes(handle, size: int) -> np.ndarray:
    """The first ``size`` bytes of a buffer mapped for writing, as a writable uint8 array over the mapped memory
    (``_experimental_get_mapped_range``, which wgpu-py and wgpudawn both have): valid until the buffer is unmapped;
    nothing may keep it past that."""
    return np.frombuffer(handle._experimental_get_mapped_range(0, size), np.uint8)


class WriteStage:
    """``writes``' slots in one staging buffer of ``rt`` (a ``WgpuRuntime``); ``copies``: one ``program.Copy`` per
    write, in order (None for an empty write); ``nbytes``: the bytes a run stages."""

    def __init__(self, rt, writes: list[Write]):
        self.rt = rt
        self.sizes = [write_bytes(w) for w in writes]
        offsets, at = [], 0
        for size in self.sizes:
            offsets.append(at)
            at += -(-size // SLOT_ALIGN) * SLOT_ALIGN
        self.offsets = offsets
        self.nbytes = sum(self.sizes)
        usage = rt.wgpu.BufferUsage
        self.buffer = rt.device.create_buffer(size=max(at, SLOT_ALIGN), usage=usage.MAP_WRITE | usage.COPY_SRC,
                                              mapped_at_creation=True)
        source = RtBuffer(self.buffer, max(at, SLOT_ALIGN), StorageMode.SHARED)
        self.copies = [Copy(source, offset, w.buffer, w.offset, size) if size else None
                       for w, offset, size in zip(writes, offsets, self.sizes)]
        self.pending = None  # the map asked for after the last run's submissions

    def fill(self, items: list[tuple[Write, np.ndarray]]) -> None:
        """Copy every (write, words) of a run, in the writes' order, into its slot; unmapped after."""
        if len(items) != len(self.sizes):
            raise ValueError(f"a staged run has {len(self.sizes)} writes, got {len(items)}")
        pairs = []
        for k, ((step, words), size) in enumerate(zip(items, self.sizes)):
            words = np.ascontiguousarray(words, dtype=np.uint32)
            if words.nbytes != size:
                raise ValueError(f"write {k} of a staged run ({step.source or 'data'}) has {words.nbytes} bytes; "
                                 f"the recording wrote {size}")
            if size:
                pairs.append((self.offsets[k], words.view(np.uint8).reshape(-1)))
        self._mapped()
        try:
            view = mapped_bytes(self.buffer, self.buffer.size)
            copy_many([(view[at:at + src.nbytes], src) for at, src in pairs], self.rt.upload.threads)
            del view  # the mapped range is valid until unmap: nothing keeps it
        finally:
            self.buffer.unmap()

    def sent(self) -> None:
        """After the run's submissions: ask for the map its next run fills (resolved once these copies are done)."""
        self.pending = self.buffer.map_async(self.rt.wgpu.MapMode.WRITE)

    def settle(self) -> None:
        """Wait for the map ``sent`` asked for (the run's readback has come, so its copies are done and it has
        resolved): like the runtime's own maps, none is left pending past a read (``buffers.settle_maps``)."""
        pending, self.pending = self.pending, None
        if pending is not None:
            self.rt.spin_on(pending)
            pending.sync_wait()

    def _mapped(self) -> None:
        self.settle()
        if self.buffer.map_state != "mapped":  # a fill that failed after its unmap, or a map never asked
            self.buffer.map_sync(self.rt.wgpu.MapMode.WRITE)

    def close(self) -> None:
        if self.buffer is None:
            return
        pending, self.pending = self.pending, None
        try:
            if pending is not None:  # no map left pending past the buffer (``buffers.settle_maps``' reason)
                pending.sync_wait()
        finally:
            self.buffer.destroy()
            self.buffer = None
            self.rt.stages.discard(self)
