"""End-to-end proof timings on the wgpu backend: cold (first run, pipelines compiled), warm median, the per-phase
breakdown (a profiled run that waits at each phase boundary) and GPU time per kernel (timestamps).

Usage: python3 -m benchmarks.prove_e2e [--n 20 22 24] [--fold 4] [--rate 1] [--runs 5] [--mul auto] [--json FILE]
Configuration: security 100, pow 16, capacity bound, initial reduction min(fold, 3) (the reference sweep's).
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from whirgpu.api import random_instance
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.protocol.prover import WhirProver
from whirgpu.protocol.verifier import WhirVerifier
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def _config(n: int, fold: int, rate: int) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=fold,
                                                             starting_log_inv_rate=rate))


def _prove(config, backend, poly, statement):
    prover = WhirProver(config, backend)
    start = time.perf_counter()
    proof = prover.prove(poly, statement)
    return proof, (time.perf_counter() - start) * 1e3, prover.timer.seconds


def bench(n: int, fold: int, rate: int, runs: int, rt: WgpuRuntime, cpu: bool) -> dict:
    config = _config(n, fold, rate)
    poly, statement = random_instance(n, 1)
    backend = GpuBackend(rt)
    proof, cold_ms, _ = _prove(config, backend, poly, statement)
    WhirVerifier(config).verify(proof, statement)
    warm = [_prove(config, backend, poly, statement)[1] for _ in range(runs)]
    backend.profile = True
    _, profiled_ms, phases = _prove(config, backend, poly, statement)
    backend.profile = False
    kernels: dict[str, float] = defaultdict(float)
    if "timestamp-query" in rt.device.features:
        rt.set_profiling(True)
        _prove(config, backend, poly, statement)
        for label, ns in rt.kernel_times():
            kernels[label] += ns / 1e6
        rt.set_profiling(False)
    out = {
        "n": n, "fold": fold, "rate": rate, "adapter": rt.adapter.summary, "mul": rt.mul,
        "cold_ms": round(cold_ms, 1), "warm_median_ms": round(statistics.median(warm), 1),
        "warm_ms": [round(t, 1) for t in warm],
        "profiled_ms": round(profiled_ms, 1),
        "phases_ms": {k: round(v * 1e3, 2) for k, v in sorted(phases.items(), key=lambda kv: -kv[1])},
        "gpu_kernel_ms": {k: round(v, 3) for k, v in sorted(kernels.items(), key=lambda kv: -kv[1])},
        "gpu_total_ms": round(sum(kernels.values()), 2),
    }
    if cpu:
        out["cpu_ms"] = round(_prove(config, CpuBackend(), poly, statement)[1], 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[20, 22, 24])
    parser.add_argument("--fold", type=int, default=4)
    parser.add_argument("--rate", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mul", default=None)
    parser.add_argument("--cpu", action="store_true", help="also time the numpy reference once")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    rt = WgpuRuntime(mul=args.mul)
    results = []
    for n in args.n:
        results.append(bench(n, args.fold, args.rate, args.runs, rt, args.cpu))
        print(json.dumps(results[-1]), flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
