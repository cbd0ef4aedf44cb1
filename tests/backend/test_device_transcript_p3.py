"""The device transcript's p3-whir variant (``TranscriptVariant.p3``: upstream Plonky3's length-tagged duplex and
distinct query sampler, over BabyBear and KoalaBear) against the host ``DuplexChallenger(..., length_tagged=True)``
and ``distinct_query_indices``, word for word: observes of 1 to 17 words, samples, EF samples, grinds of 1 to 8
bits, query draws at folded sizes 2 to 2^20 with fewer, as many and more queries than points, rejected samples,
and the final challenger state; then programs riding on reductions (an evaluation, sumcheck_tail) and on a
commitment's merkle_top, composed with the variant's constants. Every runtime (wgpu with both multiplies, Dawn,
msl-cpu)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend.test_device_transcript import DeviceRun, _host_state
from whirgpu.backends import device_transcript
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.device_transcript import DeviceTranscript, TranscriptVariant
from whirgpu.backends.device_values import POW_MAX_COUNTERS
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ConfigError
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.protocol.query_indices import distinct_query_indices
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import multilinear

FIELDS = [BABYBEAR, KOALABEAR]


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


def _run(gpu, variant: TranscriptVariant, start: DuplexChallenger, **sizes) -> DeviceRun:
    """A DeviceRun whose transcript speaks ``variant``."""
    run = DeviceRun(gpu, start, **sizes)
    run.transcript = run.session.transcript = DeviceTranscript(gpu.state, run.session, variant)
    return run


def _words(rng, field, n: int) -> np.ndarray:
    return rng.integers(0, field.P, n, dtype=np.uint64).astype(np.uint32)


def _start(variant: TranscriptVariant, rng, n: int | None = None) -> DuplexChallenger:
    start = variant.challenger()
    start.observe_many(_words(rng, variant.field, int(rng.integers(0, 12)) if n is None else n))
    return start


def _run_both(gpu, variant: TranscriptVariant, ops, rng, start: DuplexChallenger, **sizes):
    """Record ``ops`` on the device transcript and run them on the host challenger; every sampled value, index,
    count and witness and the final state must agree."""
    host = start.clone()
    words = {i: _words(rng, variant.field, op[1]) for i, op in enumerate(ops) if op[0] == "observe"}
    run = _run(gpu, variant, start, **sizes)
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
        elif op[0] == "grind":
            device_out.append(("witness", t.grind(op[1])))
            host_out.append(int(host.grind(op[1])))
        else:
            _, domain, fold, q = op
            device_out.append(("queries", t.sample_queries(domain, fold, q)))
            indices = distinct_query_indices(host, domain, fold, q)
            assert len(indices) == min(q, domain >> fold)
            host_out.append((indices, len(indices), [int(variant.field.to_monty_int(
                pow(variant.field.TWO_ADIC_GENERATORS[(domain >> fold).bit_length() - 1], j, variant.field.P)))
                for j in indices]))
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
            assert value.slots == count  # every slot filled
            got.append((run.get(value.indices).tolist(), count, run.get(value.domain_points).tolist()))
    assert got == host_out
    np.testing.assert_array_equal(run.state(), _host_state(host))
    return host


def test_variant_api():
    assert TranscriptVariant().is_default and TranscriptVariant().constants == {}
    p3 = TranscriptVariant.p3("koalabear")
    assert p3.field is KOALABEAR and p3.length_tagged and p3.distinct_queries and not p3.is_default
    assert p3.constants == {"CH_LENGTH_TAGGED": 1, "CH_DISTINCT_QUERIES": 1}
    assert p3.kernel_args("pow_search", {"WG": 64}) == ({"WG": 64, **p3.constants}, "koalabear")
    assert p3.kernel_args("merkle_leaves", {"WG": 64}) == ({"WG": 64}, "koalabear")  # runs no program
    assert p3.challenger().length_tagged and p3.query_sampler() is distinct_query_indices
    assert TranscriptVariant(BABYBEAR, True) == TranscriptVariant("babybear", length_tagged=1)
    # KoalaBear's full range (P > BabyBear's) within the counters and the kernel's u32 nonces
    launches = device_transcript.pow_launches(3, True, modulus=KOALABEAR.P)
    assert launches[-1][1] * device_transcript.POW_BATCH >= KOALABEAR.P
    assert len(launches) <= POW_MAX_COUNTERS
    assert (launches[-1][1] + device_transcript.POW_GROUPS) * device_transcript.POW_BATCH < 1 << 32


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("seed", range(2))
def test_observe_every_length(gpu, field, seed):
    """observe(k words) for k = 1 .. 17, each followed by a sample, an EF sample, a grind or a query draw, from
    several input-buffer fill levels."""
    rng = np.random.default_rng(seed)
    variant = TranscriptVariant.p3(field)
    ops = []
    for k in range(1, 18):
        ops.append(("observe", k))
        kind = rng.choice(["sample", "sample_ef", "grind", "queries"])
        if kind == "grind":
            ops.append(("grind", int(rng.integers(1, 9))))
        elif kind == "queries":
            ops.append(("queries", 1 << 10, 2, int(rng.integers(1, 30))))
        else:
            ops.append((str(kind),))
    _run_both(gpu, variant, ops, rng, _start(variant, rng))


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("absorbed", [0, 1, 6, 7])
def test_grind_bits(gpu, field, absorbed):
    """Grinds of 1 .. 8 bits from an input buffer holding 0, 1, 6 and 7 words (7: the witness fills it)."""
    rng = np.random.default_rng(absorbed)
    variant = TranscriptVariant.p3(field)
    ops = []
    for bits in range(1, 9):
        ops += [("observe", absorbed)] if absorbed else []
        ops += [("grind", bits)]
    ops += [("sample_ef",)]
    _run_both(gpu, variant, ops, rng, _start(variant, rng, 8 + 3))


# (log folded size, queries): fewer, as many and more queries than the folded domain has points; L = 0 and q = 0;
# the DISTINCT op's bitmap (L <= BITMAP_MAX_LOG = 10) and its scan of those found (L > 10) on each side of the seam
QUERY_CASES = [(1, 1), (1, 2), (1, 5), (2, 3), (2, 4), (2, 9), (6, 20), (6, 64), (6, 150), (9, 400), (10, 1024),
               (11, 300), (12, 100), (20, 1), (20, 80), (0, 1), (0, 3), (5, 0)]


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_distinct_queries(gpu, field):
    rng = np.random.default_rng(3)
    variant = TranscriptVariant.p3(field)
    ops = []
    for log_folded, q in QUERY_CASES:
        fold = int(rng.integers(0, 3))
        ops += [("observe", int(rng.integers(0, 9))), ("queries", 1 << (log_folded + fold), fold, q), ("sample",)]
    _run_both(gpu, variant, ops, rng, _start(variant, rng))


@pytest.mark.slow
@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("q", [4096, 5000])
def test_distinct_queries_whole_domain(gpu, field, q):
    """Every point of a 2^12 domain (about 35,000 draws)."""
    rng = np.random.default_rng(q)
    variant = TranscriptVariant.p3(field)
    _run_both(gpu, variant, [("queries", 1 << 12, 0, q), ("sample_ef",)], rng, _start(variant, rng),
              scratch_words=1 << 16)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_rejected_samples(gpu, field):
    """Samples whose canonical value is P - 1 (the only ones sample_uniform_bits rejects at these sizes) are
    redrawn: an output buffer holding some, then query draws at several sizes."""
    variant = TranscriptVariant.p3(field)
    top = field.to_monty_int(field.P - 1)
    rng = np.random.default_rng(11)
    for log_folded in (1, 4, field.TWO_ADICITY):
        start = variant.challenger()
        sponge = _words(rng, field, 16)
        sponge[[7, 5, 4, 0]] = top  # popped first: state[7]
        start.sponge_state = sponge
        start.output_buffer = [int(w) for w in sponge[:8]]
        probe = start.clone()
        draws = [probe.sample_uniform_bits(log_folded) for _ in range(3)]
        assert len(probe.output_buffer) == 8 - 3 - 3  # three draws took six samples
        assert draws  # the host redraws too
        _run_both(gpu, variant, [("queries", 1 << log_folded, 0, 3), ("sample",), ("queries", 1 << log_folded, 0, 2)],
                  rng, start)


def test_rejects_what_it_cannot_draw(gpu):
    variant = TranscriptVariant.p3(KOALABEAR)
    run = _run(gpu, variant, variant.challenger())
    with pytest.raises(ConfigError):
        run.transcript.sample_queries(1 << 26, 1, 4)  # 2^25 points: past KoalaBear's two-adicity
    with pytest.raises(ConfigError):
        run.transcript.sample_queries(1 << 17, 0, 1 << 16)
    run.finish()


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_length_tag_only(gpu, field):
    """length_tagged without distinct_queries: the default query sampler on the tagged challenger; its grind over
    the field's full range (every launch after the hit exits at once)."""
    from whirgpu.protocol.query_indices import sample_query_indices

    variant = TranscriptVariant(field, length_tagged=True)
    rng = np.random.default_rng(5)
    start = _start(variant, rng)
    host = start.clone()
    run = _run(gpu, variant, start)
    run.transcript.full_range = True
    words = _words(rng, field, 13)
    run.transcript.observe(run.put(words))
    queries = run.transcript.sample_queries(1 << 12, 1, 30)
    witness = run.transcript.grind(5)
    z = run.transcript.sample_ef()
    run.finish()
    host.observe_many(words)
    want = sample_query_indices(host, 1 << 12, 1, 30)
    count = int(run.get(queries.count)[0])
    assert run.get(queries.indices)[:count].tolist() == want
    assert int(run.get(witness).reshape(-1)[0]) == int(host.grind(5))
    np.testing.assert_array_equal(run.get(z), host.sample_ef())
    np.testing.assert_array_equal(run.state(), _host_state(host))


