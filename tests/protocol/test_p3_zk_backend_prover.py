"""The hiding prover with its heavy work on a backend (``ZkBackendProver``) on ``CpuBackend``: the oracle's zk
goldens byte for byte, and the numpy reference's proofs for 0, 1 and 2 code-switching rounds in both fields, an
opening without points, the host fallbacks (no eq form of an OOD point, a zero eps), and the table it commits."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import golden_p3_names, load_golden_p3
from tests.protocol.zk_backend_cases import SYNTHETIC, assert_same_proof, case_id, synthetic
from whirgpu.backends.base import P3_WHIR_LAYOUT, interleave_columns_host
from whirgpu.backends.cpu import CpuBackend
from whirgpu.field import KOALABEAR
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard
from whirgpu.profiles.p3_whir.zk import device_residual
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.device_residual import DeviceResidual, power_point
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance
from whirgpu.profiles.p3_whir.zk.format import zk_proof_to_postcard
from whirgpu.profiles.p3_whir.zk.oracles import encode, zk_padded_matrix
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.field_np import field_ops

ZK_GOLDEN = golden_p3_names("z0*.json")


@pytest.mark.parametrize("name", ZK_GOLDEN)
def test_golden_proofs(name):
    doc = load_golden_p3(name)
    inst = read_zk_instance(doc)
    backend = CpuBackend()
    layout = backend.layout
    cap, proof = ZkBackendProver(backend, inst.config, inst.field).prove(inst.polynomial, inst.points,
                                                                         StdRng.seed_from_u64(inst.mask_seed))
    assert merkle_cap_to_postcard(cap).hex() == doc["commitment_postcard_hex"]
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    assert backend.layout is layout  # restored


@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_same_proof_as_the_reference(case):
    assert_same_proof(CpuBackend(), *synthetic(case))


def test_an_opening_without_points():
    config, field, polynomial, _, seed = synthetic(SYNTHETIC[2])
    assert_same_proof(CpuBackend(), config, field, polynomial, np.zeros((0, config.num_variables, 4), np.uint32),
                      seed)


@pytest.mark.parametrize("case", [SYNTHETIC[4], SYNTHETIC[5]], ids=case_id)
def test_ood_points_without_an_eq_form_go_to_the_host(case, monkeypatch):
    """Where 1 + z^(2^j) = 0 the OOD weights are the host's: forced here on every other call (the OOD answers,
    ``Backend.univariate``, need no eq form)."""
    calls = []
    real = device_residual.power_point

    def sometimes(ops, z, m):
        calls.append(1)
        return None if len(calls) % 2 else real(ops, z, m)

    monkeypatch.setattr(device_residual, "power_point", sometimes)
    assert_same_proof(CpuBackend(), *synthetic(case))
    assert len(calls) >= 2  # one OOD point's weights on the host, one's at its eq form


@pytest.mark.parametrize("m", [0, 1, 5])
def test_power_point_is_the_powers(m):
    ops = field_ops(KOALABEAR)
    from whirgpu.ref.multilinear import eq_table
    z = ops.to_monty(np.array([5, 7, 11, 13], np.uint64))
    point, scale = power_point(ops, z, m)
    assert np.array_equal(eq_table(point, scale, KOALABEAR), ops.ef_powers(z, 1 << m))
    minus_one = ops.ef_from_base(ops.constant(KOALABEAR.P - 1))
    assert power_point(ops, minus_one, 1) is None and power_point(ops, minus_one, 0) is not None


def test_a_zero_eps_zeroes_the_weights():
    ops, backend = field_ops(KOALABEAR), CpuBackend()
    backend.layout = P3_WHIR_LAYOUT(KOALABEAR, "prefix")
    rng = np.random.default_rng(1)
    table = backend.upload(ops.to_monty(rng.integers(0, KOALABEAR.P, size=(8, 4), dtype=np.uint64)))
    weights = backend.upload(ops.to_monty(rng.integers(0, KOALABEAR.P, size=(8, 4), dtype=np.uint64)))
    residual = DeviceResidual(backend, table, weights, ops.ef_from_base(ops.ONE), KOALABEAR)
    residual.scale(ops.ef_from_base(ops.ZERO))
    assert not residual.host_weights().any() and not residual.claim.any()
    c0, c_inf = residual.round_coefficients()
    assert not c0.any() and not c_inf.any()


@pytest.mark.parametrize("ext", [False, True])
def test_the_committed_table_is_the_zk_encoding(ext):
    """Committing the zero-padded columns at the oracle's height gives ``zk_padded_matrix``'s codeword."""
    ops, backend = field_ops(KOALABEAR), CpuBackend()
    backend.layout = P3_WHIR_LAYOUT(KOALABEAR, "prefix")
    rng = np.random.default_rng(2)
    tail = (4,) if ext else ()
    message = ops.to_monty(rng.integers(0, KOALABEAR.P, size=(64,) + tail, dtype=np.uint64))
    randomness = ops.to_monty(rng.integers(0, KOALABEAR.P, size=(4 * 5,) + tail, dtype=np.uint64))
    commitment = backend.commit(backend.upload(interleave_columns_host(message, randomness, 2, 32)), 2, 6)
    codeword = encode(zk_padded_matrix(message, randomness, 2, 64), KOALABEAR)
    assert np.array_equal(commitment.handle[0], codeword.reshape(64, -1))
