"""Stacked multi-table commitments in the p3-whir profile (issue 38 item 1): every golden-tables file (t01..t07:
both layouts, several tables, next-row openings, prescribed points, a padded table, grinding, BabyBear and
KoalaBear) reproduced byte for byte from its columns (commitment and postcard proof) and verified, on every
backend that proves tables; the stacking, the claims and their batching order against the files; random shapes
round-trip in both layouts.

``TABLE_BACKENDS`` lists the backends these tests run on: "cpu", and the GPU backends as "RUNTIME-MUL" (wgpu-native
and Dawn with the emulated multiply, msl-cpu with mulhi): ``make_backend`` opens its runtime through
``tests/backend/conftest.py``'s ``open_runtime`` (a skip with the reason when the runtime cannot open, a failure
when ``WHIRGPU_REQUIRE`` names it) and skips a backend that does not say ``proves_tables``.
"""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT, TableLayout
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.format import merkle_cap_to_json, merkle_cap_to_postcard, pcs_proof_to_json, \
    pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.prover import P3WhirProver, prove_p3
from whirgpu.profiles.p3_whir.tables.claims import claim_terms, evaluate_batch
from whirgpu.profiles.p3_whir.tables.prover import P3TablesProver, prove_tables
from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape, TablesProtocol
from whirgpu.profiles.p3_whir.tables.stacking import plan_layout
from whirgpu.profiles.p3_whir.tables.verifier import verify_tables
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.prover import WhirProver
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.ref import multilinear, shift
from whirgpu.ref.field_np import field_ops

from .p3_tables_cases import GOLDEN_TABLES, SHARED, SHIPPED, TablesCase, golden_tables_bytes

TABLE_BACKENDS = ["cpu", "wgpu-emulated", "msl-cpu-mulhi", "dawn-emulated"]


def make_backend(name: str):
    if name == "cpu":
        return CpuBackend()
    from whirgpu.backends.gpu import GpuBackend

    from ..backend.conftest import open_runtime

    runtime, mul = name.rsplit("-", 1)
    backend = GpuBackend(open_runtime(runtime, mul))
    if not backend.proves_tables:
        backend.close()
        pytest.skip(f"the {backend.name} backend does not prove stacked tables yet (issue 38 item 2)")
    return backend


@pytest.fixture(params=TABLE_BACKENDS)
def backend(request):
    return make_backend(request.param)


_cases: dict[str, TablesCase] = {}


def case(name: str) -> TablesCase:
    if name not in _cases:
        _cases[name] = TablesCase.golden(name)
    return _cases[name]


def test_the_golden_set_is_shipped():
    assert len(GOLDEN_TABLES) == 7
    assert all(name in (SHIPPED / "MANIFEST.tsv").read_text() for name in GOLDEN_TABLES)


@pytest.mark.parametrize("name", GOLDEN_TABLES)
def test_shipped_copy_equals_the_shared_file(name):
    if not (SHARED / name).is_file():
        pytest.skip(f"{SHARED} is absent (a fresh clone)")
    assert golden_tables_bytes(name) == (SHARED / name).read_bytes()


@pytest.mark.parametrize("name", GOLDEN_TABLES)
def test_golden_reproduces_and_verifies(backend, name):
    c = case(name)
    proved = prove_tables(c.config, c.field, backend, c.columns, c.protocol, c.layout, c.points)
    document = c.document
    assert merkle_cap_to_postcard(proved.commitment).hex() == document["commitment_postcard_hex"]
    assert merkle_cap_to_json(proved.commitment) == document["commitment"]
    assert pcs_proof_to_postcard(proved.proof).hex() == document["proof_postcard_hex"]
    assert pcs_proof_to_json(proved.proof) == document["proof"]
    assert [c.ops.from_monty(p).tolist() for p in proved.points] == \
        [o["point_canonical"] for o in document["openings"]]
    opened = verify_tables(c.config, c.field, c.commitment(), c.proof(), c.protocol, c.layout, c.points)
    assert [c.ops.from_monty(v).tolist() for v in opened.current] == \
        [o["current_values_canonical"] for o in document["openings"]]
    assert [c.ops.from_monty(v).tolist() for v in opened.next] == \
        [o["next_values_canonical"] for o in document["openings"]]
    assert [c.ops.from_monty(p).tolist() for p in opened.points] == \
        [o["point_canonical"] for o in document["openings"]]
    assert c.ops.from_monty(opened.ood_points).tolist() == document["initial_ood_points_canonical"]


