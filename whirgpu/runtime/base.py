"""What a GPU runtime provides: buffers with a storage mode, compiled kernels, and batched launches.

Runtimes only allocate, compile and launch; what the launches compute is written once, above them. A runtime
is a few hundred lines per GPU API.

Launch contract shared by every kernel (WGSL and MSL twins):
- Workgroups are laid out on a 2-D grid when more than the device's per-dimension maximum are needed; a kernel
  recovers its linear workgroup index as ``wg.x + wg.y * num_workgroups.x``.
- Bindings are given in slot order, each a whole ``RtBuffer`` or an ``RtView`` window of one (how arrays larger
  than the device's storage-binding limit are bound: the caller splits the work into windows); a ``params`` array (uint32 words, at most 64) is bound at the slot after the
  last buffer, with the same struct layout in both languages.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..devices.limits import DeviceLimits, StorageMode
from ..errors import ConfigError, DeviceLimitError


@dataclass
class RtBuffer:
    """A runtime allocation of ``nbytes`` bytes."""

    handle: Any
    nbytes: int
    mode: StorageMode


@dataclass(frozen=True)
class RtView:
    """A window of ``nbytes`` bytes at byte ``offset`` of ``buffer``, bound as if it were a whole buffer. The
    offset must be a multiple of the device's storage offset alignment (``Runtime.offset_alignment``)."""

    buffer: RtBuffer
    offset: int
    nbytes: int


PARAMS_WORDS = 64  # the most words a params struct may have; launches pass it zero-padded to this size


def binding_range(b: RtBuffer | RtView) -> tuple[RtBuffer, int, int]:
    """(whole buffer, byte offset, byte length) of a binding."""
    return (b.buffer, b.offset, b.nbytes) if isinstance(b, RtView) else (b, 0, b.nbytes)


def check_binding_sizes(bindings, limit: int, device: str) -> None:
    """DeviceLimitError naming the slot, its size and the limit when a (buffer, offset, nbytes) binding is larger
    than the device's storage-binding limit."""
    for slot, (_, _, nbytes) in enumerate(bindings):
        if nbytes > limit:
            raise DeviceLimitError(f"binding {slot} of {nbytes} bytes exceeds max_storage_binding_size {limit} "
                                   f"on {device}")


def params_words(params: np.ndarray | None) -> np.ndarray:
    """``params`` as PARAMS_WORDS uint32 words, zero-padded (kernels may read the whole struct)."""
    words = np.zeros(PARAMS_WORDS, np.uint32)
    if params is not None:
        p = np.asarray(params, np.uint32).reshape(-1)
        words[: p.size] = p
    return words


