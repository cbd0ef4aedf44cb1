"""The launch budget of a proof, counted as ``whirgpu bench --kernels`` counts it (the tracing runtime between the
backend and wgpu-native; lavapipe in CI launches what a GPU launches): dispatches and readbacks of a proof made
through ``Prover.prove`` on canonical words, the second on one prover (the first also builds constant tables).
The budgets are the launch work's targets; the bytes are the cpu backend's."""

from __future__ import annotations

import json

import numpy as np
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


def test_column_claims_launches_grow_with_batches_not_columns(tracer):
    """A batch's claims (``evaluate_columns``) take the same launches for 1 column as for 64, current or next: the
    point's eq table, then one partial and one finishing launch for all its columns."""
    from whirgpu.backends.base import P3_WHIR_LAYOUT
    from whirgpu.field import BABYBEAR

    backend = GpuBackend(tracer)
    backend.layout = P3_WHIR_LAYOUT(BABYBEAR)
    table = backend.upload(np.arange(1 << 12, dtype=np.uint32))
    point = np.ones((6, 4), np.uint32)
    counts = []
    for k in (1, 64):
        desc = np.array([(c << 6, 0, c % 2) for c in range(k)], np.int64)
        backend.evaluate_columns(table, point, desc)  # compiles, and makes the descriptors' buffer
        tracer.reset()
        backend.evaluate_columns(table, point, desc)
        counts.append(tracer.counts.dispatches)
    assert counts[0] == counts[1] <= 4, counts
