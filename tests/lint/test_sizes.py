"""Sizes a reader can take in one sitting: no Python module of the package over 600 lines, no shader file (WGSL or
its MSL twin) over 400. A room past its size is split by job (see backends/gpu/, runtime/wgpu_rt/ and the
challenger's three shader files), not raised here."""

from __future__ import annotations

from pathlib import Path

import pytest

from whirgpu.kernels.compose import shader_root

PACKAGE = Path(__file__).resolve().parents[2] / "whirgpu"
MAX_MODULE_LINES = 600
MAX_SHADER_LINES = 400
SHADER_EXTENSIONS = {"wgsl": "wgsl", "msl": "metal"}  # compose._EXTENSIONS: what each language's files end with


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def _shaders() -> list[Path]:
    return sorted(path for lang, ext in SHADER_EXTENSIONS.items() for path in shader_root(lang).rglob(f"*.{ext}"))


def test_the_walks_find_the_files():
    """The checks below see the package's modules and both shader trees (an empty walk would pass anything)."""
    assert len(list(PACKAGE.rglob("*.py"))) > 50
    shaders = _shaders()
    assert {p.suffix for p in shaders} == {".wgsl", ".metal"} and len(shaders) > 60


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_over_600_lines(path):
    assert _lines(path) <= MAX_MODULE_LINES, f"{path.relative_to(PACKAGE)}: {_lines(path)} lines"


@pytest.mark.parametrize("path", _shaders(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_no_shader_over_400_lines(path):
    assert _lines(path) <= MAX_SHADER_LINES, f"{path.name}: {_lines(path)} lines"

