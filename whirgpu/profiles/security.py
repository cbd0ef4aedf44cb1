"""The security report of a derived configuration of either profile, and the verifier's policy on it.

Contract: ``security_report(config)`` takes a ``WhirConfig`` (whir-p3-metal) or a ``P3WhirConfig`` (p3-whir) and
returns its ``protocol.regimes.SecurityReport`` (bits under unique decoding, the Johnson bound and the capacity
bound; the provable figure; the regime it was derived under). What a verifier counts of it is
``protocol.security_policy``.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..profiles.whir_p3_metal.config import WhirConfig
from ..protocol.regimes import SecurityReport
from ..protocol.regimes import security_report as whir_p3_metal_report
from .p3_whir.config import P3WhirConfig
from .p3_whir.security import security_report as p3_whir_report

def security_report(config: WhirConfig | P3WhirConfig) -> SecurityReport:
    if isinstance(config, P3WhirConfig):
        return p3_whir_report(config)
    if isinstance(config, WhirConfig):
        return whir_p3_metal_report(config)
    raise ConfigError(f"security_report: expected a WhirConfig or P3WhirConfig, got {type(config).__name__}")
