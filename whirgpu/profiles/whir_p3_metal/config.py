"""The whir-p3-metal profile's round schedule derived from the protocol parameters: ``WhirConfig`` (whir-spec.md
§5), a ``protocol.schedule.Schedule``.

Contract: ``WhirConfig.from_params(params)`` derives every number exactly as the reference's
``WhirConfig::new`` does (p3-whir ``parameters/{whir,soundness,folding}.rs``): the soundness formulas are
evaluated in IEEE-754 double precision with the same operations in the same order, the same ``log2``/``pow``/
``sqrt`` calls, and Rust's ``f64 as usize`` (truncation toward zero, saturating, NaN -> 0) for the results. The
golden files' ``derived`` blocks are the test of that.

Vocabulary: n = number of variables, fold(i) = folding factor of round i (round 0 is the initial commitment),
r = log2 of the inverse starting rate, red_i = domain reduction after round i
(``rs_domain_initial_reduction_factor`` for i = 0, then 1), M = ``n_rounds`` (intermediate rounds),
fsr = ``final_sumcheck_rounds``. Domain sizes are plain ints (powers of two); ``folded_domain_gen`` is a
canonical BabyBear int.

Everything a user can get wrong raises ``ConfigError`` with the numbers involved; nothing here asserts.
"""

from __future__ import annotations

from functools import lru_cache
from dataclasses import dataclass, field
from typing import Any

from whirgpu.errors import ConfigError
from whirgpu.field import TWO_ADIC_GENERATORS, TWO_ADICITY
from whirgpu.protocol import f64
from whirgpu.protocol.folding import FoldingFactor
from whirgpu.protocol.integers import short
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.schedule import FIELD_SIZE_BITS, MAX_GRIND_BITS, MAX_LOG_STARTING_DOMAIN, MAX_SECURITY_LEVEL
from whirgpu.protocol.soundness import SoundnessType

__all__ = ["FIELD_SIZE_BITS", "MAX_GRIND_BITS", "MAX_LOG_STARTING_DOMAIN", "MAX_SECURITY_LEVEL", "FinalRoundConfig",
           "RoundConfig", "WhirConfig"]


@dataclass(frozen=True)
class RoundConfig:
    """One intermediate round i (0 <= i < M).

    ``num_variables``: variables left after folding round i (n - fold(0) - ... - fold(i)).
    ``folding_factor``: fold(i), the fold of the commitment that this round queries.
    ``domain_size``: D_i, that commitment's evaluation domain; queries index its 2^-fold(i) part.
    ``log_inv_rate``: the rate of that commitment; ``next_log_inv_rate`` the rate of the one this round makes.
    ``rs_reduction_factor``: red_i, so the next domain is D_i >> red_i.
    ``folded_domain_gen``: canonical generator of order D_i >> fold(i).
    ``pow_bits`` grind before the queries; ``folding_pow_bits`` per sumcheck round of the fold(i+1) that follow.
    """

    num_variables: int
    folding_factor: int
    domain_size: int
    num_queries: int
    ood_samples: int
    pow_bits: int
    folding_pow_bits: int
    folded_domain_gen: int
    log_inv_rate: int
    next_log_inv_rate: int
    rs_reduction_factor: int

    @property
    def log_domain_size(self) -> int:
        return self.domain_size.bit_length() - 1

    @property
    def folded_domain_size(self) -> int:
        return self.domain_size >> self.folding_factor

    @property
    def log_folded_domain_size(self) -> int:
        """L: the bits of one query index."""
        return self.log_domain_size - self.folding_factor

    def derived_dict(self) -> dict:
        return {
            "domain_size": self.domain_size,
            "folding_factor": self.folding_factor,
            "folding_pow_bits": self.folding_pow_bits,
            "num_queries": self.num_queries,
            "num_variables": self.num_variables,
            "ood_samples": self.ood_samples,
            "pow_bits": self.pow_bits,
        }


@dataclass(frozen=True)
class FinalRoundConfig:
    """The final round: ``final_poly`` has ``num_variables`` (= fsr) variables; the queries index
    ``domain_size >> folding_factor`` positions of the last commitment (the initial one when M = 0)."""

    num_variables: int
    folding_factor: int
    domain_size: int
    num_queries: int
    pow_bits: int
    folding_pow_bits: int
    folded_domain_gen: int
    log_inv_rate: int

    @property
    def log_domain_size(self) -> int:
        return self.domain_size.bit_length() - 1

    @property
    def folded_domain_size(self) -> int:
        return self.domain_size >> self.folding_factor

    @property
    def log_folded_domain_size(self) -> int:
        return self.log_domain_size - self.folding_factor


