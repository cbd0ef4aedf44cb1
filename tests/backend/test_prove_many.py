"""``Prover.prove_many``: proofs in flight (the next one recorded while the device runs the last) are byte for byte
the proofs ``prove`` makes one by one, on every runtime and on the cpu backend; a bad instance is a ConfigError in
its turn after the good ones before it; an abandoned iteration lets other threads prove again. These take
``batch=1`` (each proof in launches of its own, the subject here); batches of proofs in the same launches are
tests/backend/test_instanced.py's."""

from __future__ import annotations

import threading

import pytest

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ConfigError
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import dump

PARAMS = ProtocolParameters.default(num_variables=10, folding_factor=2, starting_log_inv_rate=1)
INSTANCES = [random_canonical_instance(10, seed) for seed in range(5)]


def _one_by_one(prover) -> list[bytes]:
    return [dump(prover.prove(*instance), "binary") for instance in INSTANCES]


@pytest.mark.parametrize("in_flight", [1, 2, 3])
def test_in_flight_proofs_equal_one_by_one(gpu_runtime, in_flight):
    prover = Prover(PARAMS, backend=GpuBackend(gpu_runtime))
    expected = _one_by_one(prover)
    assert [dump(p, "binary") for p in prover.prove_many(iter(INSTANCES), in_flight, batch=1)] == expected
    assert _one_by_one(prover) == expected  # the backend is left as it was


def test_cpu_backend_proves_many_one_at_a_time():
    prover = Prover(PARAMS, backend="cpu")
    assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[:2])] == \
        [dump(prover.prove(*instance), "binary") for instance in INSTANCES[:2]]


def test_a_bad_instance_fails_in_its_turn(gpu_runtime):
    prover = Prover(PARAMS, backend=GpuBackend(gpu_runtime))
    good = _one_by_one(prover)[:2]
    bad = (INSTANCES[0][0][:100], INSTANCES[0][1])
    got = []
    with pytest.raises(ConfigError, match="2\\^10 = 1024 entries"):
        for proof in prover.prove_many([INSTANCES[0], INSTANCES[1], bad, INSTANCES[2]], batch=1):
            got.append(dump(proof, "binary"))
    assert got == good
    with pytest.raises(ConfigError, match="in_flight"):
        next(prover.prove_many(INSTANCES, in_flight=0))
    assert dump(prover.prove(*INSTANCES[0]), "binary") == good[0]  # nothing left behind


def test_an_abandoned_iteration_frees_the_prover(gpu_runtime):
    prover = Prover(PARAMS, backend=GpuBackend(gpu_runtime))
    expected = _one_by_one(prover)
    many = prover.prove_many(INSTANCES, batch=1)
    assert dump(next(many), "binary") == expected[0]
    many.close()  # a proof still in flight is read back and dropped
    done = []
    worker = threading.Thread(target=lambda: done.append(dump(prover.prove(*INSTANCES[1]), "binary")))
    worker.start()
    worker.join(60)
    assert done == [expected[1]]
