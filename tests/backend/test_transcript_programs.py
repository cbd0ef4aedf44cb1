"""Transcript programs riding on other launches (challenger.wgsl / .metal), against the host: the ops that derive
values from a challenge (EXPAND, POWERS), programs run as the epilogue of a reduction (no launch of their own), and
``sumcheck_tail`` (a phase's pow-free rounds in one launch) against the prover's loop on the cpu backend. Every
runtime (wgpu with both multiplies, Dawn, msl-cpu)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.backend.test_device_transcript import DeviceRun, _host_state
from whirgpu.backends.gpu.drivers import CountingBatch
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import SUMCHECK_TAIL_MAX, GpuBackend
from whirgpu.field import P
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref import field_np as F
from whirgpu.ref import multilinear

CPU = CpuBackend()
EDGE = np.array([0, 1, P - 1, P - 2, (P - 1) // 2], np.uint32)


@pytest.fixture(scope="module")
def gpu(gpu_runtime):
    return GpuBackend(gpu_runtime)


def _random(rng, shape):
    values = rng.integers(0, P, size=shape, dtype=np.uint64).astype(np.uint32)
    mask = rng.random(shape) < 0.1
    values[mask] = rng.choice(EDGE, size=int(mask.sum()))
    return values


def _start(rng) -> DuplexChallenger:
    start = DuplexChallenger()
    start.observe_many(rng.integers(0, P, int(rng.integers(0, 12)), dtype=np.uint64).astype(np.uint32))
    return start


@pytest.mark.parametrize("nv", [1, 2, 7, 20, 30])
def test_expand(gpu, nv):
    """EXPAND: (z^(2^(nv-1)), ..., z^2, z) of a sampled z into the points region."""
    rng = np.random.default_rng(nv)
    start = _start(rng)
    host = start.clone()
    run = DeviceRun(gpu, start, points_words=4 * nv)
    point = gpu.expand_point(run.transcript.sample_ef(), nv)
    run.finish()
    np.testing.assert_array_equal(run.get(point), multilinear.expand_from_univariate(host.sample_ef(), nv))


@pytest.mark.parametrize("n, slots, count", [(1, 0, None), (3, 5, 5), (2, 7, 3), (0, 9, 0), (4, 6, 11), (1, 300, 200),
                                             (37, 0, None)])
def test_powers(gpu, n, slots, count):
    """POWERS: x^0 .. x^(n + slots - 1), zero for the slots past a drawn count (None: every slot counts)."""
    rng = np.random.default_rng(n * 1000 + slots)
    start = _start(rng)
    host = start.clone()
    run = DeviceRun(gpu, start)
    regions = run.session.regions
    count_value = None
    if count is not None:
        count_value = gpu.state.put(regions.scratch, np.array([count], np.uint32))
    x = run.transcript.sample_ef()
    out = regions.scratch.take((n + slots, 4))
    run.transcript.powers(x, out, n, slots, count_value)
    run.finish()
    want = F.ef_powers(host.sample_ef(), n + slots).reshape(-1, 4)
    valid = n + (slots if count is None else min(count, slots))
    want[valid:] = 0
    np.testing.assert_array_equal(run.get(out), want)
    np.testing.assert_array_equal(run.state(), _host_state(host))


class _Counting:
    """Counts the dispatches recorded through the backend's batches."""

    def __init__(self, monkeypatch):
        self.n = 0
        original = CountingBatch.dispatch

        def dispatch(batch, *args):
            self.n += 1
            return original(batch, *args)

        monkeypatch.setattr(CountingBatch, "dispatch", dispatch)


