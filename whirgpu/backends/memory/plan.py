"""``plan_memory``: one proof built on a ``GpuBackend`` over a runtime that only counts (``runtime.counting``),
and what its pool created, step by step; and the plan's two summaries. How each kind of configuration is proved
is registered by the layer that orders a proof's steps (``register_planned_proof``)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

from ...errors import DeviceLimitError
from ...protocol.schedule import Schedule
from ...runtime.counting import Counted, CountingRuntime, HostRead, untouched_words
from ..base import DeviceLimits, StorageMode, resolve_storage
from .needs import BufferNeed, MemoryPlan, runtime_kind

# The prover's and the backend's phases (``PhaseTimer.phase``) as a plan names what they allocate
STEP_NAMES = {"upload": "polynomial", "claims": "claims", "ntt": "codeword", "merkle": "merkle tree",
              "ood": "ood answers", "weights": "weights", "sumcheck": "sumcheck", "fold": "folded tables",
              "pow": "proof of work", "openings": "openings"}


class _Steps:
    """The label of each allocation: the round (a commitment's ``ntt`` phase starts the next) and the phase the
    prover's timer is in (``STEP_NAMES``; "proof setup" outside every phase: the backend's placeholder, the
    proof's regions and the statement)."""

    def __init__(self):
        self.stack: list[str] = []
        self.commits = 0

    @contextmanager
    def phase(self, name: str):
        if name == "ntt":
            self.commits += 1
        self.stack.append(name)
        try:
            yield
        finally:
            self.stack.pop()

    def __call__(self) -> str:
        if not self.stack:
            return "proof setup"
        phase = self.stack[-1]
        return f"round {max(self.commits - 1, 0)} {STEP_NAMES.get(phase, phase)}"


# How a proof of a configuration is made, by configuration type: ``prove(config, backend, words, statement_points,
# timer)`` drives ``backend`` through the proof the user's prover makes of ``words`` (canonical words) with
# ``timer`` as the prover's and the backend's ``PhaseTimer``. The step order sits above the planner, so each
# profile's prover module registers its configuration's here when it is imported (``planned_proof``): every
# prover of a configuration imports it before it asks for a backend.
PLANNED_PROOFS: dict[type, Callable] = {}


def register_planned_proof(config_type: type, prove: Callable) -> None:
    """Plan configurations of ``config_type`` (and its subclasses) with ``prove`` (see ``PLANNED_PROOFS``)."""
    PLANNED_PROOFS[config_type] = prove


def _prove(config: Schedule, backend, statement_points: int, steps: _Steps) -> None:
    """One proof as the user's prover runs it, the words an untouched mapping of the table's size."""
    prove = next((PLANNED_PROOFS[t] for t in type(config).__mro__ if t in PLANNED_PROOFS), None)
    if prove is None:
        raise TypeError(f"no planned proof for a {type(config).__name__}: its profile's prover module registers it "
                        f"when imported (whirgpu.profiles.<profile>.prover)")
    prove(config, backend, untouched_words(1 << config.num_variables), statement_points, steps)


def _needs(allocations: list[Counted]) -> list[BufferNeed]:
    """The allocations grouped by step, by the first kernel that bound them (``step (kernel)``: ``round 0 merkle
    tree (merkle_leaves)``) and by mode, in the order the proof first made them. ``whole``: every buffer of the
    group was bound whole at least once, or never bound."""
    groups: dict[tuple[str, str, StorageMode], list[Counted]] = {}
    for a in allocations:
        groups.setdefault((a.step, a.kernel, a.mode), []).append(a)
    modes: dict[tuple[str, str], int] = {}
    for step, kernel, _ in groups:
        modes[step, kernel] = modes.get((step, kernel), 0) + 1
    needs = []
    for (step, kernel, mode), group in groups.items():
        name = f"{step} ({kernel})" if kernel else step
        if modes[step, kernel] > 1:
            name += f" {mode.value}"
        needs.append(BufferNeed(name, sum(a.nbytes for a in group), max(a.bound for a in group),
                                mode is StorageMode.SHARED, mode, len(group), max(a.nbytes for a in group),
                                all(a.whole or not a.bound for a in group)))
    return needs


def plan_memory(config: Schedule, limits: DeviceLimits | None = None, policy: str | None = None,
                statement_points: int = 1) -> MemoryPlan:
    """The buffers of one proof of ``config`` (a ``WhirConfig``, or a ``P3WhirConfig``: the p3-whir profile's,
    its openings drawn from the transcript) with ``statement_points`` evaluation claims, as ``Prover.prove`` makes
    them on a fresh ``GpuBackend`` on a device with ``limits`` (its binding and buffer limits lay out the windows
    and split arrays, its runtime (``runtime_kind``) holds its own buffers; None: no limit and no runtime buffers)
    under storage ``policy`` (None: ``WHIRGPU_STORAGE``, else hybrid).

    The proof is built on a ``CountingRuntime``: every allocation the backend's pool made (it never frees one,
    so their sum is the pool's high-water mark, ``MemoryPlan.pool_bytes``), every binding and every submission,
    up to the proof's one readback; the runtime's own buffers are sized by the runtime's own code. Allocates
    no device memory and no host memory of the table's size. A layout no device can hold (``DeviceLimitError``
    from the kernels' layout) ends the proof there and is a ``static_problems`` entry."""
    policy = resolve_storage(policy)
    from ..gpu.backend import GpuBackend  # noqa: PLC0415 - the backend imports the kernels; the plan's users need not

    steps = _Steps()
    runtime = CountingRuntime(limits, runtime_kind(limits), steps)
    backend = GpuBackend(runtime, storage=policy)
    backend.replay_enabled = False
    problems = []
    try:
        _prove(config, backend, statement_points, steps)
    except HostRead:
        pass  # the proof's readback: every allocation and launch is made
    except DeviceLimitError as exc:
        problems.append(str(exc))
    held = [BufferNeed(h.name, h.nbytes, h.binding_bytes, True, StorageMode.SHARED, h.count, h.buffer_bytes,
                       runtime=True) for h in runtime.held()]
    return MemoryPlan(_needs(runtime.allocations) + held, policy, statement_points, problems, runtime.commands,
                      tuple(runtime.kernel_requests))


def plan_buffers(config: Schedule, limits: DeviceLimits | None = None, policy: str | None = None) -> list[BufferNeed]:
    """``plan_memory(...).needs``."""
    return plan_memory(config, limits, policy).needs


def peak_bytes(config: Schedule, limits: DeviceLimits | None = None, policy: str | None = None) -> int:
    """Device memory at the proof's peak (``plan_memory(...).peak_bytes``)."""
    return plan_memory(config, limits, policy).peak_bytes
