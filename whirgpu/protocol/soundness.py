"""The soundness formulas of the three proximity-gap assumptions (p3-whir ``parameters/soundness.rs``).

Contract: every method of ``SoundnessType`` evaluates the reference's formula in IEEE-754 double precision with
the same operations in the same order and the same ``log2``/``pow``/``sqrt`` calls (Rust's edge semantics from
``f64``), so that the schedule ``config`` derives from them matches the reference's to the bit; the integer
results (query and OOD sample counts) round as the reference does. ``SoundnessType.parse`` reads the names a
user or a document may give. Failures raise ``ConfigError``; nothing here asserts.
"""

from __future__ import annotations

import enum
import math
from typing import Any

from whirgpu.errors import ConfigError
from whirgpu.protocol import f64

MAX_OOD_SAMPLES = 63  # the reference searches 1..63 OOD samples and panics past that

LOG2_10 = 3.321928094887362  # core::f64::consts::LOG2_10 rounded to f64 (== math.log2(10))


class SoundnessType(enum.IntEnum):
    """The proximity-gap assumption; the value is the reference's discriminant (absorbed by the transcript)."""

    UniqueDecoding = 0
    JohnsonBound = 1
    CapacityBound = 2

    @property
    def cli_name(self) -> str:
        return _SOUNDNESS_CLI_NAMES[self]

    @property
    def regime_name(self) -> str:
        """The regime in prose: "unique decoding", "Johnson bound", "capacity bound"."""
        return _REGIME_NAMES[self]

    @property
    def provable(self) -> bool:
        """True for the regimes whose soundness is proved (unique decoding, Johnson bound); the capacity bound
        is a conjecture, disproved near capacity over prime fields for some parameters (docs/SECURITY.md)."""
        return self is not SoundnessType.CapacityBound

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
            constant = f64.log2(2.0 * math.pow(10.5, 5.0) / 3.0)
            log_rho_neg_3_2 = 1.5 * float(log_inv_rate)
            error = log_n + constant + log_rho_neg_3_2
        else:
            error = float(log_degree + 2 * log_inv_rate) - log_eta
        return float(field_size_bits) - (error + f64.log2(float(num_functions) - 1.0))

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
        return f64.log2(1.0 - delta)

    def queries_float(self, protocol_security_level: int, log_inv_rate: int) -> float:
        """The real number whose ceiling is the query count (exposed for rounding-margin checks)."""
        return -float(protocol_security_level) / self.log_1_delta(log_inv_rate)

    def queries(self, protocol_security_level: int, log_inv_rate: int) -> int:
        q = self.queries_float(protocol_security_level, log_inv_rate)
        return f64.as_usize(math.ceil(q) if math.isfinite(q) else q)

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
        log_combination = f64.log2(float(ood_samples + num_queries))
        return float(field_size_bits) - (log_combination + list_size + 1.0)

    def folding_pow_bits_float(
        self, security_level: int, field_size_bits: int, num_variables: int, log_inv_rate: int
    ) -> float:
        """The real number whose floor is a folding PoW (``folding_pow_bits`` in the reference)."""
        prox_gaps_error = self.prox_gaps_error(num_variables, log_inv_rate, field_size_bits, 2)
        sumcheck_error = self.fold_sumcheck_error(field_size_bits, num_variables, log_inv_rate)
        return f64.fmax(0.0, float(security_level) - f64.fmin(prox_gaps_error, sumcheck_error))


_SOUNDNESS_CLI_NAMES = {
    SoundnessType.UniqueDecoding: "unique",
    SoundnessType.JohnsonBound: "johnson",
    SoundnessType.CapacityBound: "capacity",
}
_REGIME_NAMES = {
    SoundnessType.UniqueDecoding: "unique decoding",
    SoundnessType.JohnsonBound: "Johnson bound",
    SoundnessType.CapacityBound: "capacity bound",
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
