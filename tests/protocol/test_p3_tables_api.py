"""The tables API a STARK author writes against (issue 38 item 5): ``whirgpu.P3Tables`` (a trace held by rows or
by columns, said explicitly), ``commit()`` once, ``open(batches, points)`` as often as wanted, each document
``p3-whir-oracle/v2`` and byte for byte the core's ``prove_tables``; ``verify``, ``is_valid``, ``verify_many``,
``claimed_values`` and ``dump`` take the document as its bytes (a document changed after proving is rejected as its
bytes would be). Parametrised over the backends that prove tables (``TABLE_BACKENDS``)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import whirgpu
from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.profiles.p3_whir.config import P3Parameters
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard, pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.proof import OpeningEvals, PcsProof
from whirgpu.profiles.p3_whir.tables.prover import prove_tables
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.ref.field_np import field_ops

from .p3_tables_cases import GOLDEN_TABLES, TablesCase
from .test_p3_tables import TABLE_BACKENDS, make_backend

PARAMS = P3Parameters(security_level=32, pow_bits=0, folding=Constant(4), soundness_type=SoundnessType.CapacityBound,
                      starting_log_inv_rate=1)
KOALABEAR_P = 2**31 - 2**24 + 1
SCHEDULE = "0:0,1:1/1:0/2:1:0"


def _traces(seed: int = 0):
    """Three traces as a STARK holds them, (rows, columns): 2^10 x 3, 2^8 x 2 and 2^2 x 2 (below the fold)."""
    rng = np.random.default_rng(seed)
    return [rng.integers(0, KOALABEAR_P, (rows, width), dtype=np.uint32) for rows, width in ((1024, 3), (256, 2),
                                                                                             (4, 2))]


@pytest.fixture(params=TABLE_BACKENDS)
def backend(request):
    backend = make_backend(request.param)
    yield backend
    backend.close()


@pytest.fixture
def tables(backend):
    return whirgpu.P3Tables(_traces(), orient="rows", params=PARAMS, backend=backend)


def test_rows_and_columns_commit_the_same_tables(backend):
    by_rows = whirgpu.P3Tables(_traces(), orient="rows", params=PARAMS, backend=backend)
    by_columns = whirgpu.P3Tables([t.T.copy() for t in _traces()], orient="columns", params=PARAMS, backend=backend)
    assert by_rows.shapes == by_columns.shapes == (whirgpu.TableShape(10, 3), whirgpu.TableShape(8, 2),
                                                   whirgpu.TableShape(2, 2))
    assert by_rows.num_variables == by_rows.config.num_variables == 12  # 3x2^10 + 2x2^8 + 2x2^4 -> 2^12
    a, b = by_rows.commit(), by_columns.commit()
    assert a.root.tolist() == b.root.tolist() and len(a.root) == 8
    assert a.open(SCHEDULE).dumps() == b.open(SCHEDULE).dumps()


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_each_opening_is_the_core_proof_and_verifies(backend, layout):
    tables = whirgpu.P3Tables(_traces(), orient="rows", params=PARAMS, layout=layout, backend=backend)
    commitment = tables.commit()
    columns = [t.T for t in _traces()]
    rng = np.random.default_rng(5)
    for batches in (None, SCHEDULE, [(2, (0,), (1,)), whirgpu.OpeningBatch(0, (2,)), (1, (), (0, 1))]):
        document = commitment.open(batches)
        core = prove_tables(tables.config, tables.field, backend, columns, document.spec.protocol, layout)
        assert pcs_proof_to_postcard(document.proved.proof) == pcs_proof_to_postcard(core.proof)
        whirgpu.verify(document, params=tables.expected(batches))
    # prescribed points, given in the order of the batches given; the document lists them in protocol order
    batches = [(2, (0,), (1,)), (0, (2,)), (1, (), (0, 1))]
    points = [rng.integers(0, KOALABEAR_P, (m, 4)) for m in (4, 10, 8)]
    document = commitment.open(batches, points=points)
    assert [p.tolist() for p in document.points] == [points[1].tolist(), points[2].tolist(), points[0].tolist()]
    assert document.spec.protocol.open_spec == "0:2:/1::0,1/2:0:1"
    monty = [field_ops(tables.field).to_monty(p.astype(np.uint64)) for p in document.points]
    core = prove_tables(tables.config, tables.field, backend, columns, document.spec.protocol, layout, monty)
    assert pcs_proof_to_postcard(document.proved.proof) == pcs_proof_to_postcard(core.proof)
    text = commitment.open("2:0:1/0:2/1::0,1", points=points)  # the same batches as text, points in text order
    assert text.dumps() == document.dumps()
    expected = tables.expected(batches, prescribed=True)
    whirgpu.verify(document, params=expected, points=document.points)
    assert not whirgpu.is_valid(document, params=tables.expected(batches))  # points: transcript expected


def test_claimed_values_per_batch_current_then_next(tables):
    document = tables.commit().open(SCHEDULE)
    assert [(v.current.shape, v.next.shape) for v in document.claimed] == [((2, 4), (1, 4)), ((1, 4), (0, 4)),
                                                                           ((1, 4), (1, 4))]
    flat = [row for v in document.claimed for row in [*v.current.tolist(), *v.next.tolist()]]
    assert whirgpu.claimed_values(document) == flat
    # the claims are the columns' multilinear extensions at the batch's point (current)
    trace = _traces()[0]
    ops = field_ops(tables.field)
    from whirgpu.ref.multilinear import evaluate  # noqa: PLC0415

    point = ops.to_monty(document.points[0].astype(np.uint64)).astype(np.uint32)
    value = evaluate(ops.to_monty(trace[:, 0].astype(np.uint64)).astype(np.uint32), point, tables.field)
    assert ops.from_monty(value).tolist() == document.claimed[0].current[0].tolist()


def test_every_entry_point_takes_the_document(tables, tmp_path):
    document = tables.commit().open(SCHEDULE)
    expected = tables.expected(SCHEDULE)
    data = whirgpu.dump(document)
    assert data == document.dumps().encode()
    assert json.loads(data)["format"] == "p3-whir-oracle/v2"
    path = tmp_path / "trace.json"
    assert document.write(path) == len(data) and path.read_bytes() == data
    for source in (document, data, data.decode(), path, str(path)):
        whirgpu.verify(source, params=expected)
    verdicts = whirgpu.verify_many([document, data, path], params=expected)
    assert [v.ok for v in verdicts] == [True, True, True]
    assert isinstance(whirgpu.read_document(document), whirgpu.profiles.p3_whir.tables.document.P3TablesDocument)


def test_a_document_changed_after_proving_is_judged_by_its_bytes(tables):
    document = tables.commit().open(SCHEDULE)
    expected = tables.expected(SCHEDULE)
    evals = list(document.proved.proof.evals)
    evals[0] = OpeningEvals(evals[0].current ^ np.uint32(1), evals[0].next)
    changed = dataclasses.replace(document, proved=dataclasses.replace(
        document.proved, proof=PcsProof(document.proved.proof.whir, tuple(evals))))
    with pytest.raises(VerificationError):
        whirgpu.verify(changed, params=expected)
    other = TablesSpec.parse("10x3,8x2,2x2", "0:0,1:1/1:0/2:1:1")  # the schedule said is not the one proved
    with pytest.raises((VerificationError, ProofFormatError)):
        whirgpu.verify(dataclasses.replace(document, spec=other), params=tables.expected("0:0,1:1/1:0/2:1:1"))
    with pytest.raises(VerificationError, match="schedule|open"):
        whirgpu.verify(document, params=tables.expected("0:0,1:1/1:0/2:1:1"))
    broken = dataclasses.replace(document, proved=None)
    with pytest.raises(ProofFormatError, match="cannot serialise this P3TablesProofDocument"):
        whirgpu.verify(broken)
    assert not whirgpu.is_valid(broken)


def test_refusals_are_one_line(backend):
    traces = _traces()
    cases = [
        (dict(tables=traces), "orient='rows'"),
        (dict(tables=traces, orient="row"), "orient='rows'"),
        (dict(tables=traces[0], orient="rows"), "a list of 2-D arrays"),
        (dict(tables=[], orient="rows"), "at least one table"),
        (dict(tables=[traces[0][:1000]], orient="rows"), "not a power of two"),
        (dict(tables=[traces[0]], orient="columns"), "is it orient='rows'"),
        (dict(tables=[np.full((4, 1), -1)], orient="rows"), "canonical koalabear"),
        (dict(tables=[np.full((4, 1), KOALABEAR_P)], orient="rows"), "canonical koalabear"),
        (dict(tables=[np.zeros(8, np.uint32)], orient="rows"), "2-D array"),
        (dict(tables=traces, orient="rows", layout="middle"), "layout"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ConfigError, match=match) as info:
            whirgpu.P3Tables(**kwargs, params=PARAMS, backend=backend)
        assert "\n" not in str(info.value)
    commitment = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=backend).commit()
    commitment.release()
    for orient in ("rows", "columns"):  # uint32 words >= p: refused where they are stacked, named as given
        bad = [t.copy() if orient == "rows" else t.T.copy() for t in traces]
        row, column = (5, 1)
        word = KOALABEAR_P + row  # the first of two bad words (the index the message names is the smallest)
        index = row * 2 + column if orient == "rows" else column * 256 + row
        if orient == "rows":
            bad[1][row, column], bad[1][200, 0] = word, 0xFFFFFFFF
        else:
            bad[1][column, row], bad[1][1, 200] = word, 0xFFFFFFFF
        with pytest.raises(ConfigError, match=rf"table 1\[{index}\] = {word} is not a canonical") as info:
            whirgpu.P3Tables(bad, orient=orient, params=PARAMS, backend=backend).commit()
        assert "\n" not in str(info.value)
    commitment = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=backend).commit()
    for kwargs, match in [
        (dict(batches="3:0"), "table 3 does not exist"),
        (dict(batches=[(0, (5,))]), "width"),
        (dict(batches=["zero"]), "OpeningBatch"),
        (dict(batches="0:0", points=[]), "one per batch"),
        (dict(batches="0:0", points=[np.zeros((9, 4), np.uint32)]), r"shape \(10, 4\)"),
        (dict(batches="0:0", points=[np.full((10, 4), KOALABEAR_P)]), "canonical"),
    ]:
        with pytest.raises(ConfigError, match=match) as info:
            commitment.open(**kwargs)
        assert "\n" not in str(info.value)
        with pytest.raises(ConfigError, match=match) as info:  # the one-proof path refuses the same, the same way
            whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=backend).prove(**kwargs)
        assert "\n" not in str(info.value)
    commitment.release()
    with pytest.raises(ConfigError, match="released"):
        commitment.open()


def test_a_backend_that_does_not_prove_tables_is_refused():
    from whirgpu.backends.cpu import CpuBackend  # noqa: PLC0415

    class NoTables(CpuBackend):
        proves_tables = False

    with pytest.raises(ConfigError, match="does not prove stacked tables yet"):
        whirgpu.P3Tables(_traces(), orient="rows", params=PARAMS, backend=NoTables())


def test_auto_falls_back_to_a_backend_that_proves_tables():
    tables = whirgpu.P3Tables(_traces(), orient="rows", params=PARAMS)
    assert tables.backend.proves_tables
    assert tables.pow_note is None and tables.params == PARAMS


def test_whirgpu_verify_reads_what_write_wrote(tables, tmp_path, capsys):
    from tests.test_cli import run  # noqa: PLC0415

    path = tmp_path / "opening.json"
    tables.commit().open(SCHEDULE).write(path)
    pinned = [path, "--expect", "12:4:1", "--security", "32", "--pow-bits", "0", "--tables", "10x3,8x2,2x2"]
    code, out, err = run(["verify", *pinned, "--open", SCHEDULE], capsys)
    assert code == 0 and out.startswith("accept") and "tables=10x3,8x2,2x2" in out, err
    code, out, err = run(["verify", *pinned, "--open", "0:0"], capsys)
    assert code == 1 and out.startswith("reject")


@pytest.mark.parametrize("name", GOLDEN_TABLES)
def test_the_golden_tables_through_the_api_after_another_opening(backend, name):
    """Upstream's own bytes (the oracle's golden tables), from a commitment already opened once otherwise."""
    case = TablesCase.golden(name)
    tables = whirgpu.P3Tables(case.columns, orient="columns", params=case.config.params, field=case.field,
                              layout=case.layout, backend=backend)
    assert tables.config == case.config
    commitment = tables.commit()
    assert merkle_cap_to_postcard(commitment.cap).hex() == case.document["commitment_postcard_hex"]
    commitment.open([(0, (0,), (0,))])  # another schedule first: the commitment must come out unchanged
    points = None if case.points is None else [case.ops.from_monty(p) for p in case.points]
    document = commitment.open(list(case.protocol.batches), points)
    assert pcs_proof_to_postcard(document.proved.proof).hex() == case.document["proof_postcard_hex"]


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_one_proof_is_commit_then_open(backend, layout):
    """``P3Tables.prove`` gives ``commit().open()``'s bytes, drawn or prescribed points, and verifies."""
    traces = _traces(3)
    tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, layout=layout, backend=backend)
    commitment = tables.commit()
    assert tables.prove(SCHEDULE).dumps() == commitment.open(SCHEDULE).dumps()
    rng = np.random.default_rng(4)
    points = [rng.integers(0, KOALABEAR_P, (m, 4)) for m in (10, 8, 4)]  # fold 4: the 2^2 table is padded to 2^4
    one = tables.prove(SCHEDULE, points)
    assert one.dumps() == commitment.open(SCHEDULE, points).dumps()
    whirgpu.verify(one, params=tables.expected(SCHEDULE, prescribed=True), points=one.points)
    commitment.release()
