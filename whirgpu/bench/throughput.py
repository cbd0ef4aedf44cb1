"""``whirgpu bench --throughput COUNT``: proofs per second on each backend, one by one against ``prove_many``.

Per point and backend: COUNT instances (``random_canonical_instance(n, seed + i)``, drawn untimed), one warm-up
proof, then COUNT proofs through ``Prover.prove`` one after another and COUNT through ``Prover.prove_many`` (two
in flight), each timed as a whole (wall clock, as a service proving a queue sees it). The two runs' proofs must be
byte-identical; a row says so. Rows: point, backend, proofs/s one by one, proofs/s ``prove_many``, speedup.
With ``--devices all`` a third run proves the COUNT through ``prove_many(devices="all")`` (one prover per adapter
of the backend's WebGPU implementation) and its column says how many devices it used. With ``--processes K`` another
run proves the COUNT through ``prove_many(processes=K)`` (K worker processes per device, started and warmed with one
proof each before the clock starts; with ``--devices all`` on every adapter).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from ..api import Prover, random_canonical_instance
from ..profiles.whir_p3_metal.serialize import dump
from .grid import GridPoint


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

    @property
    def speedup(self) -> float:
        return self.prove_many_per_s / self.one_by_one_per_s


def measure(point: GridPoint, name: str, backend, count: int, seed: int, all_devices: bool = False,
            processes: int | None = None) -> ThroughputRow:
    prover = Prover(point.config(), backend=backend)
    instances = [random_canonical_instance(point.n, seed + i) for i in range(count)]
    prover.prove(*instances[0])  # warm: pipelines compiled, the pool holds this configuration's buffers
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


def run_throughput(points: list[GridPoint], backends: dict, count: int, seed: int, json_path: str | None,
                   markdown: bool, all_devices: bool = False, processes: int | None = None) -> int:
    rows = [measure(point, name, backend, count, seed, all_devices, processes) for point in points
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
    print("\n".join(lines))
    if json_path:
        with open(json_path, "w") as out:
            json.dump([asdict(r) for r in rows], out, indent=2)
    return 0 if all(r.identical for r in rows) else 1
