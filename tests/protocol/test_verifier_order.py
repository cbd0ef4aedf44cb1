"""The verifier hashes every round's Merkle openings in one batch, once the final openings are known; the first
failure it reports must still be the first in the step-by-step order of whir-spec §4 (each round's openings
checked right after they are sampled). Each case breaks two things and names the one that must win.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends import CpuBackend
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.protocol.params import ProtocolParameters, WhirConfig

# Two rounds, OOD samples, PoW on the round and the final queries.
PARAMS = ProtocolParameters.default(num_variables=11, folding_factor=2, starting_log_inv_rate=2, security_level=24,
                                    pow_bits=5)


@functools.lru_cache(maxsize=None)
def _proof():
    config = WhirConfig.from_params(PARAMS)
    poly, statement = random_instance(PARAMS.num_variables, seed=3)
    return config, MetalWhirProver(config, CpuBackend()).prove(poly, statement), statement


def _outcome(mutations) -> tuple:
    config, proof, statement = _proof()
    proof = copy.deepcopy(proof)
    for mutate in mutations:
        mutate(proof)
    try:
        MetalWhirVerifier(config).verify(proof, statement)
    except VerificationError as err:
        return ("verification", err.round, err.check)
    except ProofFormatError:
        return ("format",)
    return ("accepted",)


def _bump_value(queries, j=0):
    values = np.array(queries[j].values, copy=True)
    values.reshape(-1)[0] = (values.reshape(-1)[0] + 1) % P
    queries[j].values = values


def round0_opening(p):
    _bump_value(p.rounds[0].queries)


def round1_opening(p):
    _bump_value(p.rounds[1].queries, -1)


def final_opening(p):
    _bump_value(p.final_queries)


def round0_pow(p):
    p.rounds[0].pow_witness = np.uint32((int(p.rounds[0].pow_witness) + 1) % P)


def round1_sumcheck(p):
    evaluations = np.array(p.rounds[1].sumcheck.evaluations, copy=True)
    evaluations[0, 0, 0] = (evaluations[0, 0, 0] + 1) % P
    p.rounds[1].sumcheck.evaluations = evaluations


def final_poly_missing(p):
    p.final_poly = None


def round1_short_path(p):
    p.rounds[1].queries[0].siblings = p.rounds[1].queries[0].siblings[:-1]


def test_the_proof_verifies_and_has_two_rounds():
    config, _, _ = _proof()
    assert config.n_rounds == 2 and _outcome([]) == ("accepted",)


@pytest.mark.parametrize("mutations, expected", [
    ((round0_opening,), ("verification", "round 0", "merkle")),
    ((round1_opening,), ("verification", "round 1", "merkle")),
    ((final_opening,), ("verification", "final round", "merkle")),  # before the final-query check
    ((round0_opening, round1_opening), ("verification", "round 0", "merkle")),
    ((round1_opening, round0_opening), ("verification", "round 0", "merkle")),
    ((round0_opening, final_poly_missing), ("verification", "round 0", "merkle")),
    ((round0_opening, round1_short_path), ("verification", "round 0", "merkle")),
    ((round1_opening, round1_short_path), ("format",)),  # the round's own form is read before its openings
    ((round0_opening, final_opening), ("verification", "round 0", "merkle")),
], ids=lambda v: "+".join(m.__name__ for m in v) if isinstance(v, tuple) and callable(v[0]) else None)
def test_first_failure_in_step_order(mutations, expected):
    assert _outcome(mutations) == expected


def test_an_earlier_check_beats_a_later_opening():
    """The transcript model: a changed round-1 sumcheck value moves every later challenge, so the final queries'
    PoW or openings fail, never round 1's own openings (sampled before it); a changed round-0 witness fails its
    own PoW check before any opening is looked at."""
    kind, where, check = _outcome((round1_opening, round0_pow))
    assert (where, check) == ("round 0", "pow")
    kind, where, check = _outcome((round1_sumcheck,))
    assert where in ("final round", "round 1 sumcheck", "final sumcheck", "final") and kind == "verification"
