"""The hiding PCS's prover (upstream ``HidingWhirPcs::commit`` / ``open``, ``HidingWhirProver``), numpy reference.

Contract:
- ``zk_challenger(config, field)``: a fresh length-tagged challenger that has absorbed the zk domain separator.
- ``zk_commit(config, field, polynomial, challenger, rng)`` -> ``ZkCommitted``: draws the commitment fork
  ``StdRng.from_rng(rng)`` (32 bytes of ``rng``), from it oracle_randomness[0] << k0 base elements, commits the
  interleaved encoding of ``polynomial`` (2^n base Montgomery words) and observes its root.
- ``zk_open(config, field, committed, points, challenger, rng)`` -> ``ZkWhirProof``: per point (E, n, 4) observes its
  coordinates and value (the multilinear extension, point[0] the index's most significant bit), then draws the
  opening fork ``StdRng.from_rng(rng)`` and runs the HVZK prover on it.
- ``zk_prove(config, field, polynomial, points, rng)`` -> (the commitment ``MerkleCap``, the ``ZkWhirProof``): both
  on a fresh ``zk_challenger`` (what ``zk_verify`` checks).
With ``rng = StdRng.seed_from_u64(mask_seed)`` this is the oracle's ``prove-tables --zk`` byte for byte.
``docs/ZK-PROTOCOL.md`` describes every step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....field import Field
from ....protocol.query_indices import distinct_query_indices
from ....protocol.transcript import DuplexChallenger
from ....ref.chacha_rng import StdRng
from ....ref.field_np import field_ops
from ....ref.multilinear import eq_table, evaluate
from ....ref.poseidon2_constants import Poseidon2Constants
from ....ref.rng import random_base
from .base_case import prove_base_case
from .config import ZkWhirConfig, zk_domain_separator
from .draws import OracleBuilder, draw_opening
from .oracles import Committed, encode, mask_matrix, padded_ood, zk_padded_matrix
from .proof import ZkRoundProof, ZkWhirProof
from .sumcheck import ResidualSumcheck, prove_batch, switch_covector


def zk_challenger(config: ZkWhirConfig, field: Field) -> DuplexChallenger:
    challenger = DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], length_tagged=True)
    challenger.observe_many(field_ops(field).to_monty(np.asarray(zk_domain_separator(config), np.uint64)))
    return challenger


@dataclass
class ZkCommitted:
    """``HidingWhirProverData``: the polynomial, its encoding randomness (base, (oracle_randomness[0] << k0,))
    and the committed oracle."""

    polynomial: np.ndarray
    randomness: np.ndarray
    oracle: Committed


def zk_commit(config: ZkWhirConfig, field: Field, polynomial, challenger, rng: StdRng) -> ZkCommitted:
    polynomial = np.asarray(polynomial, np.uint32)
    n, k = config.num_variables, config.fold(0)
    if polynomial.shape != (1 << n,):
        raise ValueError(f"commit: expected 2^{n} evaluations, got shape {polynomial.shape}")
    fork = rng.fork()
    randomness = random_base(fork, config.oracle_randomness[0] << k, field)
    height = (1 << (n - k)) << config.inner.starting_log_inv_rate
    oracle = Committed(encode(zk_padded_matrix(polynomial, randomness, k, height), field), field)
    challenger.observe_many(oracle.root)
    return ZkCommitted(polynomial, randomness, oracle)


def fold_limbs(values: np.ndarray, chunk: int, gammas: np.ndarray, field: Field) -> np.ndarray:
    """(chunk, 4): sum_b eq(gammas, b) values[b chunk .. b chunk + chunk - 1] (values base or EF)."""
    ops = field_ops(field)
    eq = eq_table(gammas, field=field)
    values = np.asarray(values, np.uint32)
    blocks = values.reshape((eq.shape[0], chunk) + values.shape[1:])
    if values.ndim == 1:
        return ops.ef_sum(ops.ef_mul_base(eq[:, None, :], blocks), axis=0)
    return ops.ef_sum(ops.ef_mul(eq[:, None, :], blocks), axis=0)


class MaskLedger:
    """The prover's mask bookkeeping (upstream ``ProverMasks``): every mask message, its randomness, its claim
    covector and the groups' oracles, in proof order; ``aux`` = sum of <covector, message>."""

    def __init__(self, field: Field):
        self.ops = field_ops(field)
        self.messages, self.randomness, self.covectors, self.groups = [], [], [], []
        self.aux = self.ops.ef_from_base(self.ops.ZERO)

    def _dot(self, covector, message) -> np.ndarray:
        return self.ops.ef_sum(self.ops.ef_mul(covector, message))

    def record_batch(self, batch, k: int) -> None:
        ops = self.ops
        scale = ops.ef_mul(batch.eps, ops.ef_from_base(ops.inv(ops.power(ops.constant(2), k))))
        self.covectors = [ops.ef_mul(c, scale) for c in self.covectors]
        self.aux = ops.ef_mul(self.aux, scale)
        for gamma, message, randomness in zip(batch.gammas, batch.masks, batch.mask_randomness):
            covector = ops.ef_powers(gamma, message.shape[0])
            self.aux = ops.ef_add(self.aux, self._dot(covector, message))
            self.covectors.append(covector)
            self.messages.append(message)
            self.randomness.append(randomness)
        self.groups.append((k, batch.oracle))

    def push_switch_mask(self, covector, message, randomness, oracle: Committed) -> None:
        self.aux = self.ops.ef_add(self.aux, self._dot(covector, message))
        self.covectors.append(covector)
        self.messages.append(message)
        self.randomness.append(randomness)
        self.groups.append((1, oracle))


