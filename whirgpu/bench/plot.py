"""``--plot FILE.png``: a speedup heatmap per n (x fold, y rate; colour and text = speedup), with matplotlib's
Agg canvas (no display, no pyplot state). matplotlib is the optional extra ``plot``: ``require_matplotlib`` says
so in one line before any work is done."""

from __future__ import annotations

import importlib
import math
import os
import textwrap
from pathlib import Path

from ..errors import ConfigError, FileError
from ..files import write_atomic
from .report import format_speedup
from .summary import PointSummary, baseline_label


def require_matplotlib() -> None:
    """ConfigError with the install command when matplotlib cannot be imported."""
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise ConfigError("--plot needs matplotlib: pip install 'matplotlib>=3.7'") from None


def write_heatmap(path: str | Path, summaries: list[PointSummary], devices: dict[str, str], baseline: str) -> None:
    """One subplot per n; a cell without a speedup (no baseline figure, no good kernel row, not on the grid) stays
    blank. ``devices``: spec -> device line, named in the title. The colour scale is log2(speedup), centred on 1x,
    so slower-than-baseline cells read red and faster ones green."""
    require_matplotlib()
    import numpy as np  # noqa: PLC0415
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.colors import Normalize  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    ns = sorted({s.point.n for s in summaries})
    if not ns:
        raise ConfigError("--plot: no results to plot")
    logs = [math.log2(s.speedup) for s in summaries if s.speedup]
    bound = max([abs(v) for v in logs] + [1.0])
    norm = Normalize(-bound, bound)
    folds_of = {n: sorted({s.point.fold for s in summaries if s.point.n == n}) for n in ns}
    width = 1.3 * sum(len(f) for f in folds_of.values()) + 0.8 * len(ns) + 1.5  # room for "wgpu:emulated" per cell
    title = [f"whirgpu: speedup of the fastest kernel backend over {baseline_label(baseline)}"]
    for spec, device in devices.items():  # about 15 characters of 8-point text per inch
        title += textwrap.wrap(f"{spec}: {device}", width=int(width * 15), subsequent_indent="    ")
    figure = Figure(figsize=(width, 4.2 + 0.16 * len(title)), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(ns), squeeze=False, width_ratios=[len(folds_of[n]) for n in ns])[0]
    image = None
    for ax, n in zip(axes, ns):
        cells = [s for s in summaries if s.point.n == n]
        folds = folds_of[n]
        rates = sorted({s.point.rate for s in cells})
        grid = np.full((len(rates), len(folds)), np.nan)
        for s in cells:
            if s.speedup:
                grid[rates.index(s.point.rate), folds.index(s.point.fold)] = math.log2(s.speedup)
        image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", norm=norm, origin="lower", aspect="auto")
        for s in cells:
            x, y = folds.index(s.point.fold), rates.index(s.point.rate)
            ax.text(x, y, f"{format_speedup(s.speedup)}\n{s.best or ''}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(len(folds)), [str(f) for f in folds])
        ax.set_yticks(range(len(rates)), [str(r) for r in rates])
        ax.set_xlabel("folding factor")
        ax.set_ylabel("log2 inverse rate")
        ax.set_title(f"n = {n}")
    bar = figure.colorbar(image, ax=list(axes), shrink=0.9)
    step = max(1, math.ceil(2 * bound / 8))
    ticks = [t for t in range(-math.floor(bound), math.floor(bound) + 1) if t % step == 0]
    bar.set_ticks(ticks, labels=[f"{2 ** t}x" if t >= 0 else f"1/{2 ** -t}x" for t in ticks])
    bar.set_label("speedup (log scale)")
    figure.suptitle("\n".join(title), fontsize=8)
    suffix = os.path.splitext(str(path))[1].lstrip(".") or None  # None: matplotlib's default (png)
    try:
        write_atomic(path, lambda f: figure.savefig(f, dpi=120, format=suffix))
    except FileError as exc:
        raise ConfigError(str(exc)) from None
