"""``p3-whir-oracle/v2`` table documents: every golden-tables file is read (bounded), its witness copies check, it
is written back key for key as the oracle wrote it (and the oracle accepts what we write, where the prebuilt oracle
is), and the instance the oracle drew from its seed is the one ``tables.instance`` draws."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from whirgpu.profiles.p3_whir.tables.document import FORMAT, read_p3_tables_document_bytes
from whirgpu.profiles.p3_whir.tables.document_checks import DOCUMENT_KEYS
from whirgpu.profiles.p3_whir.tables.document_write import dumps_tables_document, tables_document_tree
from whirgpu.profiles.p3_whir.tables.instance import draw_instance
from whirgpu.profiles.p3_whir.tables.witness_checks import check_witness
from whirgpu.ref.field_np import field_ops

from ..conftest import REPO, golden_p3_bytes, golden_p3_names

GOLDEN = golden_p3_names("t0*.json")
ORACLE = REPO.parent / "shared" / "oracle-p3" / "bin" / "oracle-p3"


def test_the_seven_golden_tables_ship():
    assert len(GOLDEN) == 7


def _read(name: str):
    return read_p3_tables_document_bytes(golden_p3_bytes(name))


def _written(document, witness: bool) -> dict:
    columns = [field_ops(document.field).from_monty(c) for c in document.columns] if witness else None
    return tables_document_tree(document.field, document.config, document.spec, document.commitment, document.proof,
                                document.stated_points, document.ood_points, document.seed, columns)


@pytest.mark.parametrize("name", GOLDEN)
def test_golden_is_read_and_written_back_key_for_key(name):
    golden = json.loads(golden_p3_bytes(name))
    assert golden["format"] == FORMAT and set(golden) <= set(DOCUMENT_KEYS)
    document = _read(name)
    assert document.inconsistency is None
    assert document.spec.canonical()["open"] == golden["params"]["open"]
    check_witness(document)  # tables stacked == the stacked polynomial == what the commitment commits
    tree = _written(document, witness=True)
    assert dumps_tables_document(tree) == dumps_tables_document({k: golden[k] for k in tree})
    assert set(golden) - set(tree) <= {"extension_field", "instance_draw", "mmcs", "next_semantics", "notes",
                                       "notes_v2", "points_derivation", "proof_field_encoding", "protocol",
                                       "self_check"}


@pytest.mark.parametrize("name", GOLDEN)
def test_the_instance_is_the_oracles_draw(name):
    document = _read(name)
    columns, points = draw_instance(document.spec.protocol, document.seed, document.field,
                                    document.config.folding_schedule[0], document.prescribed)
    ops = field_ops(document.field)
    for drawn, stated in zip(columns, document.columns):
        assert np.array_equal(ops.to_monty(drawn.astype(np.uint64)), stated)
    if document.prescribed:
        for drawn, stated in zip(points, document.stated_points):
            assert np.array_equal(drawn, stated)
    else:
        assert points is None


@pytest.mark.skipif(not ORACLE.is_file(), reason=f"the prebuilt oracle {ORACLE} is not here (CI has no ../shared)")
@pytest.mark.parametrize("name", [GOLDEN[0], GOLDEN[3]])
def test_the_oracle_accepts_what_we_write(name, tmp_path):
    document = _read(name)
    for witness in (False, True):
        path = tmp_path / f"w{int(witness)}.json"
        path.write_text(dumps_tables_document(_written(document, witness)))
        run = subprocess.run([str(ORACLE), "verify", "--in", str(path)], capture_output=True, text=True, timeout=60,
                             check=False)
        assert run.stdout.strip() == "accept", run.stdout + run.stderr


def test_the_api_takes_table_documents_with_the_others():
    import whirgpu
    from whirgpu.errors import ProofFormatError
    from whirgpu.profiles.documents import dump, read_document

    from ..conftest import golden_p3_bytes as p3

    table, column = golden_p3_bytes(GOLDEN[1]), p3("kb_n10_k2_r1_s32_p0_cb_e1_seed0.json")
    verdicts = whirgpu.verify_many([table, column, table.replace(b'"open":"0:0,1:1/', b'"open":"0:0,1:0/')])
    assert [v.ok for v in verdicts] == [True, True, False]
    assert dump(table) == table
    with pytest.raises(ProofFormatError, match="keeps no encoding"):
        dump(read_document(table))
    assert whirgpu.is_valid(table, values=whirgpu.claimed_values(table))
