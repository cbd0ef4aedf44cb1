"""The memory plan bounds what a proof really allocates: on a fresh GpuBackend, every buffer the runtime is asked
for during one proof (the backend's pool never frees) adds up to at most the plan's pool bytes, and to at least
1 / SLACK of them. The query-sized buffers (openings, select factor tables and their inputs) are sized for the
round's capacity whatever the count of distinct indices, as the plan assumes, so the plan is exact on the tested
grid (ratio 1.0); a long-lived backend proving one configuration again and again stays within it.

The runtime's own buffers (wgpu's staging and launch-parameter buffers, the same on wgpu-native and Dawn) are
checked against the plan as well.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.memory import plan_memory
from whirgpu.devices.planner import plan_device
from whirgpu.errors import DeviceLimitError
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.prover import PolynomialSource, WhirProver
from whirgpu.ref import field_np as F

from .conftest import open_runtime

SLACK = 1.2
RUNTIMES = [("wgpu", "u64"), ("dawn", "emulated"), ("msl-cpu", "mulhi")]
# (n, fold, rate, storage): several rounds (10:1:2: 3), none (10:4:3), a long final sumcheck (8:1:1: 6), the
# widest ratio (8:1:1), and every storage policy (the pool keys on the mode: the policy changes what is recycled)
CASES = [(8, 1, 1, "hybrid"), (10, 1, 2, "hybrid"), (10, 4, 3, "hybrid"), (10, 5, 1, "shared"), (8, 2, 2, "private")]


def config(n: int, k: int, r: int) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                             starting_log_inv_rate=r))


def _prove_as_users_do(cfg: WhirConfig, backend, seed: int):
    """One proof as ``Prover.prove`` runs it (the path the plan models): canonical words, claims on the device."""
    poly, statement = random_instance(cfg.num_variables, seed)
    return WhirProver(cfg, backend).prove_points(PolynomialSource(F.from_monty(poly)), statement.points)[0]


def _prove_counting(runtime, cfg: WhirConfig, storage: str, monkeypatch, layout_limits=None, prove=None) -> int:
    """Bytes the runtime allocates for one proof on a fresh backend; ``layout_limits`` (DeviceLimits): the buffer
    and binding limits the backend lays its split arrays out for (default: the device's); ``prove(cfg, backend,
    seed)``: how the proof is made (default ``_prove_as_users_do``)."""
    allocated = []
    real_alloc = runtime.alloc

    def alloc(nbytes, mode):
        allocated.append(nbytes)
        return real_alloc(nbytes, mode)

    with monkeypatch.context() as patch:
        patch.setattr(runtime, "alloc", alloc)
        backend = GpuBackend(runtime, storage=storage)
        if layout_limits is not None:
            backend.buffer_limit = layout_limits.max_buffer_size
            backend.binding_limit = layout_limits.max_storage_binding_size
        (prove or _prove_as_users_do)(cfg, backend, 1)
    return sum(allocated)


def _runtime_buffers(runtime) -> dict[str, int]:
    """Sizes of the buffers a wgpu runtime holds itself (0: none yet)."""
    staging, params = getattr(runtime, "_staging", None), getattr(runtime, "_params", None)
    return {"wgpu staging buffer": staging.size if staging is not None else 0,
            "wgpu upload staging ring": sum(b.size for b in getattr(runtime, "_uploads", [])),
            "wgpu launch parameters": params.size if params is not None else 0}


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_the_plan_bounds_the_allocations(name, mul, monkeypatch):
    for n, k, r, storage in CASES:
        runtime = open_runtime(name, mul)  # fresh: the runtime-held buffers start empty
        cfg = config(n, k, r)
        actual = _prove_counting(runtime, cfg, storage, monkeypatch)
        plan = plan_memory(cfg, runtime.limits(), storage)
        where = f"{n}:{k}:{r} {storage} on {name}: planned {plan.pool_bytes}, allocated {actual}"
        assert actual <= plan.pool_bytes <= SLACK * actual, where
        _check_runtime_buffers(runtime, plan, name, where)


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_split_bindings(name, mul, monkeypatch):
    """A small binding limit windows tables and weights (more partial sums), codewords and Merkle levels (more
    launches, so a bigger wgpu parameter buffer); the plan still equals the allocations."""
    limit = 32 << 10
    for cfg in (config(12, 3, 1), config(12, 1, 2)):  # weights of 64 KiB; a 64 KiB codeword, 256 KiB of leaves
        runtime = open_runtime(name, mul, max_binding_bytes=limit)  # fresh: the runtime-held buffers start empty
        plan = plan_memory(cfg, runtime.limits())
        assert not plan.limit_problems(runtime.limits())
        assert any(not need.whole and need.buffer_bytes > limit for need in plan.needs)
        actual = _prove_counting(runtime, cfg, "hybrid", monkeypatch)
        assert actual == plan.pool_bytes
        _check_runtime_buffers(runtime, plan, name)


def _check_runtime_buffers(runtime, plan, name: str, where: str = "") -> None:
    """The buffers a wgpu or Dawn runtime holds itself are within what the plan gives them."""
    if name in ("wgpu", "dawn"):
        planned = {need.name: need.nbytes for need in plan.needs if need.runtime}
        for buffer, size in _runtime_buffers(runtime).items():
            assert size <= planned.get(buffer, 0), f"{where}: {buffer} holds {size} bytes"


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_split_buffers(name, mul, monkeypatch):
    """Codewords, Merkle levels and tables over the buffer limit are stored as several buffers, and bound in
    windows of 8 KiB: the plan models both (buffer by buffer, exactly), and refuses only for the memory budget."""
    runtime = open_runtime(name, mul)
    cfg = config(12, 1, 2)  # round 0: 64 KiB of weights, a 64 KiB codeword and 256 KiB of leaf digests
    limits = replace(runtime.limits(), max_buffer_size=16 << 10, max_storage_binding_size=8 << 10)
    plan = plan_memory(cfg, limits)
    # regions may be single buffers over these tiny limits; codewords, trees and tables never are
    assert not [p for p in plan.limit_problems(limits) if any(w in p for w in ("codeword", "merkle", "weights",
                                                                                "polynomial", "folded"))]
    needs = {need.name: need for need in plan.needs}
    assert needs["round 0 weights"].count == 4 and needs["round 0 weights"].buffer_bytes == 16 << 10
    assert needs["round 0 folded table and weights"].buffer_bytes == 16 << 10
    assert needs["round 0 codeword"].count == 4 and needs["round 0 codeword"].buffer_bytes == 16 << 10
    assert needs["round 0 merkle tree"].buffer_bytes == 16 << 10
    assert needs["round 0 codeword"].binding_bytes == 8 << 10

    assert _prove_counting(runtime, cfg, "hybrid", monkeypatch, limits) == plan.pool_bytes
    _check_runtime_buffers(runtime, plan, name)

    # with only the leaf level (256 KiB) over the buffer limit, nothing but the memory budget refuses the proof
    limits = replace(runtime.limits(), max_buffer_size=128 << 10)
    plan = plan_memory(cfg, limits)
    assert plan.limit_problems(limits) == []
    assert {need.name: need.count for need in plan.needs}["round 0 merkle tree"] >= 2
    device = plan_device(cfg, limits, max_gpu_bytes=plan.peak_bytes - 1)
    assert [p.kind for p in device.problems] == ["max_gpu_bytes"]
    assert "max_gpu_bytes" in device.problems[0].message
    assert plan_device(cfg, limits, max_gpu_bytes=plan.peak_bytes).problems == []


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
@pytest.mark.parametrize("storage", ["hybrid", "shared"])
def test_split_tables_planned_exactly(name, mul, storage, monkeypatch):
    """With 4 KiB buffers and 1 KiB windows the polynomial, the weights and the early folded tables are several
    buffers each (host-facing ones too, under ``shared``): the plan is still the allocations, byte for byte, and
    has no limit problem from them."""
    runtime = open_runtime(name, mul)
    cfg = config(12, 2, 1)
    limits = replace(runtime.limits(), max_buffer_size=4 << 10, max_storage_binding_size=1 << 10)
    plan = plan_memory(cfg, limits, storage)
    counts = {need.name: need.count for need in plan.needs}
    assert counts["round 0 polynomial"] == 4 and counts["round 0 weights"] == 16
    assert counts["round 0 folded table and weights"] >= 2 * 8
    assert _prove_counting(runtime, cfg, storage, monkeypatch, limits) == plan.pool_bytes
    _check_runtime_buffers(runtime, plan, name)


def test_real_alloc_still_refuses_over_max_buffer_size():
    """The backend's lowered buffer limit lays out split arrays; the runtime still refuses the device's own."""
    runtime = open_runtime("wgpu", "emulated")
    with pytest.raises(DeviceLimitError):
        runtime.alloc(runtime.limits().max_buffer_size + 16)


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_a_long_lived_backend_stays_within_the_plan(name, mul, monkeypatch):
    """Proofs of one configuration on one backend, with instances whose transcripts draw different counts of
    distinct query indices: the pool never holds more than the plan, and nothing is allocated after the first
    proof (before the fix each new count was a new pool key, and the pool grew proof after proof)."""
    runtime = open_runtime(name, mul)
    cfg = config(8, 1, 1)  # the final round draws 91 queries from 128 rows: about 65 distinct, give or take 4
    plan = plan_memory(cfg, runtime.limits(), "hybrid")
    allocated, counts = [], []
    real_alloc = runtime.alloc
    monkeypatch.setattr(runtime, "alloc", lambda nbytes, mode: (allocated.append(nbytes), real_alloc(nbytes, mode))[1])
    backend = GpuBackend(runtime, storage="hybrid")
    totals = []
    for seed in range(4):
        proof = _prove_as_users_do(cfg, backend, seed)
        counts.append(tuple(len(r.queries) for r in proof.rounds) + (len(proof.final_queries),))
        totals.append(sum(allocated))
    draws = set(counts)
    assert len(draws) > 1, f"the instances drew the same distinct query counts {draws}: the test proves nothing"
    assert max(totals) <= plan.pool_bytes, f"{name}: pool bytes after each proof {totals}, planned {plan.pool_bytes}"
    assert totals == [totals[0]] * len(totals), f"{name}: later proofs allocated more: {totals}"


def test_the_plan_counts_every_submissions_dispatches(monkeypatch):
    """The plan's commands per submission are the dispatches and copies a proof records (wgpu-native): a
    commitment's submission ends before its tree's last merkle_top launch, which the next one opens with the
    transcript ops that follow it (no root copy); the last submission copies the final polynomial. Grinds of the
    commitment's folding (12:4:3: 1 bit), of rounds and of the final round, several rounds (10:1:2)."""
    from whirgpu.runtime.wgpu_rt.pipelines import _WgpuBatch

    runtime = open_runtime("wgpu", "u64")
    submitted = []
    real_submit = _WgpuBatch.submit

    def submit(batch):
        submitted.append(sum(op[0] in ("dispatch", "copy") for op in batch.ops))
        real_submit(batch)

    monkeypatch.setattr(_WgpuBatch, "submit", submit)
    for n, k, r in ((12, 4, 3), (10, 1, 2)):
        cfg = config(n, k, r)
        submitted.clear()
        _prove_as_users_do(cfg, GpuBackend(runtime), 1)
        assert plan_memory(cfg, runtime.limits()).commands == submitted, f"{n}:{k}:{r}"