@pytest.mark.parametrize("name", GOLDEN_TABLES)
def test_stacking_matches_the_file(name):
    c = case(name)
    stacking = c.document["stacking"]
    stacked = plan_layout(c.protocol, c.config.fold(0), c.layout)
    assert stacked.num_variables == stacking["num_variables"]
    assert [p.table for p in stacked.placements] == [p["table"] for p in stacking["placements"]]
    for placed, expected in zip(stacked.placements, stacking["placements"]):
        assert placed.log_rows == expected["committed_log_rows"]
        assert stacked.selector_bits(placed.table) == expected["selector_bits"]
        for column, want in zip(placed.columns, expected["columns"]):
            assert (column.slot, column.selector_value) == (want["slot"], want["selector_value"])
            rows = stacked.row_indices(placed.table, column.column)
            assert rows[0] == want["stacked_index_of_row_0"]
            assert len(rows) == 1 or rows[1] - rows[0] == want["stacked_index_stride"]
    assert stacked.stack(c.columns).tolist() == stacking["polynomial_canonical"]


@pytest.mark.parametrize("name", GOLDEN_TABLES)
def test_claims_match_the_file(name):
    """Each batch's current and next values from the columns at the file's points (t05's 3x1 table is padded)."""
    c = case(name)
    stacked = plan_layout(c.protocol, c.config.fold(0), c.layout)
    for batch, opening in zip(c.protocol.batches, c.document["openings"]):
        m = stacked.table_log_rows[batch.table]
        columns = np.zeros((c.protocol.shapes[batch.table].columns, 1 << m), np.uint32)
        values = c.ops.to_monty(c.columns[batch.table].astype(np.uint64))
        columns[:, :values.shape[1]] = values
        current, following = evaluate_batch(columns, batch.current, batch.next, c.monty(opening["point_canonical"]),
                                            c.field)
        assert c.ops.from_monty(current).tolist() == opening["current_values_canonical"]
        assert c.ops.from_monty(following).tolist() == opening["next_values_canonical"]


def test_batching_follows_placement_not_transcript_order():
    """t02: tables 10x3, 8x2, 8x1 are placed 0, 2, 1 (equal arities: higher index first), so table 2's claims take
    alpha's powers before table 1's although table 1's batch comes first in the transcript."""
    c = case("t02_kb_prefix_10x3-8x2-8x1_k4_s32_p0_cb_next.json")
    stacked = plan_layout(c.protocol, c.config.fold(0), c.layout)
    terms = claim_terms(stacked, c.protocol)
    assert [(t.table, t.column, t.next) for t in terms] == [
        (0, 0, False), (0, 1, False), (0, 1, True), (0, 2, False), (2, 0, False), (2, 0, True), (1, 0, False)]
    assert [t.power for t in terms] == list(range(7))


def test_one_step_order():
    assert P3TablesProver._prove is WhirProver._prove
    assert P3TablesProver._commit is WhirProver._commit
    assert P3TablesProver._round is WhirProver._round
    assert issubclass(P3TablesProver, P3WhirProver)


def test_protocol_is_validated_and_grouped():
    shapes = (TableShape(4, 2), TableShape(3, 1))
    protocol = TablesProtocol(shapes, (OpeningBatch(1, (0,)), OpeningBatch(0, (1,), (0,)), OpeningBatch(0, (), (1,))))
    assert [b.table for b in protocol.batches] == [0, 0, 1]
    assert protocol.open_spec == "0:1:0/0::1/1:0:" and protocol.tables_spec == "4x2,3x1"
    for bad in [lambda: TablesProtocol(shapes, (OpeningBatch(2, (0,)),)),
                lambda: TablesProtocol(shapes, (OpeningBatch(1, (1,)),)),
                lambda: OpeningBatch(0, (), ()), lambda: OpeningBatch(0, (1, 1)), lambda: TableShape(3, 0),
                lambda: TableShape(-1, 1), lambda: TablesProtocol(()), lambda: OpeningBatch(0, "01")]:
        with pytest.raises(ConfigError):
            bad()


