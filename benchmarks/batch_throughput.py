"""Proofs per second of ``prove_many`` against its batch size (proofs of one shape in the same launches):

    python -m benchmarks.batch_throughput [--point 20:4:1] [--count 128] [--backend wgpu]
                                          [--batches 1,2,4,8,16,32] [--rounds 2] [--kernels]

``count`` random instances are drawn and proved one by one first (untimed: pipelines compiled, the shape
recorded, and every proof's bytes kept). Then, for each batch size in turn, ``rounds`` times, all ``count``
instances go through ``prove_many(batch=B)``, timed as a whole, every proof required to equal its one-by-one
bytes (each proof serialised inside the timing, as a service would). Printed per batch size: the best round's
proofs/s, that round's CPU time of the calling thread per proof (the host's own work: encoding, copies into
staging, resolving, serialising; a device's driver threads and the copy's helper threads are not in it), and
the instances a launch took (the backend may allow fewer than asked: ``Replays.batches``). ``--kernels``: also
the GPU time of one batch's launches, per proof, from the runtime's timestamps, and the kernels that took most
of it (per proof, and their launches a batch) (wgpu and Dawn; profiling serialises the launches, so its wall
time is not reported).
"""

from __future__ import annotations

import argparse
import time

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.bench.grid import parse_point
from whirgpu.profiles.whir_p3_metal.serialize import dump

TOP_KERNELS = 6  # kernels named per batch size with --kernels


def _rate(prover: Prover, instances: list, expected: list[bytes], batch: int) -> tuple[float, float]:
    """(proofs/s, the calling thread's CPU seconds a proof) of one ``prove_many`` over ``instances``."""
    cpu, start = time.thread_time(), time.perf_counter()
    got = [dump(proof, "binary") for proof in prover.prove_many(instances, batch=batch)]
    seconds, cpu = time.perf_counter() - start, time.thread_time() - cpu
    assert got == expected, f"batch {batch}: the proofs differ from one by one"
    return len(instances) / seconds, cpu / len(instances)


def _kernel_time(prover: Prover, instances: list, batch: int) -> tuple[float, list] | None:
    """(GPU seconds per proof of one batch's launches, [(label, seconds per proof, launches)] for the kernels
    that took most, most first) from the runtime's timestamps, or None without them."""
    rt = getattr(prover.backend, "rt", None)
    if rt is None or not hasattr(rt, "set_profiling"):
        return None
    try:
        rt.set_profiling(True)
    except Exception:  # noqa: BLE001 - no timestamp-query: nothing to report
        return None
    try:
        rt.kernel_times()
        list(prover.prove_many(instances[:batch], batch=batch))  # a recorded shape: one batch of `batch`
        times = rt.kernel_times()
        by_label: dict[str, list] = {}
        for label, ns in times:
            entry = by_label.setdefault(label, [0, 0])
            entry[0] += ns
            entry[1] += 1
        top = sorted(by_label.items(), key=lambda item: -item[1][0])[:TOP_KERNELS]
        return (sum(ns for _, ns in times) * 1e-9 / batch,
                [(label, ns * 1e-9 / batch, count) for label, (ns, count) in top])
    finally:
        rt.set_profiling(False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="20:4:1")
    parser.add_argument("--count", type=int, default=128)
    parser.add_argument("--backend", default="wgpu")
    parser.add_argument("--batches", default="1,2,4,8,16,32")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kernels", action="store_true")
    args = parser.parse_args(argv)
    point = parse_point(args.point)
    instances = [random_canonical_instance(point.n, seed) for seed in range(args.count)]
    with Prover(point.config(), backend=args.backend) as prover:
        start = time.perf_counter()
        expected = [dump(prover.prove(*instance), "binary") for instance in instances]
        one = len(instances) / (time.perf_counter() - start)
        print(f"{point} on {prover.backend.name}: {len(instances)} proofs, one by one {one:.1f}/s", flush=True)
        replay = getattr(prover.backend, "replay", None)
        for batch in (int(b) for b in args.batches.split(",")):
            before = len(replay.batches) if replay is not None else 0
            rate, cpu = max(_rate(prover, instances, expected, batch) for _ in range(args.rounds))
            widths = sorted({k for _, k in replay.batches[before:]}) if replay is not None else []
            line = (f"  batch {batch}: {rate:.1f} proofs/s (instances per launch: {widths or [1]}), "
                    f"host {cpu * 1e3:.3f} ms of CPU a proof")
            if args.kernels:
                kernel = _kernel_time(prover, instances, batch)
                if kernel is not None:
                    line += f", kernels {kernel[0] * 1e3:.3f} ms a proof: " + ", ".join(
                        f"{label} {seconds * 1e6:.0f} us in {count}" for label, seconds, count in kernel[1])
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
