"""WHIR protocol parameters and the round schedule derived from them (whir-spec.md §5).

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

import enum
from abc import ABC, abstractmethod
import math
import operator
from dataclasses import dataclass, field
from typing import Any

from whirgpu.errors import ConfigError
from whirgpu.field import EF_BITS, P, TWO_ADIC_GENERATORS, TWO_ADICITY

DEFAULT_MAX_POW = 16  # the reference's DEFAULT_MAX_POW: the pow_bits budget when none is given
DEFAULT_SECURITY_LEVEL = 100  # what the reference's bench/sweep use
MAX_INITIAL_REDUCTION = 3  # the sweep's default initial reduction is min(fold(0), 3)
MAX_NUM_VARIABLES_TO_SEND_COEFFS = 6  # the reference stops folding once this few variables are left
MAX_OOD_SAMPLES = 63  # the reference searches 1..63 OOD samples and panics past that
# The reference's grind and sample_bits(b) assert 2^b < p: the largest such b (30 for BabyBear).
MAX_GRIND_BITS = (P - 1).bit_length() - 1
FIELD_SIZE_BITS = EF_BITS  # EF::bits() of the degree-4 extension: the b in the soundness formulas

# Bounds checked before anything is derived from a parameter, so that no declared size (a document's, a
# caller's) makes the derivation allocate: the starting domain 2^(n + r) is a usize in the reference (a 64-bit
# target stops at 2^63), and the final sumcheck's PoW, security_level - (b - 1), must stay within what
# sample_bits can check, which caps security_level at b - 1 + MAX_GRIND_BITS (153 for BabyBear^4).
MAX_LOG_STARTING_DOMAIN = 63
MAX_SECURITY_LEVEL = FIELD_SIZE_BITS - 1 + MAX_GRIND_BITS

LOG2_10 = 3.321928094887362  # core::f64::consts::LOG2_10 rounded to f64 (== math.log2(10))


def _as_int(name: str, value: Any) -> int:
    """An integer parameter (bools and floats refused), or ConfigError."""
    if isinstance(value, bool):
        raise ConfigError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise ConfigError(f"{name} must be an integer, got {value!r}") from None


def _short(x: int) -> str:
    """An integer for a one-line message: a hostile document may declare one of thousands of digits."""
    text = str(x)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"


def _as_usize(x: float) -> int:
    """Rust's ``f64 as usize``: truncate toward zero, saturate at 0 and 2^64 - 1, NaN -> 0."""
    if math.isnan(x) or x <= 0.0:
        return 0
    if math.isinf(x) or x >= 18446744073709551615.0:
        return (1 << 64) - 1
    return int(x)


def _log2(x: float) -> float:
    # libm::log2 semantics at the edges (math.log2 raises instead): log2(0) = -inf, log2(<0) = NaN.
    if x == 0.0:
        return -math.inf
    if x < 0.0 or math.isnan(x):
        return math.nan
    return math.log2(x)


def _fmin(a: float, b: float) -> float:
    # f64::min: a NaN operand yields the other operand.
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a <= b else b


