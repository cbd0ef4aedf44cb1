"""A recorded program's readback staged by the program itself (``Runtime.staged_read``, ``PreparedProgram(read=)``):
on wgpu-native and Dawn with buffers that are not read in place (``zero_copy=False``, as on a discrete GPU), the
copy into the program's own staging buffer is its last launch and a run's words are that run's; where a buffer is
read in place there is no staged copy. Replays read back that way: the plain proof's and the hiding proof's, the
same bytes as the reference, a failure between a run and its read not leaving the staging mapped; a read's pick
given the staging's own words."""

from __future__ import annotations

import json

import numpy as np
import pytest

import whirgpu
from tests.protocol.zk_backend_cases import SYNTHETIC, assert_same_proof, case_id, synthetic
from whirgpu.api import random_canonical_instance
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.devices.limits import StorageMode
from whirgpu.profiles.whir_p3_metal.serialize import proof_to_json_tree
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.runtime.program import Copy, PreparedProgram, Program, Submit, Write

from .conftest import open_runtime

STAGED = [("wgpu", None), ("dawn", "emulated")]


@pytest.fixture(scope="module", params=STAGED, ids=[name for name, _ in STAGED])
def staged_runtime(request):
    """A runtime whose SHARED buffers are plain device buffers read through staging (a discrete GPU's way)."""
    name, mul = request.param
    return open_runtime(name, mul, zero_copy=False)


def test_a_prepared_programs_staged_readback_gives_each_runs_words(staged_runtime):
    rt = staged_runtime
    n = 1000
    a, b = rt.alloc(4 * n, StorageMode.PRIVATE), rt.alloc(4 * n, StorageMode.SHARED)
    program = Program([Write(a, 0, None, ("x",), 4 * n), Copy(a, 0, b, 0, 4 * n), Submit(),
                       Write(a, 0, None, ("y",), 8)])  # a trailing write: the copy still ends the last launches
    prepared = PreparedProgram(rt, program, (b, 4 * n))
    assert prepared.staged is not None and prepared.staged.copy.src is b
    try:
        for k in range(3):  # again and again on the same staging buffer: unmapped after each read
            data = np.random.default_rng(k).integers(0, 1 << 32, n, dtype=np.uint32)
            prepared.run(lambda w: data if w.source == ("x",) else np.zeros(2, np.uint32))
            assert np.array_equal(prepared.read_later()(), data)
    finally:
        prepared.close()
    assert prepared.staged is None


def test_a_staged_readback_hands_a_pick_the_mapped_words(staged_runtime):
    """``read_later()(pick)``: ``pick`` gets the run's words read-only (the staging memory itself) and its result is
    the read's; the staging is unmapped after, also when ``pick`` raises, so the next run reads its own words."""
    rt = staged_runtime
    n = 512
    a, b = rt.alloc(4 * n, StorageMode.PRIVATE), rt.alloc(4 * n, StorageMode.SHARED)
    prepared = PreparedProgram(rt, Program([Write(a, 0, None, ("x",), 4 * n), Copy(a, 0, b, 0, 4 * n), Submit()]),
                               (b, 4 * n))
    seen = []

    def pick(view):
        seen.append(view.flags.writeable)
        return view[::7].copy()

    def broken(view):
        raise KeyError("pick")

    try:
        for k, how in enumerate([pick, broken, None, pick]):
            data = np.random.default_rng(10 + k).integers(0, 1 << 32, n, dtype=np.uint32)
            prepared.run(lambda w: data)
            if how is broken:
                with pytest.raises(KeyError, match="pick"):
                    prepared.read_later()(broken)
            else:
                got = prepared.read_later()(how)
                assert np.array_equal(got, data if how is None else data[::7])
        assert seen == [False, False]
    finally:
        prepared.close()


def test_a_buffer_read_in_place_has_no_staged_copy():
    rt = open_runtime("wgpu", None)
    if not rt.zero_copy_shared:
        pytest.skip(f"{rt.adapter.summary} reads no buffer in place")
    shared = rt.alloc(64, StorageMode.SHARED)
    assert rt.staged_read(shared, 64) is None
    prepared = PreparedProgram(rt, Program([Write(shared, 0, np.arange(16, dtype=np.uint32)), Submit()]),
                               (shared, 64))
    assert prepared.staged is None
    prepared.run(lambda w: w.data)
    assert np.array_equal(prepared.read_later()(), np.arange(16))
    prepared.run(lambda w: w.data)
    assert np.array_equal(prepared.read_later()(lambda words: words[3:5] + 1), [4, 5])  # a pick: the same words


def test_plain_replays_read_back_through_their_staged_copy(staged_runtime):
    params = ProtocolParameters.default(12, 4, 1)
    backend = GpuBackend(staged_runtime)
    prover = whirgpu.Prover(params, backend=backend)
    for seed in range(4):
        instance = random_canonical_instance(12, seed)
        proof = prover.prove(*instance)
        want = whirgpu.Prover(params, backend="cpu").prove(*instance)
        assert json.dumps(proof_to_json_tree(proof.proof)) == json.dumps(proof_to_json_tree(want.proof))
    program = backend.last_program
    assert backend.replay.replays >= 1 and program.sets and all(s.prepared.staged is not None for s in program.sets)


@pytest.mark.parametrize("case", [SYNTHETIC[4]], ids=case_id)
def test_hiding_replays_read_back_through_their_staged_copies(staged_runtime, case, monkeypatch):
    """Both sessions of a replayed hiding proof read back through their programs' staged copies, the reference's
    bytes; an error while the second session runs (between its run and its read) still collects its words, so
    the next replay on that region set is the reference's proof again."""
    from whirgpu.profiles.p3_whir.zk.device_opening import recorded_programs
    from whirgpu.profiles.p3_whir.zk.device_run import OpeningRun

    backend = GpuBackend(staged_runtime)
    try:
        for seed in range(4):
            assert assert_same_proof(backend, *synthetic(case, seed=seed)) == "one session"
        (kept,) = recorded_programs(backend).kept.values()
        assert all(s.prepared.staged is not None for program in kept[:2] for s in program.sets)
        gathered, second_words = [], OpeningRun.second_words
        monkeypatch.setattr(OpeningRun, "second_words", lambda self, words, plans: (
            gathered.append((words.flags.writeable, len(plans))), second_words(self, words, plans))[1])
        assert assert_same_proof(backend, *synthetic(case, seed=7)) == "one session"
        assert gathered == [(False, 1)]  # the second session's words gathered from the staging, by its plan
        replays = backend.replay.replays
        pruning = OpeningRun.pruning

        def broken(*args, **kwargs):
            raise RuntimeError("the second session's host work broke")

        monkeypatch.setattr(OpeningRun, "pruning", broken)
        config, field, polynomial, points, seed = synthetic(case, seed=4)
        with pytest.raises(RuntimeError, match="host work broke"):
            ZkBackendProver(backend, config, field).prove(polynomial, points, StdRng.seed_from_u64(seed))
        assert not any(region_set.busy for program in kept[:2] for region_set in program.sets)
        monkeypatch.setattr(OpeningRun, "pruning", pruning)
        for seed in (5, 6):
            assert assert_same_proof(backend, *synthetic(case, seed=seed)) == "one session"
        assert backend.replay.replays == replays + 2  # the failed proof is not counted
    finally:
        backend.layout = CpuBackend.layout
