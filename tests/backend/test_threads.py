"""One Prover shared by threads: concurrent proofs queue on the backend's ``proof_lock`` and every proof is
byte-identical to the one-by-one proof; a second ``begin_proof`` on a busy GPU backend is a ``ProverBusy``
(a ``WhirGpuError``), checked and taken atomically."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.base import ProofShape
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ProverBusy, WhirGpuError
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.verifier import new_challenger
from whirgpu.protocol.proof_shape import proof_shape
from whirgpu.profiles.whir_p3_metal.serialize import dump
from whirgpu.protocol.transcript import HostTranscript

from .conftest import open_runtime

N = 10
PARAMS = ProtocolParameters.default(num_variables=N, folding_factor=2, starting_log_inv_rate=1)


@pytest.mark.parametrize("name,mul", [("wgpu", "u64"), ("msl-cpu", "mulhi")])
def test_four_threads_share_one_prover(name, mul):
    prover = Prover(PARAMS, backend=GpuBackend(open_runtime(name, mul)))
    instances = [random_canonical_instance(N, seed) for seed in range(4)]
    expected = [dump(prover.prove(*instance), "binary") for instance in instances]
    proofs_per_thread = 25 if name == "wgpu" else 5  # msl-cpu proofs take seconds

    def work(t: int) -> list[bytes]:
        return [dump(prover.prove(*instances[(t + i) % 4]), "binary") for i in range(proofs_per_thread)]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(work, range(4)))
    for t, proofs in enumerate(results):
        assert proofs == [expected[(t + i) % 4] for i in range(proofs_per_thread)], f"thread {t}"


def test_a_busy_backend_refuses_a_second_proof():
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    config = Prover(PARAMS, backend="cpu").config
    shape: ProofShape = proof_shape(config, 0)
    points = np.zeros((0, N, 4), np.uint32)
    backend.begin_proof(shape, HostTranscript(new_challenger(config)), points)
    with pytest.raises(ProverBusy, match="already being built") as caught:
        backend.begin_proof(shape, HostTranscript(new_challenger(config)), points)
    assert isinstance(caught.value, WhirGpuError)
    backend.abort_proof()
    backend.begin_proof(shape, HostTranscript(new_challenger(config)), points)  # free again
    backend.abort_proof()
