"""The round schedule of the p3-whir profile: ``P3WhirConfig``, derived as upstream Plonky3's ``WhirConfig::new``
(``whir/src/parameters/{whir,folding}.rs`` and ``security/src/{assumption,whir/mod}.rs`` at 5dc50e51).

Contract: ``P3WhirConfig.derive(num_variables, params, field)`` returns every number upstream derives, evaluated in
IEEE-754 doubles with the same operations in the same order (the golden-p3 files' ``config`` blocks are the test),
or raises ``ConfigError`` where upstream returns a ``WhirConfigError`` / ``FoldingFactorError``; the message starts
with upstream's variant name (``PowBitsExceedBudget: ...``) and gives the numbers. Where it differs from the
whir-p3-metal schedule (``config``): query counts use upstream's closed forms of log2(1 - delta); every PoW is
rounded up (``ceil``), not truncated; the queries are sized for security_level - pow_bits; each round has its own
codeword rate (``round_log_inv_rates``, by default rate_{i+1} = rate_i + fold_i - 1); a derived PoW above the
``pow_bits`` budget is refused; a constant fold folds min(k, remaining) variables until at most 6 are left.

Bounds checked before anything is derived (parameters may come from a document anyone wrote), each a
``ConfigError`` naming the limit: every integer parameter in [0, 2^64) (upstream's usize), at most 64 per-round
factors or rates, and num_variables + starting_log_inv_rate < 64 before the folding schedule, whose length it
bounds, is built. The budget ``pow_bits`` may exceed ``MAX_GRIND_BITS`` (30: a proof-of-work check samples b bits
with 2^b < p), as upstream allows; a derived PoW above it is refused where it would be ground (``defaults.resolve``)
or checked (``document_checks.derive``).

``field`` is a ``whirgpu.field.Field`` (``BABYBEAR``, ``KOALABEAR``; anything with ``TWO_ADICITY``,
``TWO_ADIC_GENERATORS`` (canonical, index = log2 of the order) and ``EF_BITS``): the base field whose subgroups
are the evaluation domains. Generators are canonical ints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field as dataclass_field
from typing import Any, Sequence

from whirgpu.errors import ConfigError
from whirgpu.protocol import f64
from whirgpu.protocol.folding import Constant, ConstantFromSecondRound, FoldingFactor
from whirgpu.protocol.soundness import SoundnessType

MAX_NUM_VARIABLES_TO_SEND_COEFFS = 6  # upstream folds until at most this many variables are left
# Grinding and its check sample at most this many bits: 2^bits < p for both 31-bit fields (the transcript's
# MAX_SAMPLE_BITS, which the shared formulas this module may import do not define).
MAX_GRIND_BITS = 30
USIZE_BITS = 64
_LOG2_21_OVER_20 = math.log2(21.0 / 20.0)


def folding_schedule(folding: FoldingFactor | Sequence[int], num_variables: int) -> list[int]:
    """Upstream's ``compute_folding_schedule``: the variables each phase folds. ``folding`` is ``Constant``,
    ``ConstantFromSecondRound`` or a per-round list (``PerRound``)."""
    n = int(num_variables)
    if isinstance(folding, Constant):
        k = folding.k
        _check_factor(k, n)
        schedule, remaining = [], n
        while True:
            schedule.append(min(k, remaining))
            remaining -= schedule[-1]
            if remaining <= MAX_NUM_VARIABLES_TO_SEND_COEFFS:
                return schedule
    if isinstance(folding, ConstantFromSecondRound):
        k0, k = folding.k0, folding.k
        if k0 == 0 or k == 0:
            raise ConfigError("ZeroFactor: a folding factor is 0")
        _check_factor(k0, n)
        schedule, remaining = [k0], n - k0
        while remaining > MAX_NUM_VARIABLES_TO_SEND_COEFFS:
            schedule.append(min(k, remaining))
            remaining -= schedule[-1]
        return schedule
    factors = [int(f) for f in folding]
    if not factors:
        raise ConfigError("EmptySchedule: the per-round folding schedule is empty; WHIR folds at least once")
    for f in factors:
        _check_factor(f, n)
    schedule, remaining = [], n
    for f in factors:
        if f > remaining:
            raise ConfigError(f"TooLarge: folding factor {f} is greater than the {remaining} variables left")
        schedule.append(f)
        remaining -= f
        if remaining <= MAX_NUM_VARIABLES_TO_SEND_COEFFS:
            return schedule
    raise ConfigError(f"InsufficientFolding: the per-round folding factors leave {remaining} of {n} variables, "
                      f"above the direct-send threshold {MAX_NUM_VARIABLES_TO_SEND_COEFFS}; fold more variables")


def _check_bounds(num_variables, p: P3Parameters) -> None:
    """Every integer parameter a usize (as upstream's types are), before anything is derived from them (a
    document's parameters come from anyone). The budget may exceed ``MAX_GRIND_BITS`` as upstream allows; what
    is derived within it is checked where it is ground or verified."""
    if not isinstance(p, P3Parameters):
        raise ConfigError(f"expected P3Parameters, got {type(p).__name__}")
    folding = p.folding
    if isinstance(folding, Constant):
        factors = [("folding factor", folding.k)]
    elif isinstance(folding, ConstantFromSecondRound):
        factors = [("folding factor", folding.k0), ("folding factor", folding.k)]
    elif isinstance(folding, (tuple, list)) and len(folding) <= USIZE_BITS:
        factors = [("folding factor", k) for k in folding]
    else:
        raise ConfigError(f"folding: expected Constant, ConstantFromSecondRound or at most {USIZE_BITS} per-round "
                          f"factors, got {type(folding).__name__}")
    rates = p.round_log_inv_rates
    if not isinstance(rates, (tuple, list)) or len(rates) > USIZE_BITS:
        raise ConfigError(f"round_log_inv_rates: expected at most {USIZE_BITS} rates (one per round), got "
                          f"{len(rates) if isinstance(rates, (tuple, list)) else type(rates).__name__}")
    values = [("num_variables", num_variables), ("security_level", p.security_level), ("pow_bits", p.pow_bits),
              ("starting_log_inv_rate", p.starting_log_inv_rate), *factors,
              *(("round_log_inv_rates[]", r) for r in rates)]
    for name, value in values:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << USIZE_BITS:
            raise ConfigError(f"{name}: expected an integer in [0, 2^{USIZE_BITS}), got {value!r:.40}")
    if not isinstance(p.soundness_type, SoundnessType):
        raise ConfigError(f"soundness_type: expected a SoundnessType, got {type(p.soundness_type).__name__}")


def _folded_log(domain_size: int, fold: int, field: Any, what: str) -> int:
    """log2 of a phase's folded domain, which must be a subgroup of the field (upstream checks the first phase
    only; a later phase that folds fewer variables can exceed it too, and would have no generator)."""
    log = domain_size.bit_length() - 1 - fold
    if log > field.TWO_ADICITY:
        raise ConfigError(f"FoldedDomainExceedsTwoAdicity: {what}: folded domain 2^{log} exceeds the base field's "
                          f"two-adicity 2^{field.TWO_ADICITY}; increase the folding factor or lower the rates")
    return log


def _check_factor(k: int, n: int) -> None:
    if k == 0:
        raise ConfigError("ZeroFactor: a folding factor is 0")
    if k > n:
        raise ConfigError(f"TooLarge: folding factor {k} is greater than the number of variables {n}; "
                          "the polynomial is small enough to send directly")


# -- upstream's SecurityAssumption where it differs from soundness.SoundnessType --------------------------------

def log_1_delta(soundness: SoundnessType, log_inv_rate: int) -> float:
    """log2(1 - delta) in upstream's closed forms."""
    if soundness is SoundnessType.UniqueDecoding:
        return f64.log2(1.0 + math.pow(2.0, -float(log_inv_rate))) - 1.0
    if soundness is SoundnessType.JohnsonBound:
        return _LOG2_21_OVER_20 - 0.5 * float(log_inv_rate)
    return _LOG2_21_OVER_20 - float(log_inv_rate)


