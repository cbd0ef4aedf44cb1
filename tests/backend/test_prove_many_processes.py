"""``prove_many(processes=K)`` (``whirgpu.many.processes``): worker processes, each with a prover on the same device
kind (reopened from a ``BackendRecipe``), yield byte for byte the proofs one prover makes, in input order; the
workers stay for the next call and stop with ``close``/``stop_workers``; a bad instance raises its ConfigError in
its turn; a worker that cannot open its device is a BackendUnavailable naming why (never a proof from elsewhere)."""

from __future__ import annotations

import functools
from multiprocessing import shared_memory

import numpy as np
import pytest

from whirgpu.many import processes as processes
from whirgpu.api import Prover
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import BackendUnavailable, ConfigError
from whirgpu.many.processes import BackendRecipe, ProcessProvers
from whirgpu.profiles.whir_p3_metal.serialize import dump

from .conftest import open_runtime
from .test_prove_many_devices import INSTANCES, PARAMS, expected_proofs  # the same instances and proofs


@pytest.fixture(scope="module")
def expected():
    return expected_proofs()


@pytest.mark.parametrize("name,mul", [("wgpu", "u64"), ("dawn", "emulated"), ("msl-cpu", "mulhi")])
def test_worker_processes_prove_in_input_order(name, mul, expected):
    backend = GpuBackend(open_runtime(name, mul))
    with Prover(PARAMS, backend=backend) as prover:
        got = [dump(p, "binary") for p in prover.prove_many((i for i in INSTANCES), processes=2)]
        assert got == expected
        pool = prover._workers[1]
        assert BackendRecipe.of(backend) in pool.recipes and pool.workers == 2
        again = [dump(p, "binary") for p in prover.prove_many(INSTANCES[:3], processes=2, in_flight=1)]
        assert again == expected[:3] and prover._workers[1] is pool  # the workers stay for the next call
        prover.stop_workers()
        assert prover._workers is None and pool._pool is None
        prover.stop_workers()  # idempotent
        assert dump(prover.prove(*INSTANCES[0]), "binary") == expected[0]  # the prover itself still proves


@pytest.mark.parametrize("backend", ["cpu", "wgpu"])
def test_tables_through_shared_memory(backend, expected, monkeypatch):
    """Every table through a shared-memory block (the threshold lowered to 1 byte), blocks reused from proof to
    proof: the same bytes; a float table is refused by the worker's prover as in this process."""
    monkeypatch.setattr(processes, "SHARE_BYTES", 1)
    if backend == "wgpu":
        backend = GpuBackend(open_runtime("wgpu", "u64"))
    with Prover(PARAMS, backend=backend) as prover:
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES, processes=2, in_flight=1)] == expected
        blocks = prover._workers[1]._blocks
        assert 1 <= len(blocks.free) <= 2  # at most one block per proof in flight, reused
        with pytest.raises(ConfigError):
            next(prover.prove_many([(INSTANCES[0][0].astype(np.float64), INSTANCES[0][1])], processes=2,
                                   in_flight=1))
        names = [b.name for b in blocks.free]
    assert blocks.free == []  # close() unlinked them
    for name in names:
        with pytest.raises(FileNotFoundError):
            shared_memory.SharedMemory(name=name)


def test_the_recipe_reopens_the_device_kind():
    backend = GpuBackend(open_runtime("wgpu", "emulated", max_binding_bytes=1 << 12), storage="private")
    recipe = BackendRecipe.of(backend)
    assert recipe == BackendRecipe("wgpu", "emulated", None, "private", 1 << 12)
    reopened = recipe.open()
    try:
        assert (reopened.name, reopened.rt.mul, reopened.storage, reopened.rt.max_binding_bytes) == \
            ("wgpu", "emulated", "private", 1 << 12)
    finally:
        reopened.close()
    assert BackendRecipe.of(backend, adapter_index=0).adapter_index == 0
    assert BackendRecipe.of(Prover(PARAMS, backend="cpu").backend) == BackendRecipe("cpu")


def test_a_bad_instance_raises_in_its_turn(expected):
    bad = (INSTANCES[0][0][:100], INSTANCES[0][1])
    with Prover(PARAMS, backend="cpu") as prover:
        got = []
        with pytest.raises(ConfigError, match="2\\^10 = 1024 entries"):
            for proof in prover.prove_many([INSTANCES[0], INSTANCES[1], bad, INSTANCES[2]], processes=1):
                got.append(dump(proof, "binary"))
        assert got == expected[:2]
        many = prover.prove_many(INSTANCES, processes=1)
        assert dump(next(many), "binary") == expected[0]
        many.close()  # abandoned: the rest is cancelled or dropped, the workers stay usable
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[3:5], processes=1)] == expected[3:5]
        for wrong in (0, -1, True, 1.5):
            with pytest.raises(ConfigError, match="processes must be a positive int"):
                next(prover.prove_many(INSTANCES, processes=wrong))
        with pytest.raises(ConfigError, match="in_flight"):
            next(prover.prove_many(INSTANCES, processes=1, in_flight=0))
        with pytest.raises(ConfigError, match="devices"):
            next(prover.prove_many(INSTANCES, processes=1, devices="some"))


def test_a_worker_without_its_device_says_why():
    workers = ProcessProvers(functools.partial(Prover, PARAMS), [BackendRecipe("wgpu", adapter_index=99)], 1)
    try:
        with pytest.raises(BackendUnavailable, match="there is no adapter 99"):
            next(workers.prove(INSTANCES[:1], 1))
    finally:
        workers.close()
    with pytest.raises(BackendUnavailable, match="closed"):
        next(workers.prove(INSTANCES[:1], 1))


def test_a_gpu_buffer_cannot_travel_to_a_worker():
    runtime = open_runtime("wgpu", "u64")
    buffer = runtime.device.create_buffer(size=4 << 10, usage=runtime.wgpu.BufferUsage.STORAGE)
    with Prover(PARAMS, backend="cpu") as prover:
        with pytest.raises(ConfigError, match="GPU buffer cannot be sent to worker processes"):
            next(prover.prove_many([(buffer, INSTANCES[0][1])], processes=1))


def test_a_killed_worker_is_an_error_and_the_next_call_starts_new_ones(expected):
    import os
    import signal

    with Prover(PARAMS, backend="cpu") as prover:
        assert dump(next(prover.prove_many(INSTANCES, processes=1)), "binary") == expected[0]
        workers = prover._workers[1]
        for pid in list(workers._pool._processes):
            os.kill(pid, signal.SIGKILL)
        with pytest.raises(BackendUnavailable, match="worker process stopped"):
            list(prover.prove_many(INSTANCES, processes=1))
        assert workers.broken
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[:2], processes=1)] == expected[:2]
        assert prover._workers[1] is not workers
