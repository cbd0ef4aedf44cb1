"""A ``p3-whir-oracle/v2`` table document from anyone can neither crash, hang, nor lie to the verifier.

Truncated text, wrong types, repeated keys, huge numbers, shapes that disagree with the arity, claims, points and
OOD points the proof does not prove, a tampered column list (alone, or consistently everywhere the schedule is
stated), witness copies that disagree: each is one line, ``ProofFormatError`` (malformed, or a copy that
disagrees) or ``VerificationError`` (the statement is not what the proof proves), and reading stays bounded
(``tracemalloc``).
"""

from __future__ import annotations

import copy
import functools
import json
import tracemalloc

import pytest

from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.profiles.documents import read_document
from whirgpu.profiles.p3_whir.tables.document import P3TablesDocument, read_p3_tables_document, \
    read_p3_tables_document_bytes, verify_p3_tables_document

from ..conftest import golden_p3_bytes

T01 = "t01_kb_suffix_10x2_k4_s32_p0_cb.json"
T02 = "t02_kb_prefix_10x3-8x2-8x1_k4_s32_p0_cb_next.json"
T04 = "t04_kb_prefix_11x4-9x1_k3_s90_p0_cb_prescribed.json"
MIB = 1 << 20


@functools.lru_cache(maxsize=None)
def _text(name: str) -> bytes:
    return golden_p3_bytes(name)


def _doc(name: str = T01) -> dict:
    return json.loads(_text(name))


def _check(doc_or_bytes):
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else json.dumps(doc_or_bytes).encode()
    return verify_p3_tables_document(read_p3_tables_document_bytes(data))


def _refused(doc, error=ProofFormatError, needle: str = ""):
    with pytest.raises(error) as info:
        _check(doc)
    message = str(info.value)
    assert "\n" not in message and needle in message, message
    return info.value


def _peak(function) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    try:
        function()
        error = None
    except Exception as exc:  # noqa: BLE001 - the test looks at it
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return error, peak


def test_read_document_tells_v2_apart():
    assert isinstance(read_document(_text(T01)), P3TablesDocument)
    assert isinstance(read_p3_tables_document(_doc(T01)), P3TablesDocument)


@pytest.mark.parametrize("cut", [0, 1, 100, 5000, 60000, -2])
def test_truncated_text_is_not_json(cut):
    data = _text(T01)
    with pytest.raises(ProofFormatError, match="not JSON") as info:
        read_p3_tables_document_bytes(data[:cut] if cut >= 0 else data[:cut])
    assert "\n" not in str(info.value)


def test_a_repeated_key_is_refused():
    data = _text(T01).replace(b'"format":', b'"format":"p3-whir-oracle/v2","format":', 1)
    with pytest.raises(ProofFormatError, match="appears twice"):
        read_p3_tables_document_bytes(data)


@pytest.mark.parametrize("path,value,needle", [
    (("params", "table_shapes"), "10x2", "params.table_shapes: expected an array"),
    (("params", "table_shapes", 0, "columns"), "2", "params.table_shapes[0].columns"),
    (("params", "table_shapes", 0, "log_rows"), True, "params.table_shapes[0].log_rows"),
    (("params", "table_shapes", 0, "log_rows"), 10 ** 30, "params.table_shapes[0].log_rows"),
    (("params", "table_shapes", 0, "columns"), 0, "params.table_shapes[0].columns"),
    (("params", "table_shapes", 0, "extra"), 1, "unknown key 'extra'"),
    (("params", "table_shapes"), [], "at least one table"),
    (("params", "open"), 5, "params.open: expected a text"),
    (("params", "open"), "0:0,1", "not canonical"),
    (("params", "open"), "0:0,1:/0:0,0:", "repeated within one side"),
    (("params", "open"), "0:2:", "current column 2 >= the table's width 2"),
    (("params", "open"), "1:0:", "table 1 does not exist"),
    (("params", "open"), "0::", "an empty batch"),
    (("params", "layout"), "Prefix", "params.layout"),
    (("params", "layout_prover"), "PrefixProver", "params.layout_prover"),
    (("params", "points"), 1, "params.points"),
    (("params", "zk"), True, "zk"),
    (("zk",), True, "zk"),
    (("field",), 7, "field: expected 'babybear' or 'koalabear'"),
    (("field",), "goldilocks", "field: expected"),
    (("format",), "p3-whir-oracle/v3", "format: expected"),
    (("params", "num_variables"), 1 << 31, "params.num_variables"),
    (("params", "num_variables"), 12, "stack to 11 variables"),
    (("params", "tables"), "10x3", "params.tables"),
    (("params", "seed"), -1, "params.seed"),
    (("openings",), {}, "openings: expected an array"),
    (("openings", 0, "point_canonical", 0, 0), 1 << 64, "not a canonical field element"),
    (("openings", 0, "point_canonical", 0, 0), float("inf"), "not JSON"),
    (("proof", "evals", 0, "current"), [], "proof.evals[0]: 0 current"),
    (("proof", "evals"), [], "proof.evals: 0 batches"),
    (("tables", 0, "columns_canonical", 0), [1, 2, 3], "expected 1024 entries"),
    (("stacking", "polynomial_canonical"), [0], "expected 2048 entries"),
    (("self_check", "verify"), "reject", "self_check.verify"),
    (("notes_v2",), "x" * 10, "notes_v2"),
    (("whatever",), 1, "unknown key 'whatever'"),
])
def test_a_malformed_document_is_refused_naming_the_key(path, value, needle):
    doc = _doc(T01)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    if value == float("inf"):
        data = json.dumps(doc).encode()
        with pytest.raises(ProofFormatError, match=needle):
            read_p3_tables_document_bytes(data)
        return
    _refused(doc, ProofFormatError, needle)