@pytest.mark.parametrize("log_n, windows", [(3, False), (11, False), (11, True)])
def test_a_program_rides_on_an_evaluation(gpu, log_n, windows, monkeypatch):
    """observe(answer), sample, expand and powers after an evaluation: no launch of their own, the challenger and
    the values as the host's (also when the evaluation takes several launches, one per window)."""
    rng = np.random.default_rng(log_n)
    if windows:
        monkeypatch.setattr(gpu, "binding_limit", 1 << 10)
    table = _random(rng, (1 << log_n, 4))
    z = _random(rng, (log_n, 4))
    start = _start(rng)
    host = start.clone()
    run = DeviceRun(gpu, start, points_words=8 * log_n)
    point = gpu.state.put(run.session.regions.points, z)
    device_table = gpu.upload(table)
    counting = _Counting(monkeypatch)
    answer = gpu.evaluate(device_table, point)
    t = run.transcript
    t.observe(answer)
    expanded = gpu.expand_point(t.sample_ef(), log_n)
    powers = gpu.challenge_powers(t.sample_ef(), 3)
    run.finish()
    windows_needed = -(-table.nbytes // gpu.state.window_limit)
    assert counting.n == windows_needed
    want = CPU.evaluate(CPU.upload(table), z)
    np.testing.assert_array_equal(run.get(answer).reshape(4), want.reshape(4))
    host.observe_many(want.reshape(4))
    np.testing.assert_array_equal(run.get(expanded), multilinear.expand_from_univariate(host.sample_ef(), log_n))
    np.testing.assert_array_equal(run.get(powers), F.ef_powers(host.sample_ef(), 3).reshape(-1, 4))
    np.testing.assert_array_equal(run.state(), _host_state(host))


def _host_rounds(table: np.ndarray, weights: np.ndarray, host: DuplexChallenger, rounds: int):
    t, w = CPU.upload(table), CPU.upload(weights)
    sums = []
    for _ in range(rounds):
        h = CPU.sumcheck_round(t, w)
        host.observe_many(np.asarray(h, np.uint32).reshape(-1))
        t, w = CPU.fold(t, w, host.sample_ef())
        sums.append(np.asarray(h, np.uint32).reshape(2, 4))
    return sums, CPU.download(t), CPU.download(w)


@pytest.mark.parametrize("log_n, rounds", [(1, 1), (2, 2), (4, 4), (8, 3), (9, 5), (12, 4)])
def test_sumcheck_tail(gpu, log_n, rounds, monkeypatch):
    """A phase's pow-free rounds in one sumcheck_tail launch: the sums, the folded tables and the challenger as the
    prover's loop leaves them on the cpu backend; table sizes across a workgroup's width (256) and up to the
    threshold, 1 to 5 rounds."""
    assert 1 << log_n <= SUMCHECK_TAIL_MAX
    rng = np.random.default_rng(log_n * 10 + rounds)
    table, weights = _random(rng, (1 << log_n, 4)), _random(rng, (1 << log_n, 4))
    start = _start(rng)
    host = start.clone()
    run = DeviceRun(gpu, start)
    counting = _Counting(monkeypatch)
    fused = gpu.sumcheck_rounds(gpu.upload(table), gpu.upload(weights), run.transcript, rounds)
    assert fused is not None
    sums, folded_table, folded_weights = fused
    z = run.transcript.sample_ef()  # the program after the phase rides on it too
    run.finish()
    assert counting.n == 1
    want_sums, want_table, want_weights = _host_rounds(table, weights, host, rounds)
    for got, want in zip(sums, want_sums):
        np.testing.assert_array_equal(run.get(got), want)
    np.testing.assert_array_equal(gpu.download(folded_table), want_table.reshape(-1, 4))
    np.testing.assert_array_equal(gpu.download(folded_weights), want_weights.reshape(-1, 4))
    np.testing.assert_array_equal(run.get(z), host.sample_ef())
    np.testing.assert_array_equal(run.state(), _host_state(host))


def test_sumcheck_tail_declines(gpu):
    """Outside a proof, a base table, a table past the threshold or more rounds than a program holds: None (the
    prover's loop runs the rounds)."""
    rng = np.random.default_rng(5)
    small = gpu.upload(_random(rng, (16, 4)))
    assert gpu.sumcheck_rounds(small, small, None, 2) is None  # no proof session
    run = DeviceRun(gpu, DuplexChallenger())
    base = gpu.upload(_random(rng, (16,)))
    big = gpu.upload(_random(rng, (2 * SUMCHECK_TAIL_MAX, 4)))
    assert gpu.sumcheck_rounds(base, small, run.transcript, 2) is None
    assert gpu.sumcheck_rounds(big, big, run.transcript, 2) is None
    wide = gpu.upload(_random(rng, (64, 4)))
    assert gpu.sumcheck_rounds(wide, wide, run.transcript, 6) is None  # 12 op slots: more than a program holds
    run.finish()
