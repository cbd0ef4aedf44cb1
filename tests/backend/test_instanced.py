"""``prove_many``'s instanced replays (``backends.gpu.instanced``): K proofs of one shape in the same launches give
byte for byte the proofs of the numpy reference (the cpu backend), on wgpu-native (u64 multiply) and Dawn (the
emulated one, and its aliasing rule), with 2-D grids, batches cut short (the last one padded), shapes changing
mid-stream, proofs in flight, and for the p3-whir profile (KoalaBear); a bad table or a wrong-length instance
fails in its turn; a device whose limits fit one instance proves one by one; the MSL runtimes, which run no
instanced launches, prove as before. (wgpu-native's emulated multiply compiles the same WGSL Dawn runs; its
instanced kernels are left out to keep CI's cold compiles short.)"""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.gpu import instanced
from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import dump

from .conftest import open_runtime

N = 10
PARAMS = ProtocolParameters.default(num_variables=N, folding_factor=2, starting_log_inv_rate=1)
INSTANCES = [random_canonical_instance(N, seed) for seed in range(9)]
WEBGPU = [("wgpu", "u64"), ("dawn", "emulated")]


@pytest.fixture(scope="module")
def expected() -> list[bytes]:
    prover = Prover(PARAMS, backend="cpu")
    return [dump(prover.prove(*instance), "binary") for instance in INSTANCES]


@pytest.fixture(scope="module", params=WEBGPU, ids=[f"{name}-{mul}" for name, mul in WEBGPU])
def webgpu(request):
    name, mul = request.param
    return open_runtime(name, mul, max_groups_per_dim=7)  # 2-D grids from 8 workgroups on, at most 7 instances


def _kept(backend) -> list[int]:
    """The instanced programs kept (none once a prove_many has ended: their memory is returned)."""
    return sorted(count for program in backend.replay.programs.values() for count in program.instanced)


@pytest.mark.parametrize("batch, in_flight, runs", [(4, 1, [(4, 4), (3, 4)]), (4, 2, [(4, 4), (3, 4)]),
                                                    (16, 2, [(7, 7)])])  # 7: all there are, and the z limit
def test_batches_equal_the_reference(webgpu, expected, batch, in_flight, runs):
    backend = GpuBackend(webgpu)
    with Prover(PARAMS, backend=backend) as prover:
        got = [dump(p, "binary") for p in prover.prove_many(iter(INSTANCES), in_flight, batch=batch)]
        assert got == expected
        # two proofs one by one (the first fills the caches, the second is recorded), then batches of `batch`:
        # (proofs, instances) 4 + 3 (padded to 4), or all 7 at once
        assert backend.replay.batches == runs
        assert backend.replays == 7
        assert _kept(backend) == []  # the batches' buffers went back when the iteration ended
        again = [dump(p, "binary") for p in prover.prove_many(INSTANCES[2:5], batch=batch)]
        assert again == expected[2:5]  # a recorded shape batches from its first proof on
        assert backend.replay.batches == runs + [(3, 3)]
        assert dump(prover.prove(*INSTANCES[8]), "binary") == expected[8]  # one by one afterwards


def test_shapes_changing_mid_stream(webgpu):
    """A batch holds one shape: a different number of points ends it (and starts the other shape's)."""
    mixed = [(table, points if i % 3 else points[:1]) for i, (table, points) in enumerate(INSTANCES)]
    reference = Prover(PARAMS, backend="cpu")
    want = [dump(reference.prove(*instance), "binary") for instance in mixed + mixed]
    backend = GpuBackend(webgpu)
    with Prover(PARAMS, backend=backend) as prover:
        assert [dump(p, "binary") for p in prover.prove_many(mixed + mixed, batch=3)] == want
        runs = backend.replay.batches
        assert runs and all(2 <= proofs <= 3 for proofs, _ in runs)  # batches of one shape each


