"""Benchmark grids: which (num_variables, fold, rate) configurations ``whirgpu bench`` proves.

A point is proved with the reference sweep's conventions (``ProtocolParameters.default``): BabyBear, security 100,
pow_bits 16, capacity bound, initial RS reduction min(fold, 3).

Named grids:
- ``default``: the 29 configurations of the published WHIR-on-Metal grid (the reference's bench script):
  n=20 fold 1,2,4 x rate 1,2,3; n=22 fold 1,2,3,4,6 x rate 1,2,3; n=24 fold 1,2,3,4,6 x rate 1.
- ``full``: the whole cross product of the default grid's axes, n 20,22,24 x fold 1,2,3,4,6 x rate 1,2,3 (45).
- ``small``: a quick grid for a laptop without a GPU or a software adapter, n 10,12 x fold 2,4 x rate 1,2 (8).
- ``provable-johnson``, ``provable-unique``: the default grid's points at 100 provable bits, derived under the
  Johnson bound or unique decoding instead of the capacity-bound conjecture (``profiles.whir_p3_metal.provable_grid``;
  docs/SECURITY.md); such a point prints as ``N:F:R/johnson`` or ``N:F:R/unique``.
An explicit list is ``N:F:R`` items separated by commas, e.g. ``20:4:1,22:3:2,20:4:1/johnson``.

Under ``--profile p3-whir`` (``profile`` / ``field`` of a point) a point is upstream Plonky3 p3-whir's example
configuration (``profiles.p3_whir.defaults.EXAMPLE_PARAMETERS``) at that size with the given fold and starting
rate, each round's rate upstream's default, over ``field`` (the example's by default). Its grinding budget is the
example's, raised to the smallest budget upstream accepts where it refuses that one (``defaults.resolve``:
``GridPoint.note()`` says so), or exactly ``pow_bits`` when given (``--pow-bits``; a budget upstream refuses is a
ConfigError naming the one that works). Such a point prints as ``N:F:R@p3-whir/FIELD`` (with ``/powB`` when its
budget was given) and reads back so.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import product

from ..errors import ConfigError
from ..profiles.whir_p3_metal.config import WhirConfig
from ..profiles.p3_whir.config import P3Parameters, P3WhirConfig
from ..profiles.p3_whir.defaults import EXAMPLE_FIELD, Resolved, example_parameters, resolve
from ..protocol.parameters import DEFAULT_MAX_POW, ProtocolParameters
from ..profiles.whir_p3_metal.provable_grid import DEFAULT_GRID_POINTS, PROVABLE_GRIDS, grid_params
from ..protocol.soundness import SoundnessType
from ..profiles.security import security_report

DEFAULT_PROFILE = "whir-p3-metal"
PROFILES = ("whir-p3-metal", "p3-whir")


@dataclass(frozen=True, order=True)
class GridPoint:
    """One configuration: 2^n evaluations, constant folding factor ``fold``, starting log inverse rate ``rate``."""

    n: int
    fold: int
    rate: int
    profile: str = DEFAULT_PROFILE
    field: str = "babybear"
    pow_bits: int | None = None  # the p3-whir profile's grinding budget when given (None: the example's, raised)
    soundness: str = "capacity"  # whir-p3-metal: the regime the point is derived under (SoundnessType.cli_name)

    @property
    def p3(self) -> bool:
        return self.profile == "p3-whir"

    def resolved(self) -> Resolved:
        """The p3-whir configuration and the note of a raised budget (``defaults.resolve``); ConfigError when
        upstream refuses the point."""
        return _resolve_p3(self.n, self.fold, self.rate, self.field, self.pow_bits)

    def note(self) -> str | None:
        """The line saying that this p3-whir point's budget was raised (None when it was not, or not p3-whir)."""
        return self.resolved().note if self.p3 else None

    def params(self) -> ProtocolParameters | P3Parameters:
        if self.p3:
            return self.resolved().params
        if self.soundness == "capacity":
            return ProtocolParameters.default(num_variables=self.n, folding_factor=self.fold,
                                              starting_log_inv_rate=self.rate)
        return grid_params(self.n, self.fold, self.rate, SoundnessType.parse(self.soundness))

    def config(self) -> WhirConfig | P3WhirConfig:
        """The derived configuration; a ConfigError when the point is not a valid WHIR configuration."""
        if self.p3:
            return self.resolved().config
        return WhirConfig.from_params(self.params())

    def security(self) -> dict:
        """The point's security as every figure names it: ``provable`` bits and their ``regime``, and, for a
        configuration derived under the capacity-bound conjecture, its ``conjectural`` figure (else None)."""
        report = security_report(self.config())
        return {"provable": report.provable_bits, "regime": report.provable_regime.cli_name,
                "conjectural": report.headline_bits if report.conjectural else None,
                "derived_under": report.derived_under.cli_name}

    def security_text(self) -> str:
        """``security()`` for a table cell: "54 johnson, 100 conj." or "100 unique"."""
        found = self.security()
        return f"{found['provable']} {found['regime']}" + (f", {found['conjectural']} conj." if found["conjectural"]
                                                           else "")

    def with_profile(self, profile: str, field: str | None, pow_bits: int | None = None) -> "GridPoint":
        if profile == DEFAULT_PROFILE:
            if field not in (None, "babybear"):
                raise ConfigError(f"--field {field} needs --profile p3-whir (whir-p3-metal is BabyBear only)")
            if pow_bits is not None:
                raise ConfigError(f"--pow-bits is a p3-whir budget (the whir-p3-metal grid uses the sweep's "
                                  f"{DEFAULT_MAX_POW})")
            return self
        if self.soundness != "capacity":
            raise ConfigError(f"{self}: the provable grids are the whir-p3-metal profile's")
        return GridPoint(self.n, self.fold, self.rate, profile, field or EXAMPLE_FIELD, pow_bits)

    def __str__(self) -> str:
        text = f"{self.n}:{self.fold}:{self.rate}"
        if not self.p3:
            return text if self.soundness == "capacity" else f"{text}/{self.soundness}"
        return f"{text}@{self.profile}/{self.field}" + (f"/pow{self.pow_bits}" if self.pow_bits is not None else "")


