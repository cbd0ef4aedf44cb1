"""The hiding proof's mask-oracle worker thread, and the GPU's SM clock while proofs run: per n, ``ZkBackendProver``
on a wgpu ``GpuBackend`` (the instance of ``benchmarks.zk_instance``) with the transcript-independent mask oracles
built on the worker thread (``draws.OracleBuilder.thread``, the default) and in place (``OracleBuilder.now``),
two rounds of each, then the same statement's proof without zero knowledge (``P3Tables``, prefix, wgpu); each mode
2 untimed proofs then 7 timed. Where ``nvidia-smi`` exists, it samples the SM clock and utilisation every 20 ms and
each mode's samples are summarised. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_clocks [N ...]   (default 20 24)
"""
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native.permute import build_now
from whirgpu.profiles.p3_whir.tables.api import P3Tables
from whirgpu.profiles.p3_whir.zk import backend_prover, draws
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def sampler():
    if shutil.which("nvidia-smi") is None:
        return None
    return subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,utilization.gpu",
                             "--format=csv,noheader,nounits", "-lms", "20"], stdout=subprocess.PIPE, text=True)


def samples(process) -> list:
    rows = []
    for line in process.stdout.read().splitlines():
        try:
            stamp, clock, util = (x.strip() for x in line.split(","))
            rows.append((datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timestamp(), int(clock), int(util)))
        except ValueError:
            continue  # a header or a partial line
    return rows


def main() -> None:
    build_now()
    chacha.build_now()
    prune.build_now()  # and the provers' compiled multiproof pruning
    backend = GpuBackend(WgpuRuntime())
    threaded = draws.OracleBuilder.thread
    smi = sampler()
    marks = []
    for n in [int(a) for a in sys.argv[1:]] or [20, 24]:
        inst = zk_instance(n)
        zk = backend_prover.ZkBackendProver(backend, inst.config, KOALABEAR)
        tables = P3Tables(inst.columns, orient="columns", params=inst.config.inner.params, field=KOALABEAR,
                          layout="prefix", backend="wgpu")
        canonical = inst.canonical_points()
        for mode in ("threaded", "in place", "threaded", "in place", "plain"):
            draws.OracleBuilder.thread = threaded if mode == "threaded" else draws.OracleBuilder.now
            if mode == "plain":
                prove = lambda: tables.prove(inst.spec.protocol.batches, canonical)  # noqa: E731
            else:
                prove = lambda: zk.prove(inst.polynomial, inst.statement_points, mask_rng(None))  # noqa: E731
            for _ in range(2):
                prove()
            times, start = [], time.time()
            for _ in range(7):
                t = time.perf_counter()
                prove()
                times.append((time.perf_counter() - t) * 1e3)
            marks.append((f"n={n} {mode}", start, time.time()))
            print(f"n={n} {mode:8s} median {statistics.median(times):6.1f} ms  runs {[round(x, 1) for x in times]}",
                  flush=True)
        draws.OracleBuilder.thread = threaded
        tables.close()
    if smi is None:
        print("no nvidia-smi: no clock samples")
        return
    time.sleep(0.3)
    smi.terminate()
    rows = samples(smi)
    for label, start, end in marks:
        inside = [(c, u) for t, c, u in rows if start <= t <= end]
        if inside:
            clocks, utils = sorted(c for c, _ in inside), sorted(u for _, u in inside)
            print(f"{label:16s} SM clock MHz min {clocks[0]} median {clocks[len(clocks) // 2]} max {clocks[-1]}  "
                  f"utilisation median {utils[len(utils) // 2]}%  samples {len(inside)}")


if __name__ == "__main__":
    main()
