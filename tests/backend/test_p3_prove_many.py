"""``P3Prover`` has ``Prover``'s surface: ``prove_many`` (proofs in flight, every device, worker processes) gives
byte for byte the documents ``prove`` makes one by one, drawn and prescribed points mixed, on the cpu backend and
on every GPU runtime; a bad instance is a ConfigError in its turn; ``close()``, ``closed`` and ``with`` release a
backend the prover opened and leave one passed in; ``storage`` and ``device`` are ``Prover``'s."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import BackendUnavailable, ConfigError
from whirgpu.field import KOALABEAR
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.p3_whir.config import P3Parameters
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.soundness import SoundnessType

from .conftest import open_runtime

N = 10
PARAMS = P3Parameters(40, 0, Constant(3), SoundnessType.CapacityBound, 1)
_RNG = np.random.default_rng(7)
TABLES = [_RNG.integers(0, KOALABEAR.P, 1 << N, dtype=np.uint32) for _ in range(5)]
POINTS = _RNG.integers(0, KOALABEAR.P, (2, N, 4))
# drawn and prescribed points mixed, so that proofs in flight differ in their number of drawn openings
INSTANCES = [(TABLES[0], None), (TABLES[1], POINTS), (TABLES[2], None), (TABLES[3], POINTS[:1]), (TABLES[4], None)]


def _one_by_one(prover, num_openings: int = 2) -> list[str]:
    return [(prover.prove(t, num_openings) if p is None else prover.prove(t, points=p)).dumps()
            for t, p in INSTANCES]


@pytest.fixture(scope="module")
def expected():
    return _one_by_one(P3Prover(N, PARAMS, backend="cpu"))


def test_cpu_proves_many_as_one_by_one(expected):
    with P3Prover(N, PARAMS, backend="cpu") as prover:
        assert [d.dumps() for d in prover.prove_many(iter(INSTANCES), num_openings=2)] == expected
        one = [d.dumps() for d in prover.prove_many(INSTANCES[:1])]  # num_openings=1, as prove's default
        assert one == [prover.prove(TABLES[0]).dumps()]


@pytest.mark.parametrize("in_flight", [1, 3])
def test_in_flight_documents_equal_one_by_one(gpu_runtime, in_flight, expected):
    prover = P3Prover(N, PARAMS, backend=GpuBackend(gpu_runtime))
    assert [d.dumps() for d in prover.prove_many(iter(INSTANCES), in_flight, num_openings=2)] == expected
    assert [d.proved.points.shape[0] for d in prover.prove_many(INSTANCES, num_openings=2)] == [2, 2, 2, 1, 2]
    assert _one_by_one(prover) == expected  # the backend is left as it was


def test_a_bad_instance_fails_in_its_turn(expected):
    prover = P3Prover(N, PARAMS, backend=GpuBackend(open_runtime("wgpu", "u64")))
    got = []
    with pytest.raises(ConfigError, match="2\\^10 = 1024 entries"):
        for document in prover.prove_many(INSTANCES[:2] + [(TABLES[0][:100], None)] + INSTANCES[2:],
                                          num_openings=2):
            got.append(document.dumps())
    assert got == expected[:2]
    for wrong, match in (({"in_flight": 0}, "in_flight"), ({"num_openings": 0}, "num_openings")):
        with pytest.raises(ConfigError, match=match):
            next(prover.prove_many(INSTANCES, **wrong))
    assert prover.prove(TABLES[0], 2).dumps() == expected[0]  # nothing left behind


@pytest.mark.parametrize("name,mul", [("wgpu", "u64"), ("dawn", "emulated")])
def test_given_devices_in_input_order(name, mul, expected):
    backends = [GpuBackend(open_runtime(name, mul)) for _ in range(2)]
    prover = P3Prover(N, PARAMS, backend=backends[0])
    assert [d.dumps() for d in prover.prove_many(iter(INSTANCES), devices=backends, num_openings=2)] == expected
    assert [d.dumps() for d in prover.prove_many(INSTANCES, devices="all", num_openings=2)] == expected
    with pytest.raises(ConfigError, match="needs a wgpu or dawn backend"):
        next(P3Prover(N, PARAMS, backend="cpu").prove_many(INSTANCES, devices="all"))


@pytest.mark.parametrize("backend", ["cpu", "wgpu"])
def test_worker_processes_in_input_order(backend, expected):
    if backend == "wgpu":
        backend = GpuBackend(open_runtime("wgpu", "u64"))
    with P3Prover(N, PARAMS, backend=backend) as prover:
        assert [d.dumps() for d in prover.prove_many(iter(INSTANCES), processes=2, num_openings=2)] == expected
        workers = prover._workers[1]
        assert sum(prover.worker_proofs.values()) == len(INSTANCES)
        again = [d.dumps() for d in prover.prove_many(INSTANCES[:2], processes=2, in_flight=1, num_openings=2)]
        assert again == expected[:2] and prover._workers[1] is workers  # the workers stay for the next call
        one = next(prover.prove_many(INSTANCES, processes=2, num_openings=1))
        assert one.dumps() == prover.prove(TABLES[0]).dumps() and prover._workers[1] is not workers
        with pytest.raises(ConfigError, match="processes must be a positive int"):
            next(prover.prove_many(INSTANCES, processes=0))
    assert prover._workers is None  # close() stopped them


def test_close_and_with():
    prover = P3Prover(N, PARAMS, backend="cpu")
    assert (prover.closed, prover.storage, prover.device) == (False, None, None)
    prover.prove(TABLES[0])
    prover.close()
    prover.close()  # idempotent
    assert prover.closed
    for call in (lambda: prover.prove(TABLES[0]), lambda: next(prover.prove_many(INSTANCES))):
        with pytest.raises(BackendUnavailable, match="this P3Prover is closed"):
            call()
    with pytest.raises(BackendUnavailable, match="closed"):
        with prover:
            pass
    with pytest.raises(RuntimeError):
        with P3Prover(N, PARAMS, backend="cpu") as inside:
            raise RuntimeError("inside")
    assert inside.closed


def test_a_given_backend_stays_open_and_an_opened_one_closes():
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with P3Prover(N, PARAMS, backend=backend) as prover:
        assert prover.device is backend.device and prover.storage == backend.storage
    assert backend.rt.device is not None  # the caller's to close
    backend.close()
    with P3Prover(N, PARAMS, backend="wgpu") as prover:
        runtime = prover.backend.rt
    assert runtime.device is None