def _generator(log_order: int, where: str) -> int:
    if log_order > TWO_ADICITY:
        raise ConfigError(
            f"{where} needs a subgroup of order 2^{log_order}, above TWO_ADICITY {TWO_ADICITY} of BabyBear"
        )
    return TWO_ADIC_GENERATORS[log_order]


@dataclass(frozen=True)
class WhirConfig:
    """The round schedule ``WhirConfig::new`` derives; build it with ``WhirConfig.from_params``."""

    params: ProtocolParameters
    commitment_ood_samples: int
    starting_folding_pow_bits: int
    rounds: tuple[RoundConfig, ...]
    final_queries: int
    final_pow_bits: int
    final_folding_pow_bits: int
    final_sumcheck_rounds: int
    final_log_inv_rate: int
    field_size_bits: int = field(default=FIELD_SIZE_BITS)

    # -- construction --

    @classmethod
    def from_params(cls, params: ProtocolParameters) -> WhirConfig:
        """Derive the schedule (whir-spec.md §5); ConfigError for parameters the reference rejects or that
        cannot be proved (PoW above what ``sample_bits`` can check, subgroups beyond TWO_ADICITY)."""
        if not isinstance(params, ProtocolParameters):
            raise ConfigError(f"expected ProtocolParameters, got {type(params).__name__}")
        try:  # a schedule is derived once per parameters (the repr tells 100 from 100.0, which compare equal)
            key = (params, repr(params))
            hash(key)
        except TypeError:
            return cls._derive(params)
        return _derived(cls, key)

    @classmethod
    def _derive(cls, params: ProtocolParameters) -> WhirConfig:
        n = params.num_variables
        r = params.starting_log_inv_rate
        lam = params.security_level
        pow_budget = params.pow_bits
        red0 = params.rs_domain_initial_reduction_factor
        ff = params.folding_factor
        st = params.soundness_type
        b = FIELD_SIZE_BITS

        if n < 1:
            raise ConfigError(f"num_variables must be >= 1, got {n}")
        if r < 1:
            raise ConfigError(
                f"starting_log_inv_rate must be >= 1, got {r} (rate 1 leaves no distance: zero queries)"
            )
        if lam < 1:
            raise ConfigError(f"security_level must be >= 1, got {lam}")
        if lam > MAX_SECURITY_LEVEL:
            raise ConfigError(
                f"security_level {short(lam)} is above {MAX_SECURITY_LEVEL}: the final sumcheck would need "
                f"{short(lam - (b - 1))} bits of proof of work, above MAX_GRIND_BITS {MAX_GRIND_BITS} "
                f"(sample_bits needs 2^bits < p)"
            )
        if pow_budget < 0:
            raise ConfigError(f"pow_bits must be >= 0, got {pow_budget}")
        if pow_budget >= lam:
            raise ConfigError(
                f"pow_bits {pow_budget} must be below security_level {lam}: the queries would get "
                f"{max(lam - pow_budget, 0)} bits"
            )
        ff.check_validity(n)
        k0 = ff.at_round(0)
        if red0 < 0:
            raise ConfigError(f"rs_domain_initial_reduction_factor must be >= 0, got {red0}")
        if red0 > k0:
            raise ConfigError(
                f"rs_domain_initial_reduction_factor {red0} is greater than the first folding factor {k0} "
                f"(the reference refuses to increase the code rate)"
            )
        log_folded = n + r - k0
        if log_folded > TWO_ADICITY:
            raise ConfigError(
                f"num_variables {n} + starting_log_inv_rate {r} - folding factor {k0} = {log_folded} exceeds "
                f"TWO_ADICITY {TWO_ADICITY} of BabyBear: raise the first folding factor or lower the rate"
            )
        if n + r > MAX_LOG_STARTING_DOMAIN:  # n - k0 fits the field; k0 itself may still be any size
            raise ConfigError(
                f"num_variables {short(n)} + starting_log_inv_rate {r} is above {MAX_LOG_STARTING_DOMAIN}: the "
                f"starting domain does not fit a 64-bit size (MAX_LOG_STARTING_DOMAIN)"
            )

        num_rounds, final_sumcheck_rounds = ff.compute_number_of_rounds(n)
        protocol_security_level = max(lam - pow_budget, 0)  # usize::saturating_sub

        commitment_ood_samples = st.determine_ood_samples(lam, n, r, b)
        starting_folding_pow_bits = f64.as_usize(st.folding_pow_bits_float(lam, b, n, r))

        rounds: list[RoundConfig] = []
        log_inv_rate = r
        num_variables = n - k0
        log_domain = n + r
        for i in range(num_rounds):
            red = red0 if i == 0 else 1
            fold_i = ff.at_round(i)
            next_rate = log_inv_rate + (fold_i - red)
            num_queries = st.queries(protocol_security_level, log_inv_rate)
            ood_samples = st.determine_ood_samples(lam, num_variables, next_rate, b)
            query_error = st.queries_error(log_inv_rate, num_queries)
            combination_error = st.queries_combination_error(b, num_variables, next_rate, ood_samples, num_queries)
            pow_bits = f64.fmax(0.0, float(lam) - f64.fmin(query_error, combination_error))
            folding_pow_bits = st.folding_pow_bits_float(lam, b, num_variables, next_rate)
            gen = _generator(log_domain - fold_i, f"round {i} (domain 2^{log_domain} folded by {fold_i})")
            rounds.append(
                RoundConfig(
                    num_variables=num_variables,
                    folding_factor=fold_i,
                    domain_size=1 << log_domain,
                    num_queries=num_queries,
                    ood_samples=ood_samples,
                    pow_bits=f64.as_usize(pow_bits),
                    folding_pow_bits=f64.as_usize(folding_pow_bits),
                    folded_domain_gen=gen,
                    log_inv_rate=log_inv_rate,
                    next_log_inv_rate=next_rate,
                    rs_reduction_factor=red,
                )
            )
            num_variables -= ff.at_round(i + 1)
            log_inv_rate = next_rate
            log_domain -= red

        final_queries = st.queries(protocol_security_level, log_inv_rate)
        final_pow_bits = f64.fmax(0.0, float(lam) - st.queries_error(log_inv_rate, final_queries))
        final_folding_pow_bits = f64.fmax(0.0, float(lam) - float(b - 1))

        config = cls(
            params=params,
            commitment_ood_samples=commitment_ood_samples,
            starting_folding_pow_bits=starting_folding_pow_bits,
            rounds=tuple(rounds),
            final_queries=final_queries,
            final_pow_bits=f64.as_usize(final_pow_bits),
            final_folding_pow_bits=f64.as_usize(final_folding_pow_bits),
            final_sumcheck_rounds=final_sumcheck_rounds,
            final_log_inv_rate=log_inv_rate,
        )
        config._check_provable()
        return config

    def _check_provable(self) -> None:
        fr = self.final_round_config()
        _generator(
            fr.log_folded_domain_size,
            f"the final round (domain 2^{fr.log_domain_size} folded by {fr.folding_factor})",
        )
        # The reference's f64 formulas give 0 queries once 2^-rate vanishes next to 1 (rates above ~50): a proof
        # without queries proves nothing, so refuse it.
        rates = [(f"round {i}", rc.log_inv_rate, rc.num_queries) for i, rc in enumerate(self.rounds)]
        rates.append(("the final round", fr.log_inv_rate, fr.num_queries))
        for what, rate, queries in rates:
            if queries == 0:
                raise ConfigError(
                    f"{what} gets 0 queries at log_inv_rate {rate} (security_level {self.security_level}, "
                    f"pow_bits {self.max_pow_bits}): the soundness formulas break down at this rate"
                )
        for what, bits in self.pow_values():
            if bits > MAX_GRIND_BITS:
                raise ConfigError(
                    f"{what} needs {bits} bits of proof of work, above MAX_GRIND_BITS {MAX_GRIND_BITS} "
                    f"(sample_bits needs 2^bits < p); lower security_level {self.security_level} or raise the rate"
                )

    def pow_values(self) -> list[tuple[str, int]]:
        """Every proof-of-work value of the schedule in step order, each as (the step's name, its bits): the
        names ``reachability`` reports and ``ConfigError`` messages use."""
        vals = [("the initial sumcheck (starting_folding_pow_bits)", self.starting_folding_pow_bits)]
        for i, rc in enumerate(self.rounds):
            vals.append((f"round {i} (pow_bits)", rc.pow_bits))
            vals.append((f"round {i} sumcheck (folding_pow_bits)", rc.folding_pow_bits))
        vals.append(("the final queries (final_pow_bits)", self.final_pow_bits))
        vals.append(("the final sumcheck (final_folding_pow_bits)", self.final_folding_pow_bits))
        return vals

    # -- plain accessors mirroring the reference's field names --

    @property
    def num_variables(self) -> int:
        return self.params.num_variables

    @property
    def folding_factor(self) -> FoldingFactor:
        return self.params.folding_factor

    @property
    def soundness_type(self) -> SoundnessType:
        return self.params.soundness_type

    @property
    def security_level(self) -> int:
        return self.params.security_level

    @property
    def max_pow_bits(self) -> int:
        return self.params.pow_bits

    @property
    def starting_log_inv_rate(self) -> int:
        return self.params.starting_log_inv_rate

    @property
    def rs_domain_initial_reduction_factor(self) -> int:
        return self.params.rs_domain_initial_reduction_factor

    @property
    def round_parameters(self) -> tuple[RoundConfig, ...]:
        return self.rounds

    @property
    def n_rounds(self) -> int:
        return len(self.rounds)

    def fold(self, round: int) -> int:
        """fold(i): round 0 folds the initial commitment, round M is the final round."""
        return self.params.folding_factor.at_round(round)

    def round_log_inv_rate(self, round: int) -> int:
        """log2 of the inverse rate of the code committed IN round ``round`` (its domain D_i >> red_i holds
        2^(num_variables + rate) points); round 0's commitment is the initial one at starting_log_inv_rate."""
        return self.rounds[round].next_log_inv_rate

    def rs_reduction_factor(self, round: int) -> int:
        return self.params.rs_domain_initial_reduction_factor if round == 0 else 1

    @property
    def log_starting_domain_size(self) -> int:
        return self.num_variables + self.starting_log_inv_rate

    @property
    def starting_domain_size(self) -> int:
        return 1 << self.log_starting_domain_size

    @property
    def total_folded(self) -> int:
        """Variables folded over the whole proof (rounds 0..M plus the final sumcheck): always n."""
        return self.folding_factor.total_number(self.n_rounds) + self.final_sumcheck_rounds

    @property
    def max_fft_size_log2(self) -> int:
        return self.num_variables + self.starting_log_inv_rate - self.fold(0)

    @property
    def final_domain_size(self) -> int:
        """The domain the final queries index (before folding): D_{M-1} >> red_{M-1}, or 2^(n+r) if M = 0."""
        if not self.rounds:
            return self.starting_domain_size
        last = self.rounds[-1]
        return last.domain_size >> last.rs_reduction_factor

    def final_round_config(self) -> FinalRoundConfig:
        domain_size = self.final_domain_size
        k = self.fold(self.n_rounds)
        log_folded = domain_size.bit_length() - 1 - k
        gen = TWO_ADIC_GENERATORS[log_folded] if 0 <= log_folded <= TWO_ADICITY else -1
        return FinalRoundConfig(
            num_variables=self.final_sumcheck_rounds,
            folding_factor=k,
            domain_size=domain_size,
            num_queries=self.final_queries,
            pow_bits=self.final_pow_bits,
            folding_pow_bits=self.final_folding_pow_bits,
            folded_domain_gen=gen,
            log_inv_rate=self.final_log_inv_rate,
        )

    def check_pow_bits(self) -> bool:
        """True iff every PoW value is within the ``pow_bits`` budget (the reference only warns otherwise)."""
        return all(bits <= self.max_pow_bits for _, bits in self.pow_values())

    @property
    def max_derived_pow_bits(self) -> int:
        return max(bits for _, bits in self.pow_values())

    def all_pow_zero(self) -> bool:
        return all(bits == 0 for _, bits in self.pow_values())

    # -- dictionaries --

    def to_derived_dict(self) -> dict:
        """Exactly the golden files' ``derived`` block."""
        return {
            "all_pow_zero": self.all_pow_zero(),
            "check_pow_bits": self.check_pow_bits(),
            "commitment_ood_samples": self.commitment_ood_samples,
            "final_folding_pow_bits": self.final_folding_pow_bits,
            "final_pow_bits": self.final_pow_bits,
            "final_queries": self.final_queries,
            "final_sumcheck_rounds": self.final_sumcheck_rounds,
            "max_fft_size_log2": self.max_fft_size_log2,
            "n_rounds": self.n_rounds,
            "rounds": [rc.derived_dict() for rc in self.rounds],
            "starting_folding_pow_bits": self.starting_folding_pow_bits,
        }

    def params_dict(self, **kwargs: Any) -> dict:
        return self.params.params_dict(**kwargs)

    def to_json_dict(self) -> dict:
        """For ``whirgpu params --json``: the golden-style ``params`` and ``derived`` blocks, plus the schedule
        details the golden block leaves out."""
        fr = self.final_round_config()
        return {
            "params": self.params.params_dict(),
            "derived": self.to_derived_dict(),
            "schedule": {
                "starting_domain_size": self.starting_domain_size,
                "final_domain_size": fr.domain_size,
                "final_log_inv_rate": fr.log_inv_rate,
                "max_derived_pow_bits": self.max_derived_pow_bits,
                "rounds": [
                    {
                        "log_inv_rate": rc.log_inv_rate,
                        "next_log_inv_rate": rc.next_log_inv_rate,
                        "rs_reduction_factor": rc.rs_reduction_factor,
                        "folded_domain_gen": rc.folded_domain_gen,
                    }
                    for rc in self.rounds
                ],
                "final_folded_domain_gen": fr.folded_domain_gen,
            },
        }


@lru_cache(maxsize=256)
def _derived(cls, key: tuple) -> WhirConfig:
    return cls._derive(key[0])
