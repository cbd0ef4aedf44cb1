"""Pipelines compiled ahead for the shape at hand (``Runtime.prefetch``): opening a WebGPU backend for a
configuration starts compiling exactly the kernels the device planner's counted proof asked for
(``MemoryPlan.kernels``), and the proof then asks for no other kernel and uses every one of them."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.devices.planner import plan_device
from whirgpu.field import FIELDS
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.p3_whir.defaults import example_parameters
from whirgpu.proving import Prover
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.runtime.counting import CountingRuntime

from ..conftest import webgpu_adapter

# Below and above 2^14 Merkle states (the cooperative tree kernels), folds 4 and 3.
METAL_SHAPES = [(12, 4), (16, 3)]


def _kernel_keys(rt) -> set:
    return set(rt._kernels)


def _check(rt, plan_kernels, prove) -> None:
    prefetched = _kernel_keys(rt)
    assert prefetched == set(plan_kernels) and prefetched
    prove()
    assert _kernel_keys(rt) == prefetched  # the proof asked for nothing the plan did not name
    unused = [key for key, kernel in rt._kernels.items() if kernel._done is None]
    assert not unused  # and used every kernel it named


@pytest.mark.parametrize("impl", ["wgpu", "dawn"])
@pytest.mark.parametrize("n,fold", METAL_SHAPES)
def test_a_whir_p3_metal_proof_uses_exactly_the_prefetched_kernels(impl, n, fold):
    if impl == "dawn" and n > 12:
        pytest.skip("Dawn: one shape is enough (the same planner and kernel cache)")
    webgpu_adapter(impl)
    params = ProtocolParameters.default(num_variables=n, folding_factor=fold, starting_log_inv_rate=1)
    prover = Prover(params, backend=impl)
    rt = prover.backend.rt
    plan = plan_device(prover.config, rt.limits(), prover.storage)
    values = np.random.default_rng(n).integers(0, FIELDS["babybear"].P, 1 << n)
    point = np.random.default_rng(fold).integers(0, FIELDS["babybear"].P, (1, n, 4))
    _check(rt, plan.memory.kernels, lambda: prover.prove(values, point))


@pytest.mark.parametrize("field_name", sorted(FIELDS))
@pytest.mark.parametrize("n", [12, 16])
def test_a_p3_whir_proof_uses_exactly_the_prefetched_kernels(field_name, n):
    webgpu_adapter("wgpu")
    prover = P3Prover(n, example_parameters(None, None, None, None, None), FIELDS[field_name], backend="wgpu")
    rt = prover.backend.rt
    plan = plan_device(prover.config, rt.limits(), prover.storage)
    values = np.random.default_rng(n).integers(0, FIELDS[field_name].P, 1 << n)
    _check(rt, plan.memory.kernels, lambda: prover.prove(values, 1, seed=1))


def test_the_counting_runtime_records_each_kernel_once_as_asked():
    rt = CountingRuntime(None, "wgpu")
    rt.kernel("merkle_leaves", None, {"B": 2, "A": 1})
    rt.kernel("ntt", "ntt_stage", None, "koalabear")
    rt.kernel("merkle_leaves", None, {"A": 1, "B": 2})
    assert list(rt.kernel_requests) == [("merkle_leaves", None, (("A", 1), ("B", 2)), "babybear"),
                                        ("ntt", "ntt_stage", (), "koalabear")]


def test_a_runtime_that_compiles_in_place_prefetches_nothing():
    """``Runtime.prefetch``'s default (Metal, msl-cpu: they compile in the caller's thread, at first use)."""
    rt = CountingRuntime(None, "msl-cpu")
    assert rt.prefetch([("merkle_leaves", None, (), "babybear")]) == 0 and not rt.kernel_requests


def test_closing_a_runtime_settles_the_compilations_it_started():
    """A backend closed before its proof (the prefetched kernels still compiling on the pool): ``close`` cancels
    those not started and waits for the running ones, so no worker compiles on the destroyed device."""
    webgpu_adapter("wgpu")
    params = ProtocolParameters.default(num_variables=14, folding_factor=4, starting_log_inv_rate=1)
    prover = Prover(params, backend="wgpu")
    rt = prover.backend.rt
    started = list(rt._compiling)
    assert started  # the prefetch is on the pool
    prover.close()
    assert all(future.done() for future in started)  # done, failed or cancelled: none still running or queued
    assert not rt._compiling