@pytest.mark.parametrize("m", [0, 1, 3, 5])
def test_next_weights_closed_form(m):
    ops = field_ops(BABYBEAR)
    rng = np.random.default_rng(m)
    p, y = (ops.to_monty(rng.integers(0, BABYBEAR.P, (m, 4), dtype=np.uint64)) for _ in range(2))
    column = ops.to_monty(rng.integers(0, BABYBEAR.P, 1 << m, dtype=np.uint64))
    shifted = column[np.minimum(np.arange(1 << m) + 1, (1 << m) - 1)]
    weights = shift.next_table(p, None, BABYBEAR)
    assert ops.ef_dot_base(column, weights).tolist() == \
        (multilinear.evaluate(shifted, p, BABYBEAR) if m else ops.ef_from_base(shifted[0])).tolist()
    at = multilinear.evaluate(weights, y, BABYBEAR) if m else weights[0]
    assert shift.next_at(p, y, BABYBEAR).tolist() == at.tolist()


def _config(n: int, fold: int, field, pow_bits: int = 0) -> P3WhirConfig:
    params = P3Parameters(security_level=32, pow_bits=pow_bits, folding=Constant(fold),
                          soundness_type=SoundnessType.CapacityBound, starting_log_inv_rate=1)
    return P3WhirConfig.derive(n, params, field)


# (field, tables, fold, open spec): one column, equal heights, a padded table (log rows < fold), a table never
# opened, several batches per table, next-only batches
RANDOM = [(KOALABEAR, "6x1", 2, "0:0:0"),
          (BABYBEAR, "5x3,5x2", 3, "1:1:0/0:2,0:1/1::1"),
          (KOALABEAR, "7x2,2x3,4x1", 3, "1:0,2:1/0:1:"),
          (BABYBEAR, "6x2,6x1,3x2", 2, "2:1:0,1/0:0:/0::1")]


def parse(tables: str, spec: str) -> TablesProtocol:
    """The oracle's ``--tables`` and ``--open`` (``TABLE:CURRENT[:NEXT]`` batches) in the simplest form (the full
    syntax, aliases included, is the CLI's parser's)."""
    shapes = tuple(TableShape(*map(int, item.split("x"))) for item in tables.split(","))
    batches = []
    for item in spec.split("/"):
        table, current, following = (item.split(":") + [""])[:3]
        batches.append(OpeningBatch(int(table), tuple(int(c) for c in current.split(",") if c),
                                    tuple(int(c) for c in following.split(",") if c)))
    return TablesProtocol(shapes, tuple(batches))


def random_columns(protocol: TablesProtocol, field, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, field.P, (s.columns, 1 << s.log_rows), dtype=np.uint64).astype(np.uint32)
            for s in protocol.shapes]


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
@pytest.mark.parametrize("field,tables,fold,spec", RANDOM)
def test_random_shapes_round_trip(backend, layout, field, tables, fold, spec):
    protocol = parse(tables, spec)
    n = plan_layout(protocol, fold, layout).num_variables
    config = _config(n, fold, field)
    columns = random_columns(protocol, field, n * 7 + fold)
    proved = prove_tables(config, field, backend, columns, protocol, layout)
    opened = verify_tables(config, field, proved.commitment, proved.proof, protocol, layout)
    ops = field_ops(field)
    for b, batch in enumerate(protocol.batches):  # the opened values are the columns' at the drawn points
        m = max(protocol.shapes[batch.table].log_rows, fold)
        padded = np.zeros((protocol.shapes[batch.table].columns, 1 << m), np.uint32)
        padded[:, :columns[batch.table].shape[1]] = ops.to_monty(columns[batch.table].astype(np.uint64))
        current, following = evaluate_batch(padded, batch.current, batch.next, opened.points[b], field)
        assert opened.current[b].tolist() == current.tolist() and opened.next[b].tolist() == following.tolist()
    points = [np.asarray(p) for p in opened.points][::-1] if len(opened.points) > 1 else None
    if points is not None and all(p.shape == q.shape for p, q in zip(points, opened.points)):
        prescribed = prove_tables(config, field, backend, columns, protocol, layout, points)
        verify_tables(config, field, prescribed.commitment, prescribed.proof, protocol, layout, points)


