"""prove -> verify round trips over a representative slice of the reference's configuration matrix
(whir-spec §9.5: λ=32, r=1, folds 1-4 and ConstantFromSecondRound, all soundness types, PoW, reductions,
n from k0 to 3 k0, 0-2 claims). The full matrix runs with --runslow."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from whirgpu.api import Prover, is_valid
from whirgpu.errors import ConfigError, VerificationError
from whirgpu.protocol.params import Constant, ConstantFromSecondRound, ProtocolParameters, SoundnessType, WhirConfig
from whirgpu.protocol.proof import Statement
from whirgpu.protocol.serialize import ProofFile, dump, load
from whirgpu.protocol.verifier import WhirVerifier
from whirgpu.ref import field_np as F
from whirgpu.ref.multilinear import evaluate, expand_from_univariate
from whirgpu.ref.rng import Xoshiro256PlusPlus, random_base, random_ef

FOLDS = [Constant(1), Constant(2), Constant(3), Constant(4), ConstantFromSecondRound(2, 1),
         ConstantFromSecondRound(3, 1), ConstantFromSecondRound(3, 2), ConstantFromSecondRound(5, 2)]
SOUNDNESS = list(SoundnessType)


def _cases():
    for fold, soundness, pow_bits in itertools.product(FOLDS, SOUNDNESS, (0, 5, 10)):
        k0 = fold.at_round(0)
        for reduction in range(1, min(k0, 3) + 1):
            for n in range(k0, 3 * k0 + 1):
                yield fold, soundness, pow_bits, reduction, n


ALL_CASES = list(_cases())
# A deterministic spread: every fold x soundness pair, PoW and reduction varying, n at both ends and the middle.
FAST_CASES = [c for i, c in enumerate(ALL_CASES) if i % 23 == 0]


def _instance(n: int, claims: int, seed: int):
    rng = Xoshiro256PlusPlus(seed)
    poly = random_base(rng, 1 << n)
    points = [random_ef(rng, n)]
    points.append(expand_from_univariate(random_ef(rng, 1)[0], n))  # an OOD-shaped point
    points = np.asarray(points[:claims], np.uint32).reshape(-1, n, 4)
    values = np.array([evaluate(poly, z) for z in points], np.uint32).reshape(-1, 4)
    return poly, Statement(points, values)


def _params(case):
    fold, soundness, pow_bits, reduction, n = case
    return ProtocolParameters(num_variables=n, folding_factor=fold, starting_log_inv_rate=1, security_level=32,
                              rs_domain_initial_reduction_factor=reduction, pow_bits=pow_bits,
                              soundness_type=soundness)


def _check(case):
    try:
        params = _params(case)
        config = WhirConfig.from_params(params)
    except ConfigError as exc:
        pytest.skip(f"the reference rejects this configuration too: {exc}")
    n = case[-1]
    claims = n % 3
    poly, statement = _instance(n, claims, seed=n)
    prover = Prover(config, backend="cpu")
    pf = prover.prove_monty(poly, statement)
    WhirVerifier(config).verify(pf.proof, pf.statement)
    for fmt in ("binary", "whir-p3-json"):
        data = dump(pf, fmt)
        assert is_valid(load(data))
        assert dump(prover.prove_monty(poly, statement), fmt) == data  # deterministic
    if claims:
        wrong = Statement(statement.points, F.ef_add(statement.values, F.ef_from_base(F.ONE)))
        with pytest.raises(VerificationError):
            WhirVerifier(config).verify(pf.proof, wrong)


@pytest.mark.parametrize("case", FAST_CASES, ids=lambda c: f"{c[0]}-{c[1].name}-pow{c[2]}-red{c[3]}-n{c[4]}")
def test_round_trip(case):
    _check(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: f"{c[0]}-{c[1].name}-pow{c[2]}-red{c[3]}-n{c[4]}")
def test_round_trip_full_matrix(case):
    _check(case)


def test_fast_slice_covers_the_interesting_shapes():
    configs = []
    for case in FAST_CASES:
        try:
            configs.append(WhirConfig.from_params(_params(case)))
        except ConfigError:
            pass
    assert any(c.n_rounds == 0 for c in configs)
    assert any(c.n_rounds >= 2 for c in configs)
    assert any(c.final_sumcheck_rounds == 0 for c in configs)
    assert any(c.params.soundness_type == SoundnessType.UniqueDecoding for c in configs)
    assert any(isinstance(c.params.folding_factor, ConstantFromSecondRound) for c in configs)
    assert any(c.starting_folding_pow_bits > 0 or any(r.pow_bits for r in c.rounds) for c in configs)
