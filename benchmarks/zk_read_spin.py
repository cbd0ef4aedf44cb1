"""A readback's wait on wgpu-native, spinning against blocking (``wgpu_rt/buffers.py``'s ``READ_SPIN_SECONDS``):
replayed proofs at n = 20 (upstream's example at rate 2, KoalaBear, one column; ``benchmarks.zk_instance``), the
hiding proof and the same proof without zero knowledge, in one process, the runtime's readbacks spinning (the
default) or blocking at once (``READ_SPIN_SECONDS = 0``) in the order ABBA over R proofs each (default 40), the first
two of each left out: median, minimum and quartiles in ms. Alternating proof by proof hides what spinning does to
a host core kept busy across proofs (its clock); compare whole runs too. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_read_spin [--runs R]
"""
import statistics
import sys
import time

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native.permute import build_now
from whirgpu.profiles.p3_whir.tables.api import P3Tables
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def main() -> None:
    args = sys.argv[1:]
    runs = int(args[1]) if args[:1] == ["--runs"] else 40
    build_now()
    chacha.build_now()
    prune.build_now()
    runtime = WgpuRuntime()
    spin = runtime.read_spin_seconds
    if not spin:
        print(f"{runtime.adapter.summary}: a CPU adapter, whose readbacks never spin; nothing to compare")
        return
    instance = zk_instance(20)
    prover = ZkBackendProver(GpuBackend(runtime), instance.config, KOALABEAR)
    tables = P3Tables(instance.columns, orient="columns", params=instance.config.inner.params, field=KOALABEAR,
                      layout="prefix", backend="wgpu")
    points = instance.canonical_points()
    proofs = (("zk", lambda: prover.prove(instance.polynomial, instance.statement_points, mask_rng(None))),
              ("plain", lambda: tables.prove(instance.spec.protocol.batches, points)))
    for _ in range(3):  # record, then replay once
        for _, prove in proofs:
            prove()
    runtimes = (runtime, tables.backend.state.rt)  # the plain proof's backend has a runtime of its own
    for label, prove in proofs:
        times = {False: [], True: []}
        for r in range(2 * runs):
            spinning = (False, True, True, False)[r % 4]
            for rt in runtimes:
                rt.read_spin_seconds = spin if spinning else 0.0
            start = time.perf_counter()
            prove()
            times[spinning].append(1e3 * (time.perf_counter() - start))
        for spinning in (False, True):
            t = sorted(times[spinning][2:])
            print(f"{label:5s} {'spin' if spinning else 'block':5s} median {statistics.median(t):6.2f} ms  min "
                  f"{t[0]:6.2f}  q1 {t[len(t) // 4]:6.2f}  q3 {t[3 * len(t) // 4]:6.2f}", flush=True)
    for rt in runtimes:
        rt.read_spin_seconds = spin


if __name__ == "__main__":
    main()
