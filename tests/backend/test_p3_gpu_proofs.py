"""Whole p3-whir proofs on the GPU backend, on every runtime (``gpu_runtime``: wgpu-native with both multiplies,
Dawn, the MSL twins on msl-cpu): every golden-p3 proof reproduced byte for byte from its instance (commitment,
serde JSON proof, postcard bytes), and random instances of both fields byte-identical to the cpu backend's
proofs, with tables bound whole and in windows, through the user's path (``P3Prover``: canonical words converted
on the device)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.protocol.folding import Constant
from whirgpu.profiles.p3_whir.config import P3Parameters
from whirgpu.profiles.p3_whir.verifier import verify_p3
from whirgpu.protocol.soundness import SoundnessType

from ..protocol.test_p3_prover import PROOFS, check_reproduces


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


@pytest.mark.parametrize("name", PROOFS)
def test_gpu_reproduces_golden(gpu, name):
    check_reproduces(name, gpu)


# (field, n, fold, rate, pow bits, soundness, openings): the fused tail and the plain rounds, several rounds,
# a final phase of several sumcheck rounds, grinding, two openings
RANDOM = [(KOALABEAR, 10, 3, 1, 0, SoundnessType.CapacityBound, 1),
          (BABYBEAR, 11, 4, 2, 0, SoundnessType.CapacityBound, 2),
          (KOALABEAR, 13, 2, 1, 8, SoundnessType.JohnsonBound, 1),
          (BABYBEAR, 9, 5, 1, 6, SoundnessType.CapacityBound, 1)]


@pytest.mark.parametrize("field,n,fold,rate,pow_bits,soundness,openings", RANDOM)
@pytest.mark.parametrize("windows", [False, True], ids=["whole", "windows"])
def test_random_instances_match_cpu(gpu_runtime, field, n, fold, rate, pow_bits, soundness, openings, windows):
    params = P3Parameters(40, pow_bits, Constant(fold), soundness, rate)
    gpu = GpuBackend(gpu_runtime)
    if windows:
        gpu.binding_limit = 1024  # 64 EF entries per binding: the tables' rounds and codewords run in windows
    rng = np.random.default_rng(n * 31 + fold)
    values = rng.integers(0, min(field.P, 1 << 32), 1 << n, dtype=np.uint64)
    documents = [P3Prover(n, params, field, backend=backend).prove(values, openings).to_json()
                 for backend in (CpuBackend(), gpu)]
    assert documents[1] == documents[0]
    proved = P3Prover(n, params, field, backend=gpu).prove(values, openings).proved
    verify_p3(P3Prover(n, params, field, backend="cpu").config, proved.commitment, proved.proof, field,
              num_openings=openings)


def test_non_canonical_input_is_refused_on_the_device(gpu):
    """A word >= KoalaBear's p is refused by the device's range check, naming that field's bound; the backend
    proves again afterwards."""
    from whirgpu.errors import ConfigError

    params = P3Parameters(32, 0, Constant(2), SoundnessType.CapacityBound, 1)
    prover = P3Prover(6, params, KOALABEAR, backend=gpu)
    values = np.zeros(64, np.uint32)
    values[5] = KOALABEAR.P
    with pytest.raises(ConfigError, match="evaluations\\[5\\] = 2130706433 .* \\[0, 2130706433\\)"):
        prover.prove(values)
    values[5] = KOALABEAR.P - 1
    document = prover.prove(values)
    verify_p3(prover.config, document.proved.commitment, document.proved.proof, KOALABEAR)
