"""Security figures under every regime (whirgpu.protocol.regimes, the p3-whir profile's security module):
checked against the WHIR paper's error terms written out here in plain probabilities (not the log forms of
``soundness``), today's figure reproduced for the derivation regime over the default grid, ``describe``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import pytest

from whirgpu.errors import ConfigError
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir import security as p3_security
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.regimes import RegimeFigure, SecurityReport, describe, security_report
from whirgpu.protocol.security import security_bits, security_terms
from whirgpu.protocol.soundness import SoundnessType

UD, JB, CB = SoundnessType.UniqueDecoding, SoundnessType.JohnsonBound, SoundnessType.CapacityBound
BABYBEAR_P = 15 * 2**27 + 1
FIELD_BITS = (BABYBEAR_P**4).bit_length()  # |EF| taken as 2^124, as the reference's EF::bits()


# ---- the WHIR paper's error terms, by hand ---------------------------------------------------------------------

def _rho(rate: int) -> float:
    return 2.0**-rate


def _eta(regime: SoundnessType, rate: int) -> float:
    """The gap below the regime's radius: sqrt(rho)/20 (Johnson), rho/20 (capacity)."""
    return math.sqrt(_rho(rate)) / 20 if regime is JB else _rho(rate) / 20


def _delta(regime: SoundnessType, rate: int) -> float:
    rho = _rho(rate)
    if regime is UD:
        return (1 - rho) / 2
    if regime is JB:
        return 1 - math.sqrt(rho) - _eta(regime, rate)
    return 1 - rho - _eta(regime, rate)


def _list_size(regime: SoundnessType, nv: int, rate: int) -> float:
    """1 (unique decoding); 1/(2 eta sqrt(rho)) (Johnson); d/(rho eta) with d = 2^nv (capacity conjecture)."""
    rho = _rho(rate)
    if regime is UD:
        return 1.0
    if regime is JB:
        return 1 / (2 * _eta(regime, rate) * math.sqrt(rho))
    return 2.0**nv / (rho * _eta(regime, rate))


def _prox_gap_probability(regime: SoundnessType, nv: int, rate: int) -> float:
    """|L|/|F| (unique decoding, BCIKS20); 2(m + 1/2)^5/(3 rho^3/2) |L|/|F| with m = 10 (Johnson, BCSS25 Thm 1.5 as
    upstream keeps it); d/(eta rho^2 |F|) (capacity conjecture). |L| = 2^(nv + rate) is the evaluation domain."""
    rho, domain, field = _rho(rate), 2.0 ** (nv + rate), 2.0**FIELD_BITS
    if regime is UD:
        return domain / field
    if regime is JB:
        return 2 * 10.5**5 / (3 * rho**1.5) * domain / field
    return 2.0**nv / (_eta(regime, rate) * rho**2) / field


def _bits(probability: float) -> float:
    return -math.log2(probability)


def _fold(regime, nv, rate) -> float:
    """A sumcheck round's folding: the proximity gap, or the list's 2L/|F| of the sumcheck, whichever is worse."""
    sumcheck = 2 * _list_size(regime, nv, rate) / 2.0**FIELD_BITS
    return _bits(max(_prox_gap_probability(regime, nv, rate), sumcheck))


def _queries(regime, rate, q) -> float:
    return _bits((1 - _delta(regime, rate)) ** q)


def _combination(regime, nv, rate, ood, q) -> float:
    return _bits((ood + q) * 2 * _list_size(regime, nv, rate) / 2.0**FIELD_BITS)


def _ood(regime, nv, rate, samples) -> float:
    """L^2/2 (d/|F|)^s, in log form (the probability underflows)."""
    return -(2 * math.log2(_list_size(regime, nv, rate)) - 1 + samples * (nv - FIELD_BITS))


@dataclass
class Step:
    name: str
    error: Callable[[SoundnessType], float]  # bits without PoW
    pow_bits: float


def _steps(config: WhirConfig) -> list[Step]:
    """The protocol's steps with the configuration's counts; each step's PoW the real number the derivation
    regime lifts it to the security level with (what whir-p3-metal's figure counts)."""
    n, r, lam = config.num_variables, config.starting_log_inv_rate, config.security_level
    d = config.soundness_type
    steps = [Step("initial OOD samples", lambda g: _ood(g, n, r, config.commitment_ood_samples), 0.0),
             Step("initial sumcheck", lambda g: _fold(g, n, r), lam - _fold(d, n, r))]
    for i, rc in enumerate(config.rounds):
        nv, rate, nxt, q, ood = rc.num_variables, rc.log_inv_rate, rc.next_log_inv_rate, rc.num_queries, rc.ood_samples
        query_pow = lam - min(_queries(d, rate, q), _combination(d, nv, nxt, ood, q))
        steps += [Step(f"round {i} queries", lambda g, rate=rate, q=q: _queries(g, rate, q), query_pow),
                  Step(f"round {i} query combination",
                       lambda g, nv=nv, nxt=nxt, ood=ood, q=q: _combination(g, nv, nxt, ood, q), query_pow),
                  Step(f"round {i} OOD samples", lambda g, nv=nv, nxt=nxt, ood=ood: _ood(g, nv, nxt, ood), 0.0),
                  Step(f"round {i} sumcheck", lambda g, nv=nv, nxt=nxt: _fold(g, nv, nxt), lam - _fold(d, nv, nxt))]
    fr, fq = config.final_log_inv_rate, config.final_queries
    steps += [Step("final queries", lambda g: _queries(g, fr, fq), lam - _queries(d, fr, fq)),
              Step("final sumcheck", lambda g: FIELD_BITS - 1.0, lam - (FIELD_BITS - 1.0))]
    return steps


