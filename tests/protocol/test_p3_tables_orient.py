"""Tables go to the backend as the user holds them (issue 38 item 2): ``P3Tables(..., orient="rows")`` hands each
row-major trace to ``Backend.stack_columns`` as it is (no host transpose, no host copy of a C-contiguous uint32
array), and the proof is byte for byte the column-major one, in both layouts, on every backend that proves tables."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import whirgpu
from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.tables.prover import P3TablesProver, check_columns
from whirgpu.profiles.p3_whir.tables.shapes import TablesProtocol

from .test_p3_tables import TABLE_BACKENDS, make_backend
from .test_p3_tables_api import PARAMS, SCHEDULE, _traces


@pytest.fixture(params=TABLE_BACKENDS)
def backend(request):
    backend = make_backend(request.param)
    yield backend
    backend.close()


def _spy(backend, monkeypatch) -> list:
    """Every ``stack_columns`` call's tables, recorded, then passed on."""
    calls, real = [], backend.stack_columns

    def stack_columns(num_variables, tables):
        tables = list(tables)
        calls.append(tables)
        return real(num_variables, tables)

    monkeypatch.setattr(backend, "stack_columns", stack_columns)
    return calls


@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_rows_reach_the_backend_as_held_and_prove_the_column_major_bytes(backend, layout, monkeypatch):
    traces = _traces(3)
    calls = _spy(backend, monkeypatch)
    by_rows = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, layout=layout, backend=backend)
    rows_doc = by_rows.commit().open(SCHEDULE).dumps()
    (stacked,) = calls
    assert len(stacked) == len(traces)
    for array, _, _, _, col_major, name in stacked:
        assert col_major is False and name.startswith("table ")
        assert any(array is t or np.shares_memory(array, t) for t in traces)  # the user's array itself
    by_columns = whirgpu.P3Tables([t.T.copy() for t in traces], orient="columns", params=PARAMS, layout=layout,
                                  backend=backend)
    assert by_columns.commit().open(SCHEDULE).dumps() == rows_doc
    assert all(col_major is True for _, _, _, _, col_major, _ in calls[1])


def test_no_transposed_copy_on_the_host(backend):
    """A 2^16 x 4 trace (1 MiB) held by rows: taking and checking it allocates far less than the trace on the host,
    and the array kept for the backend is the user's."""
    trace = np.random.default_rng(5).integers(0, 2**31 - 2**24 + 1, (1 << 16, 4), dtype=np.uint32)
    tracemalloc.start()
    try:
        tables = whirgpu.P3Tables([trace], orient="rows", params=PARAMS, backend=backend)
        protocol = TablesProtocol(tables.shapes)
        checked = check_columns([trace], protocol, tables.field, col_major=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tables._columns[0] is trace and checked[0] is trace
    assert peak < trace.nbytes // 4, f"{peak} bytes allocated taking a {trace.nbytes}-byte trace"


def test_a_row_major_array_of_the_wrong_shape_is_one_line(backend):
    traces = _traces(1)
    tables = whirgpu.P3Tables(traces, orient="rows", params=PARAMS, backend=backend)
    prover = P3TablesProver(tables.config, tables.field, tables.backend, TablesProtocol(tables.shapes), tables.layout)
    with pytest.raises(ConfigError, match=r"table 0 .*expected column values of shape \(1024, 3\)") as info:
        prover.commit([t.T for t in traces], col_major=False)
    assert "\n" not in str(info.value)
