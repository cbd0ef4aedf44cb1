"""Whether a requested security level derives, why not in terms of the field, and the nearest setting that does
(whir-p3-metal profile, ``WhirConfig``).

Contract: ``reachability(params)`` never raises for a security level the formulas cannot reach; it derives the
schedule as ``WhirConfig.from_params`` does and returns a frozen ``Reachability``:
- ``derives``: ``from_params`` succeeds (every PoW within ``MAX_GRIND_BITS``, what ``sample_bits`` can check);
  ``within_budget``: and every derived PoW within ``params.pow_bits`` (the reference only warns past it);
- ``needed_pow_bits`` / ``blocking_step``: the largest PoW the request needs, derived without the cap, and the
  step that needs it (the names of ``WhirConfig``'s PoW values); ``steps_over_cap``: every step above
  ``MAX_GRIND_BITS`` (``from_params`` names the first of them);
- ``why``: one line in terms of the field (|EF| ~ 2^124 for the degree-4 extension) and of the error term that
  eats it, '' when the request derives within its budget;
- the nearest reachable settings: ``max_security`` (the largest level <= the requested one that derives with the
  same variables, folding, rate, regime and budget), ``max_security_within_budget`` (the same, every PoW within
  the budget), ``alternatives`` (the PoW the other provable regimes would need for the requested level, None where
  they do not derive) and ``field_bits_needed`` (the smallest extension field, in bits, at which every PoW of the
  requested level fits MAX_GRIND_BITS with the same query and OOD counts; None when it derives or when the field
  is not what blocks it; a field that large needs no more OOD samples, so it is exact to within the bit or so
  fewer samples would give the query combination);
- ``describe()``: all of it in one line.
Parameters that are wrong in themselves (num_variables < 1, pow_bits >= security_level, subgroups beyond the
two-adicity, no OOD sample count in range) raise ``ConfigError`` as ``from_params`` does: they are not a matter of
security level.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from whirgpu.errors import ConfigError
from whirgpu.field import EF_DEGREE, P
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.protocol import f64
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.schedule import FIELD_SIZE_BITS, MAX_GRIND_BITS, MAX_SECURITY_LEVEL
from whirgpu.protocol.soundness import SoundnessType

FINAL_SUMCHECK = "the final sumcheck (final_folding_pow_bits)"
_LARGER_EXTENSIONS = (5, 8)  # degrees named when a larger field would help


def _the(regime: SoundnessType) -> str:
    """The regime as a noun phrase: "unique decoding", "the Johnson bound", "the capacity bound"."""
    return regime.regime_name if regime is SoundnessType.UniqueDecoding else f"the {regime.regime_name}"


class _Uncapped(WhirConfig):
    """The same derivation without the refusal of PoW above MAX_GRIND_BITS (nor of 0 queries: checked apart)."""

    def _check_provable(self) -> None:
        pass


@dataclass(frozen=True)
class Reachability:
    """What ``reachability`` found (module docstring)."""

    params: ProtocolParameters
    derives: bool
    within_budget: bool
    needed_pow_bits: int
    blocking_step: str
    steps_over_cap: tuple[str, ...]
    why: str
    max_security: int | None
    max_security_within_budget: int | None
    alternatives: tuple[tuple[SoundnessType, int | None], ...]
    field_bits_needed: int | None

    def describe(self) -> str:
        """One line: the verdict, why, and the nearest settings that derive."""
        p = self.params
        where = (f"{p.security_level} bits under {_the(p.soundness_type)} at "
                 f"{p.num_variables}:{p.folding_factor.at_round(0)}:{p.starting_log_inv_rate} "
                 f"(pow_bits budget {p.pow_bits})")
        if self.derives and self.within_budget:
            return f"{where} derive: the largest PoW is {self.needed_pow_bits} bits"
        if self.derives:
            head = (f"{where} derive, but {self.blocking_step} grinds {self.needed_pow_bits} bits, above the "
                    f"budget (the reference only warns)")
        else:
            more = len(self.steps_over_cap) - 1
            head = (f"{where} are out of reach: {self.blocking_step} needs {self.needed_pow_bits} bits of proof of "
                    f"work, above MAX_GRIND_BITS {MAX_GRIND_BITS} (sample_bits needs 2^bits < p)"
                    + (f", the most of {more + 1} such steps" if more > 0 else ""))
        parts = [f"{head}: {self.why}"]
        if self.max_security is None:
            parts.append(f"no level above pow_bits {p.pow_bits} derives with these parameters")
        elif not self.derives:
            parts.append(f"the largest level that derives here is {self.max_security} bits")
        if self.max_security_within_budget is not None and self.max_security_within_budget != self.max_security:
            parts.append(f"the largest within the {p.pow_bits}-bit budget is {self.max_security_within_budget} bits")
        elif self.max_security_within_budget is None and self.max_security is not None:
            parts.append(f"no level derives within the {p.pow_bits}-bit budget")
        for regime, pow_bits in self.alternatives:
            if pow_bits is not None:
                parts.append(f"{_the(regime)} reaches {p.security_level} bits here with at most "
                             f"{pow_bits} bits of PoW")
        if self.field_bits_needed is not None:
            larger = ", ".join(f"degree {d}: {(P ** d).bit_length()} bits" for d in _LARGER_EXTENSIONS)
            parts.append(f"an extension field of {self.field_bits_needed} bits would derive it with the same queries "
                         f"and OOD samples (this one has {FIELD_SIZE_BITS}; {larger})")
        return "; ".join(parts)


def _pow_needs(config: WhirConfig, field_bits: int) -> list[tuple[str, float]]:
    """Every PoW's real value (before truncation) with the configuration's query and OOD counts, over a field of
    ``field_bits``: at the configuration's own field, the values ``from_params`` truncates."""
    st, lam = config.soundness_type, config.security_level
    needs = [("the initial sumcheck (starting_folding_pow_bits)",
              st.folding_pow_bits_float(lam, field_bits, config.num_variables, config.starting_log_inv_rate))]
    for i, rc in enumerate(config.rounds):
        query = st.queries_error(rc.log_inv_rate, rc.num_queries)
        combination = st.queries_combination_error(field_bits, rc.num_variables, rc.next_log_inv_rate,
                                                   rc.ood_samples, rc.num_queries)
        needs.append((f"round {i} (pow_bits)", f64.fmax(0.0, float(lam) - f64.fmin(query, combination))))
        needs.append((f"round {i} sumcheck (folding_pow_bits)",
                      st.folding_pow_bits_float(lam, field_bits, rc.num_variables, rc.next_log_inv_rate)))
    final = st.queries_error(config.final_log_inv_rate, config.final_queries)
    needs.append(("the final queries (final_pow_bits)", f64.fmax(0.0, float(lam) - final)))
    needs.append((FINAL_SUMCHECK, f64.fmax(0.0, float(lam) - float(field_bits - 1))))
    return needs


