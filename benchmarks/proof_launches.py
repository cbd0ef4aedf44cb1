"""Every dispatch of one replayed whir-p3-metal proof, timed on a wgpu adapter (a tuning aid for item 1 of issue
41: where a proof's GPU time goes, launch by launch), and the grinds' sizes and times:

    python3 -m benchmarks.proof_launches [--point 20:4:1] [--runs 5] [--wave-slack S ...]

Per ``--wave-slack`` value (``device_transcript.POW_WAVE_SLACK``: a grind's first wave covers 2^(bits + S) nonces;
30 gives the grid before ``pow_groups``, every grind of 11 bits or more on POW_GROUPS workgroups), a fresh backend
proves the point's random instance until it replays the recorded launches, then ``runs`` proofs with a timestamp
around each dispatch: the median time of each dispatch, in order, the ``pow_search`` launches with their bits
and workgroups, and the median wall time of 20 untimed proofs. Values alternate in one process. Nothing here
asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from whirgpu.backends import device_transcript
from whirgpu.backends.gpu import GpuBackend
from whirgpu.bench.grid import parse_point
from whirgpu.proving import Prover, random_canonical_instance
from whirgpu.runtime.program import Dispatch
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def _profile(rt, point, runs: int) -> None:
    backend = GpuBackend(rt)
    prover = Prover(point.config(), backend=backend)
    instance = random_canonical_instance(point.n, 0)
    for _ in range(4):  # compiled, pooled, recorded, replayed
        prover.prove(*instance)
    dispatches = [s for s in backend.last_program.program.launches() if isinstance(s, Dispatch)]
    timed = []
    for _ in range(runs):
        rt.set_profiling(True)
        rt.kernel_times()
        prover.prove(*instance)
        timed.append([ns / 1e3 for _, ns in rt.kernel_times()])
        rt.set_profiling(False)
    medians = [statistics.median(column) for column in zip(*timed)]
    print(f"  {len(medians)} launches, {sum(medians) / 1e3:.3f} ms of kernels")
    print("  " + " ".join(f"{d.kernel.label.split('.')[-1]}:{us:.0f}" for d, us in zip(dispatches, medians)))
    grinds = [(d, us) for d, us in zip(dispatches, medians) if d.kernel.label.startswith("pow_search")]
    print("  pow_search (bits/workgroups:us): " + " ".join(
        f"{int(d.params[0]).bit_length()}b/{int(d.params[6])}g:{us:.0f}" for d, us in grinds)
        + f"; {sum(us for _, us in grinds):.0f} us in all")
    walls = []
    for _ in range(20):
        start = time.perf_counter()
        prover.prove(*instance)
        walls.append((time.perf_counter() - start) * 1e3)
    print(f"  wall, untimed: median {statistics.median(walls):.2f} ms")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="20:4:1")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--wave-slack", type=int, nargs="+", default=[device_transcript.POW_WAVE_SLACK])
    args = parser.parse_args(argv)
    point = parse_point(args.point)
    rt = WgpuRuntime()
    print(f"{point} on {rt.name}")
    default = device_transcript.POW_WAVE_SLACK
    try:
        for slack in args.wave_slack:
            device_transcript.POW_WAVE_SLACK = slack
            print(f"== POW_WAVE_SLACK = {slack}")
            _profile(rt, point, args.runs)
    finally:
        device_transcript.POW_WAVE_SLACK = default
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