def zk_open(config: ZkWhirConfig, field: Field, committed: ZkCommitted, points, challenger, rng: StdRng) -> ZkWhirProof:
    ops = field_ops(field)
    inner = config.inner
    points = np.asarray(points, np.uint32).reshape(-1, config.num_variables, 4)
    values = np.array([evaluate(committed.polynomial, p, field) for p in points], np.uint32).reshape(-1, 4)
    for point, value in zip(points, values):
        challenger.observe_many(point)
        challenger.observe_many(value)
    draws = draw_opening(config, field, rng.fork(), OracleBuilder.now(field))

    alpha = challenger.sample_ef()
    coeffs = ops.ef_powers(alpha, len(points))
    claim = ops.ef_sum(ops.ef_mul(coeffs, values))
    weights = np.zeros((1 << config.num_variables, 4), np.uint32)
    for point, coeff in zip(points, coeffs):
        weights = ops.ef_add(weights, eq_table(point, coeff, field))
    residual = ResidualSumcheck(ops.ef_from_base(committed.polynomial), weights, claim, field)
    masks = MaskLedger(field)
    zero = ops.ef_from_base(ops.ZERO)
    batch = prove_batch(residual, draws.batches[0], inner.starting_folding_pow_bits, zero, challenger)
    sumchecks, mask_roots, rounds = [batch.data], [batch.oracle.cap], []
    masks.record_batch(batch, config.fold(0))
    oracle_randomness = fold_limbs(committed.randomness, config.oracle_randomness[0], batch.gammas, field)
    source = committed.oracle
    for r, params in enumerate(inner.round_parameters):
        k, k_next = config.fold(r), config.fold(r + 1)
        message = residual.evals
        drawn = draws.switches[r]
        fresh = drawn.fresh
        height = config.inv_rate(r) * (message.shape[0] >> k_next)
        oracle = Committed(encode(zk_padded_matrix(message, fresh, k_next, height), field), field)
        challenger.observe_many(oracle.root)
        shape = config.switch_masks[r]
        pad = drawn.pad
        mask_message = np.concatenate([oracle_randomness, pad])
        mask_randomness = drawn.mask_randomness
        mask_oracle = Committed(mask_matrix(mask_message[None], mask_randomness[None], shape.domain_size, field),
                                field)
        challenger.observe_many(mask_oracle.root)
        rhos, answers = [], []
        for _ in range(params.ood_samples):
            rho = challenger.sample_ef()
            answer = padded_ood(rho, message, mask_message, field)
            challenger.observe_many(answer)
            rhos.append(rho)
            answers.append(answer)
        pow_witness = int(challenger.grind(params.pow_bits)) if params.pow_bits > 0 else 0
        challenger.sample()
        indices = distinct_query_indices(challenger, params.domain_size, k, params.num_queries)
        openings = source.open(indices)  # the folded rows are the verifier's business
        xs = [ops.ef_from_base(ops.power(ops.constant(params.folded_domain_gen), i)) for i in indices]
        combination = challenger.sample_ef()
        all_coeffs = ops.ef_mul(ops.ef_powers(combination, len(rhos) + len(xs)), combination)
        ood_coeffs, query_coeffs = all_coeffs[:len(rhos)], all_coeffs[len(rhos):]
        n_msg = message.shape[0]
        delta = np.zeros((n_msg, 4), np.uint32)
        for point, coeff in zip(xs + rhos, list(query_coeffs) + list(ood_coeffs)):
            delta = ops.ef_add(delta, ops.ef_mul(coeff, ops.ef_powers(point, n_msg)))
        residual.accumulate(delta, ops.ef_sum(ops.ef_mul(message, delta)))
        covector = switch_covector(ops, n_msg, oracle_randomness.shape[0], pad.shape[0], rhos, ood_coeffs, xs,
                                    query_coeffs)
        masks.push_switch_mask(covector, mask_message, mask_randomness, mask_oracle)
        rounds.append(ZkRoundProof(oracle.cap, mask_oracle.cap, np.asarray(answers, np.uint32).reshape(-1, 4),
                                   pow_witness, openings))
        batch = prove_batch(residual, draws.batches[r + 1], params.folding_pow_bits, masks.aux, challenger)
        sumchecks.append(batch.data)
        mask_roots.append(batch.oracle.cap)
        masks.record_batch(batch, k_next)
        oracle_randomness = fold_limbs(fresh, config.oracle_randomness[r + 1], batch.gammas, field)
        source = oracle
    base_case = prove_base_case(config, field, residual.evals, oracle_randomness, residual.weights, masks,
                                source.open, challenger, draws.base)
    return ZkWhirProof(values, tuple(sumchecks), tuple(mask_roots), tuple(rounds), base_case)


def zk_prove(config: ZkWhirConfig, field: Field, polynomial, points, rng: StdRng):
    """Commit to ``polynomial`` and open it at ``points`` on one fresh transcript: (commitment, proof)."""
    challenger = zk_challenger(config, field)
    committed = zk_commit(config, field, polynomial, challenger, rng)
    return committed.oracle.cap, zk_open(config, field, committed, points, challenger, rng)