def test_a_claim_the_proof_does_not_prove_is_rejected():
    doc = _doc(T02)
    doc["openings"][3]["next_values_canonical"][0][1] ^= 1
    error = _refused(doc, VerificationError, "openings[3].next_values_canonical")
    assert error.check == "claimed_values"


def test_a_changed_claim_in_the_proof_fails_the_proof():
    doc = _doc(T02)
    doc["proof"]["evals"][0]["current"][1]["value"][0] ^= 1
    assert _refused(doc, VerificationError).round != "statement"


def test_a_point_the_transcript_did_not_draw_is_rejected():
    doc = _doc(T02)
    doc["openings"][1]["point_canonical"][0][0] ^= 1
    assert _refused(doc, VerificationError, "openings[1].point_canonical").check == "points"


def test_a_changed_prescribed_point_fails_the_proof():
    doc = _doc(T04)
    doc["openings"][0]["point_canonical"][2][3] ^= 1
    assert _refused(doc, VerificationError).round != "statement"


def test_an_ood_point_the_transcript_did_not_draw_is_rejected():
    doc = _doc(T01)
    doc["initial_ood_points_canonical"][0][0][0] ^= 1
    assert _refused(doc, VerificationError).check == "ood_points"


@pytest.mark.parametrize("where", ["openings", "opening_protocol"])
def test_a_tampered_column_list_is_refused(where):
    doc = _doc(T02)
    if where == "openings":
        doc["openings"][2]["current_columns"] = [1]
    else:
        doc["opening_protocol"][1]["batches"][0]["current"] = [1]
    _refused(doc, ProofFormatError, where)


def test_a_column_list_tampered_everywhere_fails_the_proof():
    doc = _doc(T02)
    doc["params"]["open"] = doc["params"]["open"].replace("1:0:", "1:1:")
    doc["opening_protocol"][1]["batches"][0]["current"] = [1]
    doc["openings"][2]["current_columns"] = [1]
    _refused(doc, VerificationError)


def test_shapes_that_keep_the_arity_make_another_statement_the_proof_fails():
    doc = _doc(T01)
    doc["params"]["table_shapes"] = [{"columns": 4, "log_rows": 9}]
    doc["params"]["tables"] = "9x4"
    for key in ("opening_protocol", "openings", "tables", "stacking"):
        doc.pop(key)
    _refused(doc, VerificationError)


def test_witness_copies_that_disagree_are_refused():
    doc = _doc(T02)
    doc["tables"][1]["columns_canonical"][0][5] ^= 1
    _refused(doc, ProofFormatError, "is not the tables stacked")
    doc = _doc(T02)
    doc.pop("tables")
    doc["stacking"]["polynomial_canonical"][7] ^= 1
    _refused(doc, ProofFormatError, "another root")
    doc = _doc(T02)
    doc["stacking"]["placements"][1]["columns"][0]["slot"] += 1
    _refused(doc, ProofFormatError, "stacking")
    doc = _doc(T02)
    doc["tables"][2]["log_rows"] = 9
    _refused(doc, ProofFormatError, "tables[2].log_rows")


