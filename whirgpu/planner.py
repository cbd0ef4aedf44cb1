"""The device planner (being built)."""

from __future__ import annotations

from .errors import ConfigError


def run_plan_command(point: str, storage: str | None, as_json: bool) -> int:
    raise ConfigError("whirgpu devices --plan is not built yet")
