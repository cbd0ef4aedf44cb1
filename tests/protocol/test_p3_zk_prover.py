"""The hiding PCS's numpy prover reproduces the oracle's zk golden proofs byte for byte (masks from
StdRng::seed_from_u64(mask_seed), as the oracle draws them)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance
from whirgpu.profiles.p3_whir.zk.format import zk_proof_to_postcard
from whirgpu.profiles.p3_whir.zk.prover import zk_challenger, zk_commit, zk_open
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.field_np import field_ops

ZK_GOLDEN = golden_p3_names("z0*.json")


def prove_document(doc):
    inst = read_zk_instance(doc)
    challenger = zk_challenger(inst.config, inst.field)
    rng = StdRng.seed_from_u64(inst.mask_seed)
    committed = zk_commit(inst.config, inst.field, inst.polynomial, challenger, rng)
    proof = zk_open(inst.config, inst.field, committed, inst.points, challenger, rng)
    return inst, committed, proof, rng


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_proof_is_the_oracles(name):
    doc = load_golden_p3(name)
    inst, committed, proof, rng = prove_document(doc)
    ops = field_ops(inst.field)
    assert ops.from_monty(committed.oracle.root).tolist() == doc["commitment_root_canonical"]
    assert merkle_cap_to_postcard(committed.oracle.cap).hex() == doc["commitment_postcard_hex"]
    assert ops.from_monty(proof.evals).tolist() == doc["claimed_values_canonical"]
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    # the mask RNG was drawn exactly twice, 32 bytes each (the commit and open forks)
    assert rng.word_pos == 8 * len(doc["mask_rng"]["draws"]) == 16


def test_another_mask_seed_changes_everything_but_the_claims():
    doc = load_golden_p3(ZK_GOLDEN[0])
    inst, committed, proof, _ = prove_document(doc)
    challenger = zk_challenger(inst.config, inst.field)
    rng = StdRng.seed_from_u64(inst.mask_seed + 1)
    other = zk_commit(inst.config, inst.field, inst.polynomial, challenger, rng)
    assert not np.array_equal(other.oracle.root, committed.oracle.root)
    other_proof = zk_open(inst.config, inst.field, other, inst.points, challenger, rng)
    assert np.array_equal(other_proof.evals, proof.evals)
    assert zk_proof_to_postcard(other_proof) != zk_proof_to_postcard(proof)


def test_zk_tables_statement_is_the_oracles_composition():
    """z04: the prefix stacking of the tables and the local points lifted by selector bits are the polynomial and
    points the oracle handed to HidingWhirPcs (and its point map)."""
    from whirgpu.profiles.p3_whir.tables.shapes import TablesProtocol
    from whirgpu.profiles.p3_whir.tables.spec import parse_open, parse_tables
    from whirgpu.profiles.p3_whir.zk.tables import zk_tables_statement
    (name,) = [n for n in ZK_GOLDEN if "zktables" in n]
    doc = load_golden_p3(name)
    inst = read_zk_instance(doc)
    ops = field_ops(inst.field)
    shapes = parse_tables(doc["params"]["tables"])
    protocol = TablesProtocol(shapes, parse_open(doc["params"]["open"], shapes))
    columns = [ops.to_monty(np.array(t["columns_canonical"], dtype=np.uint64)) for t in doc["tables"]]
    local = [ops.to_monty(np.array(o["point_canonical"], dtype=np.uint64)) for o in doc["openings"]]
    polynomial, points, point_map = zk_tables_statement(protocol, doc["params"]["folding_factor"], columns, local,
                                                        inst.field)
    assert np.array_equal(polynomial, inst.polynomial)
    assert np.array_equal(points, inst.points)
    assert point_map == [(m["batch"], m["table"], m["column"], m["selector_value"], m["selector_bits"])
                         for m in doc["zk_point_map"]]


def test_zk_prove_on_a_fresh_transcript_verifies():
    from whirgpu.profiles.p3_whir.zk.prover import zk_prove
    from whirgpu.profiles.p3_whir.zk.verifier import zk_verify
    doc = load_golden_p3(ZK_GOLDEN[1])
    inst = read_zk_instance(doc)
    commitment, proof = zk_prove(inst.config, inst.field, inst.polynomial, inst.points,
                                 StdRng.seed_from_u64(inst.mask_seed))
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    zk_verify(inst.config, inst.field, commitment, proof, inst.points)


def test_an_opening_without_points_still_proves_and_verifies():
    """Upstream's open takes any list of points, the empty one included (the oracle asks for at least one): the
    masked sumcheck then runs on zero weights."""
    from whirgpu.profiles.p3_whir.zk.prover import zk_prove
    from whirgpu.profiles.p3_whir.zk.verifier import zk_verify
    inst = read_zk_instance(load_golden_p3(ZK_GOLDEN[0]))
    none = np.zeros((0, inst.config.num_variables, 4), np.uint32)
    commitment, proof = zk_prove(inst.config, inst.field, inst.polynomial, none, StdRng.seed_from_u64(1))
    assert proof.evals.shape == (0, 4)
    zk_verify(inst.config, inst.field, commitment, proof, none)
