"""The provable grids: the default benchmark grid's points at 100 bits under the Johnson bound and under unique
decoding, and the tables of docs/SECURITY.md.

Contract: ``DEFAULT_GRID_POINTS`` are the (num_variables, fold, rate) points of ``whirgpu bench``'s default grid
(29; a test checks they are ``bench.grid``'s). ``PROVABLE_GRIDS`` names a grid per provable regime:
``provable-johnson`` and ``provable-unique``, every point at ``PROVABLE_SECURITY`` bits with the sweep's pow_bits
budget (16) and initial reduction (min(fold, 3)), as the default grid. ``provable_grid(name)`` derives each point
and returns a ``GridEntry``: whether it derives (every PoW within MAX_GRIND_BITS) and within its budget, its
queries, its figures under every regime (``regimes.SecurityReport``), the smallest budget that holds every PoW
(``min_pow_budget``) and, for a point that does not derive or exceeds its budget, the reason
(``Reachability.describe()``). ``security_tables()`` renders the tables of docs/SECURITY.md;
``python3 -m whirgpu.profiles.whir_p3_metal.provable_grid`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from whirgpu.errors import ConfigError
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.profiles.whir_p3_metal.reachability import reachability
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.protocol.regimes import REGIMES, SecurityReport, security_report
from whirgpu.protocol.schedule import MAX_GRIND_BITS
from whirgpu.protocol.soundness import SoundnessType

PROVABLE_SECURITY = 100
DEFAULT_GRID_POINTS: tuple[tuple[int, int, int], ...] = (
    tuple((20, f, r) for f in (1, 2, 4) for r in (1, 2, 3))
    + tuple((22, f, r) for f in (1, 2, 3, 4, 6) for r in (1, 2, 3))
    + tuple((24, f, 1) for f in (1, 2, 3, 4, 6))
)
PROVABLE_GRIDS = {"provable-johnson": SoundnessType.JohnsonBound, "provable-unique": SoundnessType.UniqueDecoding}


@dataclass(frozen=True)
class GridEntry:
    """One point of a grid. ``queries``: each round's, then the final queries (empty when it does not derive);
    ``max_pow_bits``: the largest derived PoW (needed, when it does not derive); ``report``: None when it does not
    derive; ``min_pow_budget``: the smallest pow_bits >= the point's at which every derived PoW fits it (the
    queries shrink as it grows), None if none up to MAX_GRIND_BITS; ``note``: '' or why it is out of reach or
    over its budget."""

    num_variables: int
    fold: int
    rate: int
    params: ProtocolParameters
    derives: bool
    within_budget: bool
    max_pow_bits: int
    queries: tuple[int, ...]
    report: SecurityReport | None
    min_pow_budget: int | None
    note: str

    @property
    def point(self) -> str:
        return f"{self.num_variables}:{self.fold}:{self.rate}"


def grid_params(n: int, fold: int, rate: int, regime: SoundnessType | str,
                security: int = PROVABLE_SECURITY) -> ProtocolParameters:
    """A point's parameters: the sweep's conventions (pow_bits 16, initial reduction min(fold, 3))."""
    return ProtocolParameters.default(n, fold, rate, security_level=security, soundness_type=regime)


def grid_entry(params: ProtocolParameters) -> GridEntry:
    """Derive one point (``GridEntry``); ConfigError for parameters wrong in themselves."""
    found = reachability(params)
    config = WhirConfig.from_params(params) if found.derives else None
    min_budget = None
    for budget in range(params.pow_bits, min(MAX_GRIND_BITS, params.security_level - 1) + 1):
        try:
            candidate = WhirConfig.from_params(replace(params, pow_bits=budget))
        except ConfigError:
            continue
        if candidate.check_pow_bits():
            min_budget = budget
            break
    queries = () if config is None else tuple(rc.num_queries for rc in config.rounds) + (config.final_queries,)
    return GridEntry(params.num_variables, params.folding_factor.at_round(0), params.starting_log_inv_rate, params,
                     found.derives, found.within_budget, found.needed_pow_bits, queries,
                     None if config is None else security_report(config), min_budget,
                     "" if found.within_budget else found.describe())


@lru_cache(maxsize=None)
def provable_grid(name: str) -> tuple[GridEntry, ...]:
    """The entries of ``PROVABLE_GRIDS[name]`` in ``DEFAULT_GRID_POINTS`` order; ConfigError for another name."""
    if name not in PROVABLE_GRIDS:
        raise ConfigError(f"unknown provable grid {name!r}; give one of {', '.join(PROVABLE_GRIDS)}")
    return tuple(grid_entry(grid_params(n, f, r, PROVABLE_GRIDS[name])) for n, f, r in DEFAULT_GRID_POINTS)


def _queries(queries: tuple[int, ...]) -> str:
    if len(set(queries)) == 1:
        return f"{queries[0]} x{len(queries)}"
    return "/".join(str(q) for q in queries)


def _bits(report: SecurityReport | None) -> str:
    return "-" if report is None else "/".join(str(report.bits[r]) for r in REGIMES)


def security_tables() -> str:
    """The two markdown tables of docs/SECURITY.md: the default grid (capacity bound) and the provable grids."""
    lines = ["| point | queries (capacity, as benchmarked) | bits UD/JB/CB |", "|---|---|---|"]
    for n, f, r in DEFAULT_GRID_POINTS:
        entry = grid_entry(grid_params(n, f, r, SoundnessType.CapacityBound))
        lines.append(f"| {entry.point} | {_queries(entry.queries)} | {_bits(entry.report)} |")
    lines += ["", "| point | Johnson bound: queries | max PoW (budget) | bits UD/JB/CB "
                  "| unique decoding: queries | max PoW | bits UD/JB/CB |", "|---|---|---|---|---|---|---|"]
    for jb, ud in zip(provable_grid("provable-johnson"), provable_grid("provable-unique")):
        cells = [jb.point]
        for entry in (jb, ud):
            if not entry.derives:
                cells += ["out of reach", f"{entry.max_pow_bits} needed", "-"]
                continue
            pow_text = str(entry.max_pow_bits)
            if not entry.within_budget:
                pow_text += f" ({entry.min_pow_budget})" if entry.min_pow_budget is not None else " (none)"
            cells += [_queries(entry.queries), pow_text, _bits(entry.report)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(security_tables())
