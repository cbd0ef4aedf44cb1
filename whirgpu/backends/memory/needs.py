"""What a memory plan says: each step's buffers (``BufferNeed``), the whole proof's (``MemoryPlan``: its pool,
runtime and peak bytes, and what no device of given limits can run), and sizes written for people."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...devices.overrides import binding_text
from ..base import DeviceLimits, StorageMode


def human_bytes(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it >= 1 (``1.5 GiB``, ``812 MiB``, ``16 B``)."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.4g} {unit}"
    return f"{n} B"


def sized(n: int) -> str:
    """Exact bytes with the human-readable size, for messages: ``1610612736 bytes (1.5 GiB)``."""
    return f"{n} bytes ({human_bytes(n)})" if n >= 1 << 10 else f"{n} bytes"


@dataclass
class BufferNeed:
    """A group of buffers one step of the proof adds: ``nbytes`` in ``count`` new buffers, ``buffer_bytes`` the
    largest single buffer and ``binding_bytes`` the largest binding the kernels made of one (``whole``: the
    kernels bind the buffers whole, or never bind them; else in windows that fit the binding limit). ``mode``:
    the StorageMode the policy gave them; ``host_facing``: SHARED (under the hybrid policy, the buffers the host
    writes or reads).
    ``runtime``: held by the runtime itself, outside the backend's pool, and never a storage binding
    (``binding_bytes`` 0 for a staging buffer, one params slot for wgpu's uniform buffer)."""

    name: str
    nbytes: int
    binding_bytes: int
    host_facing: bool
    mode: StorageMode
    count: int = 0
    buffer_bytes: int = 0
    whole: bool = True
    runtime: bool = False

    @property
    def role(self) -> str:
        return "runtime" if self.runtime else "host-facing" if self.host_facing else "intermediate"


@dataclass
class MemoryPlan:
    """Every buffer of one proof (``needs``, in the order the proof first asks for them) and what no device can
    run (``static_problems``: sizes beyond the kernels' indexing)."""

    needs: list[BufferNeed]
    policy: str
    statement_points: int
    static_problems: list[str] = field(default_factory=list)
    # commands recorded per submission: the dispatches and the copies into the proof region (a Merkle root's where
    # no merkle_top launch makes it, the final polynomial's)
    commands: list[int] = field(default_factory=list)
    # the kernels the proof asks for, once each in first-asked order: (stem, entry, constants as sorted (name,
    # value) pairs, field), the arguments of ``Runtime.kernel``; what ``Runtime.prefetch`` compiles ahead
    kernels: tuple = ()

    @property
    def pool_bytes(self) -> int:
        return sum(n.nbytes for n in self.needs if not n.runtime)

    @property
    def runtime_bytes(self) -> int:
        return sum(n.nbytes for n in self.needs if n.runtime)

    @property
    def peak_bytes(self) -> int:
        return self.pool_bytes + self.runtime_bytes

    @property
    def largest_buffer(self) -> BufferNeed:
        return max(self.needs, key=lambda n: n.buffer_bytes)

    @property
    def largest_binding(self) -> BufferNeed:
        """The need with the largest whole binding (windows are laid out to fit any binding limit)."""
        return max((n for n in self.needs if n.whole and not n.runtime), key=lambda n: n.binding_bytes)

    def limit_problems(self, limits: DeviceLimits) -> list[str]:
        """Why the proof cannot run on ``limits`` whatever the memory budget: a buffer over ``max_buffer_size``,
        a binding over ``max_storage_binding_size``, or a layout the kernels refuse (``static_problems``)."""
        where = f"on {limits.name}"
        problems = list(self.static_problems)
        for need in self.needs:
            if need.buffer_bytes > limits.max_buffer_size:
                problems.append(f"{need.name} needs a buffer of {sized(need.buffer_bytes)}, over max_buffer_size "
                                f"{sized(limits.max_buffer_size)} {where}")
        for need in self.needs:
            if not need.runtime and need.binding_bytes > limits.max_storage_binding_size:
                problems.append(f"{need.name} needs one binding of {sized(need.binding_bytes)}, over "
                                f"max_storage_binding_size {binding_text(limits, sized)} {where}")
        return problems


def runtime_kind(limits: DeviceLimits | None) -> str | None:
    """Which runtime reports ``limits``: "wgpu" (either WebGPU implementation: wgpu-native and Dawn run the same
    runtime code, so they hold the same buffers), "metal", "msl-cpu", or None (the numpy reference, or none)."""
    if limits is None or limits.api == "numpy":
        return None
    return {"Metal (MSL)": "metal", "MSL-CPU": "msl-cpu"}.get(limits.api, "wgpu")