def allocation_size(nbytes: int) -> int:
    """Bytes a runtime allocates for a request of ``nbytes``: whole words, at least one."""
    return max(4, -(-int(nbytes) // 4) * 4)


def check_range(what: str, buffer: RtBuffer, nbytes: int, offset: int) -> None:
    """ValueError when a ``what`` ('read' / 'write') of ``nbytes`` at ``offset`` leaves ``buffer``."""
    if offset < 0 or offset + nbytes > buffer.nbytes:
        raise ValueError(f"{what} of {nbytes} bytes at {offset} overruns a {buffer.nbytes}-byte buffer")


def grid_for(n_groups: int, max_per_dim: int) -> tuple[int, int]:
    """Split ``n_groups`` workgroups over (x, y) with x <= max_per_dim; kernels mask the overhang."""
    if n_groups <= max_per_dim:
        return max(n_groups, 1), 1
    y = -(-n_groups // max_per_dim)
    x = -(-n_groups // y)
    return x, y


class Batch(ABC):
    """Launches recorded into one submission (one encoder / command buffer per protocol step)."""

    @abstractmethod
    def dispatch(self, kernel: Any, buffers: list[RtBuffer | RtView], params: np.ndarray | None, n_groups: int) -> None:
        """Launch ``kernel`` over ``n_groups`` workgroups (2-D if needed) with ``buffers`` at slots 0.. and
        ``params`` at the next slot."""

    @abstractmethod
    def copy(self, src: RtBuffer, src_offset: int, dst: RtBuffer, dst_offset: int, nbytes: int) -> None:
        """Device-side copy."""

    @abstractmethod
    def submit(self) -> None:
        """Send everything recorded; does not wait."""


class ReissuedBatch:
    """A recorded list of launches (``Runtime.recorded_batch``) issued again into a new batch at every submit:
    for runtimes with no cheaper way to repeat them."""

    def __init__(self, rt: "Runtime", launches: list):
        self.rt = rt
        self.launches = launches

    def prime(self) -> None:
        """Nothing to encode ahead: the launches are issued when submitted."""

    def submit(self) -> None:
        batch = self.rt.batch()
        for launch in self.launches:
            launch.issue(batch)
        batch.submit()

    def close(self) -> None:
        self.launches = []


class Runtime(ABC):
    """A GPU API behind the shared kernel set."""

    name: str = "abstract"
    lang: str = "wgsl"
    offset_alignment: int = 256  # byte alignment of an RtView's offset
    # Storage modes (every RtBuffer records the mode it was allocated with): SHARED buffers are memory the host
    # reads directly when ``zero_copy_shared`` (Metal Shared; wgpu mapped buffers on unified memory); otherwise
    # SHARED is a plain device buffer like PRIVATE. ``host_memory``: every buffer is host memory (msl-cpu).
    zero_copy_shared: bool = True
    host_memory: bool = False

    def read_staged(self, buffer: RtBuffer) -> bool:
        """Whether ``read`` of ``buffer`` goes through a device-side copy into a staging buffer."""
        return not (self.host_memory or (self.zero_copy_shared and buffer.mode is StorageMode.SHARED))

    def write_staged(self, buffer: RtBuffer) -> bool:
        """Whether ``write`` to ``buffer`` goes through a staging buffer and a device-side copy."""
        return self.read_staged(buffer)

    @abstractmethod
    def limits(self) -> DeviceLimits:
        """The device's limits and identity."""

    def adopt(self, handle, nbytes: int) -> RtBuffer:
        """A buffer the caller created on this runtime's device, as a read-only RtBuffer of ``nbytes`` bytes
        (ConfigError when it cannot be used). Default: this runtime takes no caller's buffers."""
        raise ConfigError(f"the {self.name} runtime does not take buffers made by the caller; a device buffer can "
                          f"be proved on the wgpu and dawn backends")

    @abstractmethod
    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        """A new buffer (contents undefined)."""

    @abstractmethod
    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        """Host -> device."""

    @abstractmethod
    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        """Device -> host as uint32 words (waits for submitted work)."""

    def read_later(self, buffer: RtBuffer, nbytes: int):
        """Start reading ``nbytes`` from the start of ``buffer`` as it will be once the work submitted so far is
        done; returns a function ``words(pick=None)`` that waits for that and gives the words, or ``pick(words)``
        where given: ``pick`` may then be handed a read-only view of the staging memory itself, valid only during
        the call (what it returns must not keep it), so a reader of a few words copies no more. Default: read
        when called."""
        return lambda pick=None: picked(self.read(buffer, nbytes), pick)

    def staged_read(self, buffer: RtBuffer, nbytes: int):
        """A readback a recorded program ends with, where reads go through a staging buffer: an object with
        ``copy`` (a ``program.Copy`` of ``buffer``'s first ``nbytes`` into a staging buffer of its own, for the
        program's last submission), ``later()`` (after that submission: what ``read_later`` returns, with no copy
        of its own to submit) and ``close()``. Default: None (``read_later`` then reads)."""
        return None

    def write_stage(self, writes: list):
        """A recorded program's own staging for its ``writes`` (``program.Write`` steps, in order), where the
        runtime stages writes: an object with ``copies`` (per write, the ``program.Copy`` from its slot into its
        destination, or None for an empty write; the program's submissions carry them), ``nbytes``,
        ``fill(items)`` ((write, words) per write: copied into the slots), ``sent()`` (after the submissions) and
        ``close()``. Default: None (each write goes through ``write``)."""
        return None

    @abstractmethod
    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str = "babybear") -> Any:
        """The compiled pipeline for kernel file ``stem`` (entry point defaults to the stem) composed for
        ``field``'s constants, cached."""

    def kernel_async(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
                     field: str = "babybear") -> Any:
        """``kernel``, possibly still compiling: only this runtime's batches take it, and wait for it at
        submission (compile errors may raise there). Default: compiled at once."""
        return self.kernel(stem, entry, constants, field)

    def prefetch(self, kernels) -> int:
        """Start compiling ``kernels`` ((stem, entry, constants pairs, field) each, ``MemoryPlan.kernels``: what a
        planned proof will ask for) where compiling runs in the background, so that they compile side by side
        while the host goes on; returns how many were started. Default: none (a runtime that compiles in the
        caller's thread compiles each kernel at its first use, as before)."""
        return 0

    @abstractmethod
    def batch(self) -> Batch:
        """A new batch of launches."""

    instances = False  # whether recorded batches run instanced launches (``kernels.instancing``; WebGPU only)

    def instanced_kernel(self, kernel) -> Any:
        """``kernel`` ready for an instanced launch (``kernels.instancing``) where ``instances`` is True; None on a
        runtime that runs none (the default: its callers check ``instances`` first)."""
        return None

    def recorded_batch(self, launches: list):
        """``launches`` (``runtime.program`` ``Dispatch`` / ``Copy`` steps) as a batch to submit again and again
        (``submit``, ``close``; ``prime``: encode the next submission ahead where the runtime can, so that
        ``submit`` only sends it). Default: re-issued into a new batch at every submit, nothing primed."""
        return ReissuedBatch(self, launches)

    @abstractmethod
    def wait(self) -> None:
        """Block until all submitted work is done."""

    def free(self, buffer: RtBuffer) -> None:
        """Give ``buffer``'s memory back now (it must not be used again). Default: left to garbage collection."""

    def close(self) -> None:
        """Release the device and everything this runtime owns (pipelines, caches, staging buffers); idempotent.
        The runtime must not be used afterwards. Default: nothing to release (host memory only)."""


def picked(words: np.ndarray, pick):
    """``read_later``'s words, or ``pick(words)`` where ``pick`` is given."""
    return words if pick is None else pick(words)