def _fmax(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    return a if a >= b else b


# ---------------------------------------------------------------------------------------------------------------
# Soundness assumptions


class SoundnessType(enum.IntEnum):
    """The proximity-gap assumption; the value is the reference's discriminant (absorbed by the transcript)."""

    UniqueDecoding = 0
    JohnsonBound = 1
    CapacityBound = 2

    @property
    def cli_name(self) -> str:
        return _SOUNDNESS_CLI_NAMES[self]

    @classmethod
    def parse(cls, value: Any) -> SoundnessType:
        """From a SoundnessType, a CLI name (unique|johnson|capacity, also ud|jb|cb), the reference's name
        (UniqueDecoding|JohnsonBound|CapacityBound, case-insensitive) or the discriminant 0|1|2."""
        if isinstance(value, cls):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            if value in (0, 1, 2):
                return cls(value)
            raise ConfigError(f"soundness type discriminant {value} is not one of 0 (UD), 1 (JB), 2 (CB)")
        if isinstance(value, str):
            found = _SOUNDNESS_BY_NAME.get(value.strip().lower())
            if found is not None:
                return found
        accepted = ", ".join(
            [s.cli_name for s in cls] + [s.name for s in cls] + [_SOUNDNESS_SHORT[s] for s in cls]
        )
        raise ConfigError(f"unknown soundness type {value!r}; accepted names: {accepted}")

    # -- the reference's formulas (parameters/soundness.rs), operation for operation --

    def log_eta(self, log_inv_rate: int) -> float:
        if self is SoundnessType.UniqueDecoding:
            return 0.0
        if self is SoundnessType.JohnsonBound:
            return -(0.5 * float(log_inv_rate) + LOG2_10 + 1.0)
        return -(float(log_inv_rate) + LOG2_10 + 1.0)

    def list_size_bits(self, log_degree: int, log_inv_rate: int) -> float:
        log_eta = self.log_eta(log_inv_rate)
        if self is SoundnessType.UniqueDecoding:
            return 0.0
        if self is SoundnessType.JohnsonBound:
            return float(log_inv_rate) / 2.0 - (1.0 + log_eta)
        return float(log_degree + log_inv_rate) - log_eta

    def prox_gaps_error(
        self, log_degree: int, log_inv_rate: int, field_size_bits: int, num_functions: int = 2
    ) -> float:
        if num_functions < 2:
            raise ConfigError(
                f"num_functions must be >= 2 to compute the proximity gaps error, got {num_functions}"
            )
        log_eta = self.log_eta(log_inv_rate)
        if self is SoundnessType.UniqueDecoding:
            error = float(log_degree + log_inv_rate)
        elif self is SoundnessType.JohnsonBound:
            log_n = float(log_degree + log_inv_rate)
            constant = _log2(2.0 * math.pow(10.5, 5.0) / 3.0)
            log_rho_neg_3_2 = 1.5 * float(log_inv_rate)
            error = log_n + constant + log_rho_neg_3_2
        else:
            error = float(log_degree + 2 * log_inv_rate) - log_eta
        return float(field_size_bits) - (error + _log2(float(num_functions) - 1.0))

    def log_1_delta(self, log_inv_rate: int) -> float:
        """log2(1 - delta), delta the proximity parameter (negative for every log_inv_rate >= 1)."""
        eta = math.pow(2.0, self.log_eta(log_inv_rate))
        rate = 1.0 / float(1 << log_inv_rate)
        if self is SoundnessType.UniqueDecoding:
            delta = 0.5 * (1.0 - rate)
        elif self is SoundnessType.JohnsonBound:
            delta = 1.0 - math.sqrt(rate) - eta
        else:
            delta = 1.0 - rate - eta
        return _log2(1.0 - delta)

    def queries_float(self, protocol_security_level: int, log_inv_rate: int) -> float:
        """The real number whose ceiling is the query count (exposed for rounding-margin checks)."""
        return -float(protocol_security_level) / self.log_1_delta(log_inv_rate)

    def queries(self, protocol_security_level: int, log_inv_rate: int) -> int:
        q = self.queries_float(protocol_security_level, log_inv_rate)
        return _as_usize(math.ceil(q) if math.isfinite(q) else q)

    def queries_error(self, log_inv_rate: int, num_queries: int) -> float:
        return -float(num_queries) * self.log_1_delta(log_inv_rate)

    def ood_error(self, log_degree: int, log_inv_rate: int, field_size_bits: int, ood_samples: int) -> float:
        if self is SoundnessType.UniqueDecoding:
            return 0.0
        list_size_bits = self.list_size_bits(log_degree, log_inv_rate)
        error = 2.0 * list_size_bits + float(log_degree * ood_samples)
        return float(ood_samples * field_size_bits) + 1.0 - error

    def determine_ood_samples(
        self, security_level: int, log_degree: int, log_inv_rate: int, field_size_bits: int
    ) -> int:
        if self is SoundnessType.UniqueDecoding:
            return 0
        for ood_samples in range(1, MAX_OOD_SAMPLES + 1):
            if self.ood_error(log_degree, log_inv_rate, field_size_bits, ood_samples) >= float(security_level):
                return ood_samples
        raise ConfigError(
            f"no OOD sample count in 1..{MAX_OOD_SAMPLES} (MAX_OOD_SAMPLES) reaches "
            f"security_level {security_level} "
            f"for {log_degree} variables at log_inv_rate {log_inv_rate} ({self.name})"
        )

    def fold_sumcheck_error(self, field_size_bits: int, num_variables: int, log_inv_rate: int) -> float:
        list_size = self.list_size_bits(num_variables, log_inv_rate)
        return float(field_size_bits) - (list_size + 1.0)

    def queries_combination_error(
        self, field_size_bits: int, num_variables: int, log_inv_rate: int, ood_samples: int, num_queries: int
    ) -> float:
        list_size = self.list_size_bits(num_variables, log_inv_rate)
        log_combination = _log2(float(ood_samples + num_queries))
        return float(field_size_bits) - (log_combination + list_size + 1.0)

    def folding_pow_bits_float(
        self, security_level: int, field_size_bits: int, num_variables: int, log_inv_rate: int
    ) -> float:
        """The real number whose floor is a folding PoW (``folding_pow_bits`` in the reference)."""
        prox_gaps_error = self.prox_gaps_error(num_variables, log_inv_rate, field_size_bits, 2)
        sumcheck_error = self.fold_sumcheck_error(field_size_bits, num_variables, log_inv_rate)
        return _fmax(0.0, float(security_level) - _fmin(prox_gaps_error, sumcheck_error))


_SOUNDNESS_CLI_NAMES = {
    SoundnessType.UniqueDecoding: "unique",
    SoundnessType.JohnsonBound: "johnson",
    SoundnessType.CapacityBound: "capacity",
}
_SOUNDNESS_SHORT = {
    SoundnessType.UniqueDecoding: "ud",
    SoundnessType.JohnsonBound: "jb",
    SoundnessType.CapacityBound: "cb",
}
_SOUNDNESS_BY_NAME = {}
for _s in SoundnessType:
    _SOUNDNESS_BY_NAME[_s.cli_name] = _s
    _SOUNDNESS_BY_NAME[_s.name.lower()] = _s
    _SOUNDNESS_BY_NAME[_SOUNDNESS_SHORT[_s]] = _s
del _s


# ---------------------------------------------------------------------------------------------------------------
# Folding factors


@dataclass(frozen=True)
class FoldingFactor(ABC):
    """Base of ``Constant(k)`` and ``ConstantFromSecondRound(k0, k)``: how many variables each round folds."""

    @abstractmethod
    def at_round(self, round: int) -> int:
        ...

    @property
    @abstractmethod
    def discriminant(self) -> int:
        ...

    @abstractmethod
    def domain_separator_values(self) -> list[int]:
        """The values ``commit_statement`` absorbs as protocol parameters: the discriminant, then the factors."""
        ...

    @abstractmethod
    def to_serde(self) -> dict:
        """The reference's serde form (externally tagged): {"Constant": k} or
        {"ConstantFromSecondRound": [k0, k]}."""
        ...

    @staticmethod
    def from_serde(value: Any) -> FoldingFactor:
        if isinstance(value, FoldingFactor):
            return value
        if isinstance(value, dict) and len(value) == 1:
            ((tag, inner),) = value.items()
            if tag == "Constant":
                return Constant(inner)
            if tag == "ConstantFromSecondRound" and isinstance(inner, (list, tuple)) and len(inner) == 2:
                return ConstantFromSecondRound(inner[0], inner[1])
        raise ConfigError(
            f"folding_factor {value!r} is not {{'Constant': k}} or {{'ConstantFromSecondRound': [k0, k]}}"
        )

    @staticmethod
    def parse(value: Any) -> FoldingFactor:
        """From a FoldingFactor, an int k, a serde dict, or a CLI string "k" / "k0,k"."""
        if isinstance(value, FoldingFactor):
            return value
        if isinstance(value, dict):
            return FoldingFactor.from_serde(value)
        if isinstance(value, str):
            parts = [p.strip() for p in value.split(",")]
            try:
                nums = [int(p) for p in parts]
            except ValueError:
                raise ConfigError(f"folding factor {value!r} is not 'k' or 'k0,k' (integers)") from None
            if len(nums) == 1:
                return Constant(nums[0])
            if len(nums) == 2:
                return ConstantFromSecondRound(nums[0], nums[1])
            raise ConfigError(f"folding factor {value!r} is not 'k' or 'k0,k' (integers)")
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return ConstantFromSecondRound(value[0], value[1])
        return Constant(value)

    def check_validity(self, num_variables: int) -> None:
        """The reference's ``check_validity``: every factor in 1..num_variables."""
        for name, k in self._named_factors():
            if k > num_variables:
                raise ConfigError(
                    f"{name} {k} is greater than num_variables {num_variables}: "
                    "the polynomial is too small to fold"
                )

    @abstractmethod
    def compute_number_of_rounds(self, num_variables: int) -> tuple[int, int]:
        """(n_rounds M, final_sumcheck_rounds fsr), as the reference computes them; ConfigError where the
        reference's usize arithmetic would underflow."""
        ...

    def total_number(self, n_rounds: int) -> int:
        """Variables folded by rounds 0..n_rounds."""
        return sum(self.at_round(i) for i in range(n_rounds + 1))

    @abstractmethod
    def _named_factors(self) -> list[tuple[str, int]]:
        ...


def _check_factor(name: str, value: Any) -> int:
    k = _as_int(name, value)
    if k < 1:
        raise ConfigError(f"{name} must be >= 1, got {k}")
    return k


@dataclass(frozen=True)
class Constant(FoldingFactor):
    """Every round folds ``k`` variables."""

    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", _check_factor("folding factor", self.k))

    def at_round(self, round: int) -> int:
        return self.k

    @property
    def discriminant(self) -> int:
        return 0

    def domain_separator_values(self) -> list[int]:
        return [0, self.k]

    def to_serde(self) -> dict:
        return {"Constant": self.k}

    def compute_number_of_rounds(self, num_variables: int) -> tuple[int, int]:
        n, k = num_variables, self.k
        if k > n:
            raise ConfigError(f"folding factor {k} is greater than num_variables {n}")
        if n <= MAX_NUM_VARIABLES_TO_SEND_COEFFS:
            return 0, n - k
        num_rounds = -(-(n - MAX_NUM_VARIABLES_TO_SEND_COEFFS) // k)
        final_sumcheck_rounds = n - num_rounds * k
        if final_sumcheck_rounds < 0:
            raise ConfigError(
                f"folding factor {k} does not fit num_variables {n}: {num_rounds} rounds of {k} fold "
                f"{num_rounds * k} > {n} variables (the reference underflows here)"
            )
        return num_rounds - 1, final_sumcheck_rounds

    def _named_factors(self) -> list[tuple[str, int]]:
        return [("folding factor", self.k)]

    def __str__(self) -> str:
        return str(self.k)  # for people ("fold=4"); documents carry to_serde()


@dataclass(frozen=True)
class ConstantFromSecondRound(FoldingFactor):
    """Round 0 folds ``k0`` variables, every later round ``k``."""

    k0: int
    k: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "k0", _check_factor("first-round folding factor", self.k0))
        object.__setattr__(self, "k", _check_factor("folding factor", self.k))

    def at_round(self, round: int) -> int:
        return self.k0 if round == 0 else self.k

    @property
    def discriminant(self) -> int:
        return 1

    def domain_separator_values(self) -> list[int]:
        return [1, self.k0, self.k]

    def to_serde(self) -> dict:
        return {"ConstantFromSecondRound": [self.k0, self.k]}

    def compute_number_of_rounds(self, num_variables: int) -> tuple[int, int]:
        n, k0, k = num_variables, self.k0, self.k
        if k0 > n:
            raise ConfigError(f"first-round folding factor {k0} is greater than num_variables {n}")
        rest = n - k0
        if rest < MAX_NUM_VARIABLES_TO_SEND_COEFFS:
            return 0, rest
        num_rounds = -(-(rest - MAX_NUM_VARIABLES_TO_SEND_COEFFS) // k)
        final_sumcheck_rounds = rest - num_rounds * k
        if final_sumcheck_rounds < 0:
            raise ConfigError(
                f"folding factor {k} does not fit the {rest} variables left after the first round: "
                f"{num_rounds} rounds of {k} fold {num_rounds * k} (the reference underflows here)"
            )
        return num_rounds, final_sumcheck_rounds

    def _named_factors(self) -> list[tuple[str, int]]:
        return [("first-round folding factor", self.k0), ("folding factor", self.k)]

    def __str__(self) -> str:
        return f"{self.k0} then {self.k}"


# ---------------------------------------------------------------------------------------------------------------
# Protocol parameters


@dataclass(frozen=True, kw_only=True)
class ProtocolParameters:
    """What a user chooses. ``folding_factor`` also accepts an int (Constant) and ``soundness_type`` any name
    ``SoundnessType.parse`` accepts; both are normalised on construction. Ranges are checked by
    ``WhirConfig.from_params`` (which needs all of them together)."""

    num_variables: int
    folding_factor: FoldingFactor
    starting_log_inv_rate: int
    security_level: int
    rs_domain_initial_reduction_factor: int
    pow_bits: int = DEFAULT_MAX_POW
    soundness_type: SoundnessType = SoundnessType.CapacityBound

    def __post_init__(self) -> None:
        object.__setattr__(self, "folding_factor", FoldingFactor.parse(self.folding_factor))
        object.__setattr__(self, "soundness_type", SoundnessType.parse(self.soundness_type))
        for name in (
            "num_variables",
            "starting_log_inv_rate",
            "security_level",
            "rs_domain_initial_reduction_factor",
            "pow_bits",
        ):
            object.__setattr__(self, name, _as_int(name, getattr(self, name)))

    @classmethod
    def default(
        cls,
        num_variables: int,
        folding_factor: Any = 4,
        starting_log_inv_rate: int = 1,
        security_level: int = DEFAULT_SECURITY_LEVEL,
        pow_bits: int = DEFAULT_MAX_POW,
        soundness_type: Any = SoundnessType.CapacityBound,
        rs_domain_initial_reduction_factor: int | None = None,
    ) -> ProtocolParameters:
        """The reference sweep's conventions: λ = 100, pow_bits 16, CapacityBound, initial reduction
        min(fold(0), 3) unless given."""
        ff = FoldingFactor.parse(folding_factor)
        if rs_domain_initial_reduction_factor is None:
            rs_domain_initial_reduction_factor = min(ff.at_round(0), MAX_INITIAL_REDUCTION)
        return cls(
            num_variables=num_variables,
            folding_factor=ff,
            starting_log_inv_rate=starting_log_inv_rate,
            security_level=security_level,
            pow_bits=pow_bits,
            soundness_type=soundness_type,
            rs_domain_initial_reduction_factor=rs_domain_initial_reduction_factor,
        )

    @classmethod
    def from_golden_params(cls, params: dict) -> ProtocolParameters:
        """From a golden file's (or a whirgpu proof file's) ``params`` block. The crypto settings this
        implementation fixes (Poseidon2 seed 1, Merkle cap height 0) are checked when present."""
        missing = [
            k
            for k in (
                "num_variables",
                "folding_factor",
                "starting_log_inv_rate",
                "security_level",
                "pow_bits",
                "soundness_type",
                "rs_domain_initial_reduction_factor",
            )
            if k not in params
        ]
        if missing:
            raise ConfigError(f"params block lacks {', '.join(missing)}")
        soundness = SoundnessType.parse(params["soundness_type"])
        if "soundness_type_discriminant" in params and params["soundness_type_discriminant"] != int(soundness):
            raise ConfigError(
                f"soundness_type {params['soundness_type']!r} has discriminant {int(soundness)}, "
                f"but soundness_type_discriminant is {params['soundness_type_discriminant']!r}"
            )
        for key, supported in (("poseidon2_seed", 1), ("merkle_cap_height", 0)):
            if key in params and params[key] != supported:
                raise ConfigError(f"{key} {params[key]!r} is not supported (only {supported})")
        return cls(
            num_variables=params["num_variables"],
            folding_factor=FoldingFactor.from_serde(params["folding_factor"]),
            starting_log_inv_rate=params["starting_log_inv_rate"],
            security_level=params["security_level"],
            pow_bits=params["pow_bits"],
            soundness_type=soundness,
            rs_domain_initial_reduction_factor=params["rs_domain_initial_reduction_factor"],
        )

    def params_dict(
        self, *, num_points: int | None = None, seed: int | None = None, sumcheck_strategy: str = "Svo"
    ) -> dict:
        """The golden ``params`` block. ``num_points`` and ``seed`` describe an instance, not the protocol: they
        are written only when given. ``sumcheck_strategy`` does not change the proof."""
        d: dict[str, Any] = {
            "folding_factor": self.folding_factor.to_serde(),
            "merkle_cap_height": 0,
            "num_variables": self.num_variables,
            "poseidon2_seed": 1,
            "pow_bits": self.pow_bits,
            "rs_domain_initial_reduction_factor": self.rs_domain_initial_reduction_factor,
            "security_level": self.security_level,
            "soundness_type": self.soundness_type.name,
            "soundness_type_discriminant": int(self.soundness_type),
            "starting_log_inv_rate": self.starting_log_inv_rate,
            "sumcheck_strategy": sumcheck_strategy,
        }
        if num_points is not None:
            d["num_points"] = num_points
        if seed is not None:
            d["seed"] = seed
        return dict(sorted(d.items()))


# ---------------------------------------------------------------------------------------------------------------
# Derived configuration


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
                f"security_level {_short(lam)} is above {MAX_SECURITY_LEVEL}: the final sumcheck would need "
                f"{_short(lam - (b - 1))} bits of proof of work, above MAX_GRIND_BITS {MAX_GRIND_BITS} "
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
                f"num_variables {_short(n)} + starting_log_inv_rate {r} is above {MAX_LOG_STARTING_DOMAIN}: the "
                f"starting domain does not fit a 64-bit size (MAX_LOG_STARTING_DOMAIN)"
            )

        num_rounds, final_sumcheck_rounds = ff.compute_number_of_rounds(n)
        protocol_security_level = max(lam - pow_budget, 0)  # usize::saturating_sub

        commitment_ood_samples = st.determine_ood_samples(lam, n, r, b)
        starting_folding_pow_bits = _as_usize(st.folding_pow_bits_float(lam, b, n, r))

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
            pow_bits = _fmax(0.0, float(lam) - _fmin(query_error, combination_error))
            folding_pow_bits = st.folding_pow_bits_float(lam, b, num_variables, next_rate)
            gen = _generator(log_domain - fold_i, f"round {i} (domain 2^{log_domain} folded by {fold_i})")
            rounds.append(
                RoundConfig(
                    num_variables=num_variables,
                    folding_factor=fold_i,
                    domain_size=1 << log_domain,
                    num_queries=num_queries,
                    ood_samples=ood_samples,
                    pow_bits=_as_usize(pow_bits),
                    folding_pow_bits=_as_usize(folding_pow_bits),
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
        final_pow_bits = _fmax(0.0, float(lam) - st.queries_error(log_inv_rate, final_queries))
        final_folding_pow_bits = _fmax(0.0, float(lam) - float(b - 1))

        config = cls(
            params=params,
            commitment_ood_samples=commitment_ood_samples,
            starting_folding_pow_bits=starting_folding_pow_bits,
            rounds=tuple(rounds),
            final_queries=final_queries,
            final_pow_bits=_as_usize(final_pow_bits),
            final_folding_pow_bits=_as_usize(final_folding_pow_bits),
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
        for what, bits in self._pow_values():
            if bits > MAX_GRIND_BITS:
                raise ConfigError(
                    f"{what} needs {bits} bits of proof of work, above MAX_GRIND_BITS {MAX_GRIND_BITS} "
                    f"(sample_bits needs 2^bits < p); lower security_level {self.security_level} or raise the rate"
                )

    def _pow_values(self) -> list[tuple[str, int]]:
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
        return all(bits <= self.max_pow_bits for _, bits in self._pow_values())

    @property
    def max_derived_pow_bits(self) -> int:
        return max(bits for _, bits in self._pow_values())

    def all_pow_zero(self) -> bool:
        return all(bits == 0 for _, bits in self._pow_values())

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


# ---------------------------------------------------------------------------------------------------------------
# Human-readable schedule


def _pow2(x: int) -> str:
    return f"2^{x.bit_length() - 1}"


def format_schedule(config: WhirConfig) -> str:
    """A plain-text table of the derived schedule: the initial commitment, each round, the final round."""
    p = config.params
    lines = [
        f"WHIR schedule: n = {p.num_variables}, folding {p.folding_factor}, rate 2^-{p.starting_log_inv_rate}, "
        f"security {p.security_level} bits ({p.soundness_type.name}), pow_bits budget {p.pow_bits}, "
        f"initial domain reduction {p.rs_domain_initial_reduction_factor}",
        f"{config.n_rounds} intermediate round(s), {config.final_sumcheck_rounds} final sumcheck round(s), "
        f"largest NTT 2^{config.max_fft_size_log2}",
        "",
    ]
    header = ("round", "variables", "fold", "domain", "rate", "queries", "OOD", "PoW", "fold PoW")
    rows: list[tuple[str, ...]] = [
        (
            "initial",
            str(config.num_variables),
            str(config.fold(0)),
            _pow2(config.starting_domain_size),
            f"2^-{config.starting_log_inv_rate}",
            "-",
            str(config.commitment_ood_samples),
            "-",
            str(config.starting_folding_pow_bits),
        )
    ]
    for i, rc in enumerate(config.rounds):
        rows.append(
            (
                str(i),
                str(rc.num_variables),
                str(config.fold(i + 1)),
                _pow2(rc.domain_size >> rc.rs_reduction_factor),
                f"2^-{rc.next_log_inv_rate}",
                str(rc.num_queries),
                str(rc.ood_samples),
                str(rc.pow_bits),
                str(rc.folding_pow_bits),
            )
        )
    fr = config.final_round_config()
    rows.append(
        (
            "final",
            str(fr.num_variables),
            str(fr.num_variables),
            "-",
            "-",
            str(fr.num_queries),
            "-",
            str(fr.pow_bits),
            str(fr.folding_pow_bits),
        )
    )
    widths = [max(len(header[c]), *(len(row[c]) for row in rows)) for c in range(len(header))]
    fmt = "  ".join("{:<%d}" % widths[0] if c == 0 else "{:>%d}" % widths[c] for c in range(len(header)))
    lines.append(fmt.format(*header))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(fmt.format(*row) for row in rows)
    lines.append("")
    lines.append("Each row is one committed polynomial (its variables, domain and rate) and the sumcheck that")
    lines.append("folds 'fold' of its variables ('fold PoW' bits per sumcheck round); 'queries' and 'PoW' open")
    lines.append("the previous commitment. The final row sends its polynomial in the clear and queries the last")
    lines.append("commitment.")
    top = config.max_derived_pow_bits
    if config.check_pow_bits():
        lines.append(f"Largest PoW: {top} bits, within the pow_bits budget of {p.pow_bits}.")
    else:
        lines.append(
            f"Warning: largest PoW is {top} bits, above the pow_bits budget of {p.pow_bits} "
            f"(the reference only warns; grinding takes about 2^{top} hashes)."
        )
    return "\n".join(lines) + "\n"
