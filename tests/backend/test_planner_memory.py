"""The memory plan bounds what a proof really allocates: on a fresh GpuBackend, every buffer the runtime is asked
for during one proof (the backend's pool never frees) adds up to at most the plan's pool bytes, and to at least
1 / SLACK of them. The query-sized buffers (openings, select factor tables and their inputs) are sized for the
round's capacity whatever the count of distinct indices, as the plan assumes, so the plan is exact on the tested
grid (ratio 1.0); a long-lived backend proving one configuration again and again stays within it.

The runtime's own buffers (wgpu's staging and launch-parameter buffers, the same on wgpu-native and Dawn) are
checked against the plan as well.
"""

from __future__ import annotations

import pytest

from whirgpu.api import random_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.memory import plan_memory
from whirgpu.errors import DeviceLimitError
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.prover import WhirProver

from .conftest import open_runtime

SLACK = 1.2
RUNTIMES = [("wgpu", "u64"), ("dawn", "emulated"), ("msl-cpu", "mulhi")]
# (n, fold, rate, storage): several rounds (10:1:2: 3), none (10:4:3), a long final sumcheck (8:1:1: 6), the
# widest ratio (8:1:1), and every storage policy (the pool keys on the mode: the policy changes what is recycled)
CASES = [(8, 1, 1, "hybrid"), (10, 1, 2, "hybrid"), (10, 4, 3, "hybrid"), (10, 5, 1, "shared"), (8, 2, 2, "private")]


def config(n: int, k: int, r: int) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                             starting_log_inv_rate=r))


def _prove_counting(runtime, cfg: WhirConfig, storage: str, monkeypatch) -> int:
    """Bytes the runtime allocates for one proof on a fresh backend."""
    allocated = []
    real_alloc = runtime.alloc

    def alloc(nbytes, mode):
        allocated.append(nbytes)
        return real_alloc(nbytes, mode)

    with monkeypatch.context() as patch:
        patch.setattr(runtime, "alloc", alloc)
        backend = GpuBackend(runtime, storage=storage)
        poly, statement = random_instance(cfg.num_variables, 1)
        WhirProver(cfg, backend).prove(poly, statement)
    return sum(allocated)


def _runtime_buffers(runtime) -> dict[str, int]:
    """Sizes of the buffers a wgpu runtime holds itself (0: none yet)."""
    staging, params = getattr(runtime, "_staging", None), getattr(runtime, "_params", None)
    return {"wgpu staging buffer": staging.size if staging is not None else 0,
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
        if name in ("wgpu", "dawn"):
            planned = {need.name: need.nbytes for need in plan.needs if need.runtime}
            for buffer, size in _runtime_buffers(runtime).items():
                assert size <= planned.get(buffer, 0), f"{where}: {buffer} holds {size} bytes"


@pytest.mark.parametrize("name,mul", RUNTIMES, ids=[name for name, _ in RUNTIMES])
def test_split_bindings(name, mul, monkeypatch):
    """A small binding limit windows tables and weights (more partial sums); the bound still holds, and a
    configuration the plan refuses is one the kernels refuse."""
    limit = 32 << 10
    runtime = open_runtime(name, mul, max_binding_bytes=limit)
    cfg = config(12, 3, 1)  # weights of 64 KiB, in two windows
    plan = plan_memory(cfg, runtime.limits())
    assert not plan.limit_problems(runtime.limits())
    assert any(not need.whole and need.buffer_bytes > limit for need in plan.needs)
    actual = _prove_counting(runtime, cfg, "hybrid", monkeypatch)
    assert actual <= plan.pool_bytes <= SLACK * actual

    refused = config(12, 1, 2)  # a 64 KiB codeword, bound whole by the NTT
    problems = plan_memory(refused, runtime.limits()).limit_problems(runtime.limits())
    assert problems and "round 0 codeword needs one binding of 65536 bytes" in problems[0]
    with pytest.raises(DeviceLimitError):
        _prove_counting(runtime, refused, "hybrid", monkeypatch)


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
        poly, statement = random_instance(cfg.num_variables, seed)
        proof = WhirProver(cfg, backend).prove(poly, statement)
        counts.append(tuple(len(r.queries) for r in proof.rounds) + (len(proof.final_queries),))
        totals.append(sum(allocated))
    draws = set(counts)
    assert len(draws) > 1, f"the instances drew the same distinct query counts {draws}: the test proves nothing"
    assert max(totals) <= plan.pool_bytes, f"{name}: pool bytes after each proof {totals}, planned {plan.pool_bytes}"
    assert totals == [totals[0]] * len(totals), f"{name}: later proofs allocated more: {totals}"
