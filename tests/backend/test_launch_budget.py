"""The launch budget of a proof, counted as ``whirgpu bench --kernels`` counts it (the proof's launch program,
``GpuBackend.last_program``) and as the runtime sees it (a counting wrapper between the backend and wgpu-native;
lavapipe in CI launches what a GPU launches), the two equal: dispatches and readbacks of a proof made through
``Prover.prove`` on canonical words, the second on one prover (the first also builds constant tables; the second
is recorded as the shape's program). The budgets are the launch work's targets; the bytes are the cpu backend's."""

from __future__ import annotations

import json

import numpy as np
import pytest

import whirgpu
from tests.backend.conftest import open_runtime
from whirgpu.api import random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from .counting_runtime import CountingRuntime
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import proof_to_json_tree

# (n, folding factor, log inverse rate): most dispatches a proof may take
BUDGETS = {(12, 4, 1): 40, (16, 2, 2): 120, (12, 1, 1): 120, (20, 4, 1): 100}


@pytest.fixture(scope="module")
def tracer():
    return CountingRuntime(open_runtime("wgpu", "u64"))


@pytest.mark.parametrize("point", list(BUDGETS), ids=lambda p: "%d:%d:%d" % p)
def test_a_proof_stays_within_its_launch_budget(tracer, point):
    params = ProtocolParameters.default(*point)
    backend = GpuBackend(tracer)
    prover = whirgpu.Prover(params, backend=backend)
    instance = random_canonical_instance(point[0], 3)
    prover.prove(*instance)
    tracer.reset()
    proof = prover.prove(*instance)
    counts, program = tracer.counts, backend.last_program.program.counts()
    assert counts.dispatches <= BUDGETS[point], f"{point}: {counts.dispatches} dispatches, budget {BUDGETS[point]}"
    assert counts.reads == 1, f"{point}: {counts.reads} readbacks"
    assert (program.dispatches, program.copies, program.submissions, program.writes, program.write_bytes) == \
        (counts.dispatches, counts.copies, counts.submissions, counts.writes, counts.write_bytes)  # what was sent
    tracer.reset()
    prover.prove(*instance)  # replayed: the same again
    assert (tracer.counts.dispatches, tracer.counts.reads) == (counts.dispatches, 1)
    want = whirgpu.Prover(params, backend="cpu").prove(*instance)
    assert json.dumps(proof_to_json_tree(proof.proof)) == json.dumps(proof_to_json_tree(want.proof))


def test_column_claims_launches_grow_with_batches_not_columns(tracer):
    """A batch's claims (``evaluate_columns``) and their weights (``column_weights``) take the same launches for 1
    column as for 64, current or next: the point's eq table, then one partial and one finishing launch (claims) or
    one scatter (weights) for all its columns; two batches take twice the weights' per-batch launches."""
    from whirgpu.backends.base import P3_WHIR_LAYOUT
    from whirgpu.field import BABYBEAR

    backend = GpuBackend(tracer)
    backend.layout = P3_WHIR_LAYOUT(BABYBEAR)
    table = backend.upload(np.arange(1 << 12, dtype=np.uint32))
    point = np.ones((6, 4), np.uint32)
    coefficients = np.ones((128, 4), np.uint32)
    claims, weights = [], []
    for k in (1, 64):
        desc = np.array([(c << 6, 0, c % 2) for c in range(k)], np.int64)
        backend.evaluate_columns(table, point, desc)  # compiles, and makes the descriptors' buffer
        tracer.reset()
        backend.evaluate_columns(table, point, desc)
        claims.append(tracer.counts.dispatches)
        batch = (point, np.hstack([desc, np.arange(k, dtype=np.int64)[:, None]]))
        for batches in ([batch], [batch, batch]):
            backend.column_weights(12, batches, coefficients)
            tracer.reset()
            backend.column_weights(12, batches, coefficients)
            weights.append(tracer.counts.dispatches)
    assert claims[0] == claims[1] <= 4, claims
    one, two = weights[0], weights[1]
    assert weights == [one, two, one, two] and two - one <= 3, weights


def test_a_tables_proof_launches_per_batch_not_per_column(tracer):
    """Two tables proofs of one stacked shape, opening 1 column or all 8 columns at both rows in the same two
    batches, take the same launches (and one readback each), with proofs the cpu backend reproduces."""
    from whirgpu.backends.cpu import CpuBackend
    from whirgpu.field import KOALABEAR
    from whirgpu.profiles.p3_whir.format import pcs_proof_to_postcard
    from whirgpu.profiles.p3_whir.tables.prover import prove_tables
    from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape, TablesProtocol

    from ..protocol.test_p3_tables import _config, random_columns

    shapes = (TableShape(7, 8),)
    config = _config(10, 2, KOALABEAR)
    every = tuple(range(8))
    counts = []
    for batches in (((0, (0,), ()), (0, (), (3,))), ((0, every, every), (0, every, every))):
        protocol = TablesProtocol(shapes, tuple(OpeningBatch(*b) for b in batches))
        columns = random_columns(protocol, KOALABEAR, 5)
        backend = GpuBackend(tracer)
        prove_tables(config, KOALABEAR, backend, columns, protocol, "prefix")  # compiles
        tracer.reset()
        proved = prove_tables(config, KOALABEAR, backend, columns, protocol, "prefix")
        counts.append((tracer.counts.dispatches, tracer.counts.reads))
        want = prove_tables(config, KOALABEAR, CpuBackend(), columns, protocol, "prefix")
        assert pcs_proof_to_postcard(proved.proof) == pcs_proof_to_postcard(want.proof)
    assert counts[0] == counts[1] and counts[0][1] == 1, counts