@functools.lru_cache(maxsize=256)
def _resolve_p3(n: int, fold: int, rate: int, field: str, pow_bits: int | None) -> Resolved:
    # a grid asks each point's configuration several times (parsing, planning, proving): derive it once
    return resolve(n, example_parameters(fold, rate, pow_bits=pow_bits), field, explicit=pow_bits is not None)


def _cross(ns, folds, rates) -> list[GridPoint]:
    return [GridPoint(n, f, r) for n, f, r in product(ns, folds, rates)]


GRIDS: dict[str, list[GridPoint]] = {
    "default": _cross([20], [1, 2, 4], [1, 2, 3]) + _cross([22], [1, 2, 3, 4, 6], [1, 2, 3])
    + _cross([24], [1, 2, 3, 4, 6], [1]),
    "full": _cross([20, 22, 24], [1, 2, 3, 4, 6], [1, 2, 3]),
    "small": _cross([10, 12], [2, 4], [1, 2]),
}
GRIDS.update({name: [GridPoint(n, f, r, soundness=regime.cli_name) for n, f, r in DEFAULT_GRID_POINTS]
              for name, regime in PROVABLE_GRIDS.items()})


def parse_point(text: str) -> GridPoint:
    """``N:F:R`` (three integers; ``@p3-whir/FIELD`` after them for the p3-whir profile) -> GridPoint, validated
    as a WHIR configuration; ConfigError naming the item."""
    body, _, profile = text.strip().partition("@")
    body, _, soundness = body.partition("/")
    parts = body.split(":")
    try:
        if len(parts) != 3 or (soundness and soundness not in ("johnson", "unique")):
            raise ValueError
        point = GridPoint(*(int(p) for p in parts), soundness=soundness or "capacity")
        if profile:
            name, field, *rest = profile.split("/") + [""]
            pow_bits = int(rest[0][3:]) if rest[0].startswith("pow") else None
            if name != "p3-whir" or field not in ("babybear", "koalabear") or (rest[0] and pow_bits is None):
                raise ValueError
            point = point.with_profile(name, field, pow_bits)
    except ValueError:
        raise ConfigError(f"{text.strip()!r} is not N:F:R[/johnson|/unique] (three integers, e.g. 20:4:1); in the "
                          "p3-whir profile N:F:R@p3-whir/FIELD[/powB]") from None
    try:
        point.config()
    except ConfigError as exc:
        raise ConfigError(f"{point}: {exc}") from None
    return point


def parse_grid(text: str, profile: str = DEFAULT_PROFILE, field: str | None = None,
               pow_bits: int | None = None) -> list[GridPoint]:
    """A grid name (``GRIDS``) or a comma-separated list of ``N:F:R``; duplicates are dropped, order is kept.
    ``profile`` / ``field`` / ``pow_bits``: the protocol profile every point is proved in (``--profile``,
    ``--field``, ``--pow-bits``)."""
    if profile != DEFAULT_PROFILE or field not in (None, "babybear") or pow_bits is not None:
        points = [p.with_profile(profile, field, pow_bits) for p in parse_grid(text)]
        for point in points:
            try:
                point.config()
            except ConfigError as exc:
                raise ConfigError(f"{point}: {exc}") from None
        return points
    if text in GRIDS:
        return list(GRIDS[text])
    items = [item for item in text.split(",") if item.strip()]
    if not items:
        raise ConfigError(f"empty grid; give one of {', '.join(GRIDS)} or N:F:R,...")
    if len(items) == 1 and ":" not in items[0]:
        raise ConfigError(f"unknown grid {text!r}; give one of {', '.join(GRIDS)} or N:F:R,...")
    return list(dict.fromkeys(parse_point(item) for item in items))