def test_a_bad_table_fails_in_its_turn(webgpu, expected):
    bad_table = INSTANCES[5][0].copy()
    bad_table[17] = P  # one past the largest canonical value: the device's range check finds it
    instances = INSTANCES[:5] + [(bad_table, INSTANCES[5][1])] + INSTANCES[6:]
    backend = GpuBackend(webgpu)
    with Prover(PARAMS, backend=backend) as prover:
        with pytest.raises(ConfigError) as alone:
            prover.prove(*instances[5])
        got = []
        with pytest.raises(ConfigError) as batched:
            for proof in prover.prove_many(instances, batch=4):
                got.append(dump(proof, "binary"))
        assert str(batched.value) == str(alone.value)
        assert got == expected[:5]
        # the failed proof counted as the shape's first: proof 0 is recorded, 1-4 and 5-8 batched
        assert backend.replay.batches == [(4, 4), (4, 4)] and _kept(backend) == []
        assert dump(prover.prove(*INSTANCES[6]), "binary") == expected[6]  # nothing left behind


def test_a_wrong_length_instance_ends_the_batch_being_filled(webgpu, expected):
    short = (INSTANCES[0][0][:100], INSTANCES[0][1])
    backend = GpuBackend(webgpu)
    with Prover(PARAMS, backend=backend) as prover:
        got = []
        with pytest.raises(ConfigError, match="2\\^10 = 1024 entries"):
            for proof in prover.prove_many(INSTANCES[:5] + [short] + INSTANCES[5:], batch=8):
                got.append(dump(proof, "binary"))
        assert got == expected[:5]  # the three waiting for a full batch were proved first, together
        assert backend.replay.batches == [(3, 3)]


def test_p3_batches_equal_the_reference():
    from whirgpu.field import KOALABEAR
    from whirgpu.profiles.p3_whir.api import P3Prover
    from whirgpu.profiles.p3_whir.config import P3Parameters
    from whirgpu.protocol.folding import Constant
    from whirgpu.protocol.soundness import SoundnessType

    params = P3Parameters(40, 0, Constant(3), SoundnessType.CapacityBound, 1)
    rng = np.random.default_rng(11)
    points = rng.integers(0, KOALABEAR.P, (2, N, 4))
    # drawn openings, then prescribed points: two shapes, each batched
    instances = [(rng.integers(0, KOALABEAR.P, 1 << N, dtype=np.uint32), None) for _ in range(6)] + \
        [(rng.integers(0, KOALABEAR.P, 1 << N, dtype=np.uint32), points) for _ in range(5)]

    def one_by_one(prover):
        return [(prover.prove(t, 2) if p is None else prover.prove(t, points=p)).dumps() for t, p in instances]

    want = one_by_one(P3Prover(N, params, backend="cpu"))
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with P3Prover(N, params, backend=backend) as prover:
        assert [d.dumps() for d in prover.prove_many(instances, num_openings=2, batch=4)] == want
        assert backend.replay.batches == [(4, 4), (3, 3)]  # each shape: 2 one by one, then a batch


def test_batch_1_proves_one_by_one(expected):
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with Prover(PARAMS, backend=backend) as prover:
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[:4], batch=1)] == expected[:4]
        assert backend.replay.batches == []
        for wrong in (0, -2, True, 2.0):
            with pytest.raises(ConfigError, match="instances must be a positive int"):
                next(prover.prove_many(INSTANCES, batch=wrong))
        with pytest.raises(ConfigError, match="batch= applies to proofs on this prover's backend"):
            next(prover.prove_many(INSTANCES, devices=[backend], batch=4))


class _Limits:
    def __init__(self, binding: int, buffer: int, per_dimension: int):
        self.max_storage_binding_size, self.max_buffer_size = binding, buffer
        self.max_workgroups_per_dimension = per_dimension


class _LimitedRuntime:
    def __init__(self, binding: int, buffer: int, per_dimension: int):
        self._limits = _Limits(binding, buffer, per_dimension)

    def limits(self):
        return self._limits


