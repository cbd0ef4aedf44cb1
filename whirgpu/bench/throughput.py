"""``whirgpu bench --throughput COUNT``: proofs per second on each backend, one by one against ``prove_many``.

Per point and backend: COUNT instances (``random_canonical_instance(n, seed + i)``, drawn untimed), untimed
warm-up proofs (``steady.warm_up``: on a backend that replays recorded proofs, until one of the shape has been
replayed, then one more; elsewhere one), then COUNT proofs through ``Prover.prove`` one after another and COUNT
through ``Prover.prove_many`` (two in flight), each timed as a whole (wall clock, as a service proving a queue sees it). The two runs' proofs must be
byte-identical; a row says so. Rows: point, backend, proofs/s one by one, proofs/s ``prove_many``, speedup.
With ``--devices all`` a third run proves the COUNT through ``prove_many(devices="all")`` (one prover per adapter
of the backend's WebGPU implementation) and its column says how many devices it used. With ``--processes K`` another
run proves the COUNT through ``prove_many(processes=K)`` (K worker processes per device, started and warmed with one
proof each before the clock starts; with ``--devices all`` on every adapter).

With ``--window SECONDS`` each run is timed in windows instead of over the COUNT: the instances are proved round
and round, one untimed window first (the device's clocks come up, caches fill), then ``--windows N`` windows of
that length, each reported as proofs/s (a row's figure is their median); every proof is checked against the
one-by-one bytes of its instance. A windowed run also times ``prove_many(batch=1)`` (proofs in flight, each in
launches of its own), listed with the windows, against ``prove_many``'s default batches of one shape in the same
launches. The processes run also says where its proofs were made: per device the worker
processes opened, the proofs and the workers that made them.
"""

from __future__ import annotations

import itertools
import json
import statistics
import time
from dataclasses import asdict, dataclass, field

from ..proving import Prover, random_canonical_instance
from ..files import write_atomic
from ..profiles.whir_p3_metal.serialize import dump
from .grid import GridPoint
from .steady import warm_up


def _seconds(prove) -> float:
    start = time.perf_counter()
    prove()
    return time.perf_counter() - start


@dataclass
class ThroughputRow:
    point: str
    backend: str
    count: int
    one_by_one_per_s: float
    prove_many_per_s: float
    identical: bool
    all_devices_per_s: float | None = None
    devices: int = 1
    processes: int | None = None
    processes_per_s: float | None = None
    window_s: float | None = None  # windowed runs: proofs/s of each window, per run
    windows: dict = field(default_factory=dict)
    landed: dict = field(default_factory=dict)  # processes run: device -> [proofs, workers]

    @property
    def speedup(self) -> float:
        return self.prove_many_per_s / self.one_by_one_per_s


@dataclass(frozen=True)
class Windows:
    """``count`` timed windows of ``seconds`` each, after one untimed window of the same length."""

    seconds: float
    count: int = 3


def windowed(proofs, expected: list[bytes], windows: Windows) -> tuple[list[float], bool]:
    """Proofs/s of each window over the endless iterator ``proofs`` (instance i mod len(expected) in turn), and
    whether every proof had its instance's bytes. The iterator is closed at the end (in-flight proofs dropped)."""
    rates: list[float] = []
    identical = True
    start = time.perf_counter()
    end, done, index = start + windows.seconds, 0, -1  # window -1: the untimed warm-up
    try:
        for i, proof in enumerate(proofs):
            identical = identical and dump(proof, "binary") == expected[i % len(expected)]
            done += 1
            now = time.perf_counter()
            if now >= end:
                if index >= 0:
                    rates.append(round(done / (now - start), 2))
                index += 1
                if index >= windows.count:
                    break
                start, end, done = now, now + windows.seconds, 0
    finally:
        close = getattr(proofs, "close", None)
        if close is not None:
            close()
    return rates, identical


def _landing(prover: Prover) -> dict:
    """device -> [proofs, workers] of the prover's worker processes."""
    out: dict = {}
    for (device, _pid), proofs in prover.worker_proofs.items():
        entry = out.setdefault(device, [0, 0])
        entry[0] += proofs
        entry[1] += 1
    return out


def measure(point: GridPoint, name: str, backend, count: int, seed: int, all_devices: bool = False,
            processes: int | None = None, windows: Windows | None = None) -> ThroughputRow:
    prover = Prover(point.config(), backend=backend)
    instances = [random_canonical_instance(point.n, seed + i) for i in range(count)]
    # warm: pipelines compiled, the pool holds this configuration's buffers, the shape's launches recorded
    warm_up(backend, lambda i, total: _seconds(lambda: prover.prove(*instances[(i - 1) % count])), 1)
    if windows is not None:
        return _measure_windows(point, name, prover, instances, all_devices, processes, windows)
    start = time.perf_counter()
    single = [dump(prover.prove(*instance), "binary") for instance in instances]
    one_s = time.perf_counter() - start
    start = time.perf_counter()
    many = [dump(proof, "binary") for proof in prover.prove_many(instances)]
    many_s = time.perf_counter() - start
    row = ThroughputRow(str(point), name, count, round(count / one_s, 2), round(count / many_s, 2), single == many)
    if processes is not None:
        _measure_processes(row, prover, instances, single, processes, all_devices)
    if all_devices:
        from ..many.devices import all_devices as open_all  # noqa: PLC0415

        backends = open_all(backend)
        try:
            list(prover.prove_many(instances[:len(backends)], devices=backends))  # warm every device
            start = time.perf_counter()
            spread = [dump(proof, "binary") for proof in prover.prove_many(instances, devices=backends)]
            row.all_devices_per_s = round(count / (time.perf_counter() - start), 2)
            row.devices = len(backends)
            row.identical = row.identical and spread == single
        finally:
            for b in backends:
                b.close()
    return row