def _by_hand(steps: list[Step], regime: SoundnessType) -> tuple[str, float]:
    """The weakest step under ``regime``: each step's error plus its PoW (none when it needs none); unique
    decoding has no OOD step."""
    terms = [(s.name, s.error(regime) + max(0.0, s.pow_bits)) for s in steps
             if not (regime is UD and "OOD" in s.name)]
    return min(terms, key=lambda t: t[1])


def _whole(bits: float) -> int:
    return max(0, math.floor(bits + 1e-6))


HAND_CONFIGS = [((20, 4, 1), CB), ((22, 3, 2), JB), ((20, 2, 1), UD), ((24, 6, 1), CB), ((12, 4, 3), JB)]


@pytest.mark.parametrize("spec, derived", HAND_CONFIGS, ids=lambda v: str(v))
@pytest.mark.parametrize("regime", [UD, JB, CB], ids=lambda r: r.cli_name)
def test_every_regime_matches_the_papers_error_terms(spec, derived, regime):
    config = WhirConfig.from_params(ProtocolParameters.default(*spec, soundness_type=derived))
    step, bits = _by_hand(_steps(config), regime)
    figure = security_report(config).figure(regime)
    assert figure.weakest_bits == pytest.approx(bits, abs=1e-6)
    assert figure.bits == _whole(bits)
    assert dict(security_terms(config, regime))[step] == pytest.approx(bits, abs=1e-6)


@pytest.mark.parametrize("spec, derived", HAND_CONFIGS, ids=lambda v: str(v))
def test_the_provable_figure_is_the_better_provable_regime(spec, derived):
    config = WhirConfig.from_params(ProtocolParameters.default(*spec, soundness_type=derived))
    steps = _steps(config)
    hand = {regime: _whole(_by_hand(steps, regime)[1]) for regime in (UD, JB, CB)}
    report = security_report(config)
    assert report.bits == hand
    assert report.provable_bits == max(hand[UD], hand[JB])
    assert report.headline_bits == hand[derived] == security_bits(config) == 100
    assert report.conjectural is (derived is CB)
    assert report.policy_bits() == report.provable_bits
    assert report.policy_bits(assume_capacity=True) == max(hand.values())


def test_the_benchmarked_20_4_1_has_54_provable_bits():
    """By hand: round 0 makes 91 queries at rate 1/2. Under the capacity bound (derivation) 1 - delta = 1.05/2,
    91 x 0.9296 = 84.59 bits, so the round grinds 100 - 84.59 = 15.41 bits; under the Johnson bound
    1 - delta = 1.05 / sqrt(2), 91 x 0.4297 = 39.10 bits, + 15.41 = 54.5: 54 provable bits. Unique decoding:
    the 11 final queries at rate 2^-8 give 11 x -log2((1 + 2^-8)/2) = 10.94, + 100 - 87.23 = 23.7: 23 bits."""
    report = security_report(WhirConfig.from_params(ProtocolParameters.default(20, 4, 1)))
    assert report.bits == {UD: 23, JB: 54, CB: 100}
    assert report.weakest[JB][0] == "round 0 queries" and report.weakest[UD][0] == "final queries"
    assert describe(report) == ("security 100 bits under the capacity-bound conjecture; 54 bits provable "
                                "(Johnson bound)")


# ---- today's figure, the default grid -------------------------------------------------------------------------

def _default_grid():
    from whirgpu.bench.grid import GRIDS
    return [(p.n, p.fold, p.rate) for p in GRIDS["default"]]


@pytest.mark.parametrize("derived", [UD, JB, CB], ids=lambda r: r.cli_name)
def test_the_derivation_regime_gives_todays_figure_over_the_default_grid(derived):
    for spec in _default_grid():
        config = WhirConfig.from_params(ProtocolParameters.default(*spec, soundness_type=derived))
        report = security_report(config)
        assert report.headline_bits == security_bits(config) == config.security_level, spec
        assert report.provable_bits <= 100 if derived is CB else report.provable_bits == 100, spec
        if derived is UD:  # no OOD sample: the list-decoding analyses give nothing
            assert report.bits[JB] == report.bits[CB] == 0, spec


