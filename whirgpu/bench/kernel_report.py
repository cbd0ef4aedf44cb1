"""The tables of ``whirgpu bench --kernels``, rendered from its JSON report (``bench.kernels``): rich tables on
a terminal (120 columns when piped), or GitHub markdown."""

from __future__ import annotations

from ..kernels.calibrate import CHAINS
from .kernel_models import BYTES, POSEIDON2_PRODUCTS

PIPE_WIDTH = 120  # columns of the rich tables when stdout is not a terminal


def _si(value: float, unit: str) -> str:
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs"


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1 << 20):g} MiB"


def _calibration_rows(cal: dict) -> list[list[str]]:
    sizes = cal["sizes"]
    transfers = f"{_mib(sizes['transfer_bytes'])}, {cal['mode']} buffer"
    rows = []
    if cal["timing"] is not None:
        rows += [["copy bandwidth", _si(cal["copy_bytes_per_s"], "B/s"),
                  f"copy_vec4, 2 x {_mib(sizes['copy_bytes'])} (read + write), kernel time"],
                 ["Montgomery products", _si(cal["products_per_s"], "/s"),
                  f"mul_chain ({cal['mul']}), {sizes['mul_threads']} threads x {sizes['mul_rounds']} rounds "
                  f"x {CHAINS} chains"]]
    rows += [["dispatch overhead", _us(cal["dispatch_s"]),
              f"per extra dispatch (1 vs {sizes['dispatches']} in one submission), host wall time"],
             ["submit round trip", _us(cal["round_trip_s"]), "one tiny dispatch, submit + wait"],
             ["readback latency", _us(cal["read_latency_s"]), f"16 bytes, {cal['mode']} buffer"],
             ["readback bandwidth", _si(cal["read_bytes_per_s"], "B/s"), transfers],
             ["upload bandwidth", _si(cal["write_bytes_per_s"], "B/s"), transfers]]
    rows += [["table upload", _si(bps, "B/s"), f"{_mib(int(nbytes))}, {cal['mode']} buffer, write + wait, staging warm"]
             for nbytes, bps in cal["upload_bytes_per_s"].items()]
    return rows


def _kernel_rows(point: dict) -> list[list[str]]:
    rows = []
    for k in point["kernels"]:
        rate = fraction = "-"
        if k["rate_per_s"] is not None:
            rate = (_si(k["rate_per_s"], "B/s") if k["unit"] == BYTES
                    else _si(k["rate_per_s"] / POSEIDON2_PRODUCTS, "perm/s"))
        if k["fraction"] is not None:
            fraction = f"{k['fraction']:.3f} {k['ceiling']}"
        rows.append([k["label"], str(k["launches"]), f"{k['ms']:.3f}", f"{100 * k['share']:.1f}%", rate, fraction])
    rows.append(["total", str(sum(k["launches"] for k in point["kernels"])), f"{point['gpu_ms']:.3f}", "100%", "",
                 ""])
    return rows


def _point_summary(point: dict) -> str:
    c = point["counts"]
    wall, gpu = point["wall_ms"], point["gpu_ms"]
    if gpu > wall:  # older reports stored the difference unclamped
        head = (f"wall {wall:.1f} ms (median, untimed) < GPU {gpu:.1f} ms: the timed proofs, one compute pass per "
                f"dispatch for its timestamps, ran slower than the untimed ones (on a CPU adapter the kernels also "
                f"share the host's cores), so the overhead is not measurable here: other 0.0 ms")
    else:
        head = (f"wall {wall:.1f} ms (median, untimed) = GPU {gpu:.1f} ms + other {max(0.0, point['other_ms']):.1f} "
                f"ms (host, dispatch, readback)")
    return (f"{head}; the calibration predicts {point['overhead_estimate_ms']:.1f} ms of overhead "
            f"for {c['submissions']} submissions, {c['dispatches']} dispatches, {c['reads']} readbacks "
            f"({c['read_bytes']} B) and {c['writes']} uploads ({c['write_bytes']} B)")


class _Printer:
    def __init__(self, markdown: bool):
        self.markdown = markdown
        if not markdown:
            from rich.console import Console  # noqa: PLC0415 - rich is only needed for terminal tables

            self.console = Console(highlight=False)
            if not self.console.is_terminal:  # a pipe or file: rich's 80 columns would cut kernel labels
                self.console = Console(highlight=False, width=PIPE_WIDTH)

    def line(self, text: str) -> None:
        if self.markdown:
            print(text + "\n")
        else:
            self.console.print(text, markup=False)

    def table(self, title: str, headers: list[str], rows: list[list[str]], right: set[int],
              wrap: set[int] = frozenset()) -> None:
        """Columns in ``right`` are right-justified; only those in ``wrap`` may wrap (the others never do)."""
        if self.markdown:
            print(f"**{title}**\n")
            print("| " + " | ".join(headers) + " |")
            print("|" + "|".join("---:" if i in right else "---" for i in range(len(headers))) + "|")
            for row in rows:
                print("| " + " | ".join(row) + " |")
            print()
            return
        from rich.table import Table  # noqa: PLC0415

        table = Table(title=title, title_justify="left")
        for i, header in enumerate(headers):
            table.add_column(header, justify="right" if i in right else "left", no_wrap=i not in wrap)
        for row in rows:
            table.add_row(*row)
        self.console.print(table)


def print_kernel_report(report: dict, markdown: bool) -> None:
    """Print ``report`` (the JSON layout of ``kernels``): per backend its calibration table, then per point its
    kernel table and a line comparing wall and GPU time; a skipped backend or a failed point is one line."""
    out = _Printer(markdown)
    for entry in report["backends"]:
        spec = entry["spec"]
        if entry["skipped"]:
            out.line(f"{spec}: skipped ({entry['skipped']})")
            continue
        cal = entry["calibration"]
        out.table(f"calibration: {spec} on {entry['device']} ({cal['mul']} multiply)",
                  ["quantity", "value", "measured with"], _calibration_rows(cal), {1}, wrap={2})
        if entry["kernel_timing"] is None:
            out.line(f"{spec}: {entry['device']} cannot time kernels (no timestamps): no kernel tables")
            continue
        for point in entry["points"]:
            if point["error"]:
                out.line(f"{spec} {point['point']}: failed: {point['error']}")
                continue
            out.table(f"{spec} {point['point']}: kernels of one proof ({entry['kernel_timing']}, median of "
                      f"{entry.get('runs', report['runs'])})", ["kernel", "launches", "ms", "share", "rate", "of ceiling"],
                      _kernel_rows(point), {1, 2, 3, 4, 5})
            out.line(_point_summary(point))
