"""What the process is waiting on right now, for a progress line to show: one short note ("compiling kernel
sumcheck (msl-cpu)"), set by whoever blocks (``doing``) and read by whoever displays (``current``).

A leaf module (it imports nothing of whirgpu), so runtimes may report into it without depending on the command
line. Notes nest: leaving a ``doing`` block restores the note that was current when it was entered, also when
several threads report at once (each block removes only its own note). No lock is needed (see ``_active``).
"""

from __future__ import annotations

import itertools
from contextlib import contextmanager
from typing import Iterator

# The notes being done now, in the order they were entered (one entry per open ``doing`` block, whatever thread
# it is in): a block removes exactly its own entry, so threads that report at the same time cannot leave a stale
# note behind. Every operation on it is one C-level dict call, atomic under the GIL.
_active: dict[int, str] = {}
_tokens = itertools.count()


def current() -> str:
    """The most recently entered note still being done ("" when nothing is reported)."""
    notes = list(_active.values())
    return notes[-1] if notes else ""


@contextmanager
def doing(note: str) -> Iterator[None]:
    """Report ``note`` as the current activity for the duration of the block."""
    token = next(_tokens)
    _active[token] = note
    try:
        yield
    finally:
        _active.pop(token, None)
