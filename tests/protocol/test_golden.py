"""The Rust reference's proofs: every one verifies, and the PoW-free ones are reproduced byte for byte."""

from __future__ import annotations

import json

import numpy as np
import pytest

from whirgpu.backends import CpuBackend
from whirgpu.protocol.params import WhirConfig
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.serialize import (
    from_whir_p3_json,
    params_and_statement_from_json,
    proof_to_json_tree,
    to_whir_p3_json,
)
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.ref import field_np as F

from ..conftest import GOLDEN_PROOFS, golden_bytes, golden_text, load_golden


def test_golden_set_is_present(golden):
    assert len(GOLDEN_PROOFS) >= 5, f"expected the reference's golden proofs in {golden}"


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_golden_proof_verifies(golden, name):
    pf = from_whir_p3_json(golden_bytes(name))
    MetalWhirVerifier(pf.config).verify(pf.proof, pf.statement)


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_golden_proof_round_trips_through_our_json(golden, name):
    raw = golden_text(name)
    pf = from_whir_p3_json(raw)
    ours = json.loads(to_whir_p3_json(pf))
    theirs = json.loads(raw)
    for key in ("format", "params", "points_canonical", "claimed_values_canonical", "proof_field_encoding", "proof",
                "derived", "domain_separator_canonical", "proof_canonical"):
        assert ours[key] == theirs[key], key


def _reproduce(name):
    doc = load_golden(name)
    params, statement = params_and_statement_from_json(doc)
    poly = F.to_monty(np.asarray(doc["polynomial_evals_canonical"], dtype=np.uint64))
    proof = MetalWhirProver(WhirConfig.from_params(params), CpuBackend()).prove(poly, statement)
    return doc, proof


@pytest.mark.parametrize("name", [n for n in GOLDEN_PROOFS if load_golden(n)["derived"]["all_pow_zero"]])
def test_golden_proof_reproduced_exactly(name):
    doc, proof = _reproduce(name)
    ours = json.dumps(proof_to_json_tree(proof), sort_keys=True, separators=(",", ":"))
    theirs = json.dumps(doc["proof"], sort_keys=True, separators=(",", ":"))
    assert ours == theirs


@pytest.mark.parametrize("name", [n for n in GOLDEN_PROOFS if not load_golden(n)["derived"]["all_pow_zero"]])
def test_golden_pow_instance_proves_and_verifies(name):
    """With PoW the reference's nonces are arbitrary; ours are the smallest. Everything before the first
    grind must agree, and our proof must verify."""
    doc, proof = _reproduce(name)
    tree = proof_to_json_tree(proof)
    assert tree["initial_commitment"] == doc["proof"]["initial_commitment"]
    assert tree["initial_ood_answers"] == doc["proof"]["initial_ood_answers"]
    params, statement = params_and_statement_from_json(doc)
    MetalWhirVerifier(WhirConfig.from_params(params)).verify(proof, statement)
