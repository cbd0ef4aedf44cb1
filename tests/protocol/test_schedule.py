"""The profile-free configuration interface (``protocol.schedule``): both profiles' configurations provide every
name the core and the layers below the profiles read."""

from __future__ import annotations

import pytest

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.schedule import missing_names
from whirgpu.protocol.soundness import SoundnessType


@pytest.mark.parametrize("n, fold", [(10, 2), (12, 4), (20, 4)])
def test_whir_p3_metal_configurations_are_schedules(n, fold):
    config = WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=fold))
    assert config.rounds and missing_names(config) == []


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
def test_p3_whir_configurations_are_schedules(field):
    config = P3WhirConfig.derive(16, P3Parameters(100, 30, Constant(4), SoundnessType.JohnsonBound, 2), field)
    assert config.rounds and missing_names(config) == []


def test_a_missing_name_is_named():
    class Partial:
        num_variables = 3
        rounds = (object(),)

    missing = missing_names(Partial())
    assert "fold" in missing and "rounds[0].num_queries" in missing and "num_variables" not in missing
