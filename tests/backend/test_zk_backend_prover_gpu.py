"""The hiding prover with its heavy work on the GPU backend (``ZkBackendProver`` on ``GpuBackend``) on every
runtime fixture, both as one device session (``device_opening``: the path a GPU takes) and step by step (its
fallback): the oracle's zk goldens z01, z02 byte for byte (z03, n = 14, and z04 are slow), and the numpy
reference's proofs for 0, 1 and 2 code-switching rounds in both fields, with tables bound whole, in windows and
split over buffers (lowered binding and buffer limits). Each proof states the path it took: one session wherever
the configuration's randomness blocks fit a binding (every case with tables bound whole)."""

from __future__ import annotations

import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from tests.protocol.zk_backend_cases import SYNTHETIC, assert_same_proof, case_id, synthetic
from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.device_opening import DeviceOpening
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance
from whirgpu.profiles.p3_whir.zk.format import zk_proof_to_postcard
from whirgpu.ref.chacha_rng import StdRng

GOLDEN = [pytest.param(name, marks=pytest.mark.slow) if name.startswith(("z03", "z04")) else name
          for name in golden_p3_names("z0*.json")]


@pytest.fixture(scope="module", params=["whole", "windows", "buffers"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    # Not test_gpu_backend.py's 256-byte bindings: those make the initial commitment of n = 12, k = 2 (2^13 base
    # entries with the randomness rows) one submission of 38,654 dispatches, which crashes wgpu-native and Dawn
    # on lavapipe (a segfault in create_bind_group; msl-cpu proves it).
    if request.param in ("windows", "buffers"):
        backend.binding_limit = 4096  # 256 EF entries per binding: the n >= 10 tables are bound in windows
    if request.param == "buffers":
        backend.buffer_limit = 16384  # 1024 EF entries per buffer: the larger tables are several buffers
    yield backend
    backend.layout = CpuBackend.layout  # the module's runtime serves other layouts' tests after this one


PATHS = pytest.mark.parametrize("one_session", [True, False], ids=["one-session", "steps"])


def _expected_path(backend, config, field, one_session: bool) -> str:
    """The path ``ZkBackendProver`` should take on ``backend`` (judged under the layout it proves in)."""
    saved, backend.layout = backend.layout, P3_WHIR_LAYOUT(field, "prefix")
    try:
        return "one session" if one_session and DeviceOpening.supported(backend, config) else "steps"
    finally:
        backend.layout = saved


@PATHS
@pytest.mark.parametrize("name", GOLDEN)
def test_golden_proofs(gpu, name, one_session):
    doc = load_golden_p3(name)
    inst = read_zk_instance(doc)
    prover = ZkBackendProver(gpu, inst.config, inst.field, one_session=one_session)
    cap, proof = prover.prove(inst.polynomial, inst.points, StdRng.seed_from_u64(inst.mask_seed))
    assert merkle_cap_to_postcard(cap).hex() == doc["commitment_postcard_hex"]
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    assert prover.last_path == _expected_path(gpu, inst.config, inst.field, one_session)


@PATHS
@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_same_proof_as_the_reference(gpu, case, one_session):
    config, field = synthetic(case)[:2]
    assert assert_same_proof(gpu, *synthetic(case), one_session=one_session) == \
        _expected_path(gpu, config, field, one_session)


@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_tables_bound_whole_take_one_session(gpu_runtime, case):
    """With the runtime's own limits every case is one session (the step path is the fallback only)."""
    backend = GpuBackend(gpu_runtime)
    try:
        assert assert_same_proof(backend, *synthetic(case)) == "one session"
    finally:
        backend.layout = CpuBackend.layout


def test_open_rows_with_host_indices_under_pruned_openings(gpu):
    """Host-valued ``open_rows`` under the p3-whir layout (pruned multiproof) is the CPU's: its proof region
    budgets the indices copied beside the rows."""
    import numpy as np

    from whirgpu.backends.base import P3_WHIR_LAYOUT
    from whirgpu.field import BABYBEAR
    from .field_inputs import random_monty

    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(BABYBEAR, "prefix")
    table = random_monty(np.random.default_rng(3), BABYBEAR, (1 << 9, 4))
    indices = list(range(1, 128, 3))  # enough that the unbudgeted indices pass the alignment slack
    want = cpu.open_rows(cpu.commit(cpu.upload(table), 3, 7), indices)
    got = gpu.open_rows(gpu.commit(gpu.upload(table), 3, 7), indices)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("name", GOLDEN[:1])
def test_golden_proof_from_canonical_words(gpu, name):
    """``prove(..., canonical=True)`` (what ``prove_zk_statement`` uses on a backend: the polynomial converted on
    the device) gives the golden bytes; a word >= P is refused by name."""
    import numpy as np

    from whirgpu.errors import ConfigError
    from whirgpu.ref.field_np import field_ops

    doc = load_golden_p3(name)
    inst = read_zk_instance(doc)
    canonical = np.ascontiguousarray(field_ops(inst.field).from_monty(inst.polynomial), np.uint32)
    prover = ZkBackendProver(gpu, inst.config, inst.field)
    cap, proof = prover.prove(canonical, inst.points, StdRng.seed_from_u64(inst.mask_seed), canonical=True)
    assert merkle_cap_to_postcard(cap).hex() == doc["commitment_postcard_hex"]
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    canonical[3] = inst.field.P
    with pytest.raises(ConfigError, match="canonical"):
        prover.prove(canonical, inst.points, StdRng.seed_from_u64(inst.mask_seed), canonical=True)


@pytest.mark.parametrize("case", SYNTHETIC[2:4], ids=case_id)
def test_no_statement_points(gpu_runtime, case):
    """An opening of no points (zero weights, claim 0) in one session is the reference's proof."""
    backend = GpuBackend(gpu_runtime)
    try:
        assert assert_same_proof(backend, *synthetic(case, n_points=0)) == "one session"
    finally:
        backend.layout = CpuBackend.layout


def test_a_device_run_left_to_the_steps_gives_the_same_proof(gpu_runtime, monkeypatch):
    """When the one-session run meets a case it leaves to the steps (a search without a witness, eps = 0, an OOD
    point without an eq form: DeviceOpening.prove returns None), the steps prove from the same draws: the same
    bytes, the generator where the reference leaves it."""
    from whirgpu.profiles.p3_whir.zk import device_run

    calls = []

    def refuse(self, words, query_words, drawn=None):
        calls.append(len(words))
        return None

    monkeypatch.setattr(device_run.OpeningRun, "resolve", refuse)
    assert _path_of_one_proof(gpu_runtime, SYNTHETIC[3]) == "steps"
    assert len(calls) == 1


def _path_of_one_proof(gpu_runtime, case) -> str:
    """The path a fresh GPU backend's proof of ``case`` took, its bytes the reference's."""
    backend = GpuBackend(gpu_runtime)
    try:
        return assert_same_proof(backend, *synthetic(case))
    finally:
        backend.layout = CpuBackend.layout


def test_a_mask_stream_run_short_is_left_to_the_steps(gpu_runtime, monkeypatch):
    """A device mask stream whose keystream words hold too few accepted samples (the sampler's NOT_FOUND, odds
    below 2^-40 at its default margin; forced here with 16 words a stream) leaves the proof to the steps, whose
    host draws give the reference's bytes; the device run took the proof that far (its launches recorded)."""
    from whirgpu.kernels import mask_rng
    from whirgpu.profiles.p3_whir.zk import device_run

    shorts = []
    resolve = device_run.OpeningRun.resolve

    def watch(self, words, query_words, drawn=None):
        shorts.append(self.draws.short(words))
        return resolve(self, words, query_words, drawn)

    monkeypatch.setattr(mask_rng, "words_for", lambda n, field="babybear": 16)
    monkeypatch.setattr(device_run.OpeningRun, "resolve", watch)
    assert _path_of_one_proof(gpu_runtime, SYNTHETIC[3]) == "steps"
    assert shorts == [True]


def test_a_replay_left_to_the_steps_gives_the_same_proof(gpu_runtime, monkeypatch):
    """A replayed proof whose first session fails a check (here its mask stream reported short) is proved by the
    steps from the same draws: the reference's bytes; the second session ran while the first was resolved."""
    from whirgpu.profiles.p3_whir.zk import device_draws

    backend = GpuBackend(gpu_runtime)
    try:
        for seed in range(2):
            assert assert_same_proof(backend, *synthetic(SYNTHETIC[1], seed=seed)) == "one session"
        before = backend.replay.replays
        monkeypatch.setattr(device_draws.DeviceDraws, "short", lambda self, words: True)
        assert assert_same_proof(backend, *synthetic(SYNTHETIC[1], seed=2)) == "steps"
        assert backend.replay.replays == before + 1
    finally:
        backend.layout = CpuBackend.layout


def _watch_workers(monkeypatch) -> tuple[list, list]:
    """(whether each ``HostWorker.take`` was taken, each ``HostWorker.start``'s spin budget), as the calls come."""
    from whirgpu.native import permute as native

    taken, take = [], native.HostWorker.take
    monkeypatch.setattr(native.HostWorker, "take",
                        lambda self, entry, args: (taken.append(take(self, entry, args)), taken[-1])[1])
    spins, start = [], native.HostWorker.start.__func__
    monkeypatch.setattr(native.HostWorker, "start",
                        classmethod(lambda cls, seconds, *helpers: (spins.append(seconds), start(cls, seconds,
                                                                                                   *helpers))[1]))
    return taken, spins


@pytest.mark.parametrize("draws", ["host", "device"])
@pytest.mark.parametrize("case", [SYNTHETIC[3], SYNTHETIC[4]], ids=case_id)
def test_replayed_proofs_are_the_reference(gpu_runtime, case, draws, monkeypatch):
    """Proofs of one shape from the third on replay the recorded session (``device_opening``): each with its own
    polynomial, points and mask seed is the reference's proof byte for byte, the second session encoded ahead
    (``PreparedProgram.prime``) while the first runs, and so the next proof's first session, on a spare region set
    the next replay then runs on (where the runtime encodes ahead: wgpu and Dawn; Metal re-issues its launches).
    Both ways of drawing the second session's witness and positions: on the host (short searches, the default
    here) and on the device (``HOST_GRIND_BITS`` lowered below the case's bits). On the host, with the compiled
    library, a replay's absorb, search and draws are made on a ``HostWorker``'s thread while the first session's
    part is resolved, started as the words are read back (or earlier: the next test), the call's buffers and
    arguments made ready while the first session ran (``PendingDraws``)."""
    from whirgpu.backends.gpu.replay import LaunchProgram
    from whirgpu.native import permute as native
    from whirgpu.profiles.p3_whir.zk import device_opening, device_reads, host_draws
    from whirgpu.profiles.p3_whir.zk.device_opening import recorded_programs
    from whirgpu.runtime.program import PreparedProgram

    if draws == "device":
        monkeypatch.setattr(device_opening, "HOST_GRIND_BITS", -1)
    compiled = native._library() is not None  # built now if it is not yet
    taken, spins = _watch_workers(monkeypatch)
    pended, pending_draw = [], host_draws.PendingDraws.draw
    monkeypatch.setattr(host_draws.PendingDraws, "draw", lambda self, *a: (pended.append(1), pending_draw(self, *a))[1])
    pruned, prune_many = [], device_reads.prune_many
    monkeypatch.setattr(device_reads, "prune_many", lambda jobs: (pruned.append(len(jobs)), prune_many(jobs))[1])

    primed, handed = [], []
    prime, region_set = PreparedProgram.prime, LaunchProgram.region_set
    monkeypatch.setattr(PreparedProgram, "prime", lambda self: (primed.append(self), prime(self))[1])

    def hand_out(self, state):
        chosen = region_set(self, state)
        handed.append(chosen.prepared.primed)
        return chosen

    monkeypatch.setattr(LaunchProgram, "region_set", hand_out)
    backend = GpuBackend(gpu_runtime)
    try:
        for seed in range(5):
            before, handed[:], taken[:], spins[:], pruned[:], pended[:] = backend.replay.replays, [], [], [], [], []
            assert assert_same_proof(backend, *synthetic(case, seed=seed)) == "one session"
            assert backend.replay.replays == before + (seed >= 2)
            grinds = synthetic(case, seed=seed)[0].final_pow_bits > 0  # else no compiled call: no worker
            on_worker = seed >= 2 and draws == "host" and compiled and grinds
            assert taken == ([True] if on_worker else []), taken
            assert pended == ([1] if on_worker else [])  # its call made ready while the first session ran
            # one: at the words, or on a GPU whose last wait was short as that wait began (the next test)
            early = seed > 2 and backend.state.rt.limits().device_type != "CPU"  # not lavapipe, msl-cpu
            assert len(spins) == on_worker and set(spins) <= ({device_opening.WORKER_SPIN_SECONDS} | (
                {device_opening.EARLY_WORKER_SPIN_SECONDS} if early else set())), spins
            # the worker's call laid the positions out and pruned them too: no pruning left for this thread
            assert pruned == [] or not on_worker, pruned
            if seed >= 2:  # the second session's set, then the first's: primed from the second replay on
                encodes_ahead = backend.state.rt.name in ("wgpu", "dawn")
                assert handed == [False, encodes_ahead and seed >= 3], handed
        assert len(primed) == 3 * 2
        (kept,) = recorded_programs(backend).kept.values()
        assert kept[2].draws_on_host == (draws == "host")
    finally:
        backend.layout = CpuBackend.layout


def test_a_replay_after_a_short_wait_starts_its_worker_early(gpu_runtime, monkeypatch):
    """Where the last replay on a GPU waited at most ``EARLY_WORKER_MAX_WAIT`` for its first session's words
    (lavapipe taken for one here, the bound raised past its waits), the next starts its ``HostWorker`` as that wait begins, spinning for twice that wait
    plus ``WORKER_SPIN_SECONDS``, and the worker makes the absorb's call: the reference's bytes. The first replay,
    with no wait measured yet, starts it at the words; on a CPU device every replay does (the previous test)."""
    from whirgpu.native import permute as native
    from whirgpu.profiles.p3_whir.zk import device_opening
    from whirgpu.profiles.p3_whir.zk.device_opening import recorded_programs

    if native._library() is None:
        pytest.skip("no C compiler: no compiled call for a worker to make")
    monkeypatch.setattr(device_opening, "EARLY_WORKER_MAX_WAIT", 1e9)
    monkeypatch.setattr(device_opening.DeviceOpening, "_on_cpu", lambda self: False)  # lavapipe's waits are long
    monkeypatch.setattr(device_opening, "EARLY_WORKER_SPIN_SECONDS", 60.0)  # and it computes on the cores spun on
    taken, spins = _watch_workers(monkeypatch)
    case = SYNTHETIC[3]
    backend = GpuBackend(gpu_runtime)
    try:
        for seed in range(4):
            taken[:], spins[:] = [], []
            assert assert_same_proof(backend, *synthetic(case, seed=seed)) == "one session"
            if seed == 2:  # the first replay: no wait measured yet
                assert (taken, spins) == ([True], [device_opening.WORKER_SPIN_SECONDS])
        (kept,) = recorded_programs(backend).kept.values()
        assert kept[2].first_wait > 0  # measured: the last wait
        assert taken == [True]
        assert spins == [device_opening.EARLY_WORKER_SPIN_SECONDS], spins
    finally:
        backend.layout = CpuBackend.layout


def test_a_replay_whose_absorb_fails_raises_it_and_leaves_the_backend_proving(gpu_runtime, monkeypatch):
    """An error while a replay absorbs the blinded vectors (between its two sessions) reaches the caller, the
    second session's region set is free again, and the backend's next proof is the reference's again."""
    from whirgpu.profiles.p3_whir.zk.device_opening import recorded_programs

    backend = GpuBackend(gpu_runtime)
    case = SYNTHETIC[1]
    try:
        for seed in range(3):
            assert assert_same_proof(backend, *synthetic(case, seed=seed)) == "one session"
        replays = backend.replay.replays
        absorb = DeviceOpening._second_inputs

        def broken(*args, **kwargs):
            raise RuntimeError("the absorb broke")

        monkeypatch.setattr(DeviceOpening, "_second_inputs", broken)
        config, field, polynomial, points, seed = synthetic(case, seed=3)
        with pytest.raises(RuntimeError, match="the absorb broke"):
            ZkBackendProver(backend, config, field).prove(polynomial, points, StdRng.seed_from_u64(seed))
        (kept,) = recorded_programs(backend).kept.values()
        assert not any(region_set.busy for program in kept[:2] for region_set in program.sets)
        monkeypatch.setattr(DeviceOpening, "_second_inputs", absorb)
        assert assert_same_proof(backend, *synthetic(case, seed=4)) == "one session"
        assert backend.replay.replays == replays + 1
    finally:
        backend.layout = CpuBackend.layout


def test_a_replayed_proof_refuses_a_non_canonical_word(gpu_runtime):
    """``canonical=True`` through a replay: the range check is the recording's, read with the replayed proof."""
    import numpy as np

    from whirgpu.errors import ConfigError
    from whirgpu.ref.field_np import field_ops

    backend = GpuBackend(gpu_runtime)
    config, field, polynomial, points, seed = synthetic(SYNTHETIC[0])
    canonical = field_ops(field).from_monty(polynomial).astype(np.uint32)
    prover = ZkBackendProver(backend, config, field)
    try:
        first = [prover.prove(canonical, points, StdRng.seed_from_u64(seed), canonical=True) for _ in range(3)]
        assert backend.replay.replays == 1
        assert zk_proof_to_postcard(first[2][1]) == zk_proof_to_postcard(first[0][1])
        bad = canonical.copy()
        bad[37] = field.P
        with pytest.raises(ConfigError, match="37"):
            prover.prove(bad, points, StdRng.seed_from_u64(seed), canonical=True)
        assert backend.replay.replays == 2
    finally:
        backend.layout = CpuBackend.layout


def test_the_backends_replays_closed_drop_the_hiding_programs(gpu_runtime):
    """``Replays.close`` (``GpuBackend.close``'s first step) drops the recorded hiding proofs with the backend's own
    programs; the next proofs of the shape record and replay afresh, and the next close drops those."""
    from whirgpu.profiles.p3_whir.zk import device_opening

    backend = GpuBackend(gpu_runtime)
    try:
        for _ in range(2):
            for seed in range(3):
                assert assert_same_proof(backend, *synthetic(SYNTHETIC[1], seed=seed)) == "one session"
            kept = device_opening.recorded_programs(backend).kept
            assert len(kept) == 1 and backend.replay.replays >= 1
            programs = next(iter(kept.values()))[:2]
            assert len(backend.replay.on_close) == 1
            backend.replay.close()
            assert not kept and all(program.closed for program in programs) and not backend.replay.on_close
            assert device_opening._PROGRAMS.get(backend) is None
    finally:
        backend.layout = CpuBackend.layout
