"""Where the hiding proof's time goes: ``ZkBackendProver`` on a wgpu ``GpuBackend``, KoalaBear, one column of 2^n
values, upstream's example at starting rate 2 (the instance of ``benchmarks.zk_backend_prover``); per n two
untimed proofs, one timed, one under cProfile (its own time by area first: the waits inside wgpu-native calls,
wgpu-py, each whirgpu package, numpy; then its 70 costliest calls by cumulative time and 30 by own time).
Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_profile [N ...] [--out FILE]   (default 20 24; the profiles to FILE or stdout)
"""

import collections, cProfile, io, pstats, sys, time
from benchmarks.zk_instance import zk_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.runtime.wgpu_rt import WgpuRuntime
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.field import KOALABEAR
from whirgpu.native.permute import build_now
from whirgpu.native import chacha, prune

args = sys.argv[1:]
target = None
if "--out" in args:
    at = args.index("--out")
    target, args = args[at + 1], args[:at] + args[at + 2:]
sizes = [int(a) for a in args] or [20, 24]
build_now()
chacha.build_now()  # the mask generator's compiled keystream
prune.build_now()  # and the provers' compiled multiproof pruning
field = KOALABEAR
backend = GpuBackend(WgpuRuntime())
out = open(target, "w") if target else sys.stdout
for n in sizes:
    inst = zk_instance(n)
    spec, config, columns, points = inst.spec, inst.config, inst.columns, inst.points
    poly, zpoints = inst.polynomial, inst.statement_points
    prover = ZkBackendProver(backend, config, field)
    for _ in range(2):
        prover.prove(poly, zpoints, mask_rng(None))
    start = time.perf_counter()
    prover.prove(poly, zpoints, mask_rng(None))
    plain = time.perf_counter() - start
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    prover.prove(poly, zpoints, mask_rng(None))
    profile.disable()
    profiled = time.perf_counter() - start
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text)
    areas = collections.Counter()
    for (file, _, function), (_, _, own, _, _) in stats.stats.items():
        if function == "proxy_func":  # wgpu-py's wrapper of a wgpu-native call: the call itself (waits included)
            areas["wgpu-native calls (waits included)"] += own
        elif "/wgpu/" in file and "/whirgpu/" not in file:
            areas["wgpu-py"] += own
        elif "/whirgpu/" in file:
            areas["whirgpu/" + "/".join(file.split("/whirgpu/")[1].split("/")[:-1] or ["(top)"])] += own
        elif "numpy" in file:
            areas["numpy (Python)"] += own
        else:
            areas["other"] += own
    print("own time by area (profiled ms): " + ", ".join(f"{name} {t * 1e3:.1f}" for name, t in
                                                         areas.most_common()), file=text)
    stats.sort_stats("cumulative").print_stats(70)
    stats.sort_stats("tottime").print_stats(30)
    print(f"===== n={n} proof {plain * 1e3:.1f} ms, under cProfile {profiled * 1e3:.1f} ms", file=out)
    print(text.getvalue(), file=out, flush=True)
    print(f"n={n} {plain * 1e3:.1f} ms", file=sys.stderr, flush=True)
