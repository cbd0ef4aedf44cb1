"""Column claims (``Backend.evaluate_columns``, the ``column_claims`` kernel) on every runtime, bit for bit against
the numpy reference: the claims of opening batches read from the stacked polynomial of either layout
(``claims.column_descriptors``) equal ``claims.evaluate_batch`` on the table's own columns, current and next;
tables of one row up to several workgroups of rows, many columns (a 2-D grid of partials), both fields."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import DeviceLimitError
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.tables.claims import claim_terms, column_descriptors, evaluate_batch, stacked_claims
from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape, TablesProtocol
from whirgpu.profiles.p3_whir.tables.stacking import plan_layout
from whirgpu.ref.field_np import field_ops
from .field_inputs import random_monty


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    yield backend
    backend.layout = CpuBackend.layout


# (log_rows, columns) per table: 2^9 rows = two workgroups, a table below the folding factor, 1-row tables,
# a wide table (its claims' partials on a 2-D grid)
SHAPES = [((9, 3), (3, 5), (0, 2)), ((1, 1),), ((4, 40), (6, 2))]


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("layout", ["suffix", "prefix"])
@pytest.mark.parametrize("shapes", SHAPES, ids=["mixed", "one", "wide"])
def test_batch_claims_from_the_stacked_table(gpu, field, layout, shapes):
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(field, layout)
    rng = np.random.default_rng(len(shapes) * 5 + len(layout))
    protocol = TablesProtocol(tuple(TableShape(r, c) for r, c in shapes))
    stacked = plan_layout(protocol, 1, layout)
    padded = [np.zeros((c, 1 << m), np.uint32) for (r, c), m in zip(shapes, stacked.table_log_rows)]
    for table, (r, c) in zip(padded, shapes):
        table[:, :1 << r] = random_monty(rng, field, (c, 1 << r))
    words = stacked.stack(padded)
    device_table = gpu.upload(words)
    for t, (r, c) in enumerate(shapes):
        m = stacked.table_log_rows[t]
        current = [int(x) for x in rng.permutation(c)[:max(1, c - 1)]]
        following = [int(x) for x in rng.permutation(c)[:max(1, c // 2)]]
        point = random_monty(rng, field, (m, 4))
        want = np.concatenate(evaluate_batch(padded[t], current, following, point, field))
        desc = column_descriptors(stacked, t, current, following)
        assert np.array_equal(cpu.evaluate_columns(cpu.upload(words), point, desc), want)
        assert np.array_equal(gpu.evaluate_columns(device_table, point, desc), want)


def test_a_table_past_one_binding_is_refused(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    backend.binding_limit = 256
    with pytest.raises(DeviceLimitError, match="max_storage_binding_size"):
        backend.evaluate_columns(backend.upload(np.zeros(128, np.uint32)), np.zeros((2, 4), np.uint32),
                                 np.array([(0, 0, 0)]))


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("layout", ["suffix", "prefix"])
@pytest.mark.parametrize("shapes", SHAPES, ids=["mixed", "one", "wide"])
def test_column_weights_are_the_lifted_claims(gpu, field, layout, shapes):
    """``column_weights`` equals the eq and next-row weights at the lifted points (``stacked_claims``, as the cpu
    prover builds them), a column opened current and next in one batch and in two batches of one table."""
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(field, layout)
    rng = np.random.default_rng(len(shapes) * 11 + len(layout))
    batches = []
    for t, (r, c) in enumerate(shapes):
        batches.append(OpeningBatch(t, tuple(range(c)), tuple(sorted({c - 1, 0}))))
        batches.append(OpeningBatch(t, (0,), ()))
    protocol = TablesProtocol(tuple(TableShape(r, c) for r, c in shapes), tuple(batches))
    stacked = plan_layout(protocol, 1, layout)
    points = [random_monty(rng, field, (stacked.table_log_rows[b.table], 4)) for b in protocol.batches]
    claims = stacked_claims(stacked, protocol, points, field)
    coefficients = random_monty(rng, field, (claims.n_claims, 4))
    want = cpu.eq_weights(claims.eq_points, coefficients[claims.eq_powers])
    want = cpu.add_next_weights(want, claims.next_points, claims.next_windows, coefficients[claims.next_powers])
    power = {(term.batch, term.next, term.position): term.power for term in claim_terms(stacked, protocol)}
    batch_args = []
    for b, batch in enumerate(protocol.batches):
        desc = column_descriptors(stacked, batch.table, batch.current, batch.next)
        kinds = [(False, j) for j in range(len(batch.current))] + [(True, j) for j in range(len(batch.next))]
        powers = np.array([[power[(b, nx, j)]] for nx, j in kinds], np.int64).reshape(-1, 1)
        batch_args.append((points[b], np.hstack([desc, powers])))
    n = stacked.num_variables
    assert np.array_equal(cpu.column_weights(n, batch_args, coefficients).handle, want.handle)
    assert np.array_equal(gpu.download(gpu.column_weights(n, batch_args, coefficients)), want.handle)


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("layout", ["suffix", "prefix"])
@pytest.mark.parametrize("shapes", SHAPES, ids=["mixed", "one", "wide"])
@pytest.mark.parametrize("col_major", [False, True], ids=["rows", "columns"])
def test_stacking_on_the_device(gpu, field, layout, shapes, col_major):
    """``stack_columns`` from (rows, columns) or (columns, rows) canonical words equals ``StackedLayout.stack`` of
    the Montgomery columns (tables shorter than their slots, 1-row tables, selector bits 0 in the prefix layout)."""
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(field, layout)
    rng = np.random.default_rng(len(shapes) * 3 + col_major)
    protocol = TablesProtocol(tuple(TableShape(r, c) for r, c in shapes))
    stacked = plan_layout(protocol, 1, layout)
    ops = field_ops(field)
    canonical = [ops.from_monty(random_monty(rng, field, (c, 1 << r))) for r, c in shapes]
    want = stacked.stack([ops.to_monty(c) for c in canonical])
    tables = []
    for placement in stacked.placements:
        words = canonical[placement.table]
        tables.append((words if col_major else words.T.copy(), placement.first_slot, placement.log_rows,
                       layout == "prefix", col_major))
    n = stacked.num_variables
    assert np.array_equal(cpu.download(cpu.stack_columns(n, tables)), want)
    assert np.array_equal(gpu.download(gpu.stack_columns(n, tables)), want)


def test_stacking_many_tables_outside_a_proof(gpu):
    """Twelve tables stacked by a host-valued call: each range check takes an aligned slot of the call's own region
    (sized for them all), and the result is the cpu backend's."""
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(KOALABEAR, "suffix")
    rng = np.random.default_rng(12)
    tables = [(random_monty(rng, KOALABEAR, (2, 4)) % KOALABEAR.P, 2 * i, 2, False, True) for i in range(12)]
    assert np.array_equal(gpu.download(gpu.stack_columns(7, tables)), cpu.download(cpu.stack_columns(7, tables)))
