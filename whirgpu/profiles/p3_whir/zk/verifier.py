"""The hiding PCS's verifier (upstream ``HidingWhirPcs::verify`` / ``HidingWhirVerifier``), numpy reference.

Contract: ``zk_verify(config, field, commitment, proof, points)`` returns None on acceptance; a false proof raises
``VerificationError`` (``round`` and ``check`` set: "initial", "round i", "final"; checks named after upstream's
errors), a proof that is not one of this configuration's shape (types, array shapes, words outside the field)
raises ``ProofFormatError``; nothing else. ``commitment`` is the ``MerkleCap`` of ``zk_commit``, ``points``
(E, n, 4) Montgomery words, the claimed values are the proof's ``evals``.

Steps (the transcript is the prover's, see ``prover`` and ``docs/ZK-PROTOCOL.md``): observe the root, then each
point and its value; alpha; the source claim sum alpha^i [eq(point_i, .)] with target sum alpha^i value_i; per
masked batch ``sumcheck.verify_batch`` (the source constraints fold through the batch's challenges, then scale by
eps; the mask claim covectors scale by eps / 2^k and gain [1, gamma_j, gamma_j^2, ...] per round); per round: the
two roots, OOD answers, PoW, checkpoint, queries on the previous oracle (Merkle-checked, folded), the combination
(target = target + sum c_i ood_i + sum c_j folded_j; the source gains power constraints; the switch mask gains its
covector); finally ``base_case.verify_base_case``.
"""

from __future__ import annotations

import numpy as np

from ....errors import ProofFormatError
from ....field import Field
from ....protocol.query_indices import distinct_query_indices
from ....protocol.verifier import reject
from ....ref.field_np import field_ops
from ....ref.merkle_pruned import root_from_pruned
from ....ref.multilinear import eq_at, eq_table, evaluate_rows
from ....ref.poseidon2 import compress, hash_rows_24
from ....ref.poseidon2_constants import Poseidon2Constants
from ..proof import MerkleCap, QueryOpenings
from .base_case_verifier import verify_base_case
from .config import ZkWhirConfig
from .proof import ZkWhirProof
from .prover import zk_challenger
from .shapes import check_proof_types
from .sumcheck import switch_covector, verify_batch


class MerkleChecker:
    """Checks pruned multiproofs against a root with the profile's hashes."""

    def __init__(self, field: Field):
        constants16, constants24 = Poseidon2Constants.smallrng_16_24(field)
        self.leaf_constants = constants24
        self.compress = lambda left, right: compress(left, right, constants16)

    def rows(self, name: str, check: str, openings: QueryOpenings, kind: str, indices, root: np.ndarray,
             height: int, width: int) -> np.ndarray:
        """The opened rows (q, width[, 4]) once their multiproof reaches ``root``; else VerificationError."""
        if openings.kind != kind:
            raise reject(name, check, f"expected {kind} openings, got {openings.kind}")
        if openings.num_queries != len(indices):
            raise reject(name, "query-count", f"expected {len(indices)} opened rows, got {openings.num_queries}")
        if not indices:
            if openings.sibling_hashes.shape[0]:
                raise reject(name, check, "sibling hashes without openings")
            return openings.rows
        if openings.width != width:
            raise reject(name, check, f"rows of {openings.width} values, expected {width}")
        leaves = hash_rows_24(openings.rows.reshape(len(indices), -1), self.leaf_constants)
        try:
            computed = root_from_pruned(indices, leaves, openings.sibling_hashes, height.bit_length() - 1,
                                        self.compress)
        except ValueError as exc:
            raise reject(name, check, str(exc)) from None
        if not np.array_equal(computed, root):
            raise reject(name, check, "the pruned Merkle multiproof does not reach the root")
        return openings.rows


