"""The launch budget of a proof, counted as ``whirgpu bench --kernels`` counts it (the tracing runtime between the
backend and wgpu-native; lavapipe in CI launches what a GPU launches): dispatches and readbacks of a proof made
through ``Prover.prove`` on canonical words, the second on one prover (the first also builds constant tables).
The budgets are the launch work's targets; the bytes are the cpu backend's."""

from __future__ import annotations

import json

import pytest

import whirgpu
from tests.backend.conftest import open_runtime
from whirgpu.api import random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.bench.proof_profile import TracingRuntime
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import proof_to_json_tree

# (n, folding factor, log inverse rate): most dispatches a proof may take
BUDGETS = {(12, 4, 1): 40, (16, 2, 2): 120, (12, 1, 1): 120, (20, 4, 1): 100}


@pytest.fixture(scope="module")
def tracer():
    return TracingRuntime(open_runtime("wgpu", "u64"))


@pytest.mark.parametrize("point", list(BUDGETS), ids=lambda p: "%d:%d:%d" % p)
def test_a_proof_stays_within_its_launch_budget(tracer, point):
    params = ProtocolParameters.default(*point)
    prover = whirgpu.Prover(params, backend=GpuBackend(tracer))
    instance = random_canonical_instance(point[0], 3)
    prover.prove(*instance)
    tracer.reset()
    proof = prover.prove(*instance)
    counts = tracer.counts
    assert counts.dispatches <= BUDGETS[point], f"{point}: {counts.dispatches} dispatches, budget {BUDGETS[point]}"
    assert counts.reads == 1, f"{point}: {counts.reads} readbacks"
    want = whirgpu.Prover(params, backend="cpu").prove(*instance)
    assert json.dumps(proof_to_json_tree(proof.proof)) == json.dumps(proof_to_json_tree(want.proof))
