"""The device memory a proof needs, buffer by buffer, before anything is allocated.

``plan_memory(config, limits, policy)`` walks one proof as ``Prover.prove`` runs it on a fresh ``GpuBackend``
(``WhirProver.prove_points`` of canonical words: converted on the device, claims evaluated there):
every allocation the backend and the kernel drivers (``kernels/ntt.py``, ``kernels/merkle.py``) make, in their
order, through a model of the backend's pool. The pool keys buffers on (bytes rounded up to 16, StorageMode),
hands a released buffer to the next request of the same key, and never frees one, so the device holds, at the
end of a proof, every buffer the pool ever had to create: that sum is the proof's peak.

Contract (tested against real allocations on wgpu and msl-cpu): for a configuration proved with at most
``statement_points`` evaluation claims on a fresh backend, ``MemoryPlan.pool_bytes`` is at least what the
backend's pool allocates, and close to it. A proof's own regions (proof, scratch, points: ``device_values``) are
sized from its ``ProofShape``, and query-sized work covers each round's query slots (``num_queries``, at most
the folded domain), whatever count of distinct indices the transcript draws, so every proof of one
configuration asks the pool for the same buffers: a later proof on the same backend allocates nothing new, and
a long-lived backend's pool stays within the plan.

On top of the pool, a runtime holds its own buffers (``runtime=True`` needs): wgpu a readback staging buffer
(when a read is not host-mapped), the upload ring (``runtime/upload.py``, once a write reaches its threshold)
and the launch-parameter uniform buffer, Metal a staging buffer for reads from Private memory and the upload
ring for writes to it; msl-cpu nothing. ``MemoryPlan.peak_bytes`` counts both.

Each ``BufferNeed`` groups the buffers one step of the proof added (``round 1 merkle tree``: every level of
round 1's tree below its root), with the role that fixes its StorageMode under a storage policy
(``policy_mode``: host-facing buffers are the ones the host writes or reads) and whether the kernels bind it
whole (factor tables, regions, ...) or in windows of at most ``max_storage_binding_size``
(tables and weights: see ``GpuBackend``).

Codewords, Merkle levels and tables (the polynomial, the weights, folded tables) past ``max_buffer_size`` are
modelled as the backend stores them, several buffers of a power-of-two number of whole rows or entries
(``split.layout``), so their ``buffer_bytes`` never pass the limit and only the memory budget refuses them; a
``limit_problems`` entry for ``max_buffer_size`` can only come from a buffer bound whole (regions, factor tables,
partial sums, constants).

The model is three modules: ``needs`` (what a plan says: ``BufferNeed``, ``MemoryPlan``, sizes in words),
``walk`` (the backend's allocations and launches, step by step, under one layout's limits) and ``plan``
(``plan_memory``: one proof's steps, in the prover's order, through the walk).
"""

from .needs import BufferNeed, MemoryPlan, human_bytes, runtime_kind, sized
from .plan import peak_bytes, plan_buffers, plan_memory
from .walk import (BASE_BYTES, DIGEST_BYTES, METAL_STAGING_CHUNK, METAL_STAGING_MIN, REGION_ALIGN, UPLOAD_PLAN,
                   WGPU_PARAMS_MIN, WGPU_PARAMS_SLOT, WGPU_STAGING_MIN)

__all__ = ["BASE_BYTES", "DIGEST_BYTES", "METAL_STAGING_CHUNK", "METAL_STAGING_MIN", "REGION_ALIGN", "UPLOAD_PLAN",
           "WGPU_PARAMS_MIN", "WGPU_PARAMS_SLOT", "WGPU_STAGING_MIN", "BufferNeed", "MemoryPlan", "human_bytes",
           "peak_bytes", "plan_buffers", "plan_memory", "runtime_kind", "sized"]
