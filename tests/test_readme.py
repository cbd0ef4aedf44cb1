"""The README's Python example runs as written, and its test command is the one CI runs."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(), flags=re.S)


def test_python_example_runs():
    (example,) = _blocks("python")
    namespace: dict = {}
    exec(compile(example, "README.md", "exec"), namespace)
    assert namespace["whirgpu"].is_valid(namespace["proof"])


def test_ci_runs_the_readme_test_command():
    commands = [line for block in _blocks("sh") for line in block.splitlines() if "pytest" in line]
    assert len(commands) == 1
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[0].strip() in ci
