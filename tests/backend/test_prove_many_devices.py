"""``prove_many`` over several devices (``whirgpu.many``): the proofs come back in input order, byte for byte what
one prover makes, whether the devices are backends given (two on one adapter here: lavapipe has one) or "all"
adapters; a failing instance raises in its turn after the proofs before it."""

from __future__ import annotations

import pytest

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ConfigError
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import dump

from .conftest import open_runtime

PARAMS = ProtocolParameters.default(num_variables=10, folding_factor=2, starting_log_inv_rate=1)
INSTANCES = [random_canonical_instance(10, seed) for seed in range(7)]


def expected_proofs() -> list:
    """The numpy reference's proofs of INSTANCES, serialized."""
    prover = Prover(PARAMS, backend="cpu")
    return [dump(prover.prove(*instance), "binary") for instance in INSTANCES]


@pytest.fixture(scope="module")
def expected():
    return expected_proofs()


@pytest.mark.parametrize("name,mul", [("wgpu", "u64"), ("dawn", "emulated")])
def test_given_backends_in_input_order(name, mul, expected):
    backends = [GpuBackend(open_runtime(name, mul)) for _ in range(2)]
    prover = Prover(PARAMS, backend=backends[0])
    got = [dump(p, "binary") for p in prover.prove_many((i for i in INSTANCES), devices=backends)]
    assert got == expected


def test_all_adapters(expected):
    prover = Prover(PARAMS, backend=GpuBackend(open_runtime("wgpu", "u64")))
    assert [dump(p, "binary") for p in prover.prove_many(INSTANCES, devices="all")] == expected


def test_a_bad_instance_raises_in_its_turn(expected):
    backends = [GpuBackend(open_runtime("wgpu", "u64")) for _ in range(2)]
    prover = Prover(PARAMS, backend=backends[0])
    bad = (INSTANCES[0][0][:10], INSTANCES[0][1])
    got = []
    with pytest.raises(ConfigError, match="entries"):
        for proof in prover.prove_many(INSTANCES[:3] + [bad] + INSTANCES[3:], devices=backends):
            got.append(dump(proof, "binary"))
    assert got == expected[:3]
    with pytest.raises(ConfigError, match="devices must be"):
        next(prover.prove_many(INSTANCES, devices=[]))
    with pytest.raises(ConfigError, match="needs a wgpu or dawn backend"):
        next(Prover(PARAMS, backend="cpu").prove_many(INSTANCES, devices="all"))
