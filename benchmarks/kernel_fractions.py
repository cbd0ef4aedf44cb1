"""Each heavy kernel of a proof at size n, timed with GPU timestamps, as a fraction of the device's calibration
ceilings measured in the same run (copy bandwidth for memory-bound kernels, Montgomery products per second for
Poseidon2-bound ones).

Usage: python3 -m benchmarks.kernel_fractions [--n 24] [--fold 4] [--rate 1] [--runs 5] [--mul auto] [--json FILE]

Byte counts are what each launch must move (reads + writes of its arrays, once); a Poseidon2 permutation is
counted as POSEIDON2_PRODUCTS Montgomery products (8 full rounds x 16 S-boxes x 4 products + 13 partial rounds x
4 products; the linear layers' additions are not counted, so the fraction overstates the headroom).
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict

import numpy as np

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import P
from whirgpu.kernels import calibrate, ntt
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.runtime.wgpu_rt import WgpuRuntime

POSEIDON2_PRODUCTS = 8 * 16 * 4 + 13 * 4
MB = 1 << 20


def _kernel_ms(rt, fn, runs: int) -> dict[str, float]:
    """Median GPU milliseconds per kernel label over ``runs`` calls of ``fn`` (after one warm-up)."""
    fn()
    rt.set_profiling(True)
    per_run = []
    try:
        for _ in range(runs):
            fn()
            totals: dict[str, float] = defaultdict(float)
            for label, ns in rt.kernel_times():
                totals[label] += ns / 1e6
            per_run.append(totals)
    finally:
        rt.set_profiling(False)
    return {label: statistics.median(r.get(label, 0.0) for r in per_run) for label in per_run[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24)
    parser.add_argument("--fold", type=int, default=4)
    parser.add_argument("--rate", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pow-bits", type=int, default=16)
    parser.add_argument("--mul", default=None)
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    rt = WgpuRuntime(mul=args.mul)
    gpu = GpuBackend(rt)
    n, k = args.n, args.fold
    rng = np.random.default_rng(0)
    copy_bps = calibrate.copy_bandwidth(rt)
    mul_ps = calibrate.mul_throughput(rt)
    rows = []

    def memory_row(name, ms, nbytes):
        rows.append({"kernel": name, "ms": round(ms, 3), "GB/s": round(nbytes / ms / 1e6, 1),
                     "fraction_of_copy": round(nbytes / (ms * 1e-3) / copy_bps, 3)})

    def hash_row(name, ms, perms):
        rows.append({"kernel": name, "ms": round(ms, 3), "Gperm/s": round(perms / ms / 1e6, 3),
                     "fraction_of_mul": round(perms * POSEIDON2_PRODUCTS / (ms * 1e-3) / mul_ps, 3)})

    table = gpu.upload(rng.integers(0, P, 1 << n, dtype=np.uint64).astype(np.uint32))
    points = rng.integers(0, P, (2, n, 4), dtype=np.uint64).astype(np.uint32)
    weights = gpu.eq_weights(points, rng.integers(0, P, (2, 4), dtype=np.uint64).astype(np.uint32))
    log_height = n - k + args.rate
    height, width = 1 << log_height, 1 << k
    matrix_bytes = 4 * height * width

    commit_ms = _kernel_ms(rt, lambda: gpu.release(gpu.commit(table, k, log_height)), args.runs)
    ntt_labels = [lb for lb in commit_ms if lb.startswith("ntt")]
    n_global = log_height - min(log_height, ntt.LOG_TILE_WORDS - min(k, ntt.LOG_TILE_COLS))
    passes = 2 + (n_global + 1) // 2  # bitrev + local + global passes (radix-4, one radix-2 when odd)
    memory_row("transpose_pad", commit_ms["transpose_pad"], 4 * (1 << n) + matrix_bytes)
    memory_row(f"ntt (all {passes} passes over the matrix)", sum(commit_ms[lb] for lb in ntt_labels),
               2 * matrix_bytes * passes)
    hash_row("merkle_leaves", commit_ms["merkle_leaves"], height * -(-width // 8))
    compress_ms = sum(v for lb, v in commit_ms.items() if lb.startswith("merkle_compress"))
    hash_row("merkle_compress (all levels)", compress_ms, height - 1)
    tree_ms = commit_ms["merkle_leaves"] + compress_ms
    rows.append({"kernel": "merkle tree total", "ms": round(tree_ms, 3)})

    sc = _kernel_ms(rt, lambda: gpu.sumcheck_round(table, weights), args.runs)
    memory_row("sumcheck_base", sc["sumcheck.sumcheck_base"], 4 * (1 << n) + 16 * (1 << n))
    fold_ms = _kernel_ms(rt, lambda: gpu.release(*gpu.fold(table, weights, points[0, 0])), args.runs)
    memory_row("fold_base", fold_ms["fold.fold_base"], 4 * (1 << n) + 16 * (1 << n) + 2 * 16 * (1 << (n - 1)))
    t2, w2 = gpu.fold(table, weights, points[0, 0])
    sc2 = _kernel_ms(rt, lambda: gpu.sumcheck_round(t2, w2), args.runs)
    memory_row("sumcheck_ext", sc2["sumcheck.sumcheck_ext"], 2 * 16 * (1 << (n - 1)))
    fold2 = _kernel_ms(rt, lambda: gpu.release(*gpu.fold(t2, w2, points[0, 1])), args.runs)
    memory_row("fold_ext", fold2["fold.fold_ext"], 4 * 16 * (1 << (n - 1)))
    wts = _kernel_ms(rt, lambda: gpu.release(gpu.eq_weights(points, points[:, 0])), args.runs)
    memory_row("weights (2 eq constraints, write)", wts["weights"], 16 * (1 << n))
    ev = _kernel_ms(rt, lambda: gpu.evaluate(table, points[0]), args.runs)
    memory_row("mle_eval_base", ev["mle_eval.mle_eval_base"], 4 * (1 << n))

    def grind():
        challenger = DuplexChallenger()
        challenger.observe(int(rng.integers(0, P)))
        gpu.grind(challenger, args.pow_bits)

    pw = _kernel_ms(rt, grind, args.runs)
    rows.append({"kernel": f"pow_grind ({args.pow_bits} bits, per grind)", "ms": round(pw["pow_grind"], 3)})

    result = {"adapter": rt.adapter.summary, "mul": rt.mul, "n": n, "fold": k, "rate": args.rate,
              "copy_GBps": round(copy_bps / 1e9, 1), "mul_Gprod_s": round(mul_ps / 1e9, 1), "kernels": rows}
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=2)


if __name__ == "__main__":
    main()
