"""The folding schedule: how many variables each round folds (p3-whir ``parameters/folding.rs``).

Contract: ``Constant(k)`` and ``ConstantFromSecondRound(k0, k)`` are the reference's ``FoldingFactor``
variants, with its serde form (``to_serde``/``from_serde``), the values the domain separator absorbs, and its
``compute_number_of_rounds`` (``MAX_NUM_VARIABLES_TO_SEND_COEFFS``), which raises ``ConfigError`` where the
reference's usize arithmetic would underflow. ``FoldingFactor.parse`` reads the forms a user gives (k, "k0,k",
a serde dict). Factors are checked to be integers >= 1 on construction; nothing here asserts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from whirgpu.errors import ConfigError
from whirgpu.protocol.integers import as_int

MAX_NUM_VARIABLES_TO_SEND_COEFFS = 6  # the reference stops folding once this few variables are left


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
    k = as_int(name, value)
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
