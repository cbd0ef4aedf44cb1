"""The hiding proof's host worker (``native.permute.HostWorker``), on and off: replayed hiding proofs (upstream's
example at rate 2, KoalaBear, one column of 2^n; ``benchmarks.zk_instance``) on one wgpu backend, in one process,
proof by proof in turn (forwards and backwards in alternate rounds, so none goes first every time) with the absorb,
search and draws on the worker's thread while the proof's thread resolves the first session's part (the default:
"worker", with the search helpers ``native.permute.search_helpers()`` allows), the same without helpers ("no
helpers"), and with no worker (``HostWorker.start`` answering None: the call on the proof's thread, the resolve
after it), beside the same proof without zero knowledge; R proofs each (default 15) after 4 untimed rounds: medians in ms and each against the plain
proof. Only a final search of ``device_opening.HOST_GRIND_BITS`` bits or fewer is the host's (n = 20 in this
instance; 19 and 13 bits at n = 22 and 24 are the device's, where the modes are the same code: a check of the
noise). Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_host_worker [--runs R] [N ...]   (default 20 22)
"""
import statistics
import sys
import time

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native import permute as native
from whirgpu.profiles.p3_whir.tables.api import P3Tables
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.device_opening import HOST_GRIND_BITS
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def main() -> None:
    args = sys.argv[1:]
    runs = 15
    if args[:1] == ["--runs"]:
        runs, args = int(args[1]), args[2:]
    native.build_now()
    chacha.build_now()
    prune.build_now()
    start = native.HostWorker.start.__func__
    mode = {"worker": "worker"}
    native.HostWorker.start = classmethod(lambda cls, seconds, helpers=0: None if mode["worker"] == "no worker" else
                                          start(cls, seconds, helpers if mode["worker"] == "worker" else 0))
    modes = ("worker", "no helpers", "no worker")
    backend = GpuBackend(WgpuRuntime())
    for n in [int(a) for a in args] or [20, 22]:
        inst = zk_instance(n)
        tables = P3Tables(inst.columns, orient="columns", params=inst.config.inner.params, field=KOALABEAR,
                          layout="prefix", backend=backend)
        canonical = inst.canonical_points()
        prover = ZkBackendProver(backend, inst.config, KOALABEAR)
        times = {"plain": [], **{name: [] for name in modes}}
        for i in range(4 + runs):
            start_at = time.perf_counter()
            tables.prove(inst.spec.protocol.batches, canonical)
            spent = {"plain": time.perf_counter() - start_at}
            for name in modes[::1 if i % 2 else -1]:
                mode["worker"] = name
                start_at = time.perf_counter()
                prover.prove(inst.polynomial, inst.statement_points, mask_rng(None))
                spent[name] = time.perf_counter() - start_at
            if i >= 4:
                for name, seconds in spent.items():
                    times[name].append(1e3 * seconds)
        plain = statistics.median(times["plain"])
        bits = inst.config.final_pow_bits
        where = "the host's: the worker" if bits <= HOST_GRIND_BITS else "the device's: no worker either way"
        print(f"n={n} (final search {bits} bits, {where}) plain {plain:.2f} ms  " + "  ".join(
            f"{name} {statistics.median(times[name]):.2f} ms ({statistics.median(times[name]) / plain:.3f}x)"
            for name in modes), flush=True)
        tables.close()


if __name__ == "__main__":
    main()
