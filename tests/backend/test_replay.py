"""Record once, replay (``backends/gpu/replay.py``): from the third proof of a shape on, a GPU proof is its
recorded launches replayed, and its bytes are the numpy reference's, on every runtime, one by one and in flight,
in both profiles; what changes the launches (limits, the number of points, the profile's openings) records anew;
a bad table is refused by a replay as by a recorded proof; a recording that could not be repeated is dropped."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from tests.backend.conftest import open_runtime
from whirgpu.api import Prover, random_canonical_instance
from whirgpu.backends.program_key import ProgramKey
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.gpu import replay
from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.whir_p3_metal.serialize import dump
from whirgpu.protocol.params import ProtocolParameters

POINTS = [(10, 2, 1), (11, 3, 2), (12, 4, 1)]  # (n, fold, log inverse rate): 1-3 rounds, base and EF openings


def _params(n: int, fold: int, rate: int) -> ProtocolParameters:
    """A small configuration with 8-bit grinds: the numpy reference grinds on the host, and the bits do not change
    what a replay does."""
    return ProtocolParameters.default(n, fold, rate, security_level=60, pow_bits=8)


_REFERENCE: dict = {}


def _reference(params, table: np.ndarray, points: np.ndarray) -> bytes:
    """The numpy reference's proof, once per instance for the whole module (every runtime compares with it)."""
    key = (params, table.tobytes(), np.asarray(points).tobytes(), np.asarray(points).shape)
    if key not in _REFERENCE:
        _REFERENCE[key] = dump(Prover(params, backend="cpu").prove(table, points), "binary")
    return _REFERENCE[key]


def _expected(params, instances) -> list[bytes]:
    return [_reference(params, *instance) for instance in instances]


def _wgpu() -> GpuBackend:
    """wgpu-native with the multiply ``--backend wgpu`` picks (u64 on lavapipe): the pipelines the default tier
    compiles anyway (tests/conftest.py); the emulated multiply replays in test_replayed_proofs_are_the_references."""
    return GpuBackend(open_runtime("wgpu", None))


def _replaying(params, seed: int):
    """A wgpu backend that has proved one instance three times (the third a replay), each the reference's bytes:
    (backend, prover, table, point, the reference's bytes)."""
    table, point = random_canonical_instance(params.num_variables, seed)
    backend = _wgpu()
    prover = Prover(params, backend=backend)
    expected = _reference(params, table, point)
    for _ in range(3):
        assert dump(prover.prove(table, point), "binary") == expected
    return backend, prover, table, point, expected


@pytest.mark.parametrize("point", POINTS, ids=[f"{n}:{k}:{r}" for n, k, r in POINTS])
def test_replayed_proofs_are_the_references(gpu_runtime, point):
    n, fold, rate = point
    params = _params(n, fold, rate)
    instances = [random_canonical_instance(n, seed) for seed in range(4)]
    backend = GpuBackend(gpu_runtime)
    prover = Prover(params, backend=backend)
    assert [dump(prover.prove(*instance), "binary") for instance in instances] == _expected(params, instances)
    assert backend.replays == 2  # the first proof fills the caches, the second is recorded


@pytest.mark.parametrize("in_flight", [2, 3])
def test_replays_in_flight_read_back_their_own_regions(gpu_runtime, in_flight):
    params = _params(10, 2, 1)
    instances = [random_canonical_instance(10, seed) for seed in range(3)]
    backend = GpuBackend(gpu_runtime)
    prover = Prover(params, backend=backend)
    expected = _expected(params, instances)
    got = [dump(p, "binary") for p in prover.prove_many(instances * 3, in_flight, batch=1)]
    assert got == expected * 3
    program, = backend.replay.programs.values()
    assert backend.replays >= 6 and len(program.sets) <= in_flight
    assert not any(region_set.busy for region_set in program.sets)