def test_describe_names_the_regime_of_every_figure():
    jb = security_report(WhirConfig.from_params(ProtocolParameters.default(20, 4, 1, soundness_type=JB)))
    ud = security_report(WhirConfig.from_params(ProtocolParameters.default(20, 4, 1, soundness_type=UD)))
    assert describe(jb) == "security 100 bits provable (Johnson bound)"
    assert describe(ud) == "security 100 bits provable (unique decoding)"

    def made(derived, ud_bits, jb_bits, cb_bits):
        return SecurityReport(derived, 100, tuple(RegimeFigure(r, b, "final queries", float(b))
                                                  for r, b in zip((UD, JB, CB), (ud_bits, jb_bits, cb_bits))))
    assert describe(made(CB, 0, 0, 100)) == ("security 100 bits under the capacity-bound conjecture; no provable "
                                             "security (0 bits under unique decoding and the Johnson bound)")
    assert describe(made(JB, 101, 100, 90)) == ("security 100 bits provable (Johnson bound); 101 bits provable "
                                                "(unique decoding)")
    assert made(CB, 40, 40, 100).provable_regime is JB
    assert made(UD, 40, 40, 100).provable_regime is UD


def test_a_report_reads_regimes_by_any_name_and_refuses_other_configs():
    report = security_report(WhirConfig.from_params(ProtocolParameters.default(12, 4, 1)))
    assert report.figure("johnson") is report.figure(JB) is report.figure(1)
    assert report.to_json_dict()["regimes"]["johnson"]["bits"] == report.bits[JB]
    with pytest.raises(ConfigError):
        security_report("20:4:1")


# ---- the p3-whir profile ----------------------------------------------------------------------------------------

def _p3_steps(config: P3WhirConfig) -> list[Step]:
    """The p3-whir steps by hand: the same error terms, the configuration's whole (rounded up) PoW bits."""
    n, r = config.num_variables, config.params.starting_log_inv_rate
    steps = [Step("initial OOD samples", lambda g: _ood(g, n, r, config.commitment_ood_samples), 0.0),
             Step("initial sumcheck", lambda g: _fold(g, n, r), config.starting_folding_pow_bits)]
    rate = r
    for i, rc in enumerate(config.round_parameters):
        nv, nxt, q, ood = rc.num_variables, rc.log_inv_rate, rc.num_queries, rc.ood_samples
        steps += [Step(f"round {i} queries", lambda g, rate=rate, q=q: _queries(g, rate, q), rc.pow_bits),
                  Step(f"round {i} query combination",
                       lambda g, nv=nv, nxt=nxt, ood=ood, q=q: _combination(g, nv, nxt, ood, q), rc.pow_bits),
                  Step(f"round {i} OOD samples", lambda g, nv=nv, nxt=nxt, ood=ood: _ood(g, nv, nxt, ood), 0.0),
                  Step(f"round {i} sumcheck", lambda g, nv=nv, nxt=nxt: _fold(g, nv, nxt), rc.folding_pow_bits)]
        rate = nxt
    steps.append(Step("final queries", lambda g, rate=rate: _queries(g, rate, config.final_queries),
                      config.final_pow_bits))
    if config.final_sumcheck_rounds:
        steps.append(Step("final sumcheck", lambda g: FIELD_BITS - 1.0, config.final_folding_pow_bits))
    return steps


P3_CONFIGS = [(16, 5, 1, CB, KOALABEAR), (20, 4, 1, JB, KOALABEAR), (18, 3, 2, UD, BABYBEAR), (20, 4, 2, CB, BABYBEAR)]


@pytest.mark.parametrize("n, fold, rate, derived, field", P3_CONFIGS, ids=lambda v: str(v))
def test_p3_whir_figures_match_the_papers_error_terms(n, fold, rate, derived, field):
    config = P3WhirConfig.derive(n, P3Parameters(90, 16, Constant(fold), derived, rate), field)
    assert config.field_bits == FIELD_BITS
    report = p3_security.security_report(config)
    steps = _p3_steps(config)
    for regime in (UD, JB, CB):
        step, bits = _by_hand(steps, regime)
        assert report.figure(regime).weakest_bits == pytest.approx(bits, abs=1e-6), regime
        assert report.bits[regime] == _whole(bits) == p3_security.security_bits(config, regime), regime
    # PoW rounded up: every step reaches the level it was derived for, the weakest within a bit of it.
    assert report.headline_bits == 90
    assert report.provable_bits == (90 if derived.provable else max(report.bits[UD], report.bits[JB]))
    with pytest.raises(ConfigError):
        p3_security.security_terms(WhirConfig.from_params(ProtocolParameters.default(12, 4, 1)))


def test_every_golden_p3_configuration_reaches_its_level_under_its_regime():
    from tests.conftest import load_golden_p3
    from tests.protocol.test_p3_config import FIELDS, PROOFS, _params
    for name in PROOFS:
        golden = load_golden_p3(name)
        p = golden["params"]
        config = P3WhirConfig.derive(p["num_variables"], _params(p), FIELDS[golden["field"]])
        report = p3_security.security_report(config)
        assert report.headline_bits == p["security_level"], name
        assert report.conjectural is (report.derived_under is CB), name
