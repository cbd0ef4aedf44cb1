"""Kernel by kernel, one hiding proof against the same proof without zero knowledge: ``ZkBackendProver`` and
``P3Tables(..., layout="prefix")`` on one wgpu ``GpuBackend`` (KoalaBear, one column of 2^n, rate 2), each after
untimed warm-ups, with GPU timestamps around every dispatch (``set_profiling``: one compute pass per dispatch,
so the sums exceed an unprofiled proof's GPU time). Per kernel label: summed ms and launches; then the launches
over 0.2 ms in order. Needs ``timestamp-query``. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_kernels [N ...]   (default 20 24)
"""
import collections
import sys

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native.permute import build_now
from whirgpu.profiles.p3_whir.tables.api import P3Tables
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.runtime.wgpu_rt import WgpuRuntime


def profiled(rt, prove, warm: int, title: str, top: int) -> None:
    """``warm`` untimed calls of ``prove``, then one with a timestamp around every dispatch; print the sums."""
    for _ in range(warm):
        prove()
    rt.set_profiling(True)
    rt.kernel_times()
    prove()
    times = rt.kernel_times()
    rt.set_profiling(False)
    spent, launches = collections.Counter(), collections.Counter()
    for label, ns in times:
        spent[label] += ns
        launches[label] += 1
    print(f"== {title}: {sum(spent.values()) / 1e6:.2f} ms GPU in {len(times)} dispatches")
    for label, ns in spent.most_common(top):
        print(f"  {label:36s} {ns / 1e6:8.3f} ms {launches[label]:5d}")
    print("  launches over 0.2 ms:", [(label.split(".")[-1], round(ns / 1e6, 2)) for label, ns in times if ns > 2e5],
          flush=True)


build_now()
chacha.build_now()
prune.build_now()  # and the provers' compiled multiproof pruning
field = KOALABEAR
rt = WgpuRuntime()
backend = GpuBackend(rt)
for n in [int(a) for a in sys.argv[1:]] or [20, 24]:
    inst = zk_instance(n)
    spec, config, columns = inst.spec, inst.config, inst.columns
    poly, zpoints = inst.polynomial, inst.statement_points
    zk = ZkBackendProver(backend, config, field)
    profiled(rt, lambda: zk.prove(poly, zpoints, mask_rng(None)), 2, f"hiding n={n}", 25)
    tables = P3Tables(list(columns), orient="columns", params=config.inner.params, field=field, layout="prefix",
                      backend=backend)
    canonical = inst.canonical_points()
    profiled(rt, lambda: tables.prove(spec.protocol.batches, canonical), 3, f"plain n={n}", 12)
