"""What the process is waiting on right now, for a progress line to show: one short note ("compiling kernel
sumcheck (msl-cpu)"), set by whoever blocks (``doing``) and read by whoever displays (``current``); and the few
one-line notices a user must see even without a terminal (``notice``).

A leaf module (it imports nothing of whirgpu), so runtimes may report into it without depending on the command
line. Notes nest: leaving a ``doing`` block restores the note that was current when it was entered, also when
several threads report at once (each block removes only its own note). No lock is needed for the notes (see
``_active``).

Contracts:
- ``doing(note)``: ``current()`` is ``note`` for the duration of the block (unless a later block is entered).
- ``doing(note, announce=TEXT, key=K, after=S)``: as above, and once the blocks entered with key ``K`` have
  together run past ``S`` seconds (default ``ANNOUNCE_AFTER_S``), ``notice(TEXT, K)``: a slow first compile says
  what it compiles and why, once, while a quick one (a warm driver cache) says nothing. Only for a person: when
  stderr is a terminal or a sink is set (a progress line's); a script, a log or a JSON consumer reading stderr
  gets the command's own lines alone, as with the progress line itself.
- ``notice(text, key)``: one line, ``note: TEXT``, said at most once per process per ``key`` (default: the text)
  through the sink (``set_sink``; default: ``sys.stderr`` as it is at that moment, so a progress line that
  redirects stderr prints the note above itself). Returns whether it was said now.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

ANNOUNCE_AFTER_S = 2.0  # as progress_line.DELAY_S: work past this is "long"
# A kernel compile is "slow" past this, in all: a warm driver cache still costs lavapipe 3 s of pipeline creation
# on a quiet 2-core VM (above 5 s when the machine is busy), while a cold one costs it minutes, and NVIDIA's ~13 s.
SLOW_COMPILE_S = 8.0

# The notes being done now, in the order they were entered (one entry per open ``doing`` block, whatever thread
# it is in): a block removes exactly its own entry, so threads that report at the same time cannot leave a stale
# note behind. Every operation on it is one C-level dict call, atomic under the GIL.
_active: dict[int, str] = {}
_tokens = itertools.count()

# Notices: the keys said so far, and where they go (None: the current sys.stderr).
_said: set[str] = set()
_sink: Callable[[str], None] | None = None
_notice_lock = threading.Lock()

# Announcements: token -> (deadline, text, key) of open blocks that announce, the seconds already spent per key
# in closed ones, and the one thread that wakes at the earliest deadline (started at the first announcing block).
_pending: dict[int, tuple[float, str, str]] = {}
_spent: dict[str, float] = {}
_wake = threading.Condition()
_announcer: threading.Thread | None = None


def current() -> str:
    """The most recently entered note still being done ("" when nothing is reported)."""
    notes = list(_active.values())
    return notes[-1] if notes else ""


def _write_stderr(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed or broken stderr: the notice is lost, the work goes on
        pass


def set_sink(sink: Callable[[str], None] | None) -> Callable[[str], None] | None:
    """Send later notices (each a whole line, ``note: ...``) to ``sink`` (None: stderr); returns the previous."""
    global _sink
    previous, _sink = _sink, sink
    return previous


def notice(text: str, key: str | None = None) -> bool:
    """Say ``note: TEXT`` once per process per ``key`` (default ``text``); True when it was said now."""
    key = text if key is None else key
    with _notice_lock:
        if key in _said:
            return False
        _said.add(key)
    (_sink or _write_stderr)(f"note: {text}")
    return True


def _for_a_person() -> bool:
    """Whether an announcement has someone to read it: a sink is set, or stderr is a terminal."""
    if _sink is not None:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def said(key: str) -> bool:
    """Whether the notice ``key`` has been said in this process."""
    return key in _said


def _announce_loop() -> None:
    with _wake:
        while True:
            now = time.monotonic()
            due = [(token, text, key) for token, (deadline, text, key) in _pending.items() if deadline <= now]
            for token, text, key in due:
                _pending.pop(token, None)
                notice(text, key)
            later = [deadline for deadline, _, _ in _pending.values()]
            _wake.wait(timeout=(min(later) - now) if later else None)


def _schedule(token: int, text: str, key: str, after: float) -> float:
    global _announcer
    start = time.monotonic()
    with _wake:
        if key in _said:
            return start
        _pending[token] = (start + max(0.0, after - _spent.get(key, 0.0)), text, key)
        if _announcer is None:
            _announcer = threading.Thread(target=_announce_loop, name="whirgpu-announce", daemon=True)
            _announcer.start()
        _wake.notify()
    return start


def _unschedule(token: int, key: str, start: float) -> None:
    with _wake:
        if _pending.pop(token, None) is not None:
            _spent[key] = _spent.get(key, 0.0) + time.monotonic() - start


@contextmanager
def doing(note: str, announce: str | None = None, key: str | None = None,
          after: float | None = None) -> Iterator[None]:
    """Report ``note`` as the current activity for the duration of the block; with ``announce``, say it once
    (``notice(announce, key)``) when the blocks of ``key`` (default ``announce``) have run past ``after`` seconds
    (default ``ANNOUNCE_AFTER_S``) in all."""
    token = next(_tokens)
    _active[token] = note
    scheduled = None
    if announce is not None:
        key = announce if key is None else key
        if key not in _said and _for_a_person():
            scheduled = _schedule(token, announce, key, ANNOUNCE_AFTER_S if after is None else after)
    try:
        yield
    finally:
        _active.pop(token, None)
        if scheduled is not None:
            _unschedule(token, key, scheduled)