def _fits(needs: list[tuple[str, float]]) -> bool:
    return all(f64.as_usize(x) <= MAX_GRIND_BITS for _, x in needs)


def _derive(params: ProtocolParameters) -> tuple[WhirConfig | None, ConfigError | None]:
    try:
        return WhirConfig.from_params(params), None
    except ConfigError as error:
        return None, error


def _why(config: WhirConfig | None, params: ProtocolParameters, step: str) -> str:
    """The error term behind ``step``'s PoW, in terms of the field."""
    st, lam, b = params.soundness_type, params.security_level, FIELD_SIZE_BITS
    field = f"|EF| ~ 2^{b} (the degree-{EF_DEGREE} extension)"
    if step == FINAL_SUMCHECK:
        return (f"the final sumcheck's error is 2/|EF| with {field}, so it keeps {b - 1} bits and {lam} bits need "
                f"{lam - (b - 1)} bits of PoW; a field of {lam - MAX_GRIND_BITS + 1} bits or more would lift that "
                f"step")
    index = step.split()[1] if step.startswith("round ") else None
    if "folding_pow_bits" in step:
        nv, rate = ((config.num_variables, config.starting_log_inv_rate) if index is None else
                    (config.rounds[int(index)].num_variables, config.rounds[int(index)].next_log_inv_rate))
        prox, sumcheck = st.prox_gaps_error(nv, rate, b, 2), st.fold_sumcheck_error(b, nv, rate)
        if prox <= sumcheck:
            term = {
                SoundnessType.UniqueDecoding: f"log2 |D| = {nv + rate}, D the evaluation domain",
                SoundnessType.JohnsonBound: (f"log2 |D| + log2(2 x 10.5^5 / 3) + 1.5 log2(1/rho) = {nv + rate} + "
                                             f"16.4 + {1.5 * rate:g}"),
                SoundnessType.CapacityBound: (f"log2(2^{nv} / (eta rho^2)) = {nv} + 2 x {rate} + {rate} + 4.3, "
                                              f"eta = rho/20"),
            }[st]
            cost, what = b - prox, f"proximity-gap error ({term})"
        else:
            cost = b - sumcheck
            what = f"list size 2^{st.list_size_bits(nv, rate):.1f} (+1 bit for the union bound)"
        return (f"with {field}, {_the(st)}'s {what} at {nv} variables, rate 2^-{rate} costs {cost:.1f} "
                f"bits, leaving {b - cost:.1f} before PoW, so {lam} bits need {lam - (b - cost):.1f} bits of PoW "
                f"per sumcheck round")
    rc = None if index is None else config.rounds[int(index)]
    rate, queries = (config.final_log_inv_rate, config.final_queries) if rc is None else (rc.log_inv_rate,
                                                                                           rc.num_queries)
    query = st.queries_error(rate, queries)
    combination = (float("inf") if rc is None else
                   st.queries_combination_error(b, rc.num_variables, rc.next_log_inv_rate, rc.ood_samples, queries))
    if query <= combination:
        return (f"the queries are sized for security_level - pow_bits = {lam - params.pow_bits} bits "
                f"({queries} queries give {query:.1f}), so the rest is ground; a larger field does not help, a "
                f"pow_bits budget of at most {MAX_GRIND_BITS} does")
    list_bits = st.list_size_bits(rc.num_variables, rc.next_log_inv_rate)
    return (f"with {field}, the query combination over {rc.ood_samples + queries} points and "
            f"{_the(st)}'s list size 2^{list_bits:.1f} keeps {combination:.1f} bits, so {lam} bits need "
            f"{lam - combination:.1f} bits of PoW")


