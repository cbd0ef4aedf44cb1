"""What a verifier counts of a configuration's security: provable bits unless its caller opts into a conjecture.

Contract: ``check_assume(assume)`` is True when the caller opts into the capacity-bound conjecture
(``assume="capacity"``), False for None, and a ``ConfigError`` for anything else. ``counted_bits(report,
assume)`` is what a verifier's minimum counts of a ``regimes.SecurityReport``: its provable bits, or with the
opt-in the largest figure including the conjecture's. ``shortfall(report, min_security, assume)`` is None when the
minimum is met, else the refusal's text (both figures, and how to opt in where that would change the verdict).
``accept_figure(report, assume)`` is the accept line's security words.
"""

from __future__ import annotations

from ..errors import ConfigError
from .regimes import SecurityReport

ASSUMPTIONS = ("capacity",)


def check_assume(assume) -> bool:
    """True when the caller opts into the capacity-bound conjecture; ConfigError for an opt-in that is not one."""
    if assume is None:
        return False
    if assume not in ASSUMPTIONS:
        raise ConfigError(f"assume: the only conjecture a verifier may be told to assume is 'capacity', got "
                          f"{assume!r:.40}")
    return True


def counted_bits(report: SecurityReport, assume=None) -> int:
    """The bits a verifier's minimum counts under the caller's ``assume`` (see the module contract)."""
    return report.policy_bits(assume_capacity=check_assume(assume))


def shortfall(report: SecurityReport, min_security, assume=None) -> str | None:
    """None when the report meets ``min_security`` under ``assume``; else the refusal's text: both figures, and
    how to opt into the conjecture where that would change the verdict."""
    assumed = check_assume(assume)
    counted = report.policy_bits(assume_capacity=assumed)
    if counted >= min_security:
        return None
    figure = report.provable_figure
    text = (f"security expected at least {min_security} bits, got {report.provable_bits} provable "
            f"({figure.regime.regime_name}; weakest step: {figure.weakest_step}, {figure.weakest_bits:.1f} bits)")
    capacity = report.policy_bits(assume_capacity=True)
    if assumed:
        return text + f" and {capacity} under the capacity-bound conjecture, which was assumed"
    if capacity >= min_security:
        return text + (f"; {capacity} bits under the capacity-bound conjecture, which a verifier assumes only when "
                       f"told to (--assume capacity, assume=\"capacity\")")
    return text + f"; {capacity} bits even under the capacity-bound conjecture"


def accept_figure(report: SecurityReport, assume=None) -> str:
    """The accept line's security words: ``security=S regime=R`` and, for a configuration derived under the
    conjecture, its conjectural figure (``conjectural=C``) or that it was assumed (``regime=capacity(assumed)``)."""
    if check_assume(assume) and report.policy_bits(True) > report.provable_bits:
        return f"security={report.policy_bits(True)} regime=capacity(assumed) provable={report.provable_bits}"
    words = f"security={report.provable_bits} regime={report.provable_regime.cli_name}"
    if report.conjectural:
        words += f" conjectural={report.headline_bits}"
    return words
