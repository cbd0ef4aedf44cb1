"""The security of a derived configuration under every regime, and the figure that is provable.

Contract: ``security_report(config)`` evaluates the configuration's actual queries, OOD samples and proof of
work under the soundness formulas of each regime (``SoundnessType``: unique decoding, Johnson bound, capacity
bound; ``security.security_terms``) and returns a frozen ``SecurityReport``: per regime the whole bits and the
weakest step, the regime the configuration was derived under, and the best provable figure. The figure under the
derivation regime is exactly ``security.security_bits(config)`` (today's figure). ``describe(report)`` says it in
one line, e.g. ``security 100 bits under the capacity-bound conjecture; 54 bits provable (Johnson bound)``.
``report_from_terms`` builds a report from any profile's per-regime step terms (the p3-whir profile's
``security_report`` uses it).

Why the provable figure is the larger of the unique-decoding and Johnson-bound figures: a regime is an analysis,
not a property of the configuration. Each regime fixes its own proximity parameter delta (unique decoding
(1 - rho)/2, inside the unique-decoding radius by construction; Johnson bound 1 - sqrt(rho) - eta with
eta = sqrt(rho)/20, strictly below the Johnson radius by construction) and bounds every step's error at that
delta; the verifier's checks do not depend on delta. So each provable regime's figure is a lower bound on the
configuration's security that holds on its own, whatever the rate, and the larger of the two holds as well. The
figures are not combined step by step: adjacent steps share a round's delta (a round's query error uses the delta
of the code it queries, its OOD samples and combination the list size of the next code), so taking each step's
best regime would mix analyses no theorem covers. A regime whose analysis needs OOD samples that the
configuration lacks (one derived under unique decoding, evaluated under a list-decoding regime) gets 0 bits.

The capacity-bound figure holds only under the capacity conjecture. If one assumes it, the provable analyses
still hold too, so ``policy_bits(assume_capacity=True)`` counts the largest of the three figures; without the
assumption it counts ``provable_bits``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable

from whirgpu.errors import ConfigError
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.schedule import Schedule
from whirgpu.protocol.security import security_terms, whole_bits
from whirgpu.protocol.soundness import SoundnessType

REGIMES = (SoundnessType.UniqueDecoding, SoundnessType.JohnsonBound, SoundnessType.CapacityBound)
PROVABLE_REGIMES = tuple(r for r in REGIMES if r.provable)


@dataclass(frozen=True)
class RegimeFigure:
    """One regime's figure: ``bits`` the whole bits of the weakest step (rounded down, >= 0); ``weakest_step``
    names that step and ``weakest_bits`` gives its exact value (may be negative or -inf where the regime's
    analysis gives nothing, e.g. no OOD sample under a list-decoding regime)."""

    regime: SoundnessType
    bits: int
    weakest_step: str
    weakest_bits: float

    @property
    def provable(self) -> bool:
        return self.regime.provable


@dataclass(frozen=True)
class SecurityReport:
    """The figures of one configuration. ``figures`` holds one ``RegimeFigure`` per regime in ``REGIMES`` order
    (unique decoding, Johnson bound, capacity bound); ``derived_under`` is the regime the configuration's schedule
    was derived for and ``security_level`` the level it was derived for."""

    derived_under: SoundnessType
    security_level: int
    figures: tuple[RegimeFigure, ...]

    def figure(self, regime: SoundnessType | str | int) -> RegimeFigure:
        """The figure under ``regime`` (any name ``SoundnessType.parse`` reads)."""
        wanted = SoundnessType.parse(regime)
        return next(f for f in self.figures if f.regime is wanted)

    @property
    def bits(self) -> dict[SoundnessType, int]:
        """{regime: whole bits} for the three regimes (a fresh dict)."""
        return {f.regime: f.bits for f in self.figures}

    @property
    def weakest(self) -> dict[SoundnessType, tuple[str, float]]:
        """{regime: (weakest step, its bits)}."""
        return {f.regime: (f.weakest_step, f.weakest_bits) for f in self.figures}

    @property
    def headline_bits(self) -> int:
        """The figure under the derivation regime: today's ``security_bits`` (``security=`` of ``verify``)."""
        return self.figure(self.derived_under).bits

    @property
    def conjectural(self) -> bool:
        """True when the headline figure rests on the capacity conjecture (derived under the capacity bound)."""
        return not self.derived_under.provable

    @property
    def provable_figure(self) -> RegimeFigure:
        """The larger of the unique-decoding and Johnson-bound figures; on a tie the derivation regime's if it is
        provable, else the Johnson bound's."""
        def rank(f: RegimeFigure) -> tuple[int, int, int]:
            return (f.bits, f.regime is self.derived_under, f.regime is SoundnessType.JohnsonBound)
        return max((f for f in self.figures if f.provable), key=rank)

    @property
    def provable_bits(self) -> int:
        return self.provable_figure.bits

    @property
    def provable_regime(self) -> SoundnessType:
        return self.provable_figure.regime

    def policy_bits(self, assume_capacity: bool = False) -> int:
        """The bits a verifier's minimum should count: ``provable_bits``, or with ``assume_capacity`` (the
        caller opts into the capacity conjecture) the largest of the three figures."""
        if assume_capacity:
            return max(self.provable_bits, self.figure(SoundnessType.CapacityBound).bits)
        return self.provable_bits

    def to_json_dict(self) -> dict:
        """For ``--json`` outputs: regimes by CLI name (unique, johnson, capacity); non-finite bits as null."""
        def exact(x: float) -> float | None:
            return round(x, 3) if math.isfinite(x) else None
        return {
            "derived_under": self.derived_under.cli_name,
            "security_level": self.security_level,
            "headline_bits": self.headline_bits,
            "conjectural": self.conjectural,
            "provable_bits": self.provable_bits,
            "provable_regime": self.provable_regime.cli_name,
            "regimes": {
                f.regime.cli_name: {"bits": f.bits, "provable": f.provable, "weakest_step": f.weakest_step,
                                    "weakest_bits": exact(f.weakest_bits)}
                for f in self.figures
            },
        }


