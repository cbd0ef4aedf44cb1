"""The lockstep walk of many proofs (``profiles.whir_p3_metal.lockstep``) against the one-proof verifier: the K
challengers against K ``DuplexChallenger``s, each per-row operation against its one-proof namesake, and the walk
itself: a proof passes exactly when the one-proof walk raises nothing, with the same openings, over honest proofs
of several shapes and every single-value change of the tamper suite's sites (and openings dropped or added), all
walked in one batch beside honest ones."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends import CpuBackend
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.many.batch_verify import _Deferred
from whirgpu.profiles.whir_p3_metal.lockstep import read_parts, walk_lockstep
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.protocol.batch_transcript import BatchChallenger
from whirgpu.protocol.proof import Statement
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import field_np as F
from whirgpu.ref import rows as R
from whirgpu.ref.multilinear import evaluate, evaluate_rows, expand_from_univariate, horner
from whirgpu.ref.sumcheck import evaluate_round_polynomial

from .test_tamper import CASES, _config_of, _get, _proof_file, _set, _value_sites

SHAPES = {  # (parameters, claims): no rounds and no final sumcheck; two fold sizes and no claims; grinding
    "no-rounds": (ProtocolParameters.default(num_variables=6, folding_factor=6, starting_log_inv_rate=1,
                                             security_level=32, pow_bits=0), 2),
    "cfsr-noclaims": (ProtocolParameters.default(num_variables=11, folding_factor=(3, 2), starting_log_inv_rate=2,
                                                 security_level=40, pow_bits=3, soundness_type="JohnsonBound"), 0),
    "three-rounds": (ProtocolParameters.default(num_variables=12, folding_factor=3, starting_log_inv_rate=1,
                                                security_level=60, pow_bits=8), 3),
}


def _rand_ef(rng, *shape):
    return rng.integers(0, P, shape + (4,), dtype=np.uint32)


# ---- the K challengers ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(4))
def test_batch_challenger_is_k_challengers(seed):
    rng = np.random.default_rng(seed)
    k = 1 + seed * 3
    start = DuplexChallenger()
    start.observe_many(rng.integers(0, P, int(rng.integers(0, 12)), dtype=np.uint32))
    singles = [start.clone() for _ in range(k)]
    batch = BatchChallenger.of(start, k)
    for _ in range(300):
        op = int(rng.integers(0, 5))
        if op == 0:
            words = rng.integers(0, P, (k, int(rng.integers(0, 20))), dtype=np.uint32)
            batch.observe(words)
            for single, row in zip(singles, words):
                single.observe_many(row)
        elif op == 1:
            assert batch.sample().tolist() == [int(s.sample()) for s in singles]
        elif op == 2:
            assert np.array_equal(batch.sample_ef(), np.array([s.sample_ef() for s in singles]))
        elif op == 3:
            bits = int(rng.integers(0, 31))
            assert batch.sample_bits(bits).tolist() == [s.sample_bits(bits) for s in singles]
        else:
            bits = int(rng.integers(0, 3))  # few bits: both outcomes occur
            witness = rng.integers(0, P, k, dtype=np.uint32)
            assert batch.check_witness(bits, witness).tolist() == [s.check_witness(bits, w)
                                                                   for s, w in zip(singles, witness)]


def test_batch_challenger_refuses_other_variants():
    with pytest.raises(ValueError, match="whir-p3"):
        BatchChallenger.of(DuplexChallenger(length_tagged=True), 2)


# ---- per-row arithmetic ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(3))
def test_row_operations_equal_their_one_proof_namesakes(seed):
    rng = np.random.default_rng(seed)
    k = 7
    y = _rand_ef(rng, k)
    y[0] = 0  # edge values: zero and one
    y[1] = F.ef_from_base(F.ONE)
    for m in (0, 1, 5):
        expanded = R.expand_rows(y, m)
        assert expanded.shape == (k, m, 4)
        for row in range(k):
            assert np.array_equal(expanded[row], expand_from_univariate(y[row], m))
    for n in (0, 1, 2, 7, 16):
        powers = R.ef_powers_rows(y, n)
        for row in range(k):
            assert np.array_equal(powers[row], F.ef_powers(y[row], n))
    s, h0, h2, r = (_rand_ef(rng, k) for _ in range(4))
    r[2] = F.ef_from_base(F.constant(2))
    got = R.round_value_rows(s, h0, h2, r)
    for row in range(k):
        assert np.array_equal(got[row], evaluate_round_polynomial(s[row], h0[row], h2[row], r[row]))
    for width_log in (0, 1, 4):
        points = _rand_ef(rng, k, width_log)
        base = rng.integers(0, P, (k, 1 << width_log), dtype=np.uint32)
        ext = _rand_ef(rng, k, 1 << width_log)
        for table in (base, ext):
            got = R.evaluate_each(table, points)
            for row in range(k):
                assert np.array_equal(got[row], evaluate_rows(table[row:row + 1], points[row])[0])
    coefficients = _rand_ef(rng, k, 9)
    x = rng.integers(0, P, k, dtype=np.uint32)
    got = R.horner_each(coefficients, x)
    for row in range(k):
        assert np.array_equal(got[row], horner(coefficients[row], x[row]))
    terms = _rand_ef(rng, 40)
    owner = np.sort(rng.integers(0, k, 40))
    sums = R.segment_sums(terms, owner, k + 1)
    for row in range(k + 1):
        assert np.array_equal(sums[row], F.ef_sum(terms[owner == row]) if np.any(owner == row) else np.zeros(4))


# ---- the walk --------------------------------------------------------------------------------------------------

def _single_outcome(config, pf):
    """What the one-proof walk says before the openings are hashed: None (nothing failed) or its error."""
    try:
        MetalWhirVerifier(config).walk(pf.proof, pf.statement, _Deferred())
    except (ProofFormatError, VerificationError) as exc:
        return exc
    return None


def _single_openings(config, pf):
    openings = _Deferred()
    MetalWhirVerifier(config).walk(pf.proof, pf.statement, openings)
    return openings.pending


def _same_openings(a, b):
    return len(a) == len(b) and all(x[0] == y[0] and all(np.array_equal(u, v) for u, v in zip(x[1:], y[1:]))
                                    for x, y in zip(a, b))


def _check_group(config, proofs):
    """Walk ``proofs`` in lockstep (those whose parts read) and compare each with the one-proof walk."""
    readable = []
    for pf in proofs:
        try:
            readable.append((pf, read_parts(config, pf.proof, pf.statement)))
        except ProofFormatError:
            assert isinstance(_single_outcome(config, pf), ProofFormatError)
    passed, openings = walk_lockstep(config, [parts for _, parts in readable])
    for (pf, _), ok, mine in zip(readable, passed, openings):
        outcome = _single_outcome(config, pf)
        assert bool(ok) == (outcome is None), outcome
        if ok:
            assert _same_openings(mine, _single_openings(config, pf))
    return passed


@pytest.fixture(scope="module")
def honest():
    out = {}
    for name, (params, claims) in SHAPES.items():
        config = WhirConfig.from_params(params)
        proofs = []
        for seed in range(3):
            poly, _ = random_instance(params.num_variables, seed=seed)
            points = _rand_ef(np.random.default_rng(seed), claims, params.num_variables)
            statement = Statement(points, np.array([evaluate(poly, z) for z in points], np.uint32).reshape(-1, 4))
            proof = MetalWhirProver(config, CpuBackend()).prove(poly, statement)
            proofs.append(type("PF", (), {"proof": proof, "statement": statement})())
        out[name] = (config, proofs)
    return out


@pytest.mark.parametrize("name", list(SHAPES))
def test_honest_proofs_pass_with_the_openings_of_one_walk(honest, name):
    config, proofs = honest[name]
    assert _check_group(config, proofs).all()


@pytest.mark.parametrize("case", CASES)
def test_every_changed_value_fails_where_the_one_proof_walk_does(case):
    config = _config_of(case)
    original = _proof_file(case)
    proofs = [original]
    for site in _value_sites(config):
        pf = copy.deepcopy(original)
        _set(pf, site, (_get(pf, site) + 1) % P)
        proofs.append(pf)
    passed = _check_group(config, proofs + [original])
    assert passed[0] and passed[-1] and not passed[1:-1].all()


@pytest.mark.parametrize("case", CASES)
def test_openings_dropped_or_added_fail(case):
    config = _config_of(case)
    original = _proof_file(case)
    rng = random.Random(3)
    proofs = [original]
    holders = [r for r in original.proof.rounds] + [original.proof]
    for h in range(len(holders)):
        for change in ("drop", "add"):
            pf = copy.deepcopy(original)
            holder = (pf.proof.rounds + [pf.proof])[h]
            queries = holder.queries if h < len(pf.proof.rounds) else holder.final_queries
            if not queries:
                continue
            if change == "drop":
                queries.pop(rng.randrange(len(queries)))
            else:
                queries.append(copy.deepcopy(queries[rng.randrange(len(queries))]))
            proofs.append(pf)
    passed = _check_group(config, proofs)
    assert passed[0] and not passed[1:].any()


def _failing_witness(challenger, bits):
    """The smallest word whose ``check_witness(bits, .)`` fails, the challenger left as that check leaves it."""
    word = 0
    while challenger.clone().check_witness(bits, np.uint32(word)):
        word += 1
    challenger.check_witness(bits, np.uint32(word))
    return np.uint32(word)


@pytest.mark.parametrize("site", ["sumcheck", "round", "final"])
def test_a_proof_with_one_failing_witness_fails(monkeypatch, site):
    """A proof made with one witness that fails its check (the rest of the transcript consistent with it) is
    refused by the one-proof walk at that check and does not pass the lockstep walk."""
    params = ProtocolParameters.default(num_variables=8, folding_factor=1, starting_log_inv_rate=6,
                                        security_level=124, pow_bits=15, soundness_type="UniqueDecoding")
    config = WhirConfig.from_params(params)
    assert config.starting_folding_pow_bits and config.rounds[0].pow_bits and config.final_pow_bits
    fsr = config.final_sumcheck_rounds if config.final_folding_pow_bits else 0
    real = DuplexChallenger.grind
    calls = []

    def prove(seed, target=None):
        def grind(self, b):
            calls.append(b)
            return _failing_witness(self, b) if len(calls) - 1 == target else real(self, b)

        calls.clear()
        monkeypatch.setattr(DuplexChallenger, "grind", grind)
        poly, statement = random_instance(params.num_variables, seed=seed)
        proof = MetalWhirProver(config, CpuBackend()).prove(poly, statement)
        monkeypatch.setattr(DuplexChallenger, "grind", real)
        return type("PF", (), {"proof": proof, "statement": statement})()

    good = prove(12)
    target = {"sumcheck": 0, "round": config.fold(0), "final": len(calls) - 1 - fsr}[site]
    bad = prove(11, target)
    outcome = _single_outcome(config, bad)
    assert isinstance(outcome, VerificationError) and outcome.check == "pow", outcome
    assert _check_group(config, [good, bad, good]).tolist() == [True, False, True]
