"""Golden and oracle-made stacked multi-table cases of the p3-whir profile, ready to prove and verify.

The golden files t01..t07 ship xz-compressed in ``tests/golden-p3/`` beside the single-column ones (verbatim copies
of ``../shared/oracle-p3/golden-tables/``, read from there when a copy is not shipped). ``TablesCase`` turns a
``p3-whir-oracle/v2`` document (a golden file, or one the oracle binary just made) into the arguments of
``prove_tables`` / ``verify_tables``; ``oracle_document`` writes the v2 keys the oracle's verifier reads for a proof
made here. ``ORACLE`` is the prebuilt oracle binary when it is present (tests that need it skip otherwise).
"""

from __future__ import annotations

import json
import lzma
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from whirgpu.field import field_by_name
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.format import merkle_cap_from_json, merkle_cap_to_json, pcs_proof_from_json, \
    pcs_proof_to_json
from whirgpu.profiles.p3_whir.tables.shapes import OpeningBatch, TableShape, TablesProtocol
from whirgpu.ref.field_np import field_ops

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "tests" / "golden-p3"
SHARED = REPO.parent / "shared" / "oracle-p3" / "golden-tables"  # where the oracle writes them
ORACLE = REPO.parent / "shared" / "oracle-p3" / "bin" / "oracle-p3"
GOLDEN_TABLES = sorted(p.name[:-3] for p in SHIPPED.glob("t*.json.xz"))
NO_ORACLE = f"the oracle binary {ORACLE} is absent (it lives in ../shared, not in a fresh clone)"


@lru_cache(maxsize=None)
def golden_tables_bytes(name: str) -> bytes:
    shipped, shared = SHIPPED / f"{name}.xz", SHARED / name
    if shipped.is_file():
        return lzma.decompress(shipped.read_bytes())
    if shared.is_file():
        return shared.read_bytes()
    pytest.fail(f"golden tables file {name} not found in {SHIPPED} or {SHARED}")


class TablesCase:
    """One v2 document: ``config``, ``field``, ``protocol``, ``layout``, canonical ``columns`` (one (w, 2^m) array
    per table), Montgomery ``points`` (one per batch; None in transcript mode), and its JSON trees."""

    def __init__(self, document: dict):
        self.document = document
        p = document["params"]
        self.field = field_by_name(document["field"])
        self.ops = field_ops(self.field)
        params = P3Parameters(p["security_level"], p["pow_bits"], Constant(p["folding_factor"]),
                              SoundnessType.parse(p["soundness_type"]), p["starting_log_inv_rate"],
                              tuple(p["round_log_inv_rates"]))
        self.config = P3WhirConfig.derive(p["num_variables"], params, self.field)
        self.layout = p["layout"]
        shapes = tuple(TableShape(s["log_rows"], s["columns"]) for s in p["table_shapes"])
        batches = tuple(OpeningBatch(o["table"], tuple(o["current_columns"]), tuple(o["next_columns"]))
                        for o in document["openings"])
        self.protocol = TablesProtocol(shapes, batches)
        self.columns = [np.asarray(t["columns_canonical"], np.uint32) for t in document["tables"]]
        self.points = None
        if p["points"] == "prescribed":
            self.points = [self.monty(o["point_canonical"]) for o in document["openings"]]

    @classmethod
    def golden(cls, name: str) -> "TablesCase":
        return cls(json.loads(golden_tables_bytes(name)))

    def monty(self, canonical) -> np.ndarray:
        return self.ops.to_monty(np.asarray(canonical, np.uint64))

    def commitment(self):
        return merkle_cap_from_json(self.document["commitment"])

    def proof(self, tree=None):
        return pcs_proof_from_json(self.document["proof"] if tree is None else tree)


def oracle_document(case_params: dict, field_name: str, commitment, proof, points, current, following) -> dict:
    """The v2 keys ``oracle-p3 verify`` reads for a proof made here: format, field, params (exactly the oracle's
    params keys, given), commitment, proof, and per batch its point and claims (canonical)."""
    ops = field_ops(field_by_name(field_name))
    openings = [{"point_canonical": ops.from_monty(point).tolist(),
                 "current_values_canonical": ops.from_monty(c).tolist(),
                 "next_values_canonical": ops.from_monty(d).tolist()}
                for point, c, d in zip(points, current, following)]
    return {"format": "p3-whir-oracle/v2", "field": field_name, "params": case_params,
            "commitment": merkle_cap_to_json(commitment), "proof": pcs_proof_to_json(proof), "openings": openings}
