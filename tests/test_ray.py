"""Provers as Ray actors on a local Ray cluster (two CPUs, no GPU: the actors prove on the cpu backend): the
proofs come back in input order, byte for byte what one ``Prover`` makes; a batch on one actor goes through
``prove_many``."""

from __future__ import annotations

import pytest

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import dump

ray = pytest.importorskip("ray", reason="the ray extra (pip install 'ray>=2.9') is part of the test extra")

PARAMS = ProtocolParameters.default(num_variables=8, folding_factor=2, starting_log_inv_rate=1)
INSTANCES = [random_canonical_instance(8, seed) for seed in range(5)]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_actors_prove_in_input_order(cluster):
    from whirgpu.many.ray import ProverActor, prove_with_ray

    prover = Prover(PARAMS, backend="cpu")
    expected = [dump(prover.prove(*instance), "binary") for instance in INSTANCES]
    got = [dump(p, "binary") for p in prove_with_ray(PARAMS, iter(INSTANCES), actors=2, backend="cpu")]
    assert got == expected
    actor = ProverActor.remote(PARAMS, "cpu")
    assert ray.get(actor.backend_name.remote()).startswith("cpu")
    assert ray.get(actor.prove_batch.remote(INSTANCES[:2])) == expected[:2]
