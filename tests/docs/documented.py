"""What the documentation shows, parsed: its pages, their fenced blocks, and the commands of a shell block.

A block is a fenced block of README.md or docs/*.md: its language (the word after the opening fence, "" for
none), its text, the line it starts on, and the annotation written on the last non-blank line before it, if that
is an HTML comment: ``<!-- not run: REASON -->`` or ``<!-- needs: RUNTIME -->``.

A shell block's lines become ``Command``s: a trailing backslash joins a line with the next, a ``$ `` prompt is
dropped, blank lines are skipped; a comment line right after a command is that command's shown output (the lines
of comment after it continue it), any other comment is prose. A command is split at ``&&`` into steps; a step
that installs something (``pip``, ``python3 -m pip``, ``apt-get``/``apt``, ``git clone``, optionally after
``sudo``) is an install step, every other a step to run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHELL = ("sh", "bash", "console")
INSTALL = re.compile(r"^(sudo\s+)?(python3\s+-m\s+pip|pip3?|apt-get|apt|git\s+clone)\s")
_FENCE = re.compile(r"^( {0,3})```(\S*)\s*$")  # a fence may be indented (inside a list item)
_NOTE = re.compile(r"^<!--\s*(not run|needs):\s*(.*?)\s*-->$")
_EXIT = re.compile(r"\(exit (\d+)\)\s*$")


def pages() -> list[Path]:
    """README.md, then docs/*.md by name."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass
class Block:
    page: Path
    lang: str
    text: str
    line: int
    note: tuple[str, str] | None  # ("not run" | "needs", the rest)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, in order."""
    found, lines = [], page.read_text().splitlines()
    i = 0
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = len(opening.group(1))
        end = next((j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```")), len(lines))
        before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        note = _NOTE.match(before)
        body = [line[indent:] if line[:indent].isspace() else line for line in lines[i + 1:end]]
        found.append(Block(page, opening.group(2), "\n".join(body) + "\n", i + 1,
                           (note.group(1), note.group(2)) if note else None))
        i = end + 1
    return found


@dataclass
class Command:
    text: str  # as written, continuation lines joined
    shown: str | None = None  # the output comment after it, without "# "
    steps: list[str] = field(default_factory=list)

    @property
    def install_steps(self) -> list[str]:
        return [step for step in self.steps if INSTALL.match(step)]

    @property
    def run_steps(self) -> list[str]:
        return [step for step in self.steps if not INSTALL.match(step)]

    def expected_exit(self) -> int:
        """0, or what the shown output says: ``(exit N)`` at its end, else 1 for ``reject:`` and ``error:``."""
        if self.shown is None:
            return 0
        explicit = _EXIT.search(self.shown)
        if explicit:
            return int(explicit.group(1))
        return 1 if self.shown.split()[0] in ("reject:", "error:") else 0

    def expected_first_word(self) -> str | None:
        return self.shown.split()[0] if self.shown and self.shown.split() else None


def commands(block: Block) -> list[Command]:
    """The commands of a shell block (module docstring)."""
    result: list[Command] = []
    pending = ""
    after_command = False
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if pending:
            line = pending + " " + line.lstrip()
            pending = ""
        if line.endswith("\\"):
            pending = line[:-1].rstrip()
            continue
        stripped = line.strip()
        if stripped.startswith("$ "):
            stripped = stripped[2:]
        if not stripped:
            after_command = False
            continue
        if stripped.startswith("#"):
            if after_command and result[-1].shown is None:
                result[-1].shown = stripped.lstrip("#").strip()
            elif not (result and result[-1].shown is not None and after_command):
                after_command = False
            continue
        result.append(Command(stripped, steps=[step.strip() for step in stripped.split("&&")]))
        after_command = True
    return result
