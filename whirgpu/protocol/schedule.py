"""The profile-free interface of a derived configuration: what the step order, proof shapes, memory planning, the
device planner and backend selection read of one (``Schedule``, ``RoundSchedule``), and the field's bounds every
profile's derivation checks.

Contract: a profile's configuration (whir-p3-metal's ``WhirConfig``, p3-whir's ``P3WhirConfig``) provides these
names with these meanings; nothing below the profiles names a profile's configuration type, only these. Round 0
folds the initial commitment and round M = ``n_rounds`` is the final round; ``fold(i)`` is round i's folding
factor; ``rounds[i]`` describes intermediate round i (the commitment it queries: ``domain_size``,
``folding_factor``; the one it makes: ``num_variables`` left, ``ood_samples``; its ``num_queries``, ``pow_bits``
and ``folding_pow_bits``). The final round queries ``final_queries`` positions of ``final_domain_size`` >>
``fold(n_rounds)``, then ``final_sumcheck_rounds`` rounds of sumcheck fold what is left. How a proof's tables are
laid out on a backend is not the configuration's: a profile's prover hands its ``TableLayout`` to the backend with
the proof's ``ProofShape``.

Structural (``typing.Protocol``): nothing inherits from it; a test checks that both profiles' configurations
provide every name.
"""

from __future__ import annotations

from typing import Any, Protocol

from whirgpu.field import EF_BITS, P

# The reference's grind and sample_bits(b) assert 2^b < p: the largest such b (30 for BabyBear).
MAX_GRIND_BITS = (P - 1).bit_length() - 1
FIELD_SIZE_BITS = EF_BITS  # EF::bits() of the degree-4 extension: the b in the soundness formulas

# Bounds checked before anything is derived from a parameter, so that no declared size (a document's, a
# caller's) makes the derivation allocate: the starting domain 2^(n + r) is a usize in the reference (a 64-bit
# target stops at 2^63), and the final sumcheck's PoW, security_level - (b - 1), must stay within what
# sample_bits can check, which caps security_level at b - 1 + MAX_GRIND_BITS (153 for BabyBear^4).
MAX_LOG_STARTING_DOMAIN = 63
MAX_SECURITY_LEVEL = FIELD_SIZE_BITS - 1 + MAX_GRIND_BITS


class RoundSchedule(Protocol):
    """One intermediate round: the commitment it queries and the one it makes."""

    num_variables: int
    folding_factor: int
    domain_size: int
    num_queries: int
    ood_samples: int
    pow_bits: int
    folding_pow_bits: int

    @property
    def log_folded_domain_size(self) -> int: ...


class Schedule(Protocol):
    """A derived configuration, as the core and the layers below the profiles read it."""

    num_variables: int
    commitment_ood_samples: int
    starting_folding_pow_bits: int
    final_queries: int
    final_pow_bits: int
    final_folding_pow_bits: int
    final_sumcheck_rounds: int

    @property
    def rounds(self) -> tuple[RoundSchedule, ...]: ...

    @property
    def n_rounds(self) -> int: ...

    @property
    def starting_log_inv_rate(self) -> int: ...

    @property
    def final_domain_size(self) -> int: ...

    def fold(self, round: int) -> int: ...

    def round_log_inv_rate(self, round: int) -> int: ...


SCHEDULE_NAMES = ("num_variables", "commitment_ood_samples", "starting_folding_pow_bits", "final_queries",
                  "final_pow_bits", "final_folding_pow_bits", "final_sumcheck_rounds", "rounds", "n_rounds",
                  "starting_log_inv_rate", "final_domain_size", "fold", "round_log_inv_rate")
ROUND_NAMES = ("num_variables", "folding_factor", "domain_size", "num_queries", "ood_samples", "pow_bits",
               "folding_pow_bits", "log_folded_domain_size")


def missing_names(config: Any) -> list[str]:
    """The names of ``Schedule`` (and of its rounds' ``RoundSchedule``) that ``config`` lacks: [] for a
    configuration every layer below the profiles can read."""
    missing = [name for name in SCHEDULE_NAMES if not hasattr(config, name)]
    for i, round_config in enumerate(getattr(config, "rounds", ())):
        missing += [f"rounds[{i}].{name}" for name in ROUND_NAMES if not hasattr(round_config, name)]
    return missing
