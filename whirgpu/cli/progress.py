"""A transient progress line on stderr for long work: a spinner, what is being done, the activity the runtimes
report (``whirgpu.activity``: a cold kernel compile, say) and the time elapsed.

- ``wanted(as_json)``: only on a terminal: both stdout and stderr are ttys and the output is not ``--json``
  (a pipe, a file or a JSON consumer never sees a control sequence).
- ``progress_line(label, enabled, delay=DELAY_S)``: a context manager. The line appears only once the block has
  run ``delay`` seconds (work expected to be quick shows nothing, the way it prints nothing) and is erased when
  the block ends, so the command's own output follows as it would without it. While it is shown, the one-line
  notices of ``whirgpu.activity`` (a slow first compile, no C compiler) print above it, not through it.
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Iterator

from .. import activity

DELAY_S = 2.0  # "long": a proof or a cold compile past this shows the line


def wanted(as_json: bool) -> bool:
    """True when a progress line may be drawn: not ``--json``, and stdout and stderr are both terminals."""
    return not as_json and sys.stdout.isatty() and sys.stderr.isatty()


@contextmanager
def progress_line(label: str, enabled: bool, delay: float = DELAY_S, console=None) -> Iterator[None]:
    """Show ``label`` with a spinner, the current activity and the elapsed time on stderr once the block has
    run ``delay`` seconds (``enabled`` False: nothing at all). ``console``: a rich Console (default: stderr)."""
    if not enabled:
        yield
        return
    from rich.console import Console  # noqa: PLC0415 - only a terminal pays for importing rich
    from rich.progress import Progress, ProgressColumn, SpinnerColumn, TextColumn, TimeElapsedColumn  # noqa: PLC0415
    from rich.text import Text  # noqa: PLC0415

    class ActivityColumn(ProgressColumn):
        def render(self, task) -> Text:
            note = activity.current()
            return Text(f"({note})" if note else "", style="dim", no_wrap=True, overflow="ellipsis")

    progress = Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), ActivityColumn(),
                        TimeElapsedColumn(), console=console or Console(stderr=True), transient=True)
    progress.add_task(label, total=None)
    lock = threading.Lock()
    state = {"started": False, "done": False}

    def start() -> None:
        with lock:
            if not state["done"]:
                progress.start()
                state["started"] = True
                state["sink"] = activity.set_sink(
                    lambda line: progress.console.print(line, markup=False, highlight=False, soft_wrap=True))

    timer = threading.Timer(delay, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["started"]:
                activity.set_sink(state["sink"])
                progress.stop()
