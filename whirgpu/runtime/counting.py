"""A runtime that only counts: what a proof would allocate, bind and launch on a device, without a device.

``CountingRuntime(limits, kind)`` stands for the runtime ``kind`` ("wgpu": wgpu-native or Dawn, which run the same
code; "metal"; "msl-cpu"; None: no runtime-held buffers) on a device with ``limits`` (its buffer and binding
limits lay out the backend's split arrays and windows, its ``offset_alignment`` the windows' offsets,
``zero_copy_shared`` whether wgpu reads SHARED buffers in place). It allocates no memory: ``alloc`` returns an
``RtBuffer`` whose handle is a ``Counted`` record (bytes as the real runtimes round them, mode, the step that
asked for it, the largest binding of it); ``write`` reads nothing of its data (a table may be an untouched
mapping: ``untouched_words``); a batch records each submission's dispatches and copies; kernels are
``KernelStub``s (a label, nothing compiled). Nothing it does raises for a limit: a buffer over
``max_buffer_size`` or a binding over ``max_storage_binding_size`` is recorded for the planner to report.

Contract: a read has no values to give. ``read`` (and the function ``read_later`` returns) counts the read, then
raises ``HostRead``: a proof on the GPU backend is oblivious (no launch depends on a value read back), so its one
readback is at ``end_proof``, after every allocation and launch of the proof; the planner stops it there.

The runtime's own buffers (wgpu: the readback staging buffer, the upload ring and the launch-parameter buffer;
Metal: the Private readback staging buffer and the upload ring; msl-cpu: none) are sized by the real runtimes'
own functions (``wgpu_rt.buffers``, ``wgpu_rt.pipelines``, ``metal_rt``), so a change to their sizing is made
once: ``held`` gives each one's bytes, as the real runtime would hold them after the same calls.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..devices.limits import DeviceLimits, StorageMode
from .base import Batch, RtBuffer, Runtime, allocation_size, binding_range
from .upload import UploadPlan

KINDS = ("wgpu", "metal", "msl-cpu")
UNLIMITED = 1 << 62


class HostRead(Exception):
    """Raised by a counting runtime's read: there are no values (the planner's proof ends at its readback)."""


@dataclass
class Counted:
    """One allocation: ``nbytes`` (rounded as a runtime rounds), ``mode``, ``step`` (what the caller's ``label``
    said when it was made), ``bound`` (its largest binding so far, bytes), ``whole`` (bound whole at least
    once) and ``kernel`` (the stem of the first
    kernel that bound it)."""

    nbytes: int
    mode: StorageMode
    step: str
    bound: int = 0
    whole: bool = False
    kernel: str = ""  # the stem of the first kernel that bound it ("" if none did)


@dataclass(frozen=True)
class KernelStub:
    """A kernel that is never compiled: its ``label`` (``stem:entry``) and the arguments it was asked with."""

    label: str
    stem: str
    entry: str
    constants: tuple = ()
    field: str = "babybear"


@dataclass
class HeldBuffer:
    """A buffer the runtime holds itself, outside the backend's pool: ``nbytes`` in ``count`` buffers of
    ``buffer_bytes``; ``binding_bytes``: what one binding of it holds (0: never bound)."""

    name: str
    nbytes: int
    count: int
    buffer_bytes: int
    binding_bytes: int = 0


def untouched_words(n: int) -> np.ndarray:
    """``n`` uint32 zero words (C-contiguous, writable) in an anonymous mapping that reserves no memory: pages
    are only made if something touches them, so a 2^30-word table costs nothing as long as only its shape is
    read (a counting runtime's ``write``)."""
    nbytes = max(4, 4 * int(n))
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0) | getattr(mmap, "MAP_NORESERVE", 0)
    try:
        area = mmap.mmap(-1, nbytes, flags=flags) if flags else mmap.mmap(-1, nbytes)
    except (OSError, ValueError, TypeError):
        return np.zeros(int(n), np.uint32)  # calloc: lazily zeroed pages on the platforms that lack the flags
    return np.frombuffer(area, np.uint32, count=int(n))


class _CountingBatch(Batch):
    def __init__(self, rt: "CountingRuntime"):
        self.rt = rt
        self.commands = 0
        self.n_params = 0

    def dispatch(self, kernel, buffers, params, n_groups) -> None:
        for binding in buffers:
            buffer, offset, nbytes = binding_range(binding)
            record = buffer.handle
            if isinstance(record, Counted):
                record.kernel = record.kernel or getattr(kernel, "stem", "")
                record.bound = max(record.bound, int(nbytes))
                record.whole |= offset == 0 and nbytes == buffer.nbytes
        self.commands += 1
        self.n_params += params is not None

    def copy(self, src, src_offset, dst, dst_offset, nbytes) -> None:
        self.commands += 1

    def submit(self) -> None:
        self.rt._submitted(self)
        self.commands = self.n_params = 0