def test_default_variant_is_todays(gpu):
    """The default variant composes today's kernels (same cache keys, no CH_* constants) and runs the untagged
    challenger."""
    rng = np.random.default_rng(9)
    start = DuplexChallenger()
    start.observe_many(_words(rng, BABYBEAR, 5))
    host = start.clone()
    run = DeviceRun(gpu, start)
    assert run.transcript.variant.is_default
    assert run.transcript.kernel("pow_search", constants={"WG": 64, "TAIL": 1}) is gpu.state.drivers.kernel(
        "pow_search", constants={"WG": 64, "TAIL": 1})
    words = _words(rng, BABYBEAR, 3)
    run.transcript.observe(run.put(words))
    z = run.transcript.sample_ef()
    run.finish()
    host.observe_many(words)
    np.testing.assert_array_equal(run.get(z), host.sample_ef())
    np.testing.assert_array_equal(run.state(), _host_state(host))


# -- programs riding on reductions (BabyBear: the cpu backend's kernels are BabyBear's) -------------------------
CPU = CpuBackend()


@pytest.fixture
def tagged(gpu, monkeypatch):
    """The backend's kernels composed through the tagged variant (what the backend will do for a p3 proof)."""
    variant = TranscriptVariant.p3(BABYBEAR)
    kernel = gpu.state.drivers.kernel

    def composed(stem, entry=None, constants=None, field="babybear"):
        merged, _ = variant.kernel_args(stem, constants)
        return kernel(stem, entry, merged or None, field)

    monkeypatch.setattr(gpu.state.drivers, "kernel", composed)
    return variant