def _field_bits_needed(config: WhirConfig) -> int | None:
    for bits in range(FIELD_SIZE_BITS, FIELD_SIZE_BITS + 4 * MAX_SECURITY_LEVEL):
        if _fits(_pow_needs(config, bits)):
            return bits
    return None  # queries ground for a budget above MAX_GRIND_BITS: no field helps


def reachability(params: ProtocolParameters) -> Reachability:
    """Whether ``params`` derive, why not, and the nearest settings that do (module docstring)."""
    if not isinstance(params, ProtocolParameters):
        raise ConfigError(f"expected ProtocolParameters, got {type(params).__name__}")
    lam, st = params.security_level, params.soundness_type
    config, error = _derive(params)
    uncapped = config
    if config is not None:
        step, need = max(config.pow_values(), key=lambda v: v[1])
    elif lam > MAX_SECURITY_LEVEL:
        if params.pow_bits >= MAX_SECURITY_LEVEL:
            raise error
        _Uncapped.from_params(replace(params, security_level=MAX_SECURITY_LEVEL))  # the parameters' own errors
        step, need = FINAL_SUMCHECK, lam - (FIELD_SIZE_BITS - 1)
    else:
        try:
            uncapped = _Uncapped.from_params(params)
        except ConfigError:
            raise error from None
        step, need = max(uncapped.pow_values(), key=lambda v: v[1])
        zero_queries = any(rc.num_queries == 0 for rc in uncapped.rounds) or uncapped.final_queries == 0
        if need <= MAX_GRIND_BITS or zero_queries or uncapped.final_round_config().folded_domain_gen < 0:
            raise error  # not a matter of PoW
    within = config is not None and config.check_pow_bits()
    max_security = max_within = None
    for level in range(min(lam, MAX_SECURITY_LEVEL), params.pow_bits, -1):
        found = config if level == lam else _derive(replace(params, security_level=level))[0]
        if found is None:
            continue
        max_security = level if max_security is None else max_security
        if found.check_pow_bits():
            max_within = level
            break
    alternatives = []
    for regime in SoundnessType:
        if regime.provable and regime is not st:
            other = _derive(replace(params, soundness_type=regime))[0]
            alternatives.append((regime, None if other is None else other.max_derived_pow_bits))
    why = "" if within else _why(uncapped, params, step)
    field_bits = None if config is not None or uncapped is None else _field_bits_needed(uncapped)
    if uncapped is None:
        over = (step,) if config is None else ()
    else:
        over = tuple(name for name, bits in uncapped.pow_values() if bits > MAX_GRIND_BITS)
    return Reachability(params, config is not None, within, int(need), step, over, why, max_security, max_within,
                        tuple(alternatives), field_bits)


def derive_explained(params: ProtocolParameters) -> WhirConfig:
    """``WhirConfig.from_params(params)``, except that a target out of the field's reach at any usable PoW is a
    ``ConfigError`` saying why in terms of the field and the nearest setting that derives (``describe``); any
    other refusal is the derivation's own."""
    try:
        return WhirConfig.from_params(params)
    except ConfigError as exc:
        try:
            found = reachability(params)
        except ConfigError:
            raise exc from None
        if found.derives:
            raise
        raise ConfigError(found.describe()) from None
