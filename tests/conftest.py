"""Shared fixtures: where the Rust reference's golden files live.

The golden files are not part of this repository; they sit in ``../shared/golden`` next to the checkout (as in
CI), or wherever ``WHIRGPU_GOLDEN`` points. Missing golden files fail the run rather than skipping silently.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def golden_dir() -> Path:
    env = os.environ.get("WHIRGPU_GOLDEN")
    return Path(env) if env else REPO.parent / "shared" / "golden"


GOLDEN_PROOFS = sorted(p.name for p in golden_dir().glob("n*_f*_r*.json")) if golden_dir().is_dir() else []


@pytest.fixture(scope="session")
def golden() -> Path:
    d = golden_dir()
    if not d.is_dir():
        pytest.fail(f"golden files not found at {d} (set WHIRGPU_GOLDEN to the folder holding them)")
    return d


def load_golden(name: str) -> dict:
    return json.loads((golden_dir() / name).read_text())


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
