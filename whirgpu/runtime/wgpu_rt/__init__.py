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

The runtime is one class per implementation (``device``: ``WgpuRuntime``, ``DawnRuntime``), composed of
``buffers`` (allocation, uploads through the staging ring, readback) and ``pipelines`` (kernels compiled side by
side, batches of launches, GPU timestamps); ``adapters`` finds and describes the adapters before a device opens.
"""

from .adapters import (DAWN_NOISE, FEATURE_ALIASES, IMPLS, NATIVE_APIS, UNIFIED_TYPES, WANTED_FEATURES,
                       ZERO_COPY_FEATURE, Impl, adapter_limits, canonical_features, choose_adapter, enumerate_adapters,
                       feature_name, impl_of, import_webgpu, list_adapters, storage_summary, zero_copy_support)
from .buffers import MAP_ALIGNMENT
from .device import COLLECT_EVERY, MUL_VARIANTS, DawnRuntime, WgpuRuntime
from .pipelines import BIND_GROUP_CACHE, COMPILE_THREADS, PARAMS_SLOT_BYTES

__all__ = ["BIND_GROUP_CACHE", "COLLECT_EVERY", "COMPILE_THREADS", "DAWN_NOISE", "FEATURE_ALIASES", "IMPLS",
           "MAP_ALIGNMENT", "MUL_VARIANTS", "NATIVE_APIS", "PARAMS_SLOT_BYTES", "UNIFIED_TYPES", "WANTED_FEATURES",
           "ZERO_COPY_FEATURE", "DawnRuntime", "Impl", "WgpuRuntime", "adapter_limits", "canonical_features",
           "choose_adapter", "enumerate_adapters", "feature_name", "impl_of", "import_webgpu", "list_adapters",
           "storage_summary", "zero_copy_support"]
