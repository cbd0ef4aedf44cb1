"""What a device is and can do, as every layer speaks of it: ``StorageMode`` (where a buffer lives) and
``DeviceLimits`` (one shape for every runtime and backend). Below the runtimes, the kernel drivers and the
backends, which all import it from here (``backends.base`` re-exports both as part of the backend interface)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class StorageMode(enum.Enum):
    """Where a buffer lives: SHARED = host-visible (zero-copy on unified memory), PRIVATE = device-only."""

    SHARED = "shared"
    PRIVATE = "private"


@dataclass
class DeviceLimits:
    """What a device can do; one shape for every backend (the CPU reports 'no limit' as large numbers)."""

    name: str
    api: str
    device_type: str
    max_buffer_size: int
    max_storage_binding_size: int
    max_workgroup_storage: int = 0
    max_invocations_per_workgroup: int = 0
    max_workgroups_per_dimension: int = 0
    subgroup_size: int = 0
    has_u64: bool = False
    has_native_mulhi: bool = False
    unified_memory: bool = False
    recommended_working_set: int = 0
    has_timestamps: bool = False
    zero_copy_shared: bool = False  # SHARED buffers are memory the host maps directly (no staging copy)
    offset_alignment: int = 256  # bytes a binding window's offset must be a multiple of
    features: tuple[str, ...] = field(default_factory=tuple)
    runtime: str = ""  # the runtime that reports them when it is not implied by ``api``: "wgpu" or "dawn"
    # When the user (or a test) lowered max_storage_binding_size (whirgpu.devices.overrides): what lowered it, and the
    # device's own limit in bytes; "" and 0 when max_storage_binding_size is the device's.
    binding_lowered_by: str = ""
    device_storage_binding_size: int = 0
