"""The security a derived configuration reaches, step by step (for a verifier that sets a floor on it).

Contract: ``security_terms(config)`` lists, for every step of the protocol that can fail a cheating prover, the
bits of security the configuration's own soundness formulas give it (``SoundnessType``'s methods, the ones
``WhirConfig.from_params`` derives the schedule from), plus the proof-of-work bits the configuration derives for
that step. ``security_bits(config)`` is their minimum, rounded down to whole bits.

PoW counts as the configuration defines it: the derivation computes each step's PoW as the real number that
lifts the step to ``security_level`` and grinds its integer part (the reference's ``f64 as usize``). Counting the
ground integer would put every configuration that grinds a fraction below its own ``security_level`` by less
than one bit (the default 20:4:1 would reach 99.2 of its 100); the reference calls such a configuration
``security_level``-bit secure, and so does this module. A step that needs no PoW counts its formula alone.
"""

from __future__ import annotations

import math

from .config import WhirConfig
from .soundness import SoundnessType


def _fold_error(st: SoundnessType, b: int, num_variables: int, log_inv_rate: int) -> float:
    return min(st.prox_gaps_error(num_variables, log_inv_rate, b, 2),
               st.fold_sumcheck_error(b, num_variables, log_inv_rate))


def _with_pow(error: float, pow_bits: float) -> float:
    return error + max(0.0, pow_bits)


def security_terms(config: WhirConfig) -> list[tuple[str, float]]:
    """(step, bits) for every step: the initial OOD samples and sumcheck, each round's queries (proximity and
    combination), OOD samples and sumcheck, the final queries and sumcheck. UniqueDecoding has no OOD step."""
    st, b, lam = config.soundness_type, config.field_size_bits, float(config.security_level)
    n, r = config.num_variables, config.starting_log_inv_rate
    terms: list[tuple[str, float]] = []
    if st is not SoundnessType.UniqueDecoding:
        terms.append(("initial OOD samples", st.ood_error(n, r, b, config.commitment_ood_samples)))
    fold = _fold_error(st, b, n, r)
    terms.append(("initial sumcheck", _with_pow(fold, st.folding_pow_bits_float(config.security_level, b, n, r))))
    for i, rc in enumerate(config.rounds):
        nv, rate, next_rate = rc.num_variables, rc.log_inv_rate, rc.next_log_inv_rate
        query = st.queries_error(rate, rc.num_queries)
        combination = st.queries_combination_error(b, nv, next_rate, rc.ood_samples, rc.num_queries)
        pow_bits = lam - min(query, combination)  # the real number the derivation grinds the integer part of
        terms.append((f"round {i} queries", _with_pow(query, pow_bits)))
        terms.append((f"round {i} query combination", _with_pow(combination, pow_bits)))
        if st is not SoundnessType.UniqueDecoding:
            terms.append((f"round {i} OOD samples", st.ood_error(nv, next_rate, b, rc.ood_samples)))
        terms.append((f"round {i} sumcheck", _with_pow(
            _fold_error(st, b, nv, next_rate), st.folding_pow_bits_float(config.security_level, b, nv, next_rate))))
    final = st.queries_error(config.final_log_inv_rate, config.final_queries)
    terms.append(("final queries", _with_pow(final, lam - final)))
    terms.append(("final sumcheck", _with_pow(float(b - 1), lam - float(b - 1))))
    return terms


def security_bits(config: WhirConfig) -> int:
    """The whole bits of security the configuration reaches: its weakest step (``security_terms``)."""
    weakest = min(bits for _, bits in security_terms(config))
    # A step lifted to security_level by PoW adds (lam - x) + x in f64, which may land an ulp below lam.
    return max(0, math.floor(weakest + 1e-9)) if math.isfinite(weakest) else 0


def weakest_step(config: WhirConfig) -> tuple[str, float]:
    """The step with the fewest bits, and its bits."""
    return min(security_terms(config), key=lambda term: term[1])
