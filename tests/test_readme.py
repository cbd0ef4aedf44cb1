"""The README's Python example runs as written, and its test command is the one CI runs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def test_python_example_runs():
    example = _blocks("python")[0]
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["whirgpu"].is_valid(namespace["proof"])


def test_device_buffer_example_runs():
    """The second example fills a buffer with the user's own WGSL kernel on the prover's device and proves it (its
    last line compares the bytes with the host array's proof)."""
    example = _blocks("python")[1]
    from whirgpu.errors import BackendUnavailable

    namespace: dict = {}
    try:
        exec(compile(example, "README.md", "exec"), namespace)
    except BackendUnavailable as exc:
        if "wgpu" in os.environ.get("WHIRGPU_REQUIRE", ""):
            raise
        pytest.skip(f"wgpu unavailable: {exc}")
    assert namespace["whirgpu"].is_valid(namespace["proof"])


def test_ci_runs_the_readme_test_command():
    commands = [line for block in _blocks("sh") for line in block.splitlines() if "pytest" in line]
    assert len(commands) == 1
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[0].strip() in ci
