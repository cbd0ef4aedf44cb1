"""The device-resident transcript (``DeviceTranscript`` and the transcript / pow_search / queries kernels) against
the host ``DuplexChallenger``, op for op: the golden known-answer file, random sequences of observe / sample_ef /
sample / sample_bits / grind / query sampling at every input- and output-buffer fill level, and the final
challenger state word for word. Every runtime (wgpu with both multiplies, msl-cpu)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden
from whirgpu.backends import device_transcript
from whirgpu.backends.device_values import STATE_WORDS
from whirgpu.backends.gpu import GpuBackend, challenger_words
from whirgpu.field import P
from whirgpu.protocol.query_indices import sample_query_indices
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import field_np as F


class DeviceRun:
    """A session on ``backend`` whose device challenger starts as ``challenger``; ``proof_words`` are written to
    the proof region first (the values the script observes), then ops are recorded; ``finish`` submits, waits and
    reads both regions back."""

    def __init__(self, backend: GpuBackend, challenger: DuplexChallenger, proof_words: int = 4096,
                 scratch_words: int = 1 << 14, points_words: int = 16):
        self.backend = backend
        self.session = backend.state.open_session(4 * proof_words + 64 * 256, 4 * scratch_words + 64 * 256,
                                             4 * points_words)
        regions = self.session.regions
        backend.state.drivers.write(regions.scratch.buffer, challenger_words(
            challenger.sponge_state, challenger.input_buffer, len(challenger.output_buffer)), regions.state.offset)
        backend.state.session = self.session
        self.transcript = self.session.transcript

    def put(self, words: np.ndarray):
        regions = self.session.regions
        value = regions.proof.take(words.shape)
        if words.size:
            self.backend.state.drivers.write(regions.proof.buffer, words, value.offset)
        return value

    def finish(self):
        backend, regions = self.backend, self.session.regions
        self.transcript.flush()
        self.session.runtime_batch.submit()
        backend.state.session = None
        self.scratch = backend.state.drivers.read(regions.scratch.buffer)
        self.proof = backend.state.drivers.read(regions.proof.buffer)
        self.points = backend.state.drivers.read(regions.points.buffer)
        backend.state.pool.free(regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)

    def get(self, value) -> np.ndarray:
        regions = self.session.regions
        words = {id(regions.proof.buffer): self.proof, id(regions.points.buffer): self.points}.get(
            id(value.buffer), self.scratch)
        return words[value.word:value.word + value.words].reshape(value.shape)

    def state(self) -> np.ndarray:
        """The challenger's words, input-buffer slots past its length (stale, never read) zeroed."""
        words = self.scratch[:STATE_WORDS].copy()
        words[18 + words[16]:] = 0
        return words


def _host_state(c: DuplexChallenger) -> np.ndarray:
    return challenger_words(c.sponge_state, c.input_buffer, len(c.output_buffer))


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


def test_golden_kat(gpu):
    kat = load_golden("kat_challenger.json")
    host = DuplexChallenger()
    run = DeviceRun(gpu, host)
    observed = F.to_monty(np.asarray(kat["observed"], np.uint64))
    value = run.put(observed)
    run.transcript.observe(value)
    samples = [run.transcript.sample_ef(), run.transcript.sample_ef()]  # 8 samples: the KAT's 5, then 3 more
    bits = run.transcript.sample_queries(1 << 20, 0, 1)
    more_bits = run.transcript.sample_queries(1 << 20, 0, 1)
    run.finish()
    got = F.from_monty(np.concatenate([run.get(s) for s in samples]))
    assert got[:5].tolist() == kat["sampled_base_5"]
    # sample_bits(20) x2 after the KAT's 5 samples: our 8 samples consumed 3 more, so redo the KAT's order on
    # the host and compare the device's two draws with the host's two draws after 8 samples
    host.observe_many(observed)
    assert F.from_monty(np.array([host.sample() for _ in range(8)], np.uint32)).tolist() == got.tolist()
    want = [host.sample_bits(20), host.sample_bits(20)]
    assert [int(run.get(bits.indices)[0]), int(run.get(more_bits.indices)[0])] == want


