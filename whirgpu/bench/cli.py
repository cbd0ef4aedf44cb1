"""The ``whirgpu bench`` command (being built)."""

from __future__ import annotations

from ..errors import ConfigError


def add_bench_parser(sub) -> None:
    sub.add_parser("bench", help="benchmark grid (being built)")


def run_bench(args) -> int:
    raise ConfigError("whirgpu bench is not built yet")