def test_instances_fit_the_device_limits(monkeypatch):
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with Prover(PARAMS, backend=backend) as prover:
        for instance in INSTANCES[:3]:
            prover.prove(*instance)
        program = backend.replay.last_program
        sizes = [b.nbytes for b in program.program.buffers()] + [b.nbytes for b in program.recorded]
        biggest = max(-(-s // instanced.STRIDE_ALIGN) * instanced.STRIDE_ALIGN for s in sizes)

        def count(binding, buffer=1 << 40, wanted=64, per_dimension=65535):
            return instanced.instance_count(program.program, program.recorded,
                                            _LimitedRuntime(binding, buffer, per_dimension), instanced.storage_layout,
                                            wanted)

        assert count(1 << 40) == instanced.MAX_INSTANCES
        assert count(1 << 40, wanted=5) == 5
        assert count(1 << 40, per_dimension=7) == 7  # the instances are the grid's z
        assert count(3 * biggest) == 3
        assert count(1 << 40, buffer=2 * biggest) == 2
        assert count(biggest - 1) == 0
        total = sum(-(-s // instanced.STRIDE_ALIGN) * instanced.STRIDE_ALIGN for s in sizes)
        monkeypatch.setenv("WHIRGPU_MAX_GPU_BYTES", str(5 * total))  # the user's cap bounds a batch's copies
        assert 5 <= count(1 << 40) < instanced.MAX_INSTANCES  # every copy counted at most once in `total`
        monkeypatch.setenv("WHIRGPU_MAX_GPU_BYTES", "4096")
        assert count(1 << 40) == 0


def test_a_device_fitting_one_instance_proves_one_by_one(expected, monkeypatch):
    monkeypatch.setattr(instanced, "MEMORY_BUDGET", 1)  # no instanced program fits
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with Prover(PARAMS, backend=backend) as prover:
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[:5])] == expected[:5]
        assert backend.replay.batches == [] and backend.replays == 3


def test_msl_runs_no_instanced_launches(expected):
    backend = GpuBackend(open_runtime("msl-cpu", "mulhi"))
    with Prover(PARAMS, backend=backend) as prover:
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[:4])] == expected[:4]
        assert backend.replay.batches == [] and backend.replays == 2


def test_fixed_arrays_stay_shared():
    """The round constants (a fixed-size array) are never bound to a buffer the program writes."""
    backend = GpuBackend(open_runtime("wgpu", "u64"))
    with Prover(PARAMS, backend=backend) as prover:
        for instance in INSTANCES[:3]:
            prover.prove(*instance)
        program = backend.replay.last_program
        written = instanced.per_instance_buffers(program.program, program.recorded, instanced.storage_layout)
        assert {id(b) for b in program.recorded} <= written
        shared = [b for b in program.program.buffers() if id(b) not in written]
        assert shared  # twiddles and round constants
        assert np.all([b.nbytes > 0 for b in shared])


def test_a_device_out_of_memory_for_a_batch_proves_one_by_one(expected, monkeypatch):
    from whirgpu.errors import DeviceOutOfMemory

    runtime = open_runtime("wgpu", "u64")
    backend = GpuBackend(runtime)
    with Prover(PARAMS, backend=backend) as prover:
        for instance in INSTANCES[:2]:
            prover.prove(*instance)  # the shape recorded
        program = backend.replay.last_program
        real_alloc, real_free = type(runtime).alloc, type(runtime).free
        allocated, freed, refused = [], [], []

        def alloc(self, nbytes, mode):
            if len(allocated) == 3 and not refused:  # the batch's fourth buffer: the device is full
                refused.append(nbytes)
                raise DeviceOutOfMemory(f"could not allocate {nbytes} bytes (test)")
            allocated.append(real_alloc(self, nbytes, mode))
            return allocated[-1]

        def free(self, buffer):
            freed.append(buffer)
            real_free(self, buffer)

        monkeypatch.setattr(type(runtime), "alloc", alloc)
        monkeypatch.setattr(type(runtime), "free", free)
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[2:7])] == expected[2:7]
        assert refused and backend.replay.batches == [] and program.instance_limit == 1
        assert freed[:3] == allocated[:3]  # what the batch had allocated went back first
        monkeypatch.undo()
        assert [dump(p, "binary") for p in prover.prove_many(INSTANCES[2:5])] == expected[2:5]
        assert backend.replay.batches == []  # the shape is not batched again
