"""What one host-valued device session costs the host, with (almost) no GPU work: the fixed part of each of the
hiding prover's sessions (docs/ZK-PROTOCOL.md §15). On a wgpu ``GpuBackend``, KoalaBear, prefix layout, tables of
2^10 entries: a session that evaluates one point and reads 4 words back (``evaluate``), one that reads nothing
(``eq_weights``), and a masked batch of 5 rounds with proof of work at 1 bit (``masked_rounds``: about 30
launches, the transcript on the device); per kind 20 untimed calls, then the median of 200, and the host's CPU
time over the same calls (``time.process_time``: what the Python side itself spends). Nothing here asserts a time.

Usage: python3 -m benchmarks.session_cost
"""
import statistics
import time

import numpy as np

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.device_transcript import TranscriptVariant
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.masked_rounds import MaskedRoundsPlan
from whirgpu.field import KOALABEAR
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def timed(call, runs: int = 200, warm: int = 20) -> tuple[float, float]:
    for _ in range(warm):
        call()
    walls, cpu0 = [], time.process_time()
    for _ in range(runs):
        start = time.perf_counter()
        call()
        walls.append((time.perf_counter() - start) * 1e3)
    return statistics.median(walls), (time.process_time() - cpu0) / runs * 1e3


def main() -> None:
    field = KOALABEAR
    backend = GpuBackend(WgpuRuntime())
    backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    rng = np.random.default_rng(1)
    monty = lambda *shape: rng.integers(0, field.P, shape, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    m, k = 10, 5
    table, weights = backend.upload(monty(1 << m, 4)), backend.upload(monty(1 << m, 4))
    point, coefficients = monty(m, 4), monty(1, 4)
    plan = MaskedRoundsPlan(monty(k, 3, 4), monty(k, 4), monty(4), monty(k, 4, 4), 1)

    def evaluate():
        backend.evaluate(table, point)

    def eq_weights():
        backend.release(backend.eq_weights(point[None], coefficients))

    def masked_rounds():
        challenger = TranscriptVariant.p3(field).challenger()
        folded, folded_weights, _ = backend.masked_rounds(table, weights, challenger, plan)
        backend.release(folded, folded_weights)

    for name, call in (("evaluate (reads 4 words)", evaluate), ("eq_weights (reads nothing)", eq_weights),
                       ("masked_rounds (k = 5, pow 1 bit)", masked_rounds)):
        wall, cpu = timed(call)
        print(f"{name:34s} wall {wall:6.3f} ms  host CPU {cpu:6.3f} ms a call", flush=True)


if __name__ == "__main__":
    main()