@pytest.mark.parametrize("log_n", [3, 11])
def test_program_rides_on_an_evaluation(gpu, tagged, log_n):
    rng = np.random.default_rng(log_n)
    table = _words(rng, BABYBEAR, 4 << log_n).reshape(-1, 4)
    z = _words(rng, BABYBEAR, 4 * log_n).reshape(log_n, 4)
    start = _start(tagged, rng)
    host = start.clone()
    run = _run(gpu, tagged, start, points_words=8 * log_n)
    point = gpu.state.put(run.session.regions.points, z)
    answer = gpu.evaluate(gpu.upload(table), point)
    t = run.transcript
    t.observe(answer)
    expanded = gpu.expand_point(t.sample_ef(), log_n)
    queries = t.sample_queries(1 << 8, 1, 20)
    run.finish()
    want = CPU.evaluate(CPU.upload(table), z)
    np.testing.assert_array_equal(run.get(answer).reshape(4), want.reshape(4))
    host.observe_many(want.reshape(4))
    np.testing.assert_array_equal(run.get(expanded), multilinear.expand_from_univariate(host.sample_ef(), log_n))
    assert run.get(queries.indices).tolist() == distinct_query_indices(host, 1 << 8, 1, 20)
    np.testing.assert_array_equal(run.state(), _host_state(host))


@pytest.mark.parametrize("log_n, rounds", [(2, 2), (9, 5)])
def test_sumcheck_tail(gpu, tagged, log_n, rounds):
    from tests.backend.test_transcript_programs import _host_rounds

    rng = np.random.default_rng(log_n)
    table, weights = (_words(rng, BABYBEAR, 4 << log_n).reshape(-1, 4) for _ in range(2))
    start = _start(tagged, rng)
    host = start.clone()
    run = _run(gpu, tagged, start)
    fused = gpu.sumcheck_rounds(gpu.upload(table), gpu.upload(weights), run.transcript, rounds)
    assert fused is not None
    sums, _, _ = fused
    z = run.transcript.sample_ef()
    run.finish()
    want_sums, _, _ = _host_rounds(table, weights, host, rounds)
    for got, want in zip(sums, want_sums):
        np.testing.assert_array_equal(run.get(got), want)
    np.testing.assert_array_equal(run.get(z), host.sample_ef())
    np.testing.assert_array_equal(run.state(), _host_state(host))


def test_program_rides_on_a_commitment(gpu, tagged):
    """The root observed and a challenge sampled by the commitment's last merkle_top launch."""
    rng = np.random.default_rng(4)
    table = _words(rng, BABYBEAR, 1 << 10)
    start = _start(tagged, rng)
    host = start.clone()
    run = _run(gpu, tagged, start)
    commitment = gpu.commit(gpu.upload(table), 2, 9)
    assert run.transcript.tail is not None  # the root's merkle_top launch runs the program
    run.transcript.observe(commitment.root)
    z = run.transcript.sample_ef()
    run.finish()
    root = np.asarray(CPU.commit(CPU.upload(table), 2, 9).root, np.uint32).reshape(-1)
    np.testing.assert_array_equal(run.get(commitment.root).reshape(-1), root)
    host.observe_many(root)
    np.testing.assert_array_equal(run.get(z), host.sample_ef())
    np.testing.assert_array_equal(run.state(), _host_state(host))