def queries(soundness: SoundnessType, protocol_security_level: int, log_inv_rate: int) -> int:
    q = -float(protocol_security_level) / log_1_delta(soundness, log_inv_rate)
    return f64.as_usize(math.ceil(q) if math.isfinite(q) else q)


def queries_error(soundness: SoundnessType, log_inv_rate: int, num_queries: int) -> float:
    return -float(num_queries) * log_1_delta(soundness, log_inv_rate)


def ood_samples(soundness: SoundnessType, security_level: int, log_degree: int, log_inv_rate: int,
                field_size_bits: int) -> int | None:
    """``determine_ood_samples``: the least count in 1..63 reaching ``security_level``, None when none does."""
    if soundness is SoundnessType.UniqueDecoding:
        return 0
    for count in range(1, 64):
        if soundness.ood_error(log_degree, log_inv_rate, field_size_bits, count) >= float(security_level):
            return count
    return None


def ceil_pow_bits(gap: float) -> int:
    return f64.as_usize(math.ceil(gap) if math.isfinite(gap) else gap)


@dataclass(frozen=True)
class P3Parameters:
    """What a user of the p3-whir profile chooses (upstream's ``ProtocolParameters``). ``folding``: ``Constant``,
    ``ConstantFromSecondRound`` or a tuple of per-round factors; ``round_log_inv_rates``: empty for the default
    schedule (rate_{i+1} = rate_i + fold_i - 1), else one rate per intermediate round; ``pow_bits``: the grinding
    budget every derived PoW must stay within."""

    security_level: int
    pow_bits: int
    folding: Any
    soundness_type: SoundnessType
    starting_log_inv_rate: int
    round_log_inv_rates: tuple[int, ...] = ()