def test_golden_kat_sample_bits(gpu):
    kat = load_golden("kat_challenger.json")
    run = DeviceRun(gpu, DuplexChallenger())
    run.transcript.observe(run.put(F.to_monty(np.asarray(kat["observed"], np.uint64))))
    for _ in range(5):
        run.transcript.sample()
    draws = [run.transcript.sample_queries(1 << 20, 0, 1) for _ in range(2)]
    run.finish()
    assert [int(run.get(d.indices)[0]) for d in draws] == kat["sample_bits_20"]


def _random_script(rng, length: int, max_bits: int):
    ops = []
    for _ in range(length):
        kind = rng.choice(["observe", "observe", "sample_ef", "sample", "bits", "grind", "queries"])
        if kind == "observe":
            ops.append(("observe", int(rng.integers(0, 20))))
        elif kind == "bits":
            ops.append(("bits", int(rng.integers(0, 21))))
        elif kind == "grind":
            ops.append(("grind", int(rng.integers(1, max_bits + 1))))
        elif kind == "queries":
            log_domain = int(rng.integers(1, 16))
            fold = int(rng.integers(0, min(log_domain, 4) + 1))
            ops.append(("queries", 1 << log_domain, fold, int(rng.integers(0, 40))))
        else:
            ops.append((kind,))
    return ops


def _run_both(gpu, ops, rng, start: DuplexChallenger):
    host = start.clone()
    words = {i: rng.integers(0, P, op[1], dtype=np.uint64).astype(np.uint32)
             for i, op in enumerate(ops) if op[0] == "observe"}
    run = DeviceRun(gpu, start)
    values = {i: run.put(w) for i, w in words.items()}
    device_out, host_out = [], []
    for i, op in enumerate(ops):
        t = run.transcript
        if op[0] == "observe":
            t.observe(values[i])
            host.observe_many(words[i])
        elif op[0] == "sample_ef":
            device_out.append(("ef", t.sample_ef()))
            host_out.append(host.sample_ef().tolist())
        elif op[0] == "sample":
            t.sample()
            host.sample()
        elif op[0] == "bits":
            device_out.append(("queries", t.sample_queries(1 << op[1], 0, 1)))
            host_out.append(([host.sample_bits(op[1])], 1))
        elif op[0] == "grind":
            device_out.append(("witness", t.grind(op[1])))
            host_out.append(int(host.grind(op[1])))
        else:
            _, domain, fold, q = op
            device_out.append(("queries", t.sample_queries(domain, fold, q)))
            indices = sample_query_indices(host, domain, fold, q)
            host_out.append((indices, len(indices)))
    run.finish()
    got = []
    for kind, value in device_out:
        if kind == "ef":
            got.append(run.get(value).tolist())
        elif kind == "witness":
            got.append(int(run.get(value).reshape(-1)[0]))
        else:
            count = int(run.get(value.count)[0])
            assert int(run.get(value.proof_count)[0]) == count
            indices = run.get(value.indices)
            assert indices[count:].tolist() == [0] * (value.slots - count)  # padding
            got.append((indices[:count].tolist(), count))
    assert got == host_out
    np.testing.assert_array_equal(run.state(), _host_state(host))


@pytest.mark.parametrize("seed", range(6))
def test_random_scripts(gpu, seed):
    rng = np.random.default_rng(seed)
    start = DuplexChallenger()
    start.observe_many(rng.integers(0, P, int(rng.integers(0, 12)), dtype=np.uint64).astype(np.uint32))
    _run_both(gpu, _random_script(rng, 24, max_bits=10), rng, start)


@pytest.mark.parametrize("absorbed", range(9))
@pytest.mark.parametrize("popped", [0, 3, 8])
def test_every_fill_level(gpu, absorbed, popped):
    """Grind and sample from every input-buffer fill level, with the output buffer full, partly or fully used."""
    rng = np.random.default_rng(absorbed * 10 + popped)
    start = DuplexChallenger()
    start.observe_many(np.arange(8, dtype=np.uint32) + 5)
    for _ in range(popped):
        start.sample()
    ops = [("observe", absorbed), ("grind", 6), ("sample_ef",), ("observe", absorbed), ("bits", 13), ("sample",),
           ("queries", 1 << 12, 2, 30)]
    if absorbed == 0:
        ops = [("grind", 5)] + ops  # straight on the popped output buffer
    _run_both(gpu, ops, rng, start)


