"""The memory plan is the real pool: at 20 and more configurations (sizes, folding, rates, both profiles, storage
policies, buffer and binding limits lowered so that tables split across buffers and windows) on every runtime, a
real proof on a fresh ``GpuBackend`` makes its pool create exactly ``plan.pool_bytes`` (``GpuBackend.pool_bytes``:
the pool frees nothing, so that is its high-water mark), and the runtime's own buffers are what the plan gives
them: ``plan.peak_bytes`` is the pool plus those. The plan is a proof built on a runtime that only counts
(``runtime.counting``), so this holds by construction as long as the counting runtime and the real ones size the
same way; these tests are where a drift would show.
"""

from __future__ import annotations

import gc
from dataclasses import replace

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.memory import plan_memory
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.prover import PolynomialSource
from whirgpu.ref import field_np as F

from .conftest import open_runtime

RUNTIMES = [("wgpu", "u64"), ("dawn", "emulated"), ("msl-cpu", "mulhi"), ("metal", "mulhi")]
KIB = 1 << 10
# (profile, n, fold, rate, storage, (max_buffer_size, max_storage_binding_size) the backend lays out for, or None)
CASES = [
    ("whir", 8, 1, 1, "hybrid", None),  # the widest ratio, a long final sumcheck
    ("whir", 10, 1, 2, "hybrid", None),  # several rounds
    ("whir", 10, 4, 3, "hybrid", None),  # no round after the first
    ("whir", 10, 5, 1, "shared", None),
    ("whir", 8, 2, 2, "private", None),
    ("whir", 11, 1, 1, "hybrid", None),
    ("whir", 12, 4, 3, "shared", None),
    ("whir", 12, 3, 1, "hybrid", (None, 32 * KIB)),  # windows: weights of 64 KiB
    ("whir", 12, 1, 2, "hybrid", (None, 32 * KIB)),  # a 64 KiB codeword, 256 KiB of leaves
    ("whir", 12, 1, 2, "hybrid", (16 * KIB, 8 * KIB)),  # split codeword, levels and weights
    ("whir", 12, 2, 1, "hybrid", (4 * KIB, 1 * KIB)),  # split polynomial, weights, folded tables
    ("whir", 12, 2, 1, "shared", (4 * KIB, 1 * KIB)),
    ("whir", 12, 2, 1, "private", (4 * KIB, 1 * KIB)),
    ("whir", 11, 3, 2, "private", (8 * KIB, 2 * KIB)),
    ("whir", 9, 2, 1, "shared", (2 * KIB, 1 * KIB)),
    ("whir", 12, 4, 1, "hybrid", (128 * KIB, None)),  # only the leaf level split
    ("whir", 10, 3, 2, "private", (None, 4 * KIB)),
    ("koalabear", 10, 2, 1, "hybrid", None),  # the p3-whir profile: width-24 leaves, suffix order, drawn points
    ("babybear", 12, 4, 1, "hybrid", None),
    ("koalabear", 9, 1, 2, "hybrid", None),
    ("koalabear", 11, 5, 1, "shared", None),
    ("koalabear", 10, 2, 1, "hybrid", (4 * KIB, 1 * KIB)),
]


def config(profile: str, n: int, k: int, r: int):
    if profile == "whir":
        return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                                 starting_log_inv_rate=r))
    from whirgpu.field import field_by_name
    from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
    from whirgpu.protocol.folding import Constant
    from whirgpu.protocol.soundness import SoundnessType

    return P3WhirConfig.derive(n, P3Parameters(40, 0, Constant(k), SoundnessType.CapacityBound, r),
                               field_by_name(profile))


def prove(cfg, backend, seed: int = 1):
    """One proof as ``Prover.prove`` (``P3Prover.prove``) runs it: canonical words, converted and checked on the
    device, the claims evaluated there."""
    if getattr(cfg, "field", None) is not None:
        from whirgpu.profiles.p3_whir.prover import P3WhirProver

        words = np.random.default_rng(seed).integers(0, 1 << 30, 1 << cfg.num_variables).astype(np.uint32)
        P3WhirProver(cfg, cfg.field, backend).prove_p3(words, 1, canonical=True)
        return None
    poly, statement = random_instance(cfg.num_variables, seed)
    return MetalWhirProver(cfg, backend).prove_points(PolynomialSource(F.from_monty(poly)), statement.points)[0]


def held(runtime, name: str) -> dict[str, int]:
    """The bytes of each buffer the runtime holds itself, by the plan's names."""
    if name in ("wgpu", "dawn"):
        sizes = {"wgpu staging buffer": runtime._staging.size if runtime._staging is not None else 0,
                 "wgpu upload staging ring": sum(b.size for b in runtime._uploads),
                 "wgpu launch parameters": runtime._params.size if runtime._params is not None else 0}
    elif name == "metal":
        sizes = {"metal staging buffer": runtime._staging.nbytes if runtime._staging is not None else 0,
                 "metal upload staging ring": sum(b.nbytes for b in runtime._uploads)}
    else:
        sizes = {}
    return {key: size for key, size in sizes.items() if size}


