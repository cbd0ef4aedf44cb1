"""Kernel timings on the wgpu adapter: commit-sized NTT and Merkle tree, Poseidon2 throughput, per multiply variant.

Usage: python3 -m benchmarks.gpu_kernels [--log-height 21] [--width 16] [--runs 10] [--json FILE]
*_ms are wall-clock around record + submit + device wait (median of --runs after a warm-up); they include the
host's encoding, submit and poll overhead, so small sizes are dominated by it. *_gpu_ms are GPU time of the same
batch from pass timestamps (benchmarks.gpu_timing: first pass begin to last pass end), when the adapter has
timestamp-query. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

from benchmarks.gpu_timing import one_pass_ms
from whirgpu.field import P
from whirgpu.kernels import merkle, ntt
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def _median_ms(fn, runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def bench_variant(mul: str, log_height: int, width: int, runs: int) -> dict:
    rt = WgpuRuntime(mul=mul)
    height = 1 << log_height
    rng = np.random.default_rng(0)
    data = rng.integers(0, P, height * width, dtype=np.uint64).astype(np.uint32)
    matrix = rt.alloc(data.nbytes)
    rt.write(matrix, data)

    def run_ntt():
        batch = rt.batch()
        ntt.ntt_columns(rt, batch, matrix, log_height, width)
        batch.submit()
        rt.wait()

    def run_tree():
        merkle.build_tree(rt, matrix, height, width)
        rt.wait()

    n_states = 1 << 20
    states = rt.alloc(n_states * 64)
    rt.write(states, rng.integers(0, P, n_states * 16, dtype=np.uint64).astype(np.uint32))
    out = rt.alloc(n_states * 64)

    def run_perm():
        batch = rt.batch()
        merkle.permute_states(rt, batch, states, out, n_states)
        batch.submit()
        rt.wait()

    ntt_ms = _median_ms(run_ntt, runs)
    tree_ms = _median_ms(run_tree, runs)
    perm_ms = _median_ms(run_perm, runs)
    n_perms_tree = height * (-(-width // 8)) + height - 1
    gpu = {}
    if "timestamp-query" in rt.device.features:
        leaves = rt.alloc(height * 32)
        tree_gpu = one_pass_ms(rt, lambda b: merkle.build_tree(rt, matrix, height, width, batch=b), runs)
        perm_gpu = one_pass_ms(rt, lambda b: merkle.permute_states(rt, b, states, out, n_states), runs)
        gpu = {
            "ntt_gpu_ms": round(one_pass_ms(rt, lambda b: ntt.ntt_columns(rt, b, matrix, log_height, width), runs), 3),
            "tree_gpu_ms": round(tree_gpu, 3),
            "tree_leaves_gpu_ms": round(one_pass_ms(
                rt, lambda b: merkle.hash_leaves(rt, b, matrix, leaves, height, width), runs), 3),
            "tree_gpu_Gperm_s": round(n_perms_tree / tree_gpu / 1e6, 3),
            "perm_gpu_Gperm_s": round(n_states / perm_gpu / 1e6, 3),
        }
    return {
        "mul": mul,
        "adapter": rt.adapter.summary,
        "ntt_ms": round(ntt_ms, 3),
        "ntt_GBps_rw": round(2 * data.nbytes * log_height / ntt_ms / 1e6, 1),
        "tree_ms": round(tree_ms, 3),
        "tree_Gperm_s": round(n_perms_tree / tree_ms / 1e6, 3),
        "perm_2^20_ms": round(perm_ms, 3),
        "perm_Gperm_s": round(n_states / perm_ms / 1e6, 3),
        **gpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log-height", type=int, default=21)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    results = [bench_variant(mul, args.log_height, args.width, args.runs) for mul in ("emulated", "u64")]
    for r in results:
        print(json.dumps(r))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