@pytest.mark.parametrize("bits", [*range(1, 15), *(pytest.param(b, marks=pytest.mark.slow) for b in range(15, 21))])
def test_grind_bits(gpu, bits):
    """Every width of 1-20 bits: the smallest valid nonce, as the host finds it, twice from different states."""
    rng = np.random.default_rng(bits)
    start = DuplexChallenger()
    start.observe_many(rng.integers(0, P, 5, dtype=np.uint64).astype(np.uint32))
    _run_both(gpu, [("grind", bits), ("sample_ef",), ("observe", 3), ("grind", bits)], rng, start)


def _smallest_nonce(challenger: DuplexChallenger, bits: int) -> int:
    return int(F.from_monty(challenger.clone().grind(bits)))


def _start_with_nonce(bits: int, accept) -> DuplexChallenger:
    """The first of a fixed sequence of challengers whose smallest valid nonce for ``bits`` satisfies ``accept``."""
    for seed in range(10_000):
        start = DuplexChallenger()
        start.observe_many(np.arange(seed % 9, dtype=np.uint32) + seed)
        if accept(_smallest_nonce(start, bits)):
            return start
    raise AssertionError("no challenger found")


def _grind_in(gpu, start: DuplexChallenger, bits: int, launches, monkeypatch) -> int:
    """The witness word a grind leaves when its searches are ``launches`` ((first, end) batches); when one is
    found, the challenger it leaves is the host's after the same grind."""
    monkeypatch.setattr(device_transcript, "pow_launches", lambda bits, full_range=False: launches)
    run = DeviceRun(gpu, start)
    witness = run.transcript.grind(bits)
    run.finish()
    word = int(run.get(witness).reshape(-1)[0])
    if word != device_transcript.NOT_FOUND:
        host = start.clone()
        host.grind(bits)
        np.testing.assert_array_equal(run.state(), _host_state(host))
    return word


@pytest.mark.parametrize("smallest", [0, 1, 63])
def test_a_hit_in_the_first_batch(gpu, smallest, monkeypatch):
    """The smallest nonce in the first batch (nonce 0 itself, and several hits for the threads' atomic min): the
    other workgroups of a full grid stop at their first claim."""
    bits = {0: 4, 1: 4, 63: 6}[smallest]
    if smallest == 63:
        start = _start_with_nonce(bits, lambda n: 32 <= n < device_transcript.POW_BATCH)
    else:
        start = _start_with_nonce(bits, lambda n: n == smallest)
    nonce = _smallest_nonce(start, bits)
    batches = device_transcript.POW_GROUPS * 4
    monkeypatch.setattr(device_transcript, "POW_WAVE_SLACK", 30)  # a full grid of POW_GROUPS workgroups
    assert device_transcript.pow_groups(bits, batches) == device_transcript.POW_GROUPS
    assert _grind_in(gpu, start, bits, [(0, batches)], monkeypatch) == int(F.to_monty(np.uint64(nonce)))


def test_a_hit_in_the_last_batch_a_launch_may_claim(gpu, monkeypatch):
    """The smallest nonce in a launch's last batch is found; a launch ending just before it finds nothing, and a
    next launch starting at its batch finds it (alone, or after an empty launch), and later launches keep it."""
    bits = 9
    start = _start_with_nonce(bits, lambda n: n >= 4 * device_transcript.POW_BATCH)
    nonce = _smallest_nonce(start, bits)
    word = int(F.to_monty(np.uint64(nonce)))
    b = nonce // device_transcript.POW_BATCH
    assert _grind_in(gpu, start, bits, [(0, b + 1)], monkeypatch) == word
    assert _grind_in(gpu, start, bits, [(0, b)], monkeypatch) == device_transcript.NOT_FOUND
    assert _grind_in(gpu, start, bits, [(b, b + 1)], monkeypatch) == word
    assert _grind_in(gpu, start, bits, [(0, b), (b, b + 1), (b + 1, b + 3000)], monkeypatch) == word
    assert _grind_in(gpu, start, bits, [(1, b), (b, b + 2)], monkeypatch) == word  # first launch skips batch 0


def test_launches_of_a_grind_continue_one_another(gpu, monkeypatch):
    """Grinds over many short launches (16 batches each): the later ones continue the search, and those after the
    hit exit at once, leaving the smallest nonce."""
    monkeypatch.setattr(device_transcript, "POW_LAUNCH", 16 * device_transcript.POW_BATCH)
    monkeypatch.setattr(device_transcript, "POW_MAX_COUNTERS", 1 << 7)
    assert len(device_transcript.pow_launches(12)) == 128
    rng = np.random.default_rng(12)
    start = DuplexChallenger()
    start.observe_many(rng.integers(0, P, 3, dtype=np.uint64).astype(np.uint32))
    _run_both(gpu, [("grind", 12), ("observe", 2), ("grind", 10), ("grind", 3)], rng, start)