def figure_from_terms(regime: SoundnessType, terms: Iterable[tuple[str, float]]) -> RegimeFigure:
    """The figure of one regime from its (step, bits) terms (at least one)."""
    terms = list(terms)
    if not terms:
        raise ConfigError(f"no protocol step to evaluate under the {regime.regime_name}")
    step, bits = min(terms, key=lambda term: term[1])
    return RegimeFigure(regime, whole_bits(bits), step, bits)


def report_from_terms(derived_under: SoundnessType, security_level: int,
                      terms_for: Callable[[SoundnessType], Iterable[tuple[str, float]]]) -> SecurityReport:
    """A report from ``terms_for(regime)``, the (step, bits) terms of a configuration under each regime."""
    derived_under = SoundnessType.parse(derived_under)
    return SecurityReport(derived_under, int(security_level),
                          tuple(figure_from_terms(r, terms_for(r)) for r in REGIMES))


def security_report(config: Schedule) -> SecurityReport:
    """The figures of a configuration derived from ``ProtocolParameters`` by the shared soundness formulas (the
    whir-p3-metal profile's ``WhirConfig``) under every regime; another profile's configuration has its own
    report (``profiles.security.security_report`` picks it)."""
    if not isinstance(getattr(config, "params", None), ProtocolParameters):
        raise ConfigError(f"expected a WhirConfig, got {type(config).__name__}")
    return report_from_terms(config.soundness_type, config.security_level,
                             lambda regime: security_terms(config, regime))


def describe(report: SecurityReport) -> str:
    """One line naming every regime it cites: the headline figure and, when it is conjectural or another
    provable regime gives more, the provable figure. E.g. ``security 100 bits under the capacity-bound
    conjecture; 54 bits provable (Johnson bound)``, ``security 100 bits provable (Johnson bound)``."""
    derived, best = report.derived_under, report.provable_figure
    if derived.provable:
        text = f"security {report.headline_bits} bits provable ({derived.regime_name})"
        if best.regime is not derived and best.bits > report.headline_bits:
            text += f"; {best.bits} bits provable ({best.regime.regime_name})"
        return text
    text = f"security {report.headline_bits} bits under the capacity-bound conjecture; "
    if best.bits == 0:
        return text + "no provable security (0 bits under unique decoding and the Johnson bound)"
    return text + f"{best.bits} bits provable ({best.regime.regime_name})"
