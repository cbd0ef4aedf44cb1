"""WHIR protocol parameters and the round schedule derived from them (whir-spec.md §5), in one import.

This module only re-exports; the code lives in modules with one job each (docs/ARCHITECTURE.md):

- ``soundness``: ``SoundnessType``, the reference's soundness formulas in IEEE-754 doubles;
- ``f64``: Rust's ``f64`` semantics (``as usize``, ``log2``, ``min``, ``max``) the formulas need;
- ``folding``: ``FoldingFactor``, ``Constant``, ``ConstantFromSecondRound``, the number of rounds;
- ``parameters``: ``ProtocolParameters`` (what a user chooses) and the defaults;
- ``schedule``: the field's bounds checked before deriving;
- the whir-p3-metal profile's ``config`` (``profiles/whir_p3_metal/config``): ``WhirConfig`` with
  ``RoundConfig``/``FinalRoundConfig``, derived by ``WhirConfig.from_params`` exactly as the reference's
  ``WhirConfig::new``, and its ``schedule_text``: ``format_schedule``, the schedule as a table for people;
- ``integers``: reading integer parameters (``as_int``) and printing them (``short``).

Callers outside the package may keep importing every name below from here; the package itself imports from
the homes (tests/lint/test_layering.py). A public re-export above the profiles, not part of the profile-free core:
the layering lint places it with the public API.
"""

from __future__ import annotations

from whirgpu.profiles.whir_p3_metal.config import FinalRoundConfig, RoundConfig, WhirConfig
from whirgpu.profiles.whir_p3_metal.schedule_text import format_schedule
from whirgpu.protocol.folding import (
    MAX_NUM_VARIABLES_TO_SEND_COEFFS,
    Constant,
    ConstantFromSecondRound,
    FoldingFactor,
)
from whirgpu.protocol.parameters import (
    DEFAULT_MAX_POW,
    DEFAULT_SECURITY_LEVEL,
    MAX_INITIAL_REDUCTION,
    ProtocolParameters,
)
from whirgpu.protocol.schedule import FIELD_SIZE_BITS, MAX_GRIND_BITS, MAX_LOG_STARTING_DOMAIN, MAX_SECURITY_LEVEL
from whirgpu.protocol.soundness import LOG2_10, MAX_OOD_SAMPLES, SoundnessType

__all__ = [
    "DEFAULT_MAX_POW",
    "DEFAULT_SECURITY_LEVEL",
    "FIELD_SIZE_BITS",
    "LOG2_10",
    "MAX_GRIND_BITS",
    "MAX_INITIAL_REDUCTION",
    "MAX_LOG_STARTING_DOMAIN",
    "MAX_NUM_VARIABLES_TO_SEND_COEFFS",
    "MAX_OOD_SAMPLES",
    "MAX_SECURITY_LEVEL",
    "Constant",
    "ConstantFromSecondRound",
    "FinalRoundConfig",
    "FoldingFactor",
    "ProtocolParameters",
    "RoundConfig",
    "SoundnessType",
    "WhirConfig",
    "format_schedule",
]