class CountingRuntime(Runtime):
    """See the module docstring. ``label()``: called at every allocation, its answer the allocation's ``step``
    (default: "")."""

    counts_only = True  # kernel drivers give it sizes, not values (kernels.ntt's twiddles)

    def __init__(self, limits: DeviceLimits | None, kind: str | None, label: Callable[[], str] | None = None,
                 upload: UploadPlan | None = None):
        if kind is not None and kind not in KINDS:
            raise ValueError(f"a counting runtime stands for one of {KINDS} or None, not {kind!r}")
        if limits is None:
            limits = DeviceLimits(name="no device", api="none", device_type="none", max_buffer_size=UNLIMITED,
                                  max_storage_binding_size=UNLIMITED)
        self._limits = limits
        self.kind = kind
        self.name = f"counting {kind or 'none'}"
        self.lang = "msl" if kind in ("metal", "msl-cpu") else "wgsl"
        self.offset_alignment = max(4, int(limits.offset_alignment))
        self.host_memory = kind == "msl-cpu"
        # wgpu reads SHARED buffers in place only where the adapter maps them; Metal's Shared memory always is
        self.zero_copy_shared = bool(limits.zero_copy_shared) if kind == "wgpu" else True
        self.max_groups_per_dim = limits.max_workgroups_per_dimension or (1 << 16) - 1
        self.upload = upload or UploadPlan()
        self.label = label or (lambda: "")
        self.allocations: list[Counted] = []
        self.live_bytes = 0
        self.high_water = 0
        self.commands: list[int] = []  # dispatches and copies per submission
        self.reads: list[int] = []  # bytes of each read
        # every kernel asked for, once each, in the order first asked, as asked: (stem, entry, constants, field)
        self.kernel_requests: dict[tuple, None] = {}
        self._staging = 0  # the readback staging buffer's bytes (wgpu, Metal)
        self._read_later: dict[int, int] = {}  # wgpu read_later staging buffers: size -> count
        self._chunk = 0  # the upload ring's chunk
        self._params = 0  # wgpu's launch-parameter buffer

    # -- what it counted -------------------------------------------------------------------------------------------
    @property
    def allocated_bytes(self) -> int:
        """Bytes of every allocation so far (freed ones included)."""
        return sum(a.nbytes for a in self.allocations)

    def held(self) -> list[HeldBuffer]:
        """The runtime's own buffers as the real runtime of ``kind`` would hold them after the same calls."""
        kind, held = self.kind, []
        if self._staging:
            held.append(HeldBuffer(f"{kind} staging buffer", self._staging, 1, self._staging))
        for size, count in sorted(self._read_later.items()):
            held.append(HeldBuffer(f"{kind} readback buffer", size * count, count, size))
        if self._chunk:
            slots = self.upload.slots
            held.append(HeldBuffer(f"{kind} upload staging ring", slots * self._chunk, slots, self._chunk))
        if self._params:
            from .wgpu_rt.encode import PARAMS_SLOT_BYTES  # noqa: PLC0415 - wgpu's own module, loaded for wgpu

            held.append(HeldBuffer(f"{kind} launch parameters", self._params, 1, self._params, PARAMS_SLOT_BYTES))
        return held

    # -- Runtime ---------------------------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._limits

    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        record = Counted(allocation_size(nbytes), mode, self.label())
        self.allocations.append(record)
        self.live_bytes += record.nbytes
        self.high_water = max(self.high_water, self.live_bytes)
        return RtBuffer(record, record.nbytes, mode)

    def free(self, buffer: RtBuffer) -> None:
        if isinstance(buffer.handle, Counted):
            self.live_bytes -= buffer.nbytes
            buffer.handle = None

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        nbytes = int(data.nbytes)  # the data itself is never read
        if not nbytes:
            return
        if self.kind == "wgpu":
            from .wgpu_rt.buffers import upload_chunk  # noqa: PLC0415

            self._chunk = max(self._chunk, upload_chunk(self.upload, nbytes))
        elif self.kind == "metal":
            from .metal_rt import upload_chunk as metal_chunk  # noqa: PLC0415

            self._chunk = max(self._chunk, metal_chunk(self.upload, nbytes, buffer.mode))

    def _count_read(self, buffer: RtBuffer, nbytes: int) -> None:
        self.reads.append(nbytes)
        if not nbytes or not self.read_staged(buffer):
            return
        if self.kind == "wgpu":
            from .wgpu_rt.buffers import read_staging_bytes  # noqa: PLC0415

            self._staging = max(self._staging, read_staging_bytes(nbytes))
        elif self.kind == "metal":
            from .metal_rt import read_staging_bytes as metal_staging  # noqa: PLC0415

            self._staging = max(self._staging, metal_staging(nbytes))

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        self._count_read(buffer, buffer.nbytes - offset if nbytes is None else int(nbytes))
        raise HostRead("a counting runtime has no values to read")

    def read_later(self, buffer: RtBuffer, nbytes: int):
        if self.kind == "wgpu" and nbytes and self.read_staged(buffer):
            from .wgpu_rt.buffers import read_later_bytes  # noqa: PLC0415

            size = read_later_bytes(nbytes)
            self._read_later[size] = self._read_later.get(size, 0) + 1
            self.reads.append(int(nbytes))
            return self._stop  # counted: collecting it only stops the proof
        return lambda: self.read(buffer, nbytes)

    @staticmethod
    def _stop(pick=None) -> np.ndarray:
        raise HostRead("a counting runtime has no values to read")

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear") -> KernelStub:
        asked = tuple(sorted((constants or {}).items()))
        self.kernel_requests.setdefault((stem, entry, asked, field), None)
        entry = entry or stem
        return KernelStub(f"{stem}:{entry}", stem, entry, asked, field)

    def batch(self) -> _CountingBatch:
        return _CountingBatch(self)

    def _submitted(self, batch: _CountingBatch) -> None:
        self.commands.append(batch.commands)
        if self.kind == "wgpu" and batch.n_params:
            from .wgpu_rt.encode import PARAMS_SLOT_BYTES  # noqa: PLC0415
            from .wgpu_rt.pipelines import params_buffer_bytes  # noqa: PLC0415

            self._params = max(self._params, params_buffer_bytes(batch.n_params * PARAMS_SLOT_BYTES))

    def wait(self) -> None:
        """Nothing runs."""
