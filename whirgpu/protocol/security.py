"""The security a derived configuration reaches, step by step (for a verifier that sets a floor on it).

Contract: ``security_terms(config, regime)`` lists, for every step of the protocol that can fail a cheating
prover, the bits of security the configuration's queries, OOD samples and proof of work give that step under
``regime``'s soundness formulas (``SoundnessType``'s methods): by default the regime the configuration was
derived under (``config.soundness_type``, whose formulas ``WhirConfig.from_params`` derives the schedule from).
``security_bits(config, regime)`` is their minimum, rounded down to whole bits, and ``weakest_step`` names it.
Under the derivation regime these are today's figures (the ones ``whirgpu verify`` and ``--min-security`` use);
``whirgpu.protocol.regimes`` evaluates every regime and says which figure is provable.

PoW counts as the configuration defines it: the derivation computes each step's PoW as the real number that
lifts the step to ``security_level`` under the derivation regime and grinds its integer part (the reference's
``f64 as usize``). Counting the ground integer would put every configuration that grinds a fraction below its own
``security_level`` by less than one bit (the default 20:4:1 would reach 99.2 of its 100); the reference calls
such a configuration ``security_level``-bit secure, and so does this module. Under another regime a step counts
that same PoW (the configuration grinds what it grinds, whatever the analysis) on top of that regime's error
term. A step that needs no PoW counts its formula alone.

Steps: the initial OOD samples and sumcheck, each round's queries (proximity and combination), OOD samples and
sumcheck, the final queries and sumcheck. Unique decoding analyses no OOD step: its list has one codeword. Under
a list-decoding regime a configuration without OOD samples (one derived under unique decoding) has OOD steps of
at most 1 bit: the list-decoding analysis needs them.
"""

from __future__ import annotations

import math

from .schedule import Schedule
from .soundness import SoundnessType


def _fold_error(st: SoundnessType, b: int, num_variables: int, log_inv_rate: int) -> float:
    return min(st.prox_gaps_error(num_variables, log_inv_rate, b, 2),
               st.fold_sumcheck_error(b, num_variables, log_inv_rate))


def _with_pow(error: float, pow_bits: float) -> float:
    return error + max(0.0, pow_bits)


def security_terms(config: Schedule, regime: SoundnessType | str | int | None = None) -> list[tuple[str, float]]:
    """(step, bits) for every step under ``regime`` (any name ``SoundnessType.parse`` reads; None: the
    configuration's own). Bits may be negative or infinite where a formula says so (no OOD sample under a list
    regime; a rate whose distance vanishes)."""
    st, b, lam = config.soundness_type, config.field_size_bits, float(config.security_level)
    ev = st if regime is None else SoundnessType.parse(regime)
    n, r = config.num_variables, config.starting_log_inv_rate
    terms: list[tuple[str, float]] = []
    if ev is not SoundnessType.UniqueDecoding:
        terms.append(("initial OOD samples", ev.ood_error(n, r, b, config.commitment_ood_samples)))
    fold_pow = st.folding_pow_bits_float(config.security_level, b, n, r)
    terms.append(("initial sumcheck", _with_pow(_fold_error(ev, b, n, r), fold_pow)))
    for i, rc in enumerate(config.rounds):
        nv, rate, next_rate = rc.num_variables, rc.log_inv_rate, rc.next_log_inv_rate
        derived_query = st.queries_error(rate, rc.num_queries)
        derived_combination = st.queries_combination_error(b, nv, next_rate, rc.ood_samples, rc.num_queries)
        pow_bits = lam - min(derived_query, derived_combination)  # the real number the derivation grinds
        if ev is st:
            query, combination = derived_query, derived_combination
        else:
            query = ev.queries_error(rate, rc.num_queries)
            combination = ev.queries_combination_error(b, nv, next_rate, rc.ood_samples, rc.num_queries)
        terms.append((f"round {i} queries", _with_pow(query, pow_bits)))
        terms.append((f"round {i} query combination", _with_pow(combination, pow_bits)))
        if ev is not SoundnessType.UniqueDecoding:
            terms.append((f"round {i} OOD samples", ev.ood_error(nv, next_rate, b, rc.ood_samples)))
        fold_pow = st.folding_pow_bits_float(config.security_level, b, nv, next_rate)
        terms.append((f"round {i} sumcheck", _with_pow(_fold_error(ev, b, nv, next_rate), fold_pow)))
    final_pow = lam - st.queries_error(config.final_log_inv_rate, config.final_queries)
    final = ev.queries_error(config.final_log_inv_rate, config.final_queries)
    terms.append(("final queries", _with_pow(final, final_pow)))
    terms.append(("final sumcheck", _with_pow(float(b - 1), lam - float(b - 1))))
    return terms


def whole_bits(bits: float) -> int:
    """A step's (or the weakest step's) bits as whole bits: rounded down, at least 0; 0 if not finite."""
    # A step lifted to security_level by PoW adds (lam - x) + x in f64, which may land an ulp below lam.
    return max(0, math.floor(bits + 1e-9)) if math.isfinite(bits) else 0


def security_bits(config: Schedule, regime: SoundnessType | str | int | None = None) -> int:
    """The whole bits of security the configuration reaches under ``regime`` (None: its own): its weakest
    step (``security_terms``)."""
    weakest = min(bits for _, bits in security_terms(config, regime))
    return whole_bits(weakest)


def weakest_step(config: Schedule, regime: SoundnessType | str | int | None = None) -> tuple[str, float]:
    """The step with the fewest bits under ``regime`` (None: the configuration's own), and its bits."""
    return min(security_terms(config, regime), key=lambda term: term[1])
