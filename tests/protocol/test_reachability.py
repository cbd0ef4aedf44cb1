"""Unreachable security levels (whirgpu.profiles.whir_p3_metal.reachability) and the provable grids
(whirgpu.profiles.whir_p3_metal.provable_grid): the PoW a request needs, worked out by hand from the error terms;
the nearest levels checked by deriving around them."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from whirgpu.errors import ConfigError
from whirgpu.profiles.whir_p3_metal.config import MAX_GRIND_BITS, WhirConfig
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.provable_grid import (DEFAULT_GRID_POINTS, PROVABLE_GRIDS, grid_params,
                                                          provable_grid, security_tables)
from whirgpu.profiles.whir_p3_metal.reachability import reachability
from whirgpu.protocol.soundness import SoundnessType

UD, JB, CB = SoundnessType.UniqueDecoding, SoundnessType.JohnsonBound, SoundnessType.CapacityBound
FIELD_BITS = ((15 * 2**27 + 1) ** 4).bit_length()
JB_CONSTANT = math.log2(2 * 10.5**5 / 3)  # BCSS25 Thm 1.5 at m = 10, as upstream keeps it


def _derives(params: ProtocolParameters) -> bool:
    try:
        WhirConfig.from_params(params)
        return True
    except ConfigError:
        return False


def test_128_johnson_bits_at_20_4_1_are_out_of_reach():
    """The issue's request. By hand: the Johnson bound's proximity gap at 2^nv variables, rate 2^-r, leaves
    124 - (nv + r + 16.38 + 1.5 r) bits. The initial sumcheck (20, 1): 85.1, so 42.9 bits of PoW (what ``params``
    reports); round 2's sumcheck (8 variables, rate 2^-8): 79.6, so 48.4 bits, the most. Each grows 1:1 with
    the field, so the field must have 124 + (48.4 - 30) rounded so that 48.4 - extra < 31: 142 bits. Unique
    decoding's proximity gap at the initial sumcheck leaves 124 - 21 = 103 bits: 25 bits of PoW."""
    params = ProtocolParameters.default(20, 4, 1, security_level=128, pow_bits=20, soundness_type=JB)
    with pytest.raises(ConfigError, match="initial sumcheck .* needs 42 bits"):
        WhirConfig.from_params(params)
    found = reachability(params)
    assert not found.derives and not found.within_budget
    worst = 128 - (FIELD_BITS - (8 + 8 + JB_CONSTANT + 1.5 * 8))
    assert found.needed_pow_bits == int(worst) == 48
    assert found.blocking_step == "round 2 sumcheck (folding_pow_bits)"
    assert "the initial sumcheck (starting_folding_pow_bits)" in found.steps_over_cap
    assert found.field_bits_needed == FIELD_BITS + math.floor(worst - (MAX_GRIND_BITS + 1)) + 1 == 142
    assert dict(found.alternatives) == {UD: 128 - (FIELD_BITS - 21)}
    assert found.max_security is not None and found.max_security_within_budget is not None
    assert _derives(replace(params, security_level=found.max_security))
    assert not _derives(replace(params, security_level=found.max_security + 1))
    within = WhirConfig.from_params(replace(params, security_level=found.max_security_within_budget))
    assert within.check_pow_bits()
    text = found.describe()
    assert "out of reach" in text and "2^124" in text and "Johnson bound's proximity-gap error" in text
    assert f"largest level that derives here is {found.max_security} bits" in text
    assert "unique decoding reaches 128 bits here with at most 25 bits of PoW" in text


def test_a_level_within_reach_says_so():
    found = reachability(ProtocolParameters.default(20, 4, 1))
    assert found.derives and found.within_budget and found.why == "" and found.steps_over_cap == ()
    assert found.max_security == found.max_security_within_budget == 100
    assert found.describe() == ("100 bits under the capacity bound at 20:4:1 (pow_bits budget 16) derive: the "
                                "largest PoW is 15 bits")


def test_over_budget_names_the_field_bound_step():
    """Johnson bound, 100 bits at 20:4:1: round 2's sumcheck keeps 79.6 bits (above), so it grinds 20 bits,
    above the budget of 16 that the reference only warns about."""
    found = reachability(ProtocolParameters.default(20, 4, 1, soundness_type=JB))
    assert found.derives and not found.within_budget
    assert found.needed_pow_bits == int(100 - (FIELD_BITS - (16 + JB_CONSTANT + 12))) == 20
    assert "above the budget" in found.describe() and found.field_bits_needed is None


def test_above_the_final_sumcheck_bound():
    """The final sumcheck keeps 123 bits of a 124-bit field: 160 bits need 37 bits of PoW."""
    found = reachability(ProtocolParameters.default(20, 4, 1, security_level=160, soundness_type=UD))
    assert not found.derives and found.needed_pow_bits == 160 - (FIELD_BITS - 1) == 37
    assert found.max_security is not None and not _derives(
        ProtocolParameters.default(20, 4, 1, security_level=found.max_security + 1, soundness_type=UD))


def test_a_budget_above_what_can_be_ground_is_not_the_fields_fault():
    found = reachability(ProtocolParameters.default(20, 4, 1, security_level=128, pow_bits=100, soundness_type=UD))
    assert not found.derives and found.field_bits_needed is None and found.max_security is None
    assert "a larger field does not help" in found.why


@pytest.mark.parametrize("kwargs", [dict(num_variables=0), dict(pow_bits=100)])
def test_parameters_wrong_in_themselves_raise(kwargs):
    params = replace(ProtocolParameters.default(20, 4, 1), **kwargs)
    with pytest.raises(ConfigError):
        reachability(params)


# ---- the provable grids ----------------------------------------------------------------------------------------

def test_the_grid_points_are_benchs_default_grid():
    from whirgpu.bench.grid import GRIDS
    assert list(DEFAULT_GRID_POINTS) == [(p.n, p.fold, p.rate) for p in GRIDS["default"]]


@pytest.mark.parametrize("name", sorted(PROVABLE_GRIDS))
def test_every_provable_grid_point_reaches_100_provable_bits(name):
    regime = PROVABLE_GRIDS[name]
    entries = provable_grid(name)
    assert [(e.num_variables, e.fold, e.rate) for e in entries] == list(DEFAULT_GRID_POINTS)
    for entry in entries:
        assert entry.derives, entry.note
        assert entry.report.provable_bits == 100 and entry.report.provable_regime is regime, entry.point
        assert not entry.report.conjectural
        assert (entry.note == "") is entry.within_budget, entry.point
        budget = entry.min_pow_budget
        assert budget is not None and WhirConfig.from_params(replace(entry.params, pow_bits=budget)).check_pow_bits()
        if budget > entry.params.pow_bits:
            assert not WhirConfig.from_params(replace(entry.params, pow_bits=budget - 1)).check_pow_bits()


def test_unique_decoding_fits_the_budget_everywhere():
    assert all(e.within_budget and e.max_pow_bits <= 16 for e in provable_grid("provable-unique"))


def test_the_tables_have_every_point():
    tables = security_tables()
    for n, f, r in DEFAULT_GRID_POINTS:
        assert tables.count(f"| {n}:{f}:{r} |") == 2
    with pytest.raises(ConfigError):
        provable_grid("provable-capacity")
    assert grid_params(20, 4, 1, JB).soundness_type is JB


def test_security_md_shows_the_tables_the_module_prints():
    """docs/SECURITY.md pastes `python3 -m whirgpu.profiles.whir_p3_metal.provable_grid`: the tables must still be
    what it prints."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "docs" / "SECURITY.md").read_text()
    for table in security_tables().split("\n\n"):
        assert table in text