def test_a_replay_refuses_a_table_with_a_word_past_p():
    """The range check runs in the replayed launches; the message names the new table's index and value."""
    params = _params(10, 2, 1)
    backend = _wgpu()
    prover = Prover(params, backend=backend)
    table, point = random_canonical_instance(10, 3)
    for _ in range(3):
        prover.prove(table, point)
    bad = table.copy()
    bad[77] = P + 5
    with pytest.raises(ConfigError, match=rf"evaluations\[77\] = {P + 5} is not a canonical"):
        prover.prove(bad, point)
    assert backend.replays == 2
    assert dump(prover.prove(table, point), "binary") == _expected(params, [(table, point)])[0]


def test_what_changes_the_launches_records_anew():
    """Another number of points, lowered binding limits, replay turned off: the same bytes as the reference."""
    params = _params(11, 2, 1)
    table, point = random_canonical_instance(11, 1)
    two = np.concatenate([point, point[:, ::-1]])
    backend = _wgpu()
    prover = Prover(params, backend=backend)
    for points in (point, two, point, two):
        for _ in range(3):
            assert dump(prover.prove(table, points), "binary") == _reference(params, table, points)
    assert len(backend.replay.programs) == 2 and backend.replays == 8
    backend.binding_limit = 4096  # split windows: other launches
    assert dump(prover.prove(table, point), "binary") == _reference(params, table, point)
    assert len(backend.replay.programs) == 2  # seen once under these limits: not recorded yet
    backend.replay_enabled = False
    replays = backend.replays
    assert dump(prover.prove(table, two), "binary") == _reference(params, table, two)
    assert backend.replays == replays


def test_programs_are_bounded_and_give_their_regions_back(monkeypatch):
    monkeypatch.setattr(replay, "MAX_PROGRAMS", 1)
    params = _params(10, 2, 1)
    table, point = random_canonical_instance(10, 1)
    backend = _wgpu()
    prover = Prover(params, backend=backend)
    two = np.concatenate([point, point])
    for points in (point, two):
        for _ in range(3):
            prover.prove(table, points)
    program, = backend.replay.programs.values()  # the two-point shape's; the first shape's was dropped
    assert len(list(prover.prove_many([(table, two)] * 4, in_flight=3, batch=1))) == 4  # more region sets
    assert len(program.sets) >= 2
    first_regions = {id(b) for b in program.recorded}
    pooled = {id(b) for free in backend.state.pool.free_lists.values() for b in free}
    assert not first_regions & pooled  # the kept program's regions are its own
    batches = [batch for s in program.sets for _, batch in s.prepared.parts if batch is not None]
    assert batches and all(batch.params is not None for batch in batches)
    backend.close()
    assert backend.replay.programs == {} and backend.state.pool.free_lists == {} and program.sets == []
    assert all(batch.params is None for batch in batches)  # every set closed: its params buffers freed


def test_a_replay_whose_search_misses_proves_again_over_every_nonce(monkeypatch):
    """A recording made with searches that cover no nonce replays into PowRangeExceeded; the prover then proves
    again over the full range (unrecorded), and the bytes are the reference's."""
    from whirgpu.backends import device_transcript

    real = device_transcript.pow_launches
    monkeypatch.setattr(device_transcript, "pow_launches",
                        lambda bits, full_range=False: real(bits, True) if full_range else [])
    backend, _, _, _, _ = _replaying(ProtocolParameters.default(10, 2, 1, pow_bits=4, security_level=30), 2)
    assert backend.replays == 1 and backend.pow_full_range is False


def test_a_recording_that_cannot_be_repeated_is_dropped():
    recorder = replay.Recorder("key")
    first, second = object(), object()
    recorder.dispatch(first, "kernel", [], None, 1)
    recorder.submit(first)
    assert recorder.valid and [type(step).__name__ for step in recorder.program.steps] == ["Dispatch", "Submit"]
    recorder.dispatch(second, "kernel", [], None, 1)
    assert not recorder.valid and recorder.reason == "launches from a second batch"
    recorder = replay.Recorder("key")
    recorder.drop("a host read inside the proof")
    assert not recorder.valid


