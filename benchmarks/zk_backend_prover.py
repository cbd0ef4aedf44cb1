"""The hiding proof on the GPU against the same proof without zero knowledge (issue 40, item 5): per n,
``ZkBackendProver`` on a wgpu ``GpuBackend`` (the hiding prover's size-2^n work on the backend, host-valued calls)
and ``P3Tables(..., layout="prefix", backend="wgpu")``, one column of 2^n values, KoalaBear, upstream's example at
starting rate 2, the oracle's instance (SmallRng(1)); the compiled Poseidon2 built first (``whirgpu warmup`` does
the same); 2 warm-ups then R timed runs of each (default 7), alternating; medians. At n <= 14
the hiding proof is also checked byte for byte against the numpy reference (same mask seed). Nothing here asserts
a time.

Usage: python3 -m benchmarks.zk_backend_prover [--runs R] [N ...]   (default 20 22 24)
"""

import statistics, sys, time

from benchmarks.zk_instance import zk_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.runtime.wgpu_rt import WgpuRuntime
from whirgpu.profiles.p3_whir.tables.api import P3Tables
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.profiles.p3_whir.zk.prover import zk_prove
from whirgpu.profiles.p3_whir.zk.format import zk_proof_to_postcard
from whirgpu.field import KOALABEAR
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.native.permute import build_now
from whirgpu.native import chacha, prune

args = sys.argv[1:]
runs = 7
if args[:1] == ["--runs"]:
    runs, args = int(args[1]), args[2:]
sizes = [int(a) for a in args] or [20, 22, 24]
build_now()  # the compiled Poseidon2 (transcript, host Merkle trees) loaded, as after `whirgpu warmup`
chacha.build_now()  # and the mask generator's compiled keystream
prune.build_now()  # and the provers' compiled multiproof pruning
warm = 2
field = KOALABEAR
backend = GpuBackend(WgpuRuntime())
for n in sizes:
    inst = zk_instance(n)
    spec, config, inner = inst.spec, inst.config, inst.config.inner
    canonical = inst.canonical_points()
    tables = P3Tables(inst.columns, orient="columns", params=inner.params, field=field, layout="prefix", backend="wgpu")
    poly, zpoints = inst.polynomial, inst.statement_points
    prover = ZkBackendProver(backend, config, field)
    plain, zk = [], []
    for i in range(warm + runs):
        t0 = time.perf_counter(); tables.prove(spec.protocol.batches, canonical); t1 = time.perf_counter()
        prover.prove(poly, zpoints, mask_rng(None)); t2 = time.perf_counter()
        if i >= warm:
            plain.append(1e3 * (t1 - t0)); zk.append(1e3 * (t2 - t1))
    same = None
    if n <= 14:
        a = prover.prove(poly, zpoints, StdRng.seed_from_u64(3)); b = zk_prove(config, field, poly, zpoints, StdRng.seed_from_u64(3))
        same = zk_proof_to_postcard(a[1]) == zk_proof_to_postcard(b[1])
    p, z = statistics.median(plain), statistics.median(zk)
    print(f"n={n} rate={inner.params.starting_log_inv_rate} fold={inner.folding_schedule[0]} plain {p:.1f} ms  zk {z:.1f} ms  "
          f"ratio {z / p:.2f}x  runs plain {[round(x, 1) for x in plain]} zk {[round(x, 1) for x in zk]} same_as_ref={same}", flush=True)
    tables.close()
