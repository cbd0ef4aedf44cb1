"""The device memory a proof needs, buffer by buffer, before any device is opened.

``plan_memory(config, limits, policy)`` builds one proof as ``Prover.prove`` runs it on a fresh ``GpuBackend``
(``WhirProver.prove_points`` of canonical words: converted on the device, claims evaluated there), over a runtime
that only counts (``runtime.counting.CountingRuntime``, standing for the runtime that reports ``limits``): the
backend, the kernel drivers and the prover make every allocation, binding and launch they would make on the
device, and nothing is allocated. The pool keys buffers on (bytes rounded up to 16, StorageMode), hands a
released buffer to the next request of the same key, and never frees one, so what it created is the proof's
peak in the pool (``MemoryPlan.pool_bytes``).

Contract (``tests/backend/test_planner_memory.py``, on every runtime available): for a configuration proved with
at most ``statement_points`` evaluation claims on a fresh backend, ``MemoryPlan.pool_bytes`` equals the bytes the
real pool creates, and ``MemoryPlan.peak_bytes`` that plus the buffers the runtime holds itself (``runtime=True``
needs: wgpu's readback staging buffer, upload ring and launch-parameter buffer; Metal's Private readback staging
buffer and upload ring; msl-cpu none), sized by the runtimes' own functions. Query-sized work covers each round's
query slots whatever count of distinct indices the transcript draws, so a later proof of the same configuration on
the same backend allocates nothing new.

Each ``BufferNeed`` groups the buffers one step of the proof made (``round 1 merkle tree``: the allocations
while round 1's commitment built its tree), by the prover's phases; within a step, buffers the kernels bind in
windows of at most ``max_storage_binding_size`` and buffers bound whole are apart. ``binding_bytes`` is the
largest binding the kernels made of the group, so a ``limit_problems`` entry for a binding is one the real
runtime would refuse.

Two modules: ``needs`` (what a plan says: ``BufferNeed``, ``MemoryPlan``) and ``plan`` (``plan_memory``).
"""

from .needs import BufferNeed, MemoryPlan, human_bytes, runtime_kind, sized
from .plan import PLANNED_PROOFS, STEP_NAMES, peak_bytes, plan_buffers, plan_memory, register_planned_proof

__all__ = ["PLANNED_PROOFS", "STEP_NAMES", "BufferNeed", "MemoryPlan", "human_bytes", "peak_bytes", "plan_buffers",
           "plan_memory", "register_planned_proof", "runtime_kind", "sized"]
