"""What a user chooses: ``ProtocolParameters`` and the defaults of the reference's bench and sweep.

Contract: a ``ProtocolParameters`` holds the seven choices of p3-whir's ``ProtocolParameters`` normalised
(a ``FoldingFactor``, a ``SoundnessType``, plain ints; ``ConfigError`` for a value of the wrong kind) and
reads and writes the golden files' ``params`` block. It checks no range: ``WhirConfig.from_params``
(``profiles/whir_p3_metal/config``) does, as it needs all of them together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from whirgpu.errors import ConfigError
from whirgpu.protocol.folding import FoldingFactor
from whirgpu.protocol.integers import as_int
from whirgpu.protocol.soundness import SoundnessType

DEFAULT_MAX_POW = 16  # the reference's DEFAULT_MAX_POW: the pow_bits budget when none is given
DEFAULT_SECURITY_LEVEL = 100  # what the reference's bench/sweep use
MAX_INITIAL_REDUCTION = 3  # the sweep's default initial reduction is min(fold(0), 3)


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
            object.__setattr__(self, name, as_int(name, getattr(self, name)))

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
