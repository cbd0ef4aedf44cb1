"""What the process is waiting on right now, for a progress line to show: one short note ("compiling kernel
sumcheck (msl-cpu)"), set by whoever blocks (``doing``) and read by whoever displays (``current``).

A leaf module (it imports nothing of whirgpu), so runtimes may report into it without depending on the command
line. Notes nest: leaving a ``doing`` block restores the note that was current when it was entered. Reading and
writing one reference is atomic under the GIL, so the display thread needs no lock.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

_note = ""


def current() -> str:
    """The innermost note being done now ("" when nothing is reported)."""
    return _note


@contextmanager
def doing(note: str) -> Iterator[None]:
    """Report ``note`` as the current activity for the duration of the block."""
    global _note
    outer, _note = _note, note
    try:
        yield
    finally:
        _note = outer