def test_the_configuration_must_fit_the_stack():
    protocol = parse("5x2", "0:0:")
    with pytest.raises(ConfigError, match="stack into 2\\^6"):
        prove_tables(_config(7, 2, KOALABEAR), KOALABEAR, CpuBackend(), random_columns(protocol, KOALABEAR, 0),
                     protocol, "suffix")


def test_columns_and_points_are_checked():
    protocol = parse("5x2", "0:0:")
    config = _config(6, 2, KOALABEAR)
    columns = random_columns(protocol, KOALABEAR, 0)
    for bad in ([columns[0][:1]], [columns[0].T], [np.full((2, 32), KOALABEAR.P, np.uint32)], []):
        with pytest.raises(ConfigError):
            prove_tables(config, KOALABEAR, CpuBackend(), bad, protocol, "suffix")
    for points in ([np.zeros((4, 4), np.uint32)], [np.zeros((5, 4), np.uint32)] * 2,
                   [np.full((5, 4), KOALABEAR.P, np.uint32)]):
        with pytest.raises(ConfigError):
            prove_tables(config, KOALABEAR, CpuBackend(), columns, protocol, "suffix", points)
    with pytest.raises(ConfigError):
        prove_tables(config, KOALABEAR, CpuBackend(), columns, protocol, "interleaved")


def test_a_backend_without_tables_is_refused():
    class NoTables(CpuBackend):
        name = "no-tables"
        proves_tables = False

    protocol = parse("5x2", "0:0:")
    with pytest.raises(ConfigError, match="no-tables backend does not prove stacked tables"):
        prove_tables(_config(6, 2, KOALABEAR), KOALABEAR, NoTables(), random_columns(protocol, KOALABEAR, 0),
                     protocol, "suffix")


def _naive_eq(bits, point, ops):
    one = ops.ef_from_base(ops.ONE)
    out = one
    for bit, z in zip(bits, point):
        out = ops.ef_mul(out, z if bit else ops.ef_sub(one, z))
    return out


@pytest.mark.parametrize("start,m", [(0, 3), (2, 3), (1, 2), (0, 5), (5, 0)])
def test_add_next_weights_is_its_definition(start, m):
    """``CpuBackend.add_next_weights`` against the contract, entry by entry (the twin a GPU backend is checked
    against): eq outside the window times next(row, point) inside it, summed with coefficients onto the weights."""
    field, n = KOALABEAR, 5
    ops = field_ops(field)
    rng = np.random.default_rng(start * 10 + m)
    points = ops.to_monty(rng.integers(0, field.P, (2, n, 4), dtype=np.uint64))
    coefficients = ops.to_monty(rng.integers(0, field.P, (2, 4), dtype=np.uint64))
    base = ops.to_monty(rng.integers(0, field.P, (1 << n, 4), dtype=np.uint64))
    backend = CpuBackend()
    backend.layout = TableLayout(field)
    got = backend.add_next_weights(backend.upload(base), points, np.array([[start, m]] * 2), coefficients).handle
    for b in range(1 << n):
        bits = [(b >> (n - 1 - t)) & 1 for t in range(n)]
        row = int("".join(map(str, bits[start:start + m])) or "0", 2)
        want = base[b]
        for point, coefficient in zip(points, coefficients):
            outside = [t for t in range(n) if not start <= t < start + m]
            weight = _naive_eq([bits[t] for t in outside], point[outside], ops)
            local = point[start:start + m]
            successor = _naive_eq([(row - 1 >> (m - 1 - t)) & 1 for t in range(m)], local, ops) if row else \
                np.zeros(4, np.uint32)
            if row == (1 << m) - 1:
                successor = ops.ef_add(successor, _naive_eq([1] * m, local, ops))
            want = ops.ef_add(want, ops.ef_mul(coefficient, ops.ef_mul(weight, successor)))
        assert got[b].tolist() == want.tolist(), b


