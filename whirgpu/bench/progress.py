"""The progress bar of a bench run, on stderr (stdout keeps only the report): what is running, proofs done of
the plan's total, elapsed time and ETA. ``quiet`` gives a callback that does nothing."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .report import console
from .runner import StepCallback


@contextmanager
def progress_bar(total: int, quiet: bool, width: int = 40) -> Iterator[StepCallback]:
    """A context whose value is the runner's ``on_step(description, done)``; the bar is removed on exit.
    ``width``: descriptions are padded to it, so the bar does not jump."""
    if quiet:
        yield lambda description, done: None
        return
    from rich.progress import (  # noqa: PLC0415
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    columns = (TextColumn("{task.description}", markup=False), BarColumn(bar_width=20), MofNCompleteColumn(),
               TextColumn("proofs, ETA"), TimeRemainingColumn())
    with Progress(*columns, console=console(stderr=True), transient=True) as progress:
        task = progress.add_task("starting", total=total)

        def on_step(description: str, done: int) -> None:
            progress.update(task, description=description.ljust(width), completed=done)

        yield on_step
