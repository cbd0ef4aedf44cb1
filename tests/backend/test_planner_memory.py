"""The memory plan bounds what a proof really allocates: on a fresh GpuBackend, every buffer the runtime is asked
for during one proof (the backend's pool never frees) adds up to at most the plan's pool bytes, and to at least
1 / SLACK of them. The slack is the plan's worst case for the query-sized buffers (openings, select factor tables):
it assumes every query index distinct, which small domains with many queries are far from (8:1:1 is the widest
case over n 8..16, fold 1..6, rate 1..3: 1.16).

The runtime's own buffers (wgpu's staging and launch-parameter buffers) are checked against the plan as well.
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
RUNTIMES = [("wgpu", "u64"), ("msl-cpu", "mulhi")]
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
        if name == "wgpu":
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
