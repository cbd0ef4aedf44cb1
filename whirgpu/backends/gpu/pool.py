"""``DevicePool``: the GPU backend's buffers, recycled by size and storage mode under the backend's storage policy.
It frees nothing before ``close``, so the bytes it created (``pool_bytes``) are its high-water mark."""

from __future__ import annotations

from ...runtime.base import RtBuffer, Runtime
from ..base import StorageMode, policy_mode
from .geometry import EF_BYTES


class DevicePool:
    """Free lists keyed by (bytes, mode). ``alloc`` rounds a request up to whole 16-byte EF entries (at least
    one) and serves it from the free list of the mode the storage policy gives it (``host_facing``: the host
    writes or reads the buffer), else creates a buffer on ``runtime``; ``free`` puts buffers back (twice is
    harmless). ``canonical_order`` sorts each free list by creation order, so that every proof of one
    configuration makes the same requests and gets the same buffers (and so the runtime's cached bind groups)."""

    def __init__(self, runtime: Runtime, storage: str):
        self.runtime = runtime
        self.storage = storage
        self.free_lists: dict[tuple[int, StorageMode], list[RtBuffer]] = {}
        self.serial: dict[int, int] = {}  # id(buffer) -> creation order
        self.pool_bytes = 0  # bytes of every buffer created (what MemoryPlan.pool_bytes plans)

    def mode_for(self, host_facing: bool) -> StorageMode:
        """The mode the policy gives a buffer the host writes or reads (True) or an intermediate (False)."""
        return policy_mode(self.storage, host_facing)

    def alloc(self, nbytes: int, host_facing: bool = False) -> RtBuffer:
        nbytes = max(EF_BYTES, -(-int(nbytes) // EF_BYTES) * EF_BYTES)
        mode = self.mode_for(host_facing)
        free = self.free_lists.get((nbytes, mode))
        if free:
            return free.pop()
        buffer = self.runtime.alloc(nbytes, mode)
        self.serial[id(buffer)] = len(self.serial)
        self.pool_bytes += buffer.nbytes
        return buffer

    def free(self, *buffers: RtBuffer) -> None:
        for b in buffers:
            free = self.free_lists.setdefault((b.nbytes, b.mode), [])
            if not any(b is held for held in free):  # a second release must not hand one buffer out twice
                free.append(b)

    def free_ids(self) -> set[int]:
        """The identities of the buffers free now."""
        return {id(b) for free in self.free_lists.values() for b in free}

    def claim(self, buffers) -> None:
        """Take ``buffers`` (free now: see ``free_ids``) out of the free lists."""
        for b in buffers:
            free = self.free_lists[(b.nbytes, b.mode)]
            free[:] = [other for other in free if other is not b]

    def canonical_order(self) -> None:
        for free in self.free_lists.values():
            free.sort(key=lambda b: -self.serial.get(id(b), -1))

    def close(self) -> None:
        """Free every pooled buffer on the runtime (buffers handed out and not returned are the holder's)."""
        free_lists, self.free_lists = self.free_lists, {}
        for buffer in [b for free in free_lists.values() for b in free]:
            self.runtime.free(buffer)
        self.serial.clear()
