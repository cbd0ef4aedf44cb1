"""The verifier's half of the masked base case (upstream ``base_case/verifier.rs``); ``base_case`` describes the
protocol. ``verify_base_case`` raises ``VerificationError`` (round "final") on a false proof, with upstream's
checks: mask-count, blinded-length, target, pow, query-count, merkle, source-spot-check, mask-spot-check."""

from __future__ import annotations

import numpy as np

from ....field import Field
from ....protocol.query_indices import distinct_query_indices
from ....protocol.verifier import reject
from ....ref.field_np import field_ops
from .config import ZkWhirConfig
from .oracles import padded_ood
from .proof import BaseCaseZkProof

NAME = "final"


def _point(ops, domain_size: int, position: int, field: Field) -> np.ndarray:
    generator = field.TWO_ADIC_GENERATORS[domain_size.bit_length() - 1]
    return ops.ef_from_base(ops.power(ops.constant(generator), position))


def _count(what: str, actual: int, expected: int, check: str = "mask-count") -> None:
    if actual != expected:
        raise reject(NAME, check, f"{what}: expected {expected}, got {actual}")


def verify_base_case(config: ZkWhirConfig, field: Field, proof: BaseCaseZkProof, source_covector: np.ndarray,
                     mask_covectors: list, mask_roots: list, target: np.ndarray, source_values, challenger,
                     merkle) -> None:
    ops = field_ops(field)
    message_len, randomness_len, domain_size = config.source_code()
    groups = config.mask_groups()
    shapes = [g.shape for g in groups for _ in range(g.width)]
    _count("mask covectors", len(mask_covectors), len(shapes))
    _count("mask commitments", len(mask_roots), len(groups))
    _count("blinded masks", len(proof.blinded_masks), len(shapes))
    _count("fresh mask commitments", len(proof.fresh_mask_commitments), len(groups))
    _count("blinded message", len(proof.blinded_message), message_len, "blinded-length")
    _count("blinded randomness", len(proof.blinded_randomness), randomness_len, "blinded-length")
    for i, (mask, shape) in enumerate(zip(proof.blinded_masks, shapes)):
        _count(f"blinded mask {i} message", len(mask.message), shape.message_len, "blinded-length")
        _count(f"blinded mask {i} randomness", len(mask.randomness), shape.randomness_len, "blinded-length")
    fresh_roots = [cap.roots[0] for cap in proof.fresh_mask_commitments]
    challenger.observe_many(proof.fresh_main_commitment.roots[0])
    for root in fresh_roots:
        challenger.observe_many(root)
    challenger.observe_many(proof.masked_claim)
    gamma = challenger.sample_ef()
    challenger.observe_many(proof.blinded_message)
    challenger.observe_many(proof.blinded_randomness)
    for mask in proof.blinded_masks:
        challenger.observe_many(mask.message)
        challenger.observe_many(mask.randomness)

    def dot(a, b):
        return ops.ef_sum(ops.ef_mul(a, b)) if len(a) else ops.ef_from_base(ops.ZERO)

    combined = dot(proof.blinded_message, source_covector)
    for mask, covector in zip(proof.blinded_masks, mask_covectors):
        combined = ops.ef_add(combined, dot(mask.message, covector))
    if not np.array_equal(combined, ops.ef_add(proof.masked_claim, ops.ef_mul(gamma, target))):
        raise reject(NAME, "target", "base-case target check failed")
    if config.final_pow_bits > 0 and not challenger.check_witness(config.final_pow_bits, proof.pow_witness):
        raise reject(NAME, "pow", "invalid proof-of-work witness")
    positions = distinct_query_indices(challenger, domain_size, 0, config.final_queries)
    values = source_values(positions, proof.source_openings)
    fresh = merkle.rows(NAME, "merkle", proof.fresh_main_openings, "extension", positions,
                        proof.fresh_main_commitment.roots[0], domain_size, 1)
    for position, value, row in zip(positions, values, fresh):
        blinded = padded_ood(_point(ops, domain_size, position, field), proof.blinded_message,
                             proof.blinded_randomness, field)
        if not np.array_equal(blinded, ops.ef_add(row[0], ops.ef_mul(gamma, value))):
            raise reject(NAME, "source-spot-check", f"source spot check failed at position {position}")
    _count("mask openings", len(proof.mask_openings), len(groups), "query-count")
    offset = 0
    for g, (group, pair) in enumerate(zip(groups, proof.mask_openings)):
        size = group.shape.domain_size
        positions = distinct_query_indices(challenger, size, 0, config.mask_queries)
        carried = merkle.rows(NAME, "merkle", pair.carried, "extension", positions, mask_roots[g], size, group.width)
        fresh = merkle.rows(NAME, "merkle", pair.fresh, "extension", positions, fresh_roots[g], size, group.width)
        blinded = proof.blinded_masks[offset:offset + group.width]
        for position, carried_row, fresh_row in zip(positions, carried, fresh):
            point = _point(ops, size, position, field)
            for mask, c, f in zip(blinded, carried_row, fresh_row):
                if not np.array_equal(padded_ood(point, mask.message, mask.randomness, field),
                                      ops.ef_add(f, ops.ef_mul(gamma, c))):
                    raise reject(NAME, "mask-spot-check", f"mask group {g} spot check failed at position {position}")
        offset += group.width
