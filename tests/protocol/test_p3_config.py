"""The p3-whir profile's schedule and domain separator against upstream's: every golden-p3 proof's derived
``config`` block and absorbed pattern, and the refusals upstream's ``WhirConfig::new`` makes (the README's n = 14
JohnsonBound case needs a 16-bit budget)."""

from __future__ import annotations


import pytest

from tests.conftest import load_golden_p3
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.errors import ConfigError
from whirgpu.protocol.folding import Constant, ConstantFromSecondRound
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig, folding_schedule
from whirgpu.profiles.p3_whir.domain_separator import p3_domain_separator
from whirgpu.protocol.soundness import SoundnessType

PROOFS = ["bb_n12_k4_r1_s90_p0_cb_e1_seed0.json", "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json",
          "kb_n12_k4_r1_s90_p0_cb_e1_seed0.json", "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json",
          "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json", "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"]


FIELDS = {"babybear": BABYBEAR, "koalabear": KOALABEAR}


def _params(p: dict, pow_bits: int | None = None) -> P3Parameters:
    return P3Parameters(p["security_level"], p["pow_bits"] if pow_bits is None else pow_bits,
                        Constant(p["folding_factor"]), SoundnessType.parse(p["soundness_type"]),
                        p["starting_log_inv_rate"], tuple(p["round_log_inv_rates"]))


@pytest.mark.parametrize("name", PROOFS)
def test_the_schedule_is_upstreams(name):
    golden = load_golden_p3(name)
    p = golden["params"]
    config = P3WhirConfig.derive(p["num_variables"], _params(p), FIELDS[golden["field"]])
    assert config.to_json_dict() == golden["config"]


@pytest.mark.parametrize("name", PROOFS)
def test_the_domain_separator_is_upstreams(name):
    golden = load_golden_p3(name)
    p = golden["params"]
    config = P3WhirConfig.derive(p["num_variables"], _params(p), FIELDS[golden["field"]])
    assert p3_domain_separator(config) == golden["domain_separator_canonical"]


@pytest.mark.parametrize("budget", [0, 4, 8, 12, 14, 15])
def test_a_derived_pow_above_the_budget_is_refused(budget):
    """Upstream refuses n = 14, fold 3, rate 2, security 100, JohnsonBound below a 16-bit budget (README)."""
    p = load_golden_p3("kb_n14_k3_r2_s100_p16_jb_e2_seed0.json")["params"]
    with pytest.raises(ConfigError, match=f"PowBitsExceedBudget: derived proof-of-work of 16 bits exceeds the "
                                          f"{budget}-bit grinding budget"):
        P3WhirConfig.derive(14, _params(p, budget), KOALABEAR)
    assert P3WhirConfig.derive(14, _params(p, 16), KOALABEAR).max_pow_bits == 16


@pytest.mark.parametrize("folding, n, want", [
    (Constant(8), 15, [8, 7]), (Constant(4), 20, [4, 4, 4, 4]), (Constant(5), 16, [5, 5]), (Constant(3), 3, [3]),
    (ConstantFromSecondRound(5, 3), 20, [5, 3, 3, 3]), ((4, 4, 4, 4), 20, [4, 4, 4, 4]), ((10, 4), 20, [10, 4]),
])
def test_folding_schedules(folding, n, want):
    assert folding_schedule(folding, n) == want


@pytest.mark.parametrize("folding, n, error", [
    ((4, 0), 10, "ZeroFactor"), (Constant(11), 10, "TooLarge"), (ConstantFromSecondRound(11, 2), 10, "TooLarge"),
    ((), 10, "EmptySchedule"), ((2, 2), 20, "InsufficientFolding"), ((3, 8), 10, "TooLarge"),
])
def test_bad_folding_schedules_are_refused(folding, n, error):
    """(Constant(0) never reaches the schedule: the folding classes refuse a zero factor when made.)"""
    with pytest.raises(ConfigError, match=error):
        folding_schedule(folding, n)


@pytest.mark.parametrize("change, error", [
    (dict(starting_log_inv_rate=0), "NonRedundantStartingRate"),
    (dict(round_log_inv_rates=(2,)), "RoundRateCountMismatch"),
    (dict(round_log_inv_rates=(0, 3)), "NonRedundantRoundRate"),
    (dict(round_log_inv_rates=(9, 9)), "RateGrowsDomain"),
    (dict(folding=(4, 4, 4, 4)), "FoldingFactorCountMismatch"),
])
def test_bad_parameters_are_refused_with_upstreams_reason(change, error):
    base = dict(security_level=90, pow_bits=30, folding=Constant(4), soundness_type=SoundnessType.CapacityBound,
                starting_log_inv_rate=1, round_log_inv_rates=())
    with pytest.raises(ConfigError, match=error):
        P3WhirConfig.derive(16, P3Parameters(**{**base, **change}), BABYBEAR)


def test_a_field_too_small_for_the_security_level_is_refused():
    """Upstream's own example: no OOD sample count reaches 100 bits with a 10-bit field (JohnsonBound)."""

    class TenBitField:
        TWO_ADICITY, TWO_ADIC_GENERATORS, EF_BITS = KOALABEAR.TWO_ADICITY, KOALABEAR.TWO_ADIC_GENERATORS, 10

    params = P3Parameters(100, 30, Constant(4), SoundnessType.JohnsonBound, 2)
    with pytest.raises(ConfigError, match="OodSamplesInfeasible: no out-of-domain sample count reaches 100-bit "
                                          "security with a 10-bit field"):
        P3WhirConfig.derive(20, params, TenBitField)


def test_a_folded_domain_past_the_two_adicity_is_refused():
    params = P3Parameters(90, 30, Constant(2), SoundnessType.CapacityBound, 3)
    with pytest.raises(ConfigError, match=r"FoldedDomainExceedsTwoAdicity: folded domain 2\^25 exceeds the base "
                                          r"field's two-adicity 2\^24"):
        P3WhirConfig.derive(24, params, KOALABEAR)
