"""Shared fixtures: where the Rust reference's golden files come from.

The golden files the tests use ship with the repository, xz-compressed, in ``tests/golden/NAME.xz`` (with the
reference's README), so a fresh clone runs the suite alone. Two optional extra sources are searched too:

1. ``$WHIRGPU_GOLDEN`` (a folder of plain ``NAME`` files), when set: it wins over the shipped copy, so a newer
   golden set can be tried without touching the repository;
2. the shipped copy ``tests/golden/NAME.xz``;
3. ``../shared/golden`` next to the checkout (as in CI), for files the repository does not ship.

A name is read from the first source that has it; ``GOLDEN_PROOFS`` lists the proof files (``n*_f*_r*.json``)
of all three. ``tests/test_golden_files.py`` checks that the shipped copies equal ``../shared/golden``'s where
both exist. A golden file found nowhere fails the test that asks for it rather than skipping silently.

The Plonky3 p3-whir profile's golden files live apart, the same way: ``load_golden_p3(name)`` reads the shipped
``tests/golden-p3/NAME.xz``, else ``../shared/golden-p3/NAME``.
"""

from __future__ import annotations

import atexit
import json
import lzma
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED_GOLDEN = REPO / "tests" / "golden"
SHARED_GOLDEN = REPO.parent / "shared" / "golden"
SHIPPED_GOLDEN_P3 = REPO / "tests" / "golden-p3"
SHARED_GOLDEN_P3 = REPO.parent / "shared" / "golden-p3"


def golden_sources() -> list[Path]:
    """The folders searched for plain golden files, in order, besides the shipped copies (see above)."""
    env = os.environ.get("WHIRGPU_GOLDEN")
    return [Path(env)] if env else []


def _find(name: str) -> tuple[Path, bool] | None:
    """(path, compressed) of the first source holding ``name``."""
    candidates = [(d / name, False) for d in golden_sources()]
    candidates += [(SHIPPED_GOLDEN / f"{name}.xz", True), (SHARED_GOLDEN / name, False)]
    return next(((path, xz) for path, xz in candidates if path.is_file()), None)


def _golden_names(pattern: str) -> list[str]:
    names = {p.name[:-3] for p in SHIPPED_GOLDEN.glob(f"{pattern}.xz")}
    for d in [*golden_sources(), SHARED_GOLDEN]:
        if d.is_dir():
            names.update(p.name for p in d.glob(pattern))
    return sorted(names)


GOLDEN_PROOFS = _golden_names("n*_f*_r*.json")


@lru_cache(maxsize=None)
def golden_bytes(name: str) -> bytes:
    found = _find(name)
    if found is None:
        pytest.fail(f"golden file {name} not found in {SHIPPED_GOLDEN}, $WHIRGPU_GOLDEN or {SHARED_GOLDEN}")
    path, compressed = found
    return lzma.decompress(path.read_bytes()) if compressed else path.read_bytes()


def golden_text(name: str) -> str:
    return golden_bytes(name).decode()


def load_golden(name: str) -> dict:
    return json.loads(golden_bytes(name))


@lru_cache(maxsize=None)
def load_golden_p3(name: str) -> dict:
    """A p3-whir golden file's JSON: the shipped ``tests/golden-p3/NAME.xz``, else ``../shared/golden-p3/NAME``."""
    shipped, shared = SHIPPED_GOLDEN_P3 / f"{name}.xz", SHARED_GOLDEN_P3 / name
    if shipped.is_file():
        return json.loads(lzma.decompress(shipped.read_bytes()))
    if shared.is_file():
        return json.loads(shared.read_bytes())
    pytest.fail(f"p3-whir golden file {name} not found in {SHIPPED_GOLDEN_P3} or {SHARED_GOLDEN_P3}")


_unpacked: list[Path] = []


def golden_file(name: str) -> Path:
    """A plain file holding golden ``name`` (for commands that take a path): a shipped copy is decompressed once
    into a temporary folder removed at exit."""
    found = _find(name)
    if found is not None and not found[1]:
        return found[0]
    if not _unpacked:
        _unpacked.append(Path(tempfile.mkdtemp(prefix="whirgpu-golden-")))
        atexit.register(shutil.rmtree, _unpacked[0], True)
    path = _unpacked[0] / name
    if not path.exists():
        path.write_bytes(golden_bytes(name))
    return path


@pytest.fixture(scope="session")
def golden() -> list[str]:
    """The golden proof names (a test that asks for it fails when there are none)."""
    if not GOLDEN_PROOFS:
        pytest.fail(f"no golden proofs found in {SHIPPED_GOLDEN} (nor $WHIRGPU_GOLDEN, {SHARED_GOLDEN})")
    return GOLDEN_PROOFS


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