def test_pow_groups():
    """A search's first wave covers 2^(bits + POW_WAVE_SLACK) nonces, within [1, min(POW_GROUPS, batches)]."""
    batch, slack = device_transcript.POW_BATCH, device_transcript.POW_WAVE_SLACK
    for bits in range(1, 31):
        (first, end), *_ = device_transcript.pow_launches(bits)
        groups = device_transcript.pow_groups(bits, end - first)
        assert 1 <= groups <= min(device_transcript.POW_GROUPS, end - first)
        assert groups == device_transcript.POW_GROUPS or groups == end - first or groups == 1 \
            or groups * batch == 1 << (bits + slack)
    assert device_transcript.pow_groups(12, 1 << 20) * batch == 1 << (12 + slack) < device_transcript.POW_GROUPS * batch


@pytest.mark.parametrize("bits", [5, 7, 9])
def test_a_small_first_wave_finds_the_smallest_nonce(gpu, bits, monkeypatch):
    """Grinds whose first wave (a few workgroups) misses (odds about e^-4): later claims find the smallest nonce."""
    (first, end), = device_transcript.pow_launches(bits)
    wave = device_transcript.pow_groups(bits, end - first) * device_transcript.POW_BATCH
    assert wave < (end - first) * device_transcript.POW_BATCH
    start = _start_with_nonce(bits, lambda n: n >= wave)
    nonce = _smallest_nonce(start, bits)
    word = _grind_in(gpu, start, bits, device_transcript.pow_launches(bits), monkeypatch)
    assert word == int(F.to_monty(np.uint64(nonce)))


def test_pow_launches():
    """One launch for a grind of up to 23 bits; contiguous batch ranges of at most POW_LAUNCH nonces covering
    2^(bits + 5) nonces, or every nonce below P (full range), within the counters and the kernel's u32 nonces."""
    batch = device_transcript.POW_BATCH
    for bits in range(1, 31):
        for full_range in (False, True):
            launches = device_transcript.pow_launches(bits, full_range)
            end_nonce = P if full_range else min(P, 1 << (bits + device_transcript.POW_COVER_SLACK))
            assert launches[0][0] == 0 and launches[-1][1] == -(-end_nonce // batch)
            assert all(a[1] == b[0] for a, b in zip(launches, launches[1:]))
            assert all(0 < (end - first) * batch <= device_transcript.POW_LAUNCH for first, end in launches)
            assert len(launches) <= device_transcript.POW_MAX_COUNTERS
            assert (launches[-1][1] + device_transcript.POW_GROUPS) * batch < 1 << 32
            if bits <= 23 and not full_range:
                assert len(launches) == 1


def test_query_sampler_cases(gpu):
    """The three ways indices are drawn (one call, batches of floor(20 / L), one call each), L = 0, q = 0, and
    more queries than the folded domain has points (heavy de-duplication)."""
    rng = np.random.default_rng(7)
    ops = [("queries", 1 << 8, 3, 4), ("queries", 1 << 12, 2, 9), ("queries", 1 << 24, 2, 50), ("queries", 8, 3, 5),
           ("queries", 1 << 10, 1, 0), ("queries", 16, 0, 64), ("queries", 1 << 14, 0, 200),
           ("queries", 1 << 12, 2, 300)]  # past the 256 indices SORT stages in workgroup memory (WGSL)
    _run_both(gpu, ops, rng, DuplexChallenger())


def test_search_past_its_range_is_flagged(gpu, monkeypatch):
    """A search whose encoded launches hold no valid nonce leaves NOT_FOUND (never a field word) in the witness
    slot (the prover then proves again over the full range: tests/backend/test_gpu_proofs.py)."""
    monkeypatch.setattr(device_transcript, "pow_launches", lambda bits, full_range=False: [(0, 1)])  # 1024 nonces
    run = DeviceRun(gpu, DuplexChallenger())
    witness = run.transcript.grind(16)
    run.finish()
    assert int(run.get(witness).reshape(-1)[0]) == device_transcript.NOT_FOUND
