"""Zero-knowledge proofs a user makes (``P3ZkTables``, ``ZkOptions``) and the verifier's front door for them:
- the masks come from the OS CSPRNG unless a seed is given: two proofs of one statement differ, and a CSPRNG
  document records no seed and no draw;
- seeded proofs are the oracle's (golden-zk z04, every key but the informational texts);
- no opened row of the committed oracle equals the plain (unmasked) codeword's row at that position;
- ``whirgpu.verify`` / ``is_valid`` / ``claimed_values`` take the documents; tampered claims, values, points,
  config and seeds are refused naming the key.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import whirgpu
from tests.conftest import golden_p3_names, load_golden_p3
from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.field import field_by_name
from whirgpu.profiles.p3_whir.defaults import example_parameters
from whirgpu.profiles.p3_whir.tables.instance import draw_instance
from whirgpu.profiles.p3_whir.tables.spec import TablesSpec
from whirgpu.profiles.p3_whir.zk.api import P3ZkTables, ZkOptions, prove_zk_statement, zk_config_for
from whirgpu.profiles.p3_whir.zk.format import zk_proof_from_json
from whirgpu.profiles.p3_whir.zk.oracles import encode, zk_padded_matrix
from whirgpu.profiles.p3_whir.zk.prover import zk_challenger, zk_commit
from whirgpu.profiles.p3_whir.zk.tables import zk_tables_statement
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.field_np import field_ops

KB = field_by_name("koalabear")
PARAMS = example_parameters(4, 2, 32, SoundnessType.CapacityBound, 0)
TEXTS = {"extension_field", "instance_draw", "mmcs", "notes", "notes_v2", "proof_field_encoding", "protocol",
         "self_check", "stdrng_kat", "hiding"}


def _instance(seed: int = 1):
    rng = np.random.default_rng(seed)
    tables = [rng.integers(0, KB.P, (256, 2)), rng.integers(0, KB.P, (128, 1))]
    points = [rng.integers(0, KB.P, (8, 4)), rng.integers(0, KB.P, (7, 4))]
    return tables, points


def _prove(mask_seed=None, seed: int = 1):
    tables, points = _instance(seed)
    return P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_seed=mask_seed)).prove(points)


def test_csprng_proofs_of_one_statement_differ_and_record_no_seed():
    first, second = _prove(), _prove()
    assert first.tree["claimed_values_canonical"] == second.tree["claimed_values_canonical"]
    assert first.tree["commitment"] != second.tree["commitment"]
    assert first.tree["proof_postcard_hex"] != second.tree["proof_postcard_hex"]
    for doc in (first, second):
        assert not doc.seeded
        tree = doc.to_json()
        assert "mask_seed" not in tree and "mask_rng" not in tree and "mask_seed" not in tree["params"]
        assert "seed" not in tree["params"]  # the caller's own columns: no instance seed either
        assert tree["zk"] is True and tree["params"]["zk"] is True and "zk_config" in tree
        assert "CSPRNG" in tree["hiding"]
        assert not any(k in tree for k in ("tables", "stacking", "polynomial_evals_canonical"))  # no witness
        whirgpu.verify(doc)
        assert whirgpu.is_valid(doc.dumps())


def test_seeded_proofs_repeat_and_say_so():
    first, second = _prove(5), _prove(5)
    assert first.dumps() == second.dumps()
    assert first.seeded and first.tree["mask_seed"] == 5 == first.tree["params"]["mask_seed"]
    assert "NOT hiding" in first.tree["hiding"]
    whirgpu.verify(first)


@pytest.mark.parametrize("name", [n for n in golden_p3_names("z0*.json") if "zktables" in n])
def test_seeded_document_is_the_oracles(name):
    golden = load_golden_p3(name)
    p = golden["params"]
    spec = TablesSpec.parse(p["tables"], p["open"], "prefix", "prescribed")
    params = example_parameters(p["folding_factor"], p["starting_log_inv_rate"], p["security_level"],
                                SoundnessType[p["soundness_type"]], p["pow_bits"])
    field = field_by_name(golden["field"])
    config, _ = zk_config_for(spec.protocol.shapes, params, field,
                              ZkOptions(p["ell_zk"], p["mask_log_inv_rate"], p["mask_seed"]), True)
    columns, points = draw_instance(spec.protocol, p["seed"], field, p["folding_factor"], True)
    tree = prove_zk_statement(config, spec, columns, points, p["mask_seed"], p["seed"], witness=True).tree
    for key in set(golden) | set(tree):
        if key not in TEXTS:
            assert tree.get(key) == golden.get(key), key


def test_no_opened_row_is_the_plain_codewords():
    """The committed oracle is the interleaved encoding of the stacked polynomial *with* encoding randomness: at
    every opened position, the row differs from the plain codeword's (the same encoding, randomness zero), in every
    entry."""
    doc = _prove(mask_seed=11)
    tables, points = _instance()
    z = P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_seed=11))
    config, ops = z.config, field_ops(KB)
    spec = TablesSpec.parse("8x2,7x1", None, "prefix", "prescribed")
    monty_columns = [ops.to_monty(np.asarray(c, np.uint64)) for c in z.columns]
    local = [ops.to_monty(np.asarray(p, np.uint64)) for p in points]
    polynomial, _, _ = zk_tables_statement(spec.protocol, config.fold(0), monty_columns, local, KB)
    k, n = config.fold(0), config.num_variables
    height = (1 << (n - k)) << config.inner.starting_log_inv_rate
    committed = zk_commit(config, KB, polynomial, zk_challenger(config, KB), StdRng.seed_from_u64(11))
    plain = encode(zk_padded_matrix(polynomial, np.zeros_like(committed.randomness), k, height), KB)
    proof = zk_proof_from_json(doc.tree["proof"], KB)
    opened = proof.rounds[0].openings if proof.rounds else proof.base_case.source_openings
    assert opened.kind == "base" and len(opened.rows) > 0
    codeword = committed.oracle.codeword
    for row in opened.rows:
        (where,) = np.flatnonzero((codeword == row).all(axis=1))  # the position this row was opened at
        assert not (plain[where] == row).any(), where
    # and the plain codeword does appear nowhere among the opened rows
    plain_rows = {tuple(r) for r in plain.tolist()}
    assert not any(tuple(r) in plain_rows for r in opened.rows.tolist())


def test_claimed_values_and_statement_expectations():
    tables, points = _instance()
    doc = _prove()
    values = whirgpu.claimed_values(doc)
    assert len(values) == 3
    whirgpu.verify(doc, points=points, values=values)
    wrong = [list(v) for v in values]
    wrong[0][0] = (wrong[0][0] + 1) % KB.P
    with pytest.raises(VerificationError):
        whirgpu.verify(doc, values=wrong)
    other = [np.asarray(points[0]) ^ 1, points[1]]
    with pytest.raises(VerificationError):
        whirgpu.verify(doc, points=other)


def _tampered(tree: dict, change) -> str:
    copy = json.loads(json.dumps(tree))
    change(copy)
    return json.dumps(copy)


def _flip_last_byte(hex_text: str) -> str:
    """The hex with its last byte's low bit flipped: always a change (a CSPRNG proof's last byte is 00 once in 256,
    where overwriting it with 00 changed nothing)."""
    return hex_text[:-2] + f"{int(hex_text[-2:], 16) ^ 1:02x}"


def _bump(node: list, i: int = 0):
    node[i] = (node[i] + 1) % KB.P


TAMPER = {
    "claimed_values_canonical": lambda d: _bump(d["claimed_values_canonical"][0]),
    "openings": lambda d: _bump(d["openings"][0]["current_values_canonical"][0]),
    "points_canonical": lambda d: _bump(d["points_canonical"][0][0]),
    "openings point": lambda d: _bump(d["openings"][1]["point_canonical"][0]),
    "zk_config": lambda d: d["zk_config"].update(mask_queries=d["zk_config"]["mask_queries"] + 1),
    "config": lambda d: d["config"].update(final_queries=d["config"]["final_queries"] + 1),
    "params": lambda d: d["params"].update(ell_zk=5),
    "zk_point_map": lambda d: d["zk_point_map"][0].update(selector_value=1),
    "mask_seed": lambda d: d.update(mask_seed=3),
    "params.mask_seed": lambda d: d["params"].update(mask_seed=0),
    "proof_postcard_hex": lambda d: d.update(proof_postcard_hex=_flip_last_byte(d["proof_postcard_hex"])),
    "hiding": lambda d: d.update(hiding="something else"),
    "unknown": lambda d: d.update(surprise=1),
    "proof evals": lambda d: _bump(d["proof"]["evals"][0]["value"]),
}


@pytest.mark.parametrize("case", TAMPER)
def test_tampered_documents_are_refused(case):
    tree = _prove().tree
    bad = _tampered(tree, TAMPER[case])
    assert not whirgpu.is_valid(bad)
    with pytest.raises((ProofFormatError, VerificationError)) as caught:
        whirgpu.verify(bad)
    named = {"params": "ell_zk", "unknown": "surprise", "params.mask_seed": "hiding"}.get(case, case.split()[0])
    if case not in ("proof evals", "openings point"):  # the proof itself fails there (the verifier's check)
        assert named in str(caught.value), str(caught.value)


def test_a_seeded_documents_witness_and_reproof_are_checked():
    tables, points = _instance()
    z = P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_seed=4))
    spec = TablesSpec.parse("8x2,7x1", None, "prefix", "prescribed")
    ops = field_ops(KB)
    local = [ops.to_monty(np.asarray(p, np.uint64)) for p in points]
    tree = prove_zk_statement(z.config, spec, z.columns, local, 4, 0, witness=True).tree
    whirgpu.verify(json.dumps(tree))
    bad = _tampered(tree, lambda d: _bump(d["tables"][0]["columns_canonical"][0]))
    with pytest.raises(ProofFormatError):
        whirgpu.verify(bad)
    moved = _tampered(tree, lambda d: d.update(mask_seed=5, params={**d["params"], "mask_seed": 5}))
    with pytest.raises(ProofFormatError):
        whirgpu.verify(moved)


def test_bad_options_are_refused_with_upstreams_words():
    tables, _ = _instance()
    with pytest.raises(ConfigError, match="MaskLengthTooSmall"):
        P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(ell_zk=2))
    with pytest.raises(ConfigError, match="MaskRateTooHigh"):
        P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_log_inv_rate=0))
    with pytest.raises(ConfigError, match="RandomnessExceedsSlack"):
        P3ZkTables(tables, orient="rows", params=example_parameters(4, 1, 32, SoundnessType.CapacityBound, 0))
    with pytest.raises(ConfigError, match="mask_seed"):
        ZkOptions(mask_seed=-1)
    with pytest.raises(ConfigError, match="backend"):
        P3ZkTables(tables, orient="rows", params=PARAMS, backend=3)
    z = P3ZkTables(tables, orient="rows", params=PARAMS)
    with pytest.raises(ConfigError, match="next"):
        z.prove([np.zeros((8, 4), int)], batches="0:0:1")
    with pytest.raises(ConfigError, match="points"):
        z.prove(None)


def test_expected_pins_the_tables_and_one_polynomial_is_one_column():
    tables, points = _instance()
    z = P3ZkTables(tables, orient="rows", params=PARAMS)
    doc = z.prove(points, batches="0:1/1:0")
    whirgpu.verify(doc, params=z.expected("0:1/1:0"))
    with pytest.raises(VerificationError):
        whirgpu.verify(doc, params=z.expected())  # another schedule
    values = np.random.default_rng(3).integers(0, KB.P, 1 << 10)
    one = P3ZkTables([values[None]], orient="columns", params=PARAMS)
    point = np.random.default_rng(4).integers(0, KB.P, (10, 4))
    proved = one.prove([point])
    assert proved.tree["params"]["tables"] == "10x1"
    whirgpu.verify(proved, points=[point])


OPTIONAL_KEYS = {"commitment_canonical", "commitment_root_canonical", "commitment_postcard_hex", "proof_canonical",
                 "proof_postcard_hex", "proof_postcard_len", "config", "zk_config", "domain_separator_canonical",
                 "opening_protocol", "zk_point_map", "claimed_values_canonical", "hiding", "plonky3_commit", "zk"}


def test_hostile_mutations_are_refused_in_one_line():
    """Random single mutations of a hiding document (a key deleted, a value replaced by one of another type or out
    of range) are refused with ProofFormatError / VerificationError, never another exception; only a no-op or the
    deletion of an optional copy may still verify."""
    import random
    tree = _prove().tree
    paths = []

    def walk(node, path):
        paths.append(path)
        if len(path) < 5 and isinstance(node, dict):
            for k, v in node.items():
                walk(v, path + [k])
        elif len(path) < 5 and isinstance(node, list) and node:
            walk(node[0], path + [0])
            walk(node[-1], path + [len(node) - 1])

    walk(tree, [])
    rnd = random.Random(7)
    for _ in range(120):
        path = rnd.choice(paths[1:])
        doc = json.loads(json.dumps(tree))
        node = doc
        for step in path[:-1]:
            node = node[step]
        deleted = isinstance(node, dict) and rnd.random() < 0.2
        before = json.dumps(node[path[-1]])
        if deleted:
            del node[path[-1]]
        else:
            node[path[-1]] = rnd.choice([None, "x", -1, 10**30, [], {}, True, 2**31, 3])
        try:
            whirgpu.verify(json.dumps(doc))
        except (ProofFormatError, VerificationError):
            continue
        unchanged = not deleted and json.dumps(node[path[-1]]) == before
        assert unchanged or (deleted and len(path) == 1 and path[0] in OPTIONAL_KEYS), (path, deleted)


@pytest.mark.parametrize("backend", ["wgpu", "msl-cpu"])
def test_a_gpu_backend_proves_the_references_bytes(backend):
    """``backend=`` a GPU backend's name proves with ``ZkBackendProver``: the seeded document equals the numpy
    reference's; after ``close()`` the object refuses to prove (no silent fallback to the reference)."""
    tables, points = _instance(1)
    want = P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_seed=5)).prove(points)
    with P3ZkTables(tables, orient="rows", params=PARAMS, zk=ZkOptions(mask_seed=5), backend=backend) as z:
        assert z.backend_name == backend
        got = z.prove(points)
    assert got.dumps() == want.dumps()
    with pytest.raises(ConfigError, match="after close"):
        z.prove(points)