@pytest.mark.parametrize("field", ["koalabear", "babybear"])
def test_p3_whir_replays_are_the_references(field):
    """Upstream's profile: drawn openings (1, then 2: another shape) and prescribed points."""
    n = 11
    rng = np.random.default_rng(5)
    modulus = 2130706433 if field == "koalabear" else P
    tables = [rng.integers(0, modulus, 1 << n, dtype=np.uint32) for _ in range(3)]
    from whirgpu.profiles.p3_whir.defaults import EXAMPLE_PARAMETERS

    params = dataclasses.replace(EXAMPLE_PARAMETERS, security_level=40, pow_bits=8)  # 8-bit grinds: a quick host
    backend = _wgpu()
    gpu = P3Prover(n, params=params, field=field, backend=backend)
    cpu = P3Prover(n, params=params, field=field, backend="cpu")
    for openings in (1, 2):
        assert [gpu.prove(t, num_openings=openings).dumps() for t in tables] == \
            [cpu.prove(t, num_openings=openings).dumps() for t in tables]
    points = rng.integers(0, 1000, (1, n, 4), dtype=np.uint32)
    assert [gpu.prove(t, points=points).dumps() for t in tables] == [cpu.prove(t, points=points).dumps() for t in tables]
    assert backend.replays == 3 and len(backend.replay.programs) == 3


def test_no_replay_while_a_buffer_it_uses_is_held():
    """A commitment a host-valued primitive returned holds pooled buffers; while it does, proofs of a recorded
    shape are proved unrecorded (the same bytes), and replayed again once it is released."""
    backend, prover, table, point, expected = _replaying(_params(10, 2, 1), 6)
    assert backend.replays == 1
    program, = backend.replay.programs.values()
    held = program.pooled[0]
    for free in backend.state.pool.free_lists.values():  # as a caller holding it would: out of the pool
        if any(b is held for b in free):
            free.remove(held)
    assert dump(prover.prove(table, point), "binary") == expected and backend.replays == 1
    backend.state.pool.free(held)
    assert dump(prover.prove(table, point), "binary") == expected and backend.replays == 2


def test_a_proof_that_may_not_be_recorded_clears_a_stale_request():
    """A request to record (a proof that then failed before it began) is not taken up by the next proof, which
    says itself whether it may be recorded: claims given by the caller, never."""
    from whirgpu.api import random_instance

    params = _params(10, 2, 1)
    backend = _wgpu()
    for _ in range(2):
        backend.record_proof(ProgramKey(object, "a shape", 1))
    assert backend.replay.pending_record is not None
    poly, statement = random_instance(10, 2)
    gpu_proof = Prover(params, backend=backend).prove_monty(poly, statement)
    assert backend.replay.pending_record is None and backend.replay.programs == {}
    assert dump(gpu_proof, "binary") == dump(Prover(params, backend="cpu").prove_monty(poly, statement), "binary")


def test_a_recorded_proof_that_fails_to_start_its_readback_leaves_no_program(monkeypatch):
    """The recording's regions return to the pool with the failed proof, so its program is dropped with it; the
    backend proves the reference's bytes afterwards."""
    params = _params(10, 2, 1)
    instances = [random_canonical_instance(10, seed) for seed in range(2)]
    backend = _wgpu()
    prover = Prover(params, backend=backend)
    assert len(list(prover.prove_many(instances[:1]))) == 1  # seen once: the next one is recorded
    real = backend.state.drivers.read_later

    def failing(*args):
        monkeypatch.setattr(backend.state.drivers, "read_later", real)
        raise RuntimeError("device lost")

    monkeypatch.setattr(backend.state.drivers, "read_later", failing)
    with pytest.raises(RuntimeError, match="device lost"):
        list(prover.prove_many(instances[1:]))
    assert backend.replay.programs == {}
    got = [dump(p, "binary") for p in prover.prove_many(instances * 2)]
    assert got == _expected(params, instances) * 2