class SourceClaim:
    """The verifier's symbolic source covector (upstream ``SourceClaim``): eq terms (point, coeff) and power
    terms (x, m, coeff) = coeff x^i at index i of 2^m."""

    def __init__(self, field: Field):
        self.field, self.ops = field, field_ops(field)
        self.eq_terms: list[list] = []
        self.pow_terms: list[list] = []

    def fold(self, gammas: np.ndarray) -> None:
        ops, k = self.ops, gammas.shape[0]
        one = ops.ef_from_base(ops.ONE)
        for term in self.eq_terms:
            term[1] = ops.ef_mul(term[1], eq_at(term[0][:k], gammas, self.field))
            term[0] = term[0][k:]
        for term in self.pow_terms:
            x, m = term[0], term[1]
            for t in range(k):  # bit t of the index weighs x^(2^(m-1-t))
                y = ops.ef_power(x, 1 << (m - 1 - t))
                term[2] = ops.ef_mul(term[2], ops.ef_add(ops.ef_sub(one, gammas[t]), ops.ef_mul(gammas[t], y)))
            term[1] = m - k

    def scale(self, eps: np.ndarray) -> None:
        for term in self.eq_terms:
            term[1] = self.ops.ef_mul(term[1], eps)
        for term in self.pow_terms:
            term[2] = self.ops.ef_mul(term[2], eps)

    def materialize(self, num_variables: int) -> np.ndarray:
        ops = self.ops
        dense = np.zeros((1 << num_variables, 4), np.uint32)
        for point, coeff in self.eq_terms:
            dense = ops.ef_add(dense, eq_table(point, coeff, self.field))
        for x, _, coeff in self.pow_terms:
            dense = ops.ef_add(dense, ops.ef_mul(coeff, ops.ef_powers(x, 1 << num_variables)))
        return dense


def _cap_root(cap, what: str) -> np.ndarray:
    if not isinstance(cap, MerkleCap) or cap.roots.shape != (1, 8):
        raise ProofFormatError(f"{what}: expected a MerkleCap of one root")
    return cap.roots[0]


