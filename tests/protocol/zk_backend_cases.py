"""Cases for the hiding prover on a backend (``profiles.p3_whir.zk.backend_prover``): small configurations of 0, 1
and 2 code-switching rounds in both fields, random polynomials and points, and the check that a backend's proof
is the numpy reference's byte for byte."""

from __future__ import annotations

import numpy as np

from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.config import P3Parameters, SoundnessType
from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard
from whirgpu.profiles.p3_whir.zk.backend_prover import ZkBackendProver
from whirgpu.profiles.p3_whir.zk.config import ZkWhirConfig
from whirgpu.profiles.p3_whir.zk.format import zk_proof_to_postcard
from whirgpu.profiles.p3_whir.zk.prover import zk_prove
from whirgpu.protocol.folding import Constant
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.field_np import field_ops

# (field, num_variables, folding factor, starting log inv rate, pow bits, code-switching rounds it derives)
SYNTHETIC = [(KOALABEAR, 8, 2, 3, 0, 0), (BABYBEAR, 8, 2, 3, 0, 0), (KOALABEAR, 10, 3, 3, 0, 1),
             (BABYBEAR, 10, 3, 3, 2, 1), (KOALABEAR, 12, 2, 3, 0, 2), (BABYBEAR, 12, 2, 3, 0, 2)]


def case_id(case) -> str:
    field, n, k, rate, pow_bits, rounds = case
    return f"{field.name}-n{n}-k{k}-r{rate}-p{pow_bits}-R{rounds}"


def synthetic(case, n_points: int = 2, seed: int = 0):
    """(config, field, polynomial, points, mask seed) of a ``SYNTHETIC`` case."""
    field, n, k, rate, pow_bits, rounds = case
    config = ZkWhirConfig.derive(n, P3Parameters(32, pow_bits, Constant(k), SoundnessType.CapacityBound, rate), field)
    assert config.n_rounds == rounds
    ops, rng = field_ops(field), np.random.default_rng(seed + n)
    polynomial = ops.to_monty(rng.integers(0, field.P, size=1 << n, dtype=np.uint64))
    points = ops.to_monty(rng.integers(0, field.P, size=(n_points, n, 4), dtype=np.uint64))
    return config, field, polynomial, points, seed + 11


def assert_same_proof(backend, config, field, polynomial, points, mask_seed: int, one_session: bool = True) -> str:
    """``ZkBackendProver`` on ``backend`` proves what ``zk_prove`` does, byte for byte, drawing as many mask words;
    returns the path it took ("one session" or "steps", ``ZkBackendProver.last_path``)."""
    want_rng, got_rng = StdRng.seed_from_u64(mask_seed), StdRng.seed_from_u64(mask_seed)
    want_cap, want = zk_prove(config, field, polynomial, points, want_rng)
    prover = ZkBackendProver(backend, config, field, one_session=one_session)
    got_cap, got = prover.prove(polynomial, points, got_rng)
    assert merkle_cap_to_postcard(got_cap) == merkle_cap_to_postcard(want_cap)
    assert zk_proof_to_postcard(got).hex() == zk_proof_to_postcard(want).hex()
    assert got_rng.word_pos == want_rng.word_pos
    return prover.last_path
