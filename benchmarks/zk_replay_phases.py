"""Where a replayed hiding proof's wall time goes on a GPU: ``ZkBackendProver`` on a wgpu ``GpuBackend`` (its one
launch program, ``zk/device_opening.py``; KoalaBear, one column of 2^n, upstream's example at rate 2, the
instance of ``benchmarks.zk_backend_prover``), with timers, no profiler, around the replay's steps: the forks'
keys drawn, each recorded program run (its writes, encoding and submissions, and the wait for its proof region,
shown apart), the host absorbing the blinded vectors and, for a short final proof of work, grinding it and drawing
the positions, and resolving each session's part of the proof (the first's while the device runs the second
session: its time is inside that program's). Per n: 3 untimed proofs
(the third is the first replay), then 5 timed, one column each. Nothing here asserts a time.

Usage: python3 -m benchmarks.zk_replay_phases [N ...]   (default 20)
"""
import sys
import time

from benchmarks.zk_instance import zk_instance

from whirgpu.backends.gpu import GpuBackend, drivers
from whirgpu.field import KOALABEAR
from whirgpu.native import chacha, prune
from whirgpu.native.permute import build_now
from whirgpu.profiles.p3_whir.zk import device_inputs, device_opening, device_run, host_draws
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.randomness import mask_rng
from whirgpu.runtime.wgpu_rt import WgpuRuntime, encode

seconds: dict = {}


def timed(owner, name: str, label: str) -> None:
    inner = getattr(owner, name)

    def call(*args, **kwargs):
        start = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start

    setattr(owner, name, call)


timed(device_inputs.DeviceInputs, "draw", "the forks' keys")
timed(device_opening.DeviceOpening, "_run_program", "the programs run (all below)")
timed(encode, "encode", "  encoding and submitting")
def timed_wait(owner, name: str, label: str) -> None:
    """``owner.name`` returns a function that waits: that wait timed."""
    inner = getattr(owner, name)

    def call(*args, **kwargs):
        wait = inner(*args, **kwargs)

        def waited(*pick):
            start = time.perf_counter()
            try:
                return wait(*pick)
            finally:
                seconds[label] = seconds.get(label, 0.0) + time.perf_counter() - start

        return waited

    setattr(owner, name, call)


timed(drivers.Drivers, "read", "  waiting for the proof regions")
timed_wait(drivers.Drivers, "read_later", "  waiting for the proof regions")
timed(device_opening.DeviceOpening, "_second_inputs", "absorbing the blinded vectors (and drawing)")
timed(host_draws.HostDraws, "draw", "  the host's proof of work and positions")
timed(host_draws.PendingDraws, "draw", "  the host's proof of work and positions")  # a replay's, made ready ahead
timed(device_run.OpeningRun, "resolve_first", "  resolving the first session's part")
timed(device_run.OpeningRun, "resolve_queries", "resolving the second session's part")
timed(ZkBackendProver, "prove", "the proof")

build_now()
chacha.build_now()
prune.build_now()  # and the provers' compiled multiproof pruning
backend = GpuBackend(WgpuRuntime())
for n in [int(a) for a in sys.argv[1:]] or [20]:
    instance = zk_instance(n)
    prover = ZkBackendProver(backend, instance.config, KOALABEAR)
    for _ in range(3):
        prover.prove(instance.polynomial, instance.statement_points, mask_rng(None))
    runs = []
    for _ in range(5):
        seconds.clear()
        prover.prove(instance.polynomial, instance.statement_points, mask_rng(None))
        assert prover.last_path == "one session", prover.last_path
        runs.append(dict(seconds))
    for label in runs[0]:
        print(f"n={n} {label:36s} " + " ".join(f"{run.get(label, 0.0) * 1e3:6.2f}" for run in runs) + " ms")