def zk_verify(config: ZkWhirConfig, field: Field, commitment: MerkleCap, proof: ZkWhirProof, points) -> None:
    ops, inner, n = field_ops(field), config.inner, config.num_variables
    points = np.asarray(points)
    if points.ndim != 3 or points.shape[1:] != (n, 4) or points.dtype.kind not in "iu" or \
            (points.size and (points.min() < 0 or points.max() >= field.P)):
        raise ProofFormatError(f"points: expected (E, {n}, 4) Montgomery words, got shape {points.shape}")
    points = points.astype(np.uint32)
    check_proof_types(proof, field)
    merkle = MerkleChecker(field)
    challenger = zk_challenger(config, field)
    challenger.observe_many(_cap_root(commitment, "commitment"))
    if len(proof.evals) != len(points):
        raise reject("initial", "eval-count", f"expected {len(points)} claimed values, got {len(proof.evals)}")
    for point, value in zip(points, proof.evals):
        challenger.observe_many(point)
        challenger.observe_many(value)
    if len(proof.rounds) != config.n_rounds:
        raise reject("initial", "round-count", f"expected {config.n_rounds} rounds, got {len(proof.rounds)}")
    for what, items in (("sumcheck batches", proof.sumchecks),
                        ("sumcheck mask commitments", proof.sumcheck_mask_commitments)):
        if len(items) != config.n_rounds + 1:
            raise reject("initial", "batch-count", f"expected {config.n_rounds + 1} {what}, got {len(items)}")
    alpha = challenger.sample_ef()
    coeffs = ops.ef_powers(alpha, len(points))
    target = ops.ef_sum(ops.ef_mul(coeffs, proof.evals)) if len(points) else ops.ef_from_base(ops.ZERO)
    source = SourceClaim(field)
    source.eq_terms = [[p, c] for p, c in zip(points, coeffs)]
    covectors: list[np.ndarray] = []

    def batch(b: int, name: str, k: int, pow_bits: int, target):
        root = _cap_root(proof.sumcheck_mask_commitments[b], f"{name} sumcheck mask commitment")
        gammas, eps, target = verify_batch(name, proof.sumchecks[b], root, target, k, pow_bits, config.ell_zk,
                                           challenger, field)
        source.fold(gammas)
        source.scale(eps)
        scale = ops.ef_mul(eps, ops.ef_from_base(ops.inv(ops.power(ops.constant(2), k))))
        covectors[:] = [ops.ef_mul(c, scale) for c in covectors]
        covectors.extend(ops.ef_powers(g, config.ell_zk) for g in gammas)
        return gammas, target

    gammas, target = batch(0, "initial", config.fold(0), inner.starting_folding_pow_bits, target)
    active_root, active_kind = _cap_root(commitment, "commitment"), "base"
    num_variables = n - config.fold(0)
    mask_roots = [_cap_root(proof.sumcheck_mask_commitments[0], "initial sumcheck mask commitment")]
    for r, params in enumerate(inner.round_parameters):
        name, rp = f"round {r}", proof.rounds[r]
        k, k_next = config.fold(r), config.fold(r + 1)
        root, mask_root = _cap_root(rp.commitment, f"{name} commitment"), _cap_root(rp.mask_commitment, name)
        challenger.observe_many(root)
        challenger.observe_many(mask_root)
        if len(rp.ood_answers) != params.ood_samples:
            raise reject(name, "ood-count", f"expected {params.ood_samples} OOD answers, got {len(rp.ood_answers)}")
        rhos = []
        for answer in rp.ood_answers:
            rhos.append(challenger.sample_ef())
            challenger.observe_many(answer)
        if params.pow_bits > 0 and not challenger.check_witness(params.pow_bits, rp.pow_witness):
            raise reject(name, "pow", "invalid proof-of-work witness")
        challenger.sample()
        indices = distinct_query_indices(challenger, params.domain_size, k, params.num_queries)
        rows = merkle.rows(name, "merkle", rp.openings, active_kind, indices, active_root,
                           params.domain_size >> k, 1 << k)
        folded = evaluate_rows(rows, gammas, field) if indices else np.zeros((0, 4), np.uint32)
        xs = [ops.ef_from_base(ops.power(ops.constant(params.folded_domain_gen), i)) for i in indices]
        combination = challenger.sample_ef()
        all_coeffs = ops.ef_mul(ops.ef_powers(combination, len(rhos) + len(xs)), combination)
        ood_coeffs, query_coeffs = all_coeffs[:len(rhos)], all_coeffs[len(rhos):]
        for c, v in zip(all_coeffs, list(rp.ood_answers) + list(folded)):
            target = ops.ef_add(target, ops.ef_mul(c, v))
        source.pow_terms += [[x, num_variables, c] for x, c in zip(rhos + xs, list(ood_coeffs) + list(query_coeffs))]
        covectors.append(switch_covector(ops, 1 << num_variables, config.oracle_randomness[r], params.ood_samples,
                                         rhos, ood_coeffs, xs, query_coeffs))
        mask_roots.append(mask_root)
        gammas, target = batch(r + 1, name, k_next, params.folding_pow_bits, target)
        mask_roots.append(_cap_root(proof.sumcheck_mask_commitments[r + 1], f"{name} sumcheck mask commitment"))
        active_root, active_kind = root, "extension"
        num_variables -= k_next
    final = inner.final_round_config()
    height = final.domain_size >> final.folding_factor

    def source_values(positions, openings):
        rows = merkle.rows("final", "merkle", openings, active_kind, positions, active_root, height,
                           1 << final.folding_factor)
        return evaluate_rows(rows, gammas, field) if positions else np.zeros((0, 4), np.uint32)

    verify_base_case(config, field, proof.base_case, source.materialize(final.num_variables), covectors,
                     mask_roots, target, source_values, challenger, merkle)
