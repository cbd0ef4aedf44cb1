"""Where a hiding proof's wall time goes: ``ZkBackendProver`` on a wgpu ``GpuBackend`` (KoalaBear, one column of
2^n, upstream's example at rate 2, the instance of ``benchmarks.zk_backend_prover``), with timers wrapped around
the backend's calls ("gpu.*": a call's whole session, its waits included) and the host's steps ("host.*": the
mask trees and DFTs, the transcript's observations, the mask draws, the ledger, the covector,
the randomness limbs); a call inside another timed call counts in the outer one only; "other (host)" is the
rest. Per n: 2 untimed proofs, then the mean of 5. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_phases [N ...]   (default 20 24)
"""
import collections
import functools
import sys
import time

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native.permute import build_now
from whirgpu.profiles.p3_whir.zk import backend_prover, base_case, oracles, prover, sumcheck
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.runtime.wgpu_rt import WgpuRuntime

GPU_CALLS = ["masked_rounds", "code_switch", "commit", "interleave_columns", "evaluate_points", "eq_weights",
             "add_constraint_weights", "open_rows", "grind", "upload", "upload_canonical", "download", "univariate",
             "release"]
seconds, calls, depth = collections.Counter(), collections.Counter(), [0]


def timed(owner, name: str, label: str) -> None:
    """Replace ``owner.name`` by a timer (counted only when no other timed call is running)."""
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        if depth[0]:
            return inner(*args, **kwargs)
        depth[0] += 1
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            seconds[label] += time.perf_counter() - start
            calls[label] += 1
            depth[0] -= 1

    setattr(owner, name, wrapper)


for call in GPU_CALLS:
    timed(GpuBackend, call, "gpu." + call)
timed(oracles.Committed, "__init__", "host.mask_tree")
timed(DuplexChallenger, "observe_many", "host.observe")
timed(DuplexChallenger, "sample_ef", "host.sample")
for module in (backend_prover, sumcheck, base_case):
    for name in ("random_ef", "random_base"):
        if hasattr(module, name):
            timed(module, name, "host.rng")
    if hasattr(module, "mask_matrix"):
        timed(module, "mask_matrix", "host.mask_dft")
timed(prover.MaskLedger, "record_batch", "host.ledger")
timed(prover.MaskLedger, "push_switch_mask", "host.ledger")
timed(backend_prover, "switch_covector", "host.covector")
timed(backend_prover, "fold_limbs", "host.fold_limbs")

build_now()
chacha.build_now()
prune.build_now()  # and the provers' compiled multiproof pruning
field = KOALABEAR
backend = GpuBackend(WgpuRuntime())
runs = 5
for n in [int(a) for a in sys.argv[1:]] or [20, 24]:
    inst = zk_instance(n)
    spec, config, columns, points = inst.spec, inst.config, inst.columns, inst.points
    poly, zpoints = inst.polynomial, inst.statement_points
    zk = backend_prover.ZkBackendProver(backend, config, field)
    for _ in range(2):
        zk.prove(poly, zpoints, mask_rng(None))
    seconds.clear()
    calls.clear()
    start = time.perf_counter()
    for _ in range(runs):
        zk.prove(poly, zpoints, mask_rng(None))
    total = (time.perf_counter() - start) / runs * 1e3
    print(f"== n={n}: {total:.1f} ms per proof")
    for label, spent in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"  {label:28s} {spent / runs * 1e3:8.2f} ms  {calls[label] / runs:6.1f} calls")
    print(f"  {'other (host)':28s} {total - sum(seconds.values()) / runs * 1e3:8.2f} ms", flush=True)
