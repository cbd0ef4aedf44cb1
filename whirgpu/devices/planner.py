"""The device planner: whether a proof should run on a device, decided from its limits before anything is
allocated.

- ``device_class(limits)``: discrete, integrated, apple, software or cpu.
- ``GPU_MIN_VARIABLES``: per class, the smallest num_variables from which the GPU backend is expected to beat
  the numpy reference, and where that number comes from.
- ``plan_device(config, limits, policy, max_gpu_bytes)``: the memory plan (``backends.memory``) against the
  device's hard limits (max_buffer_size, max_storage_binding_size) and its budget (the smaller of the
  recommended working set, when the device reports one, and ``WHIRGPU_MAX_GPU_BYTES``), the class threshold,
  and the decision ("gpu" only when the proof fits AND the GPU is expected faster) with a one-line reason.

``select_backend`` (backends/__init__.py) applies the decision for ``auto``; an explicitly requested GPU backend
ignores the speed threshold and the working set but refuses hard-limit and ``WHIRGPU_MAX_GPU_BYTES`` problems.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.base import CPU_FALLBACK, DeviceLimits, resolve_storage
from ..backends.memory import MemoryPlan, human_bytes, plan_memory, runtime_kind, sized
from .overrides import MAX_GPU_BYTES_ENV, binding_text, max_gpu_bytes_from_env
from ..protocol.schedule import Schedule


@dataclass(frozen=True)
class Threshold:
    """The smallest num_variables from which a class's GPU is expected to beat the numpy reference (None:
    never), and where the number comes from."""

    min_variables: int | None
    source: str


# The one table to update with measurements. ``auto`` answers for the FIRST proof of a process, which pays the
# device start and every pipeline compilation. On an H100 machine (fresh `whirgpu prove -n N -k 4 -r 1 --seed 1`
# processes, docs/PERFORMANCE-HISTORY.md, 2026-11-25, after the cold-start work): the numpy reference took 0.5-0.7 s at
# n <= 12, 0.9 s at 14, 1.3 s at 16, 2.1-2.3 s at 18 and 5.8-6.4 s at 20; wgpu-native 1.0-1.4 s at 12, 1.0-1.5 s at
# 16, 1.1-1.2 s at 18 and 1.5-1.7 s at 20; Dawn 0.8-0.9 s from 12 to 16. The first wgpu proof ties the reference
# at n = 16 and wins from 17 on (it leaves the CPU free at the tie). Integrated and Apple GPUs were not measured:
# they take the discrete threshold until they are. A software device (lavapipe, llvmpipe, msl-cpu) never: it
# competes with the numpy reference for the same cores (on the 2-core dev VM a first lavapipe proof is slower at
# every size). The figures are wgpu-native's; Dawn (which auto uses only when wgpu is not installed) starts faster.
_H100 = "measured on an NVIDIA H100 for a first proof, docs/PERFORMANCE.md"
_ASSUMED = "not measured on this class: the discrete GPU figure"
GPU_MIN_VARIABLES: dict[str, Threshold] = {
    "discrete": Threshold(16, _H100),
    "integrated": Threshold(16, _ASSUMED),
    "apple": Threshold(16, _ASSUMED),
    "software": Threshold(None, "measured with lavapipe on a 2-core VM: slower for a first proof"),
}

def smallest_gpu_variables() -> int | None:
    """The smallest ``GPU_MIN_VARIABLES`` over every device class (None: no class ever takes the GPU): below it
    ``auto`` needs no device to decide."""
    sizes = [t.min_variables for t in GPU_MIN_VARIABLES.values() if t.min_variables is not None]
    return min(sizes) if sizes else None


_CLASS_LABELS = {"discrete": "a discrete GPU", "integrated": "an integrated GPU", "apple": "an Apple GPU",
                 "software": "a software device"}


def device_class(limits: DeviceLimits) -> str:
    """``cpu`` for the numpy reference; ``software`` for a CPU adapter (lavapipe, llvmpipe) or msl-cpu;
    ``apple`` for an Apple GPU (Metal or wgpu over Metal on Apple silicon: unified memory); ``discrete`` for a
    discrete GPU; ``integrated`` for every other GPU (integrated, virtual or of unknown type)."""
    if limits.api == "numpy":
        return "cpu"
    if limits.device_type == "CPU":
        return "software"
    apple_family = any(str(f).startswith("apple") for f in limits.features)
    if limits.api in ("Metal", "Metal (MSL)") and (apple_family or limits.name.startswith("Apple")):
        return "apple"
    return "discrete" if limits.device_type == "DiscreteGPU" else "integrated"


@dataclass
class Problem:
    """Why a proof cannot (``limit``: a hard device limit), may not (``max_gpu_bytes``: the user's cap) or should
    not (``working_set``: the device's recommended working set) run on a device."""

    kind: str
    message: str


@dataclass
class DevicePlan:
    """One configuration on one device: the memory plan, the problems, the speed threshold and the decision."""

    config: Schedule
    limits: DeviceLimits
    device_class: str
    memory: MemoryPlan
    budget: int | None  # bytes; None: unknown
    budget_source: str  # what sets the budget, or why none is known
    problems: list[Problem]
    threshold: Threshold | None
    expected_faster: bool
    decision: str  # "gpu" or "cpu"
    reason: str
    max_gpu_bytes: int | None = None  # the cap in force (WHIRGPU_MAX_GPU_BYTES or the argument), bytes

    @property
    def peak_bytes(self) -> int:
        return self.memory.peak_bytes

    @property
    def fits(self) -> bool:
        return not self.problems

    def refusal(self, explicit: bool) -> str | None:
        """The first problem that stops a backend: for an explicitly requested one the hard limits and
        ``WHIRGPU_MAX_GPU_BYTES``; for ``auto`` the recommended working set too. None: it may run."""
        kinds = ("limit", "max_gpu_bytes") if explicit else ("limit", "max_gpu_bytes", "working_set")
        return next((p.message for p in self.problems if p.kind in kinds), None)

    def to_dict(self) -> dict:
        """JSON-ready: sizes in bytes."""
        limits, memory = self.limits, self.memory
        return {
            "name": limits.name, "api": limits.api, "device_type": limits.device_type,
            "class": self.device_class, "storage": memory.policy, "statement_points": memory.statement_points,
            "buffers": [{"name": n.name, "bytes": n.nbytes, "buffers": n.count, "largest_buffer": n.buffer_bytes,
                         "largest_binding": n.binding_bytes, "whole_binding": n.whole, "role": n.role,
                         "mode": n.mode.value} for n in memory.needs],
            "pool_bytes": memory.pool_bytes, "runtime_bytes": memory.runtime_bytes, "peak_bytes": self.peak_bytes,
            "largest_buffer": {"name": memory.largest_buffer.name, "bytes": memory.largest_buffer.buffer_bytes},
            "largest_binding": {"name": memory.largest_binding.name, "bytes": memory.largest_binding.binding_bytes},
            "max_buffer_size": limits.max_buffer_size,
            "max_storage_binding_size": limits.max_storage_binding_size,
            "binding_lowered_by": limits.binding_lowered_by or None,
            "device_storage_binding_size": limits.device_storage_binding_size or limits.max_storage_binding_size,
            "recommended_working_set": limits.recommended_working_set or None,
            "max_gpu_bytes": self.max_gpu_bytes,
            "budget": self.budget, "budget_source": self.budget_source,
            "problems": [{"kind": p.kind, "message": p.message} for p in self.problems],
            "fits": self.fits,
            "threshold": None if self.threshold is None else
            {"min_variables": self.threshold.min_variables, "source": self.threshold.source},
            "expected_faster": self.expected_faster,
            "decision": self.decision, "reason": self.reason,
        }


def _forced_by(limits: DeviceLimits) -> str:
    """The backend name that runs on the device with ``limits`` (wgpu or dawn for a WebGPU adapter)."""
    return {"metal": "metal", "msl-cpu": "msl-cpu"}.get(runtime_kind(limits) or "", limits.runtime or "wgpu")


def software_reason(limits: DeviceLimits) -> str:
    """Why a software device is not used by ``auto`` (one line, ending with the fallback)."""
    what = "runs the MSL kernels on the CPU" if runtime_kind(limits) == "msl-cpu" else "is a software rasteriser"
    return (f"{limits.name} {what}, which competes with the numpy reference for the same CPU cores "
            f"(--backend {_forced_by(limits)} forces it); {CPU_FALLBACK}")


def _unknown_budget(limits: DeviceLimits) -> str:
    kind = runtime_kind(limits)
    if kind == "wgpu":
        who = "Dawn" if limits.runtime == "dawn" else "wgpu"
        return f"unknown: {who} does not report device memory; set {MAX_GPU_BYTES_ENV}"
    if kind == "msl-cpu":
        return f"unknown: msl-cpu buffers are host memory; set {MAX_GPU_BYTES_ENV}"
    return f"unknown: {limits.name} reports no recommended working set; set {MAX_GPU_BYTES_ENV}"


def plan_device(config: Schedule, limits: DeviceLimits, policy: str | None = None,
                max_gpu_bytes: int | None = None, statement_points: int = 1) -> DevicePlan:
    """Plan ``config`` (one proof with ``statement_points`` evaluation claims) on a device with ``limits`` under
    storage ``policy`` (None: ``WHIRGPU_STORAGE``, else hybrid). ``max_gpu_bytes`` caps the device memory
    (None: ``WHIRGPU_MAX_GPU_BYTES``, if set; a bad value is a ConfigError). Allocates nothing."""
    policy = resolve_storage(policy)
    cap_name = "max_gpu_bytes" if max_gpu_bytes is not None else MAX_GPU_BYTES_ENV
    cap = max_gpu_bytes if max_gpu_bytes is not None else max_gpu_bytes_from_env()
    memory = plan_memory(config, limits, policy, statement_points)
    cls = device_class(limits)
    peak, where = memory.peak_bytes, f"on {limits.name}"
    problems = [Problem("limit", message) for message in memory.limit_problems(limits)]
    if cap is not None and peak > cap:
        problems.append(Problem("max_gpu_bytes", f"the proof needs {sized(peak)} at its peak, over {cap_name} = "
                                                 f"{sized(cap)} {where}"))
    working_set = limits.recommended_working_set or None
    if working_set is not None and peak > working_set:
        problems.append(Problem("working_set", f"the proof needs {sized(peak)} at its peak, over "
                                               f"recommended_working_set {sized(working_set)} {where}"))
    budgets = [(b, name) for b, name in ((working_set, "recommended_working_set"), (cap, cap_name)) if b]
    budget, budget_source = min(budgets) if budgets else (None, _unknown_budget(limits))

    n = config.num_variables
    threshold = GPU_MIN_VARIABLES.get(cls)
    faster = threshold is not None and threshold.min_variables is not None and n >= threshold.min_variables
    if cls == "cpu":
        reason = "the numpy reference"
    elif problems:
        reason = f"{problems[0].message}; {CPU_FALLBACK}"
    elif cls == "software" or threshold is None or threshold.min_variables is None:
        reason = software_reason(limits)
    elif not faster:
        reason = (f"n={n} is below {threshold.min_variables}, where {_CLASS_LABELS[cls]} ({limits.name}) starts to "
                  f"beat the numpy reference ({threshold.source}); {CPU_FALLBACK}")
    else:
        biggest, widest = memory.largest_buffer, memory.largest_binding
        of_budget = f"of {human_bytes(budget)} ({budget_source})" if budget else "(budget unknown)"
        reason = (f"fits: peak {human_bytes(peak)} {of_budget}, largest buffer {human_bytes(biggest.buffer_bytes)} "
                  f"of max_buffer_size {human_bytes(limits.max_buffer_size)}, largest whole binding "
                  f"{human_bytes(widest.binding_bytes)} of max_storage_binding_size "
                  f"{binding_text(limits, human_bytes)}; n={n} >= {threshold.min_variables} for "
                  f"{_CLASS_LABELS[cls]} ({threshold.source})")
    decision = "gpu" if cls != "cpu" and not problems and faster else "cpu"
    return DevicePlan(config, limits, cls, memory, budget, budget_source, problems, threshold, faster, decision,
                      reason, cap)