def test_a_document_verifies_the_same_without_its_witness():
    doc = _doc(T02)
    for key in ("tables", "stacking", "openings", "initial_ood_points_canonical"):
        doc.pop(key)
    verified = _check(doc)
    assert verified.describe() == ("tables=10x3,8x2,8x1 layout=prefix open=0:0,1:1/0:2:/1:0:/2:0:0 "
                                   "points_from=transcript")


def test_prescribed_points_must_be_stated():
    doc = _doc(T04)
    doc.pop("openings")
    _refused(doc, ProofFormatError, "openings: missing")


def test_huge_shapes_are_refused_before_anything_is_built():
    doc = _doc(T01)
    doc["params"]["table_shapes"] = [{"columns": 1 << 60, "log_rows": 40}]
    error, peak = _peak(lambda: _check(doc))
    assert isinstance(error, ProofFormatError) and "MAX_COLUMNS" in str(error)
    doc["params"]["table_shapes"] = [{"columns": 1, "log_rows": 40}] * 5000
    error, peak = _peak(lambda: _check(doc))
    assert isinstance(error, ProofFormatError) and "entries, more than" in str(error)
    doc["params"]["table_shapes"] = [{"columns": 1, "log_rows": 40}]
    doc["params"]["num_variables"] = 40
    doc["params"]["tables"] = "40x1"
    doc["params"]["open"] = "0:0:"
    error, peak = _peak(lambda: _check(doc))
    assert isinstance(error, ProofFormatError) and peak < 64 * MIB, (error, peak)


def test_many_batches_are_bounded():
    doc = _doc(T01)
    doc["params"]["open"] = "/".join(["0:0:"] * 2000)
    error = _refused(doc, ProofFormatError, "MAX_BATCHES")
    assert "params.open" in str(error)


def test_a_bad_expectation_object_is_the_callers_error():
    from whirgpu.profiles.p3_whir.expectations import P3Expected
    from whirgpu.profiles.p3_whir.tables.spec import TablesSpec

    document = read_p3_tables_document_bytes(_text(T01))
    with pytest.raises(ConfigError, match="TablesSpec"):
        P3Expected(document.config, tables="10x2")
    with pytest.raises(ConfigError, match="num_openings"):
        P3Expected(document.config, num_openings=3, tables=TablesSpec.parse("10x2"))


def test_the_golden_document_is_not_mutated_by_reading():
    doc = _doc(T02)
    before = copy.deepcopy(doc)
    read_p3_tables_document(doc)
    assert doc == before


def test_the_expected_statement_of_a_table_document():
    import numpy as np

    import whirgpu
    from whirgpu.ref.field_np import field_ops

    data = _text(T04)
    document = read_p3_tables_document_bytes(data)
    points = [field_ops(document.field).from_monty(p).tolist() for p in document.stated_points]
    values = whirgpu.claimed_values(data)
    whirgpu.verify(data, points=points, values=values)
    moved = [np.array(p) for p in points]
    moved[1][2][0] = (moved[1][2][0] + 1) % document.field.P
    for kwargs, check, needle in ((dict(points=moved), "statement.points", "batch 1: coordinate 2"),
                                  (dict(points=points[:2]), "statement.num_points", "3 batch"),
                                  (dict(values=values[:-1]), "statement.values", "opens 6"),
                                  (dict(values=[[0, 0, 0, 0]] * 6), "statement.values", "value 0")):
        with pytest.raises(VerificationError, match=needle) as info:
            whirgpu.verify(data, **kwargs)
        assert info.value.check == check


def test_a_changed_postcard_copy_is_refused():
    doc = _doc(T01)
    hexed = doc["proof_postcard_hex"]
    doc["proof_postcard_hex"] = hexed[:-2] + ("00" if hexed[-2:] != "00" else "01")
    _refused(doc, ProofFormatError, "proof_postcard_hex")


def _leaves(tree, path=()):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, path + (key,))
    elif isinstance(tree, list) and tree:
        for i in sorted({0, len(tree) - 1}):
            yield from _leaves(tree[i], path + (i,))
    else:
        yield path


def test_random_mutations_are_refused_or_accepted_never_a_crash():
    import random

    rng = random.Random(3801)
    base = _doc(T02)
    paths = [p for p in _leaves(base) if p]
    replacements = [None, True, -1, 0, 1, 1 << 32, 1 << 70, 2.5, "", "x", [], {}, [0], {"a": 1}]
    for _ in range(200):
        doc = copy.deepcopy(base)
        path = rng.choice(paths)
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = rng.choice(replacements)
        try:
            _check(doc)
        except (ProofFormatError, VerificationError) as exc:
            assert "\n" not in str(exc), (path, exc)
