"""``whirgpu.protocol.config``, the whir-p3-metal profile's configuration where it used to live: a public
re-export of ``whirgpu.profiles.whir_p3_metal.config`` for callers outside the package (the package imports it
from its home; the layering lint places this module with the public API, above the profiles)."""

from __future__ import annotations

from whirgpu.profiles.whir_p3_metal.config import (
    FIELD_SIZE_BITS,
    MAX_GRIND_BITS,
    MAX_LOG_STARTING_DOMAIN,
    MAX_SECURITY_LEVEL,
    FinalRoundConfig,
    RoundConfig,
    WhirConfig,
)

__all__ = ["FIELD_SIZE_BITS", "MAX_GRIND_BITS", "MAX_LOG_STARTING_DOMAIN", "MAX_SECURITY_LEVEL", "FinalRoundConfig",
           "RoundConfig", "WhirConfig"]
