"""The security a p3-whir configuration (``P3WhirConfig``) reaches under every regime.

Contract: ``security_terms(config, regime)`` lists (step, bits) for every step of the p3-whir protocol that can
fail a cheating prover, evaluated under ``regime``'s formulas (None: the regime the configuration was derived
under) with the configuration's own query counts, OOD samples and PoW: the initial OOD samples and sumcheck, each
round's queries (proximity and combination), OOD samples and sumcheck, the final queries and, when the final
phase runs one, the final sumcheck. Query errors use upstream's closed forms of log2(1 - delta) (``config``), the
other terms the formulas both profiles share (``SoundnessType``). ``security_bits`` is the weakest step in whole
bits and ``security_report`` the figures of all three regimes (``whirgpu.protocol.regimes``).

PoW counts the integer bits the configuration grinds: this profile rounds every PoW up (``ceil``), so under the
derivation regime every step reaches at least ``security_level`` and the figure is ``security_level`` (or, when
no step is tight, a little more). Unique decoding analyses no OOD step; a configuration without OOD samples
(derived under unique decoding) gets at most 1 bit from a list-decoding regime's OOD steps.
"""

from __future__ import annotations

from whirgpu.errors import ConfigError
from whirgpu.profiles.p3_whir.config import P3WhirConfig, queries_error
from whirgpu.protocol.regimes import SecurityReport, report_from_terms
from whirgpu.protocol.security import whole_bits
from whirgpu.protocol.soundness import SoundnessType


def _fold_error(st: SoundnessType, bits: int, num_variables: int, log_inv_rate: int) -> float:
    return min(st.prox_gaps_error(num_variables, log_inv_rate, bits, 2),
               st.fold_sumcheck_error(bits, num_variables, log_inv_rate))


def security_terms(config: P3WhirConfig, regime: SoundnessType | str | int | None = None) -> list[tuple[str, float]]:
    """(step, bits) for every step under ``regime`` (any name ``SoundnessType.parse`` reads; None: the
    configuration's own)."""
    if not isinstance(config, P3WhirConfig):
        raise ConfigError(f"expected a P3WhirConfig, got {type(config).__name__}")
    ev = config.params.soundness_type if regime is None else SoundnessType.parse(regime)
    b, n, rate = config.field_bits, config.num_variables, config.params.starting_log_inv_rate
    terms: list[tuple[str, float]] = []
    if ev is not SoundnessType.UniqueDecoding:
        terms.append(("initial OOD samples", ev.ood_error(n, rate, b, config.commitment_ood_samples)))
    terms.append(("initial sumcheck", _fold_error(ev, b, n, rate) + config.starting_folding_pow_bits))
    for i, rc in enumerate(config.round_parameters):
        nv, next_rate, q = rc.num_variables, rc.log_inv_rate, rc.num_queries
        terms.append((f"round {i} queries", queries_error(ev, rate, q) + rc.pow_bits))
        terms.append((f"round {i} query combination",
                      ev.queries_combination_error(b, nv, next_rate, rc.ood_samples, q) + rc.pow_bits))
        if ev is not SoundnessType.UniqueDecoding:
            terms.append((f"round {i} OOD samples", ev.ood_error(nv, next_rate, b, rc.ood_samples)))
        terms.append((f"round {i} sumcheck", _fold_error(ev, b, nv, next_rate) + rc.folding_pow_bits))
        rate = next_rate
    terms.append(("final queries", queries_error(ev, rate, config.final_queries) + config.final_pow_bits))
    if config.final_sumcheck_rounds > 0:
        terms.append(("final sumcheck", float(b - 1) + config.final_folding_pow_bits))
    return terms


def security_bits(config: P3WhirConfig, regime: SoundnessType | str | int | None = None) -> int:
    """The whole bits of the weakest step under ``regime`` (None: the configuration's own)."""
    return whole_bits(min(bits for _, bits in security_terms(config, regime)))


def security_report(config: P3WhirConfig) -> SecurityReport:
    """The figures of a p3-whir configuration under every regime (``whirgpu.protocol.regimes.describe`` says
    them in one line)."""
    if not isinstance(config, P3WhirConfig):
        raise ConfigError(f"expected a P3WhirConfig, got {type(config).__name__}")
    return report_from_terms(config.params.soundness_type, config.params.security_level,
                             lambda regime: security_terms(config, regime))
