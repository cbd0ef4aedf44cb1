"""``Prover.prove`` as users call it, on every backend: the evaluations as a uint32 array (taken without a copy),
other integer dtypes and lists (narrowed), or a buffer on the prover's own device (wgpu and dawn) give the same
proof bytes as the Montgomery path with host-computed claims; bad input is one ``ConfigError`` naming the first
offending index and its value, and the prover keeps working after it."""

from __future__ import annotations

import numpy as np
import pytest

import whirgpu
from whirgpu import canonical
from whirgpu.api import Prover, canonical_table, points_to_monty
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.protocol.proof import Statement
from whirgpu.ref import field_np as F
from whirgpu.ref.multilinear import evaluate

N = 8
PARAMS = whirgpu.ProtocolParameters.default(num_variables=N, folding_factor=2, starting_log_inv_rate=1)


@pytest.fixture(scope="module")
def backend(gpu_runtime):
    return GpuBackend(gpu_runtime)


def _instance(seed: int = 0, claims: int = 2):
    rng = np.random.default_rng(seed)
    words = rng.integers(0, P, 1 << N, dtype=np.uint64).astype(np.uint32)
    words[:2] = (0, P - 1)
    return words, rng.integers(0, P, (claims, N, 4), dtype=np.uint64)


def _monty_path(words: np.ndarray, points) -> bytes:
    """The proof of the lower-level path: Montgomery table, claims evaluated on the host (on the cpu backend)."""
    poly = F.to_monty(words)
    point_array = points_to_monty(points, N)
    values = np.array([evaluate(poly, z) for z in point_array], np.uint32).reshape(-1, 4)
    return whirgpu.dump(Prover(PARAMS, backend=CpuBackend()).prove_monty(poly, Statement(point_array, values)),
                        "binary")


@pytest.mark.parametrize("claims", [0, 1, 3])
def test_every_dtype_proves_the_same_bytes(backend, claims):
    words, points = _instance(claims, claims)
    expected = _monty_path(words, points)
    prover = Prover(PARAMS, backend=backend)
    phases = []
    for evaluations in (words, words.astype(np.int64), words.astype(np.uint64), words.tolist(),
                        words.astype(">u4"), np.repeat(words, 2)[::2]):
        proof = prover.prove(evaluations, points)
        assert whirgpu.dump(proof, "binary") == expected, f"{getattr(evaluations, 'dtype', type(evaluations))}"
        phases.append(set(prover.last_phase_seconds))
    # a proof is recorded primitive by primitive, or (from the third proof of a shape on) its recorded launches
    # are replayed (backends/gpu/replay.py)
    assert all(p >= {"input", "upload", "claims"} or p >= {"input", "replay"} for p in phases)
    assert phases[-1] >= {"input", "replay"}


def test_a_device_buffer_proves_the_same_bytes(backend):
    words, points = _instance(7)
    prover = Prover(PARAMS, backend=backend)
    if prover.device is None:
        pytest.skip(f"{backend.name} takes no caller's buffers")
    usage = backend.rt.wgpu.BufferUsage
    buffer = prover.device.create_buffer_with_data(data=words, usage=usage.STORAGE)
    assert whirgpu.dump(prover.prove(buffer, points), "binary") == _monty_path(words, points)
    prover.prove(buffer, points)  # a backend's first proof also uploads its constant tables
    assert prover.last_transfers.uploaded < words.nbytes, "the table went through the host"


BAD_INPUTS = [
    (lambda w: _with(w, 17, P), "evaluations\\[17\\] = 2013265921 is not a canonical field element"),
    (lambda w: _with(w.astype(np.int64), 3, -5), "evaluations\\[3\\] = -5 is not"),
    (lambda w: _with(w.astype(np.uint64), 250, 1 << 32), "evaluations\\[250\\] = 4294967296 is not"),
    (lambda w: _with(w.astype(np.int32), 9, -1), "evaluations\\[9\\] = -1 is not"),
    (lambda w: _with(_with(w, 200, 0xFFFFFFFF), 100, P + 3), "evaluations\\[100\\] = 2013265924 is not"),
    (lambda w: w.astype(np.float64), "expected integers, got dtype float64"),
    (lambda w: w[:-1], "must have 2\\^8 = 256 entries, got shape \\(255,\\)"),
    (lambda w: w.reshape(16, 16), "got shape \\(16, 16\\)"),
    (lambda w: "not numbers", "expected integers, got dtype <U11"),
]


def _with(array: np.ndarray, index: int, value: int) -> np.ndarray:
    array = array.copy()
    array[index] = value
    return array


@pytest.mark.parametrize("make,message", BAD_INPUTS)
def test_bad_evaluations_are_one_clear_error(backend, make, message):
    words, points = _instance(1)
    for prover in (Prover(PARAMS, backend=backend), Prover(PARAMS, backend="cpu")):
        with pytest.raises(ConfigError, match=message) as raised:
            prover.prove(make(words), points)
        assert "\n" not in str(raised.value)
        assert whirgpu.is_valid(prover.prove(words, points)), "the prover is unusable after an error"


def test_a_uint32_array_is_taken_as_it_is():
    words, _ = _instance()
    assert canonical_table(words, N) is words


def test_wide_values_are_narrowed_in_shares(monkeypatch):
    """64-bit input is narrowed over several threads once a table is large (here forced with 16-value shares); the
    result is the same, and the first out-of-range value is named whatever share it lies in."""
    monkeypatch.setattr(canonical, "NARROW_SHARE", 16)
    monkeypatch.setattr(canonical, "NARROW_THREADS", 4)
    words, _ = _instance(3)
    for wide in (words.astype(np.int64), words.astype(np.uint64)):
        narrowed = canonical_table(wide, N)
        assert narrowed.dtype == np.uint32 and np.array_equal(narrowed, words)
    wide = words.astype(np.int64)
    wide[[200, 37, 250]] = (-1, 1 << 32, -9)
    with pytest.raises(ConfigError, match="evaluations\\[37\\] = 4294967296 is not"):
        canonical_table(wide, N)