@pytest.fixture
def runtimes(monkeypatch):
    """``open(name, mul)``: the runtime (Metal over the fake Objective-C bridge, its kernels run by msl-cpu)."""
    def open_(name: str, mul: str):
        if name != "metal":
            return open_runtime(name, mul)
        from whirgpu.runtime import _objc
        from whirgpu.runtime.metal_rt import MetalRuntime

        from . import fake_objc

        try:
            bridge = fake_objc.FakeBridge()
        except Exception as exc:  # noqa: BLE001 - the fake needs cffi and a C compiler
            pytest.skip(f"the fake Objective-C bridge is unavailable: {exc}")
        monkeypatch.setattr(_objc, "bridge", lambda: bridge)
        bridge.cpu.mul = mul
        return MetalRuntime(mul=mul)

    yield open_
    gc.collect()


def _layout(runtime, limits):
    """The device's limits with the case's buffer and binding limits (None: the device's)."""
    base = runtime.limits()
    if limits is None:
        return base
    buffer, binding = limits
    return replace(base, max_buffer_size=buffer or base.max_buffer_size,
                   max_storage_binding_size=binding or base.max_storage_binding_size)


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_the_plan_is_the_pool(name, mul, runtimes):
    """Every case on one runtime (fresh backends; the runtime keeps the largest of each of its own buffers, as the
    plans' maximum says); the first case on a fresh runtime: ``peak_bytes`` is the pool plus the runtime's. The
    fake Objective-C bridge compiles BabyBear kernels only: Metal runs the cases of that field."""
    runtime = runtimes(name, mul)
    most: dict[str, int] = {}
    cases = [case for case in CASES if name != "metal" or case[0] in ("whir", "babybear")]  # the fake's field
    for i, (profile, n, k, r, storage, limits) in enumerate(cases):
        cfg = config(profile, n, k, r)
        layout = _layout(runtime, limits)
        plan = plan_memory(cfg, layout, storage)
        where = f"{profile} {n}:{k}:{r} {storage} {limits} on {name}"
        assert not plan.limit_problems(runtime.limits()), where  # regions may pass the lowered limits: one buffer
        backend = GpuBackend(runtime, storage=storage)
        backend.buffer_limit, backend.binding_limit = layout.max_buffer_size, layout.max_storage_binding_size
        prove(cfg, backend)
        assert backend.pool_bytes == plan.pool_bytes, f"{where}: planned {plan.pool_bytes}, made {backend.pool_bytes}"
        for need in plan.needs:
            if need.runtime:
                most[need.name] = max(most.get(need.name, 0), need.nbytes)
        assert held(runtime, name) == most, where
        if i == 0:
            assert plan.peak_bytes == backend.pool_bytes + sum(held(runtime, name).values()), where
        if limits is not None and limits[1] is not None:  # the lowered binding limit windows something
            assert any(need.buffer_bytes > layout.max_storage_binding_size and not need.whole
                       for need in plan.needs if not need.runtime), where
    assert len(cases) >= 20 if name != "metal" else len(cases) >= 18


@pytest.mark.parametrize("name,mul", RUNTIMES[:3], ids=[name for name, _ in RUNTIMES[:3]])
def test_a_long_lived_backend_stays_within_the_plan(name, mul):
    """Proofs of one configuration on one backend, with instances whose transcripts draw different counts of
    distinct query indices: the pool never passes the plan, and nothing is allocated after the first proof."""
    runtime = open_runtime(name, mul)
    cfg = config("whir", 8, 1, 1)  # the final round draws 91 queries from 128 rows: about 65 distinct, give or take 4
    plan = plan_memory(cfg, runtime.limits(), "hybrid")
    backend = GpuBackend(runtime, storage="hybrid")
    totals, counts = [], []
    for seed in range(4):
        proof = prove(cfg, backend, seed)
        counts.append(tuple(len(r.queries) for r in proof.rounds) + (len(proof.final_queries),))
        totals.append(backend.pool_bytes)
    assert len(set(counts)) > 1, f"the instances drew the same distinct query counts {counts}: the test proves nothing"
    assert totals == [plan.pool_bytes] * len(totals), f"{name}: pool bytes after each proof {totals}, planned {plan.pool_bytes}"


def test_the_plan_counts_every_submissions_commands(monkeypatch):
    """The plan's commands per submission are the dispatches and copies a proof records (wgpu-native), for both
    profiles."""
    from whirgpu.runtime.wgpu_rt.pipelines import _WgpuBatch

    runtime = open_runtime("wgpu", "u64")
    submitted = []
    real_submit = _WgpuBatch.submit

    def submit(batch):
        submitted.append(len(batch.ops))  # its dispatches and copies
        real_submit(batch)

    monkeypatch.setattr(_WgpuBatch, "submit", submit)
    for case in (("whir", 12, 4, 3), ("whir", 10, 1, 2), ("koalabear", 10, 2, 1), ("koalabear", 11, 5, 1)):
        cfg = config(*case)
        submitted.clear()
        prove(cfg, GpuBackend(runtime))
        assert plan_memory(cfg, runtime.limits()).commands == submitted, case


def test_planning_a_large_proof_is_cheap():
    """2^28 values (folding 4 and 2: a 4 GiB weights table in two buffers) on an H100's wgpu limits: no device,
    no table in host memory, well under a second (5 s on a loaded runner)."""
    import resource
    import time

    from whirgpu.backends.base import DeviceLimits

    limits = DeviceLimits(name="H100", api="Vulkan", device_type="DiscreteGPU", max_buffer_size=4292870144,
                          max_storage_binding_size=2147483644)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for n, k in ((28, 4), (28, 2)):
        start = time.perf_counter()
        plan = plan_memory(config("whir", n, k, 1), limits)
        assert time.perf_counter() - start < 5 and plan.pool_bytes > 16 << n
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 256 << 10, f"planning grew the process by {grown_kib} KiB"
