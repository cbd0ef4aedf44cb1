"""The host challenger's share of a hiding proof on a GPU (issue 40, item 5): after the first session the host
absorbs the blinded vectors (at n = 20 in upstream's example: 7,496 words, 937 permutations one after another),
grinds the final proof of work (10 bits) and draws the final and mask-group positions (one set of 9 of 2^15, five
of 101 of 2^8 or 2^9), all on the compiled width-16 Poseidon2 (``native/permute.py``) of p3-whir's KoalaBear
challenger. Per step, over R runs (default 50) from fresh challenger states: the median and mean in ms; and one
permutation of the single-state kernel (the absorb's chain) in us. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_host_sponge [--runs R]
"""

import statistics
import sys
import time

import numpy as np

from benchmarks.zk_instance import zk_instance
from whirgpu.field import KOALABEAR
from whirgpu.native.permute import build_now, native_absorb
from whirgpu.profiles.p3_whir.zk.prover import zk_challenger

BLINDED_WORDS = 7496  # the blinded vectors at n = 20, upstream's example at rate 2
FINAL_POW_BITS = 10
SETS = [(15, 9)] + [(8, 101), (9, 101), (8, 101), (8, 101), (8, 101)]  # (log2 domain, count) in draw order


def timed(step, runs: int) -> tuple[float, float]:
    """(median, mean) ms of ``step(i)`` for i < runs."""
    times = []
    for i in range(runs):
        start = time.perf_counter()
        step(i)
        times.append(1e3 * (time.perf_counter() - start))
    return statistics.median(times), statistics.mean(times)


def main() -> None:
    args = sys.argv[1:]
    runs = int(args[1]) if args[:1] == ["--runs"] else 50
    build_now()
    base = zk_challenger(zk_instance(20).config, KOALABEAR)  # its domain separator absorbed
    rng = np.random.default_rng(1)
    blinded = [rng.integers(0, KOALABEAR.P, BLINDED_WORDS, dtype=np.uint64) for _ in range(runs)]

    def fresh(i: int):
        challenger = base.clone()
        challenger.observe(i)
        return challenger

    absorb = native_absorb(base.constants)
    words = blinded[0][:8 * (BLINDED_WORDS // 8)]
    steps = [
        ("absorb of the blinded vectors", lambda i: fresh(i).observe_many(blinded[i])),
        (f"grind {FINAL_POW_BITS} bits", lambda i: fresh(i).grind(FINAL_POW_BITS)),
        ("the six position sets", lambda i: fresh(i).distinct_uniform_sets(SETS)),
        ("all three in one call (observe_grind_draw)",
         lambda i: fresh(i).observe_grind_draw(blinded[i], FINAL_POW_BITS, SETS)),
    ]
    for label, step in steps:
        median, mean = timed(step, runs)
        print(f"{label:44s} median {median:7.3f} ms  mean {mean:7.3f} ms", flush=True)
    if absorb is not None:
        median, _ = timed(lambda i: absorb([0] * 16, words, 8), runs)
        print(f"{'one permutation of the single-state kernel':44s} {1e3 * median / (words.size // 8):7.3f} us")


if __name__ == "__main__":
    main()