@dataclass(frozen=True)
class P3RoundConfig:
    """Intermediate round i (upstream's ``RoundConfig``): ``domain_size`` the domain before this round's fold,
    ``num_variables`` left after it, ``log_inv_rate`` of the codeword committed after it, ``folded_domain_gen`` of
    order domain_size >> folding_factor (canonical)."""

    pow_bits: int
    folding_pow_bits: int
    num_queries: int
    ood_samples: int
    num_variables: int
    folding_factor: int
    log_inv_rate: int
    domain_size: int
    folded_domain_gen: int

    @property
    def log_folded_domain_size(self) -> int:
        """log2 of the domain this round's queries index (``domain_size >> folding_factor``)."""
        return (self.domain_size >> self.folding_factor).bit_length() - 1


@dataclass(frozen=True)
class P3WhirConfig:
    """The derived schedule (upstream's ``WhirConfig``); ``derive`` builds it."""

    num_variables: int
    params: P3Parameters
    round_parameters: tuple[P3RoundConfig, ...]
    folding_schedule: tuple[int, ...]
    commitment_ood_samples: int
    starting_folding_pow_bits: int
    final_queries: int
    final_pow_bits: int
    final_sumcheck_rounds: int
    final_folding_pow_bits: int
    two_adic_generators: tuple[int, ...] = dataclass_field(repr=False, compare=False, default=())
    field_bits: int = 0  # EF::bits(), the field_size_bits of the soundness formulas
    field: Any = dataclass_field(repr=False, compare=False, default=None)  # the Field it was derived for

    @property
    def n_rounds(self) -> int:
        return len(self.round_parameters)

    @property
    def starting_log_inv_rate(self) -> int:
        return self.params.starting_log_inv_rate

    @property
    def starting_domain_size(self) -> int:
        return 1 << (self.num_variables + self.params.starting_log_inv_rate)

    # The names the one verifier's step order reads (``WhirConfig`` has them too).
    @property
    def rounds(self) -> tuple[P3RoundConfig, ...]:
        return self.round_parameters

    def fold(self, round: int) -> int:
        """The variables phase ``round`` folds: round 0 folds the initial commitment, round n_rounds is final."""
        return self.folding_schedule[round]

    def round_log_inv_rate(self, round: int) -> int:
        """The log inverse rate of the codeword committed in intermediate round ``round``."""
        return self.round_parameters[round].log_inv_rate

    @property
    def final_domain_size(self) -> int:
        """The domain the final queries index (before folding)."""
        return self.final_round_config().domain_size

    @property
    def max_fft_size(self) -> int:
        """log2 of the largest DFT: the first commitment's folded domain."""
        return self.num_variables + self.params.starting_log_inv_rate - self.folding_schedule[0]

    @property
    def max_pow_bits(self) -> int:
        outer = max(self.starting_folding_pow_bits, self.final_pow_bits, self.final_folding_pow_bits)
        return max([outer] + [max(r.pow_bits, r.folding_pow_bits) for r in self.round_parameters])

    @property
    def check_pow_bits(self) -> bool:
        return self.max_pow_bits <= self.params.pow_bits

    def to_json_dict(self) -> dict:
        """The derived schedule in the golden-p3 files' ``config`` form (``whirgpu params --json``)."""
        def round_dict(r: P3RoundConfig, final: bool = False) -> dict:
            out = {"domain_size": r.domain_size, "folded_domain_gen_canonical": r.folded_domain_gen,
                   "folding_factor": r.folding_factor, "log_inv_rate": r.log_inv_rate, "num_queries": r.num_queries,
                   "num_variables": r.num_variables}
            if not final:
                out.update(folding_pow_bits=r.folding_pow_bits, ood_samples=r.ood_samples, pow_bits=r.pow_bits)
            return out

        return {"all_pow_zero": self.max_pow_bits == 0, "check_pow_bits": self.check_pow_bits,
                "commitment_ood_samples": self.commitment_ood_samples, "extension_field_bits": self.field_bits,
                "final_folding_pow_bits": self.final_folding_pow_bits, "final_pow_bits": self.final_pow_bits,
                "final_queries": self.final_queries, "final_round_config": round_dict(self.final_round_config(), True),
                "final_sumcheck_rounds": self.final_sumcheck_rounds, "folding_schedule": list(self.folding_schedule),
                "max_fft_size_log2": self.max_fft_size, "max_pow_bits": self.max_pow_bits, "n_rounds": self.n_rounds,
                "num_variables": self.num_variables, "rounds": [round_dict(r) for r in self.round_parameters],
                "starting_domain_size": self.starting_domain_size,
                "starting_folding_pow_bits": self.starting_folding_pow_bits}

    def rs_reduction_factor(self, round: int) -> int:
        previous = self.params.starting_log_inv_rate if round == 0 else self.round_parameters[round - 1].log_inv_rate
        return previous + self.folding_schedule[round] - self.round_parameters[round].log_inv_rate

    def final_round_config(self) -> P3RoundConfig:
        """The final phase as a round (upstream's ``final_round_config``: no OOD samples)."""
        fold = self.folding_schedule[self.n_rounds]
        if not self.round_parameters:
            domain_size, num_variables = self.starting_domain_size, self.num_variables - self.folding_schedule[0]
            log_inv_rate = self.params.starting_log_inv_rate
        else:
            last = self.round_parameters[-1]
            domain_size = last.domain_size >> self.rs_reduction_factor(self.n_rounds - 1)
            num_variables, log_inv_rate = last.num_variables - fold, last.log_inv_rate
        return P3RoundConfig(self.final_pow_bits, self.final_folding_pow_bits, self.final_queries, 0,
                             num_variables, fold, log_inv_rate, domain_size,
                             self.two_adic_generators[domain_size.bit_length() - 1 - fold])

    @classmethod
    def derive(cls, num_variables: int, params: P3Parameters, field: Any) -> P3WhirConfig:
        p, s = params, params.soundness_type
        _check_bounds(num_variables, p)
        n = int(num_variables)
        if p.starting_log_inv_rate == 0:
            raise ConfigError("NonRedundantStartingRate: starting_log_inv_rate must be >= 1 (rate <= 1/2); got "
                              "2^-0, a non-redundant code whose proximity test makes zero queries")
        log_domain = n + p.starting_log_inv_rate
        if log_domain >= USIZE_BITS:  # before the schedule, whose length n / k this bounds
            raise ConfigError(f"InitialDomainExceedsUsize: num_variables ({n}) + starting_log_inv_rate "
                              f"({p.starting_log_inv_rate}) must be less than {USIZE_BITS}")
        schedule = folding_schedule(p.folding, n)
        protocol_security_level = max(0, p.security_level - p.pow_bits)
        bits = int(field.EF_BITS)
        if log_domain - schedule[0] > field.TWO_ADICITY:
            raise ConfigError(f"FoldedDomainExceedsTwoAdicity: folded domain 2^{log_domain - schedule[0]} exceeds "
                              f"the base field's two-adicity 2^{field.TWO_ADICITY}; increase the first folding "
                              "factor")
        n_rounds = len(schedule) - 1
        if p.round_log_inv_rates:
            rates = [int(r) for r in p.round_log_inv_rates]
            if len(rates) != n_rounds:
                raise ConfigError(f"RoundRateCountMismatch: expected {n_rounds} explicit codeword rates (one per "
                                  f"round), got {len(rates)}")
        else:
            rates, rate = [], p.starting_log_inv_rate
            for fold in schedule[:n_rounds]:
                rate += fold - 1
                rates.append(rate)
        for round, rate in enumerate(rates):
            if rate == 0:
                raise ConfigError(f"NonRedundantRoundRate: round {round}: log_inv_rate must be >= 1 (rate <= 1/2); "
                                  "got 2^-0")
        if not isinstance(p.folding, FoldingFactor) and len(p.folding) != n_rounds + 1:
            raise ConfigError(f"FoldingFactorCountMismatch: expected {n_rounds + 1} explicit folding factors (one "
                              f"per phase), got {len(p.folding)}")

        def ood(num_vars: int, rate: int) -> int:
            count = ood_samples(s, p.security_level, num_vars, rate, bits)
            if count is None:
                raise ConfigError(f"OodSamplesInfeasible: no out-of-domain sample count reaches "
                                  f"{p.security_level}-bit security with a {bits}-bit field")
            return count

        log_inv_rate, domain_size = p.starting_log_inv_rate, 1 << log_domain
        commitment_ood = ood(n, log_inv_rate)
        starting_folding_pow = s.folding_pow_bits_float(p.security_level, bits, n, log_inv_rate)
        generators = tuple(int(g) for g in field.TWO_ADIC_GENERATORS)
        rounds = []
        num_vars = n - schedule[0]
        for round, next_rate in enumerate(rates):
            fold = schedule[round]
            if next_rate > log_inv_rate + fold:
                raise ConfigError(f"RateGrowsDomain: round {round}: codeword rate 2^-{next_rate} would grow the RS "
                                  f"domain (at most 2^-{log_inv_rate + fold})")
            reduction = log_inv_rate + fold - next_rate
            num_queries = queries(s, protocol_security_level, log_inv_rate)
            round_ood = ood(num_vars, next_rate)
            query_error = queries_error(s, log_inv_rate, num_queries)
            combination_error = s.queries_combination_error(bits, num_vars, next_rate, round_ood, num_queries)
            pow_gap = f64.fmax(0.0, float(p.security_level) - f64.fmin(query_error, combination_error))
            folding_pow = s.folding_pow_bits_float(p.security_level, bits, num_vars, next_rate)
            gen = generators[_folded_log(domain_size, fold, field, f"round {round}")]
            rounds.append(P3RoundConfig(ceil_pow_bits(pow_gap), ceil_pow_bits(folding_pow), num_queries, round_ood,
                                        num_vars, fold, next_rate, domain_size, gen))
            num_vars -= schedule[round + 1]
            log_inv_rate = next_rate
            domain_size >>= reduction
        final_queries = queries(s, protocol_security_level, log_inv_rate)
        final_pow = f64.fmax(0.0, float(p.security_level) - queries_error(s, log_inv_rate, final_queries))
        final_folding_pow = f64.fmax(0.0, float(p.security_level) - float(bits - 1))
        _folded_log(domain_size, schedule[n_rounds], field, "the final round")
        config = cls(n, p, tuple(rounds), tuple(schedule), commitment_ood, ceil_pow_bits(starting_folding_pow),
                     final_queries, ceil_pow_bits(final_pow), n - sum(schedule), ceil_pow_bits(final_folding_pow),
                     generators, bits, field)
        if config.max_pow_bits > p.pow_bits:
            raise ConfigError(f"PowBitsExceedBudget: derived proof-of-work of {config.max_pow_bits} bits exceeds the "
                              f"{p.pow_bits}-bit grinding budget; the field or rate is too weak for "
                              f"{p.security_level}-bit security (raise pow_bits, lower the security level or the rate)")
        return config
