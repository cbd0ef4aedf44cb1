"""Benchmark grids: which (num_variables, fold, rate) configurations ``whirgpu bench`` proves.

A point is proved with the reference sweep's conventions (``ProtocolParameters.default``): BabyBear, security 100,
pow_bits 16, capacity bound, initial RS reduction min(fold, 3).

Named grids:
- ``default``: the 29 configurations of the published WHIR-on-Metal grid (the reference's bench script):
  n=20 fold 1,2,4 x rate 1,2,3; n=22 fold 1,2,3,4,6 x rate 1,2,3; n=24 fold 1,2,3,4,6 x rate 1.
- ``full``: the whole cross product of the default grid's axes, n 20,22,24 x fold 1,2,3,4,6 x rate 1,2,3 (45).
- ``small``: a quick grid for a laptop without a GPU or a software adapter, n 10,12 x fold 2,4 x rate 1,2 (8).
An explicit list is ``N:F:R`` items separated by commas, e.g. ``20:4:1,22:3:2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

from ..errors import ConfigError
from ..protocol.config import WhirConfig
from ..protocol.parameters import ProtocolParameters


@dataclass(frozen=True, order=True)
class GridPoint:
    """One configuration: 2^n evaluations, constant folding factor ``fold``, starting log inverse rate ``rate``."""

    n: int
    fold: int
    rate: int

    def params(self) -> ProtocolParameters:
        return ProtocolParameters.default(num_variables=self.n, folding_factor=self.fold,
                                          starting_log_inv_rate=self.rate)

    def config(self) -> WhirConfig:
        """The derived configuration; a ConfigError when the point is not a valid WHIR configuration."""
        return WhirConfig.from_params(self.params())

    def __str__(self) -> str:
        return f"{self.n}:{self.fold}:{self.rate}"


def _cross(ns, folds, rates) -> list[GridPoint]:
    return [GridPoint(n, f, r) for n, f, r in product(ns, folds, rates)]


GRIDS: dict[str, list[GridPoint]] = {
    "default": _cross([20], [1, 2, 4], [1, 2, 3]) + _cross([22], [1, 2, 3, 4, 6], [1, 2, 3])
    + _cross([24], [1, 2, 3, 4, 6], [1]),
    "full": _cross([20, 22, 24], [1, 2, 3, 4, 6], [1, 2, 3]),
    "small": _cross([10, 12], [2, 4], [1, 2]),
}


def parse_point(text: str) -> GridPoint:
    """``N:F:R`` (three integers) -> GridPoint, validated as a WHIR configuration; ConfigError naming the item."""
    parts = text.strip().split(":")
    try:
        if len(parts) != 3:
            raise ValueError
        point = GridPoint(*(int(p) for p in parts))
    except ValueError:
        raise ConfigError(f"{text.strip()!r} is not N:F:R (three integers, e.g. 20:4:1)") from None
    try:
        point.config()
    except ConfigError as exc:
        raise ConfigError(f"{point}: {exc}") from None
    return point


def parse_grid(text: str) -> list[GridPoint]:
    """A grid name (``GRIDS``) or a comma-separated list of ``N:F:R``; duplicates are dropped, order is kept."""
    if text in GRIDS:
        return list(GRIDS[text])
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ConfigError(f"empty grid; give one of {', '.join(GRIDS)} or N:F:R,...")
    if len(items) == 1 and ":" not in items[0]:
        raise ConfigError(f"unknown grid {text!r}; give one of {', '.join(GRIDS)} or N:F:R,...")
    return list(dict.fromkeys(parse_point(item) for item in items))