def _measure_processes(row: ThroughputRow, prover: Prover, instances: list, single: list[bytes], processes: int,
                       all_devices: bool) -> None:
    devices = "all" if all_devices else None
    try:
        workers = len(list(prover.prove_many(instances[:1] * processes * 2, devices=devices,
                                             processes=processes)))  # warm: every worker opened and compiled
        start = time.perf_counter()
        spread = [dump(proof, "binary") for proof in prover.prove_many(instances, devices=devices,
                                                                         processes=processes)]
        row.processes_per_s = round(len(instances) / (time.perf_counter() - start), 2)
        row.processes = processes
        row.identical = row.identical and spread == single and workers == processes * 2
    finally:
        prover.stop_workers()


def _measure_windows(point: GridPoint, name: str, prover: Prover, instances: list, all_devices: bool,
                     processes: int | None, windows: Windows) -> ThroughputRow:
    """``measure`` in windows (module docstring): one by one, prove_many, every device, worker processes."""
    single = [dump(prover.prove(*instance), "binary") for instance in instances]
    runs = {"one by one": lambda: (prover.prove(*i) for i in itertools.cycle(instances)),
            "prove_many batch=1": lambda: prover.prove_many(itertools.cycle(instances), batch=1),
            "prove_many": lambda: prover.prove_many(itertools.cycle(instances))}
    backends = []
    if all_devices:
        from ..many.devices import all_devices as open_all  # noqa: PLC0415

        backends = open_all(prover.backend)
        runs["all devices"] = lambda: prover.prove_many(itertools.cycle(instances), devices=backends)
    if processes is not None:
        runs["processes"] = lambda: prover.prove_many(itertools.cycle(instances), devices="all" if all_devices
                                                      else None, processes=processes)
    row = ThroughputRow(str(point), name, len(instances), 0.0, 0.0, True, window_s=windows.seconds,
                        devices=max(1, len(backends)), processes=processes)
    try:
        for run, proofs in runs.items():
            rates, same = windowed(proofs(), single, windows)
            row.windows[run] = rates
            row.identical = row.identical and same
        if processes is not None:
            row.landed = _landing(prover)
    finally:
        prover.stop_workers()
        for b in backends:
            b.close()
    median = {run: statistics.median(rates) if rates else 0.0 for run, rates in row.windows.items()}
    row.one_by_one_per_s, row.prove_many_per_s = median["one by one"], median["prove_many"]
    row.all_devices_per_s = median.get("all devices")
    row.processes_per_s = median.get("processes")
    return row


def run_throughput(points: list[GridPoint], backends: dict, count: int, seed: int, json_path: str | None,
                   markdown: bool, all_devices: bool = False, processes: int | None = None,
                   windows: Windows | None = None) -> int:
    rows = [measure(point, name, backend, count, seed, all_devices, processes, windows) for point in points
            for name, backend in backends.items()]
    extra = f" proofs/s {processes} processes |" if processes is not None else ""
    head = "| point | backend | proofs | proofs/s one by one | proofs/s prove_many | speedup |" + \
        (" proofs/s all devices |" if all_devices else "") + extra + " same bytes |"
    rule = "|---|---|---:|---:|---:|---:|" + ("---:|" if all_devices else "") + ("---:|" if extra else "") + "---|"
    lines = [head, rule] if markdown else [head.replace("|", " ").strip()]
    for r in rows:
        cells = [r.point, r.backend, str(r.count), f"{r.one_by_one_per_s:.1f}", f"{r.prove_many_per_s:.1f}",
                 f"{r.speedup:.2f}x"]
        if all_devices:
            cells.append(f"{r.all_devices_per_s:.1f} ({r.devices} devices)")
        if processes is not None:
            cells.append(f"{r.processes_per_s:.1f}")
        cells.append("yes" if r.identical else "NO")
        lines.append("| " + " | ".join(cells) + " |" if markdown else "  ".join(cells))
    if windows is not None:
        lines.append(f"proofs/s per window ({windows.count} windows of {windows.seconds:g} s, each run after an "
                     f"untimed one; the table shows their medians):")
        for r in rows:
            for run, rates in r.windows.items():
                lines.append(f"  {r.point} {r.backend} {run}: " + " ".join(f"{x:.1f}" for x in rates))
            for device, (proofs, workers) in r.landed.items():
                lines.append(f"  {r.point} {r.backend} processes landed on {device}: {proofs} proofs from "
                             f"{workers} workers")
    print("\n".join(lines))
    if json_path:
        write_atomic(json_path, json.dumps([asdict(r) for r in rows], indent=2))
    return 0 if all(r.identical for r in rows) else 1