def test_prefix_round_message_is_h0_and_the_leading_coefficient():
    """p3-whir's prefix order (``PrefixProver``): x_0 free, [h(0), c_inf] with h(1) = claim - h(0)."""
    field = BABYBEAR
    ops = field_ops(field)
    rng = np.random.default_rng(3)
    table = ops.to_monty(rng.integers(0, field.P, 16, dtype=np.uint64))
    weights = ops.to_monty(rng.integers(0, field.P, (16, 4), dtype=np.uint64))
    backend = CpuBackend()
    backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    h0, c_inf = backend.sumcheck_round(backend.upload(table), backend.upload(weights))

    def h(x):  # Σ over the other variables with x_0 := x
        folded_t = multilinear.fix_first_variable(table, x, field)
        folded_w = multilinear.fix_first_variable(weights, x, field)
        return ops.ef_sum(ops.ef_mul(folded_t, folded_w))

    zero, one, two = (ops.ef_from_base(ops.constant(v)) for v in (0, 1, 2))
    assert h0.tolist() == h(zero).tolist()
    # c_inf = (h(2) - 2 h(1) + h(0)) / 2
    second = ops.ef_add(ops.ef_sub(h(two), ops.ef_add(h(one), h(one))), h(zero))
    assert ops.ef_add(c_inf, c_inf).tolist() == second.tolist()


def test_no_opening_batches():
    """A commitment never opened: only the initial OOD claims are batched (when the configuration has any)."""
    protocol = TablesProtocol((TableShape(5, 2), TableShape(4, 1)))
    for layout in ("suffix", "prefix"):
        config = _config(plan_layout(protocol, 2, layout).num_variables, 2, BABYBEAR)
        proved = prove_tables(config, BABYBEAR, CpuBackend(), random_columns(protocol, BABYBEAR, 1), protocol, layout)
        assert proved.proof.evals == () and proved.points == ()
        verify_tables(config, BABYBEAR, proved.commitment, proved.proof, protocol, layout)


@pytest.mark.parametrize("prescribed", [False, True])
def test_one_column_is_the_single_column_profile(prescribed):
    """One table of one column opened at E points is upstream's example flow: the bytes ``prove_p3`` makes."""
    field, n, openings = KOALABEAR, 8, 2
    ops = field_ops(field)
    protocol = TablesProtocol((TableShape(n, 1),), (OpeningBatch(0, (0,)),) * openings)
    config = _config(n, 3, field)
    column = random_columns(protocol, field, 5)[0]
    rng = np.random.default_rng(6)
    points = ops.to_monty(rng.integers(0, field.P, (openings, n, 4), dtype=np.uint64)) if prescribed else None
    single = prove_p3(config, field, CpuBackend(), ops.to_monty(column[0].astype(np.uint64)), openings, points)
    stacked = prove_tables(config, field, CpuBackend(), [column], protocol, "suffix",
                           None if points is None else list(points))
    assert pcs_proof_to_postcard(stacked.proof) == pcs_proof_to_postcard(single.proof)
    assert np.array_equal(np.stack(stacked.points), single.points)


def test_numpy_integers_are_ints():
    shape = TableShape(np.int64(5), np.uint8(2))
    assert (shape.log_rows, shape.columns) == (5, 2) and type(shape.log_rows) is int
    assert OpeningBatch(np.int32(0), np.array([1, 0]), [np.int64(1)]) == OpeningBatch(0, (1, 0), (1,))
    for bad in (lambda: TableShape(True, 1), lambda: TableShape(3.0, 1), lambda: OpeningBatch(0, [np.bool_(True)])):
        with pytest.raises(ConfigError):
            bad()