# The p3-whir profile's layout (width-24 leaves, suffix order, the openings' indices, the statement drawn after
# the OOD answers and weighed in two batches): (field, n, fold, rate) with several rounds, none, a long final phase
P3_CASES = [("koalabear", 10, 2, 1), ("babybear", 12, 4, 1), ("koalabear", 9, 1, 2), ("koalabear", 11, 5, 1)]


def p3_config(field: str, n: int, k: int, r: int):
    from whirgpu.field import field_by_name
    from whirgpu.protocol.folding import Constant
    from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
    from whirgpu.protocol.soundness import SoundnessType

    return P3WhirConfig.derive(n, P3Parameters(40, 0, Constant(k), SoundnessType.CapacityBound, r),
                               field_by_name(field))


def _prove_p3(cfg, backend, seed: int = 1) -> None:
    """One proof as ``P3Prover.prove`` runs it: canonical words converted on the device, one opening drawn."""
    from whirgpu.profiles.p3_whir.prover import P3WhirProver

    words = np.random.default_rng(seed).integers(0, 1 << 30, 1 << cfg.num_variables).astype(np.uint32)
    P3WhirProver(cfg, cfg.field, backend).prove_p3(words, 1, canonical=True)


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
@pytest.mark.parametrize("field,n,k,r", P3_CASES, ids=["-".join(map(str, case)) for case in P3_CASES])
def test_the_p3_plan_equals_the_allocations(name, mul, field, n, k, r, monkeypatch):
    """One instance per case (the default tier spreads the cases over the runtimes: each first compile of a
    case's kernels on lavapipe takes seconds)."""
    runtime = open_runtime(name, mul)
    cfg = p3_config(field, n, k, r)
    allocated = _prove_counting(runtime, cfg, "hybrid", monkeypatch, prove=_prove_p3)
    plan = plan_memory(cfg, runtime.limits())
    where = f"{field} {n}:{k}:{r} on {name}: planned {plan.pool_bytes}, allocated {allocated}"
    assert allocated <= plan.pool_bytes <= SLACK * allocated, where
    _check_runtime_buffers(runtime, plan, name, where)


def test_the_p3_plan_counts_every_submissions_dispatches(monkeypatch):
    """As for the whir-p3-metal profile: the plan's commands per submission are what a p3-whir proof records."""
    from whirgpu.runtime.wgpu_rt.pipelines import _WgpuBatch

    runtime = open_runtime("wgpu", "u64")
    submitted = []
    real_submit = _WgpuBatch.submit

    def submit(batch):
        submitted.append(sum(op[0] in ("dispatch", "copy") for op in batch.ops))
        real_submit(batch)

    monkeypatch.setattr(_WgpuBatch, "submit", submit)
    for field, n, k, r in P3_CASES:
        cfg = p3_config(field, n, k, r)
        submitted.clear()
        _prove_p3(cfg, GpuBackend(runtime))
        assert plan_memory(cfg, runtime.limits()).commands == submitted, f"{field} {n}:{k}:{r}"
