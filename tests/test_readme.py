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


def test_verify_time_agrees_with_performance_md():
    """The README states n = 20's verify time once, as docs/PERFORMANCE.md last measured it."""
    text = " ".join(README.read_text().split())
    claims = {int(ms) for sentence in re.split(r"(?<=\.) ", text) if "erif" in sentence and "n = 20" in sentence
              for ms in re.findall(r"about (\d+) ms", sentence)}
    performance = " ".join((README.parent / "docs" / "PERFORMANCE.md").read_text().split())
    measured = re.search(r"n = 20 (\d+(?:\.\d+)?) ms", performance)
    assert measured and claims == {round(float(measured.group(1)))}, (claims, measured and measured.group(0))


def test_readme_does_not_say_dawn_cannot_be_profiled():
    text = " ".join(README.read_text().split())
    assert "cannot profile Dawn" not in text and "--kernels --backends dawn" in text
