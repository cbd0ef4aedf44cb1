"""``Prover.close()`` and ``with Prover(...)``: the backend's pooled buffers and the runtime's device are released
at once, so a process that makes Provers one after another keeps a flat RSS; a closed prover refuses to prove."""

from __future__ import annotations

import numpy as np
import pytest

import whirgpu
from whirgpu.errors import BackendUnavailable
from whirgpu.protocol.params import ProtocolParameters

from .conftest import open_runtime

N = 10
PARAMS = ProtocolParameters.default(num_variables=N, folding_factor=2, starting_log_inv_rate=1, security_level=32,
                                    pow_bits=0)
EVALS = np.arange(1 << N)
POINT = np.zeros((1, N), np.int64)
MIB = 1 << 20


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_a_closed_prover_refuses_to_prove():
    prover = whirgpu.Prover(PARAMS, backend="cpu")
    prover.prove(EVALS, POINT)
    prover.close()
    prover.close()  # idempotent
    assert prover.closed
    with pytest.raises(BackendUnavailable, match="this Prover is closed") as info:
        prover.prove(EVALS, POINT)
    assert "\n" not in str(info.value)
    with pytest.raises(BackendUnavailable, match="closed"):
        with prover:
            pass


def test_with_block_closes_even_on_error():
    with pytest.raises(RuntimeError):
        with whirgpu.Prover(PARAMS, backend="cpu") as prover:
            assert whirgpu.is_valid(prover.prove(EVALS, POINT))
            raise RuntimeError("inside")
    assert prover.closed


@pytest.fixture(scope="module")
def wgpu_available():
    runtime = open_runtime("wgpu", "emulated")  # skips (or fails under WHIRGPU_REQUIRE) without wgpu
    runtime.close()
    assert runtime.device is None
    runtime.close()  # idempotent


def test_close_releases_the_device(wgpu_available):
    with whirgpu.Prover(PARAMS, backend="wgpu") as prover:
        proof = prover.prove(EVALS, POINT)
        runtime = prover.backend.rt
        assert runtime.device is not None
    assert runtime.device is None and prover.backend_reason
    whirgpu.verify(proof)  # a proof outlives its prover


def test_a_given_backend_stays_open(wgpu_available):
    from whirgpu.backends.gpu import GpuBackend
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    backend = GpuBackend(WgpuRuntime())
    with whirgpu.Prover(PARAMS, backend=backend) as prover:
        first = prover.prove(EVALS, POINT)
    assert backend.rt.device is not None  # the caller's to close
    with whirgpu.Prover(PARAMS, backend=backend) as again:
        assert whirgpu.dump(again.prove(EVALS, POINT), "binary") == whirgpu.dump(first, "binary")
    backend.close()
    assert backend.rt.device is None


def test_fifty_provers_keep_rss_flat(wgpu_available):
    """Created, used and closed in turn. Dropped without close(), each wgpu prover on lavapipe left 9-13 MiB
    behind (held in reference cycles until a collection); closed, the RSS after the first ten stays within a
    small bound however many follow."""
    def one() -> None:
        with whirgpu.Prover(PARAMS, backend="wgpu") as prover:
            prover.prove(EVALS, POINT)

    for _ in range(10):  # allocator and driver caches reach their steady state
        one()
    start = rss_bytes()
    for _ in range(40):
        one()
    grown = rss_bytes() - start
    assert grown < 64 * MIB, f"RSS grew {grown / MIB:.1f} MiB over 40 closed provers"
