"""The hiding PCS's masked base case (upstream ``pcs/zk/base_case``, Construction 7.2 of eprint 2026/391).

Prover (``prove_base_case``), in transcript order, its fresh values drawn (``draws.BaseCaseDraw``: in RNG order a
fresh source message (2^m EF), fresh source randomness (oracle_randomness[-1] EF), then per mask group, per mask of
the group, a fresh message (message_len EF) and its randomness (randomness_len EF)):
1. commit the fresh source codeword on the folded final domain (one column) and observe its root;
2. per mask group: observe the root of the group's fresh batch;
3. masked_claim = <fresh source message, source covector> + sum over every mask of <fresh mask message, its
   carried covector>; observe it; sample gamma;
4. reveal fresh + gamma * hidden for the source message, the source randomness, then every mask's message and
   randomness, observing each vector as it goes;
5. PoW (final_pow_bits); final positions = distinct indices into the folded final domain (final_queries); open the
   last committed oracle there (folded rows), and the fresh source codeword; then per group: mask_queries distinct
   positions of its domain, opened in the carried (committed earlier) and the fresh oracle.

Verifier (``verify_base_case``): the same transcript; each revealed vector has its shape; masked_claim + gamma *
(the carried claim) = <blinded source message, source covector> + sum <blinded mask message, covector>; at each
final position the folded source opening (gamma-combined with the fresh one) equals the blinded source codeword
there; at each mask position every carried and fresh row combine to the blinded mask codewords; every opening's
multiproof reaches its root.
"""

from __future__ import annotations

import numpy as np

from ....field import Field
from ....protocol.query_indices import distinct_query_indices
from ....ref.field_np import field_ops
from .config import ZkWhirConfig
from .oracles import Committed, mask_matrix
from .proof import BaseCaseZkProof, BlindedMask, MaskOpeningPair


def source_codeword(message: np.ndarray, randomness: np.ndarray, domain_size: int, field: Field) -> np.ndarray:
    """(domain, 1, 4): the folded source code's codeword of (message ‖ randomness)."""
    return mask_matrix(message[None], randomness[None], domain_size, field)


def commit_source_host(message: np.ndarray, randomness: np.ndarray, domain_size: int, field: Field) -> Committed:
    """The fresh source oracle on the host: ``source_codeword`` committed (``Committed``)."""
    return Committed(source_codeword(message, randomness, domain_size, field), field)


def prove_base_case(config: ZkWhirConfig, field: Field, source_message, source_randomness, source_covector, masks,
                    open_source, challenger, draw, commit_source=commit_source_host,
                    open_queries=None) -> BaseCaseZkProof:
    """The base case's proof (module contract) with ``draw``'s fresh values and group oracles
    (``draws.BaseCaseDraw``, in the oracle's RNG order). ``commit_source(message, randomness, domain_size,
    field)`` commits the fresh source codeword and returns an oracle with ``root``, ``cap`` and ``open(indices)``
    as ``Committed`` has them (a backend's, for the prover on a backend: the one large oracle of the base case).
    ``open_queries(challenger, pow_bits, domain_size, num_queries, fresh_main)``, where given, runs step 5's
    proof of work, final positions and both openings in one go: (witness, source openings, fresh openings), or
    None for the steps one by one."""
    ops = field_ops(field)
    _, _, domain_size = config.source_code()
    fresh_message, fresh_randomness = draw.message, draw.randomness
    fresh_main = commit_source(fresh_message, fresh_randomness, domain_size, field)
    challenger.observe_many(fresh_main.root)
    groups = config.mask_groups()
    fresh_groups = []
    for messages, randomness, pending in draw.groups:
        oracle = pending.get()
        challenger.observe_many(oracle.root)
        fresh_groups.append((messages, randomness, oracle))

    def dot(a, b):
        return ops.ef_sum(ops.ef_mul(a, b))

    masked_claim = dot(fresh_message, source_covector)
    fresh_mask_messages = [m for messages, _, _ in fresh_groups for m in messages]
    fresh_mask_randomness = [t for _, randomness, _ in fresh_groups for t in randomness]
    for message, covector in zip(fresh_mask_messages, masks.covectors):
        masked_claim = ops.ef_add(masked_claim, dot(message, covector))
    challenger.observe_many(masked_claim)
    gamma = challenger.sample_ef()

    def blind(fresh, hidden):
        return ops.ef_add(fresh, ops.ef_mul(hidden, gamma))

    blinded_message = blind(fresh_message, source_message)
    blinded_randomness = blind(fresh_randomness, source_randomness)
    challenger.observe_many(blinded_message)
    challenger.observe_many(blinded_randomness)
    blinded_masks = []
    for fresh_m, fresh_t, hidden_m, hidden_t in zip(fresh_mask_messages, fresh_mask_randomness, masks.messages,
                                                    masks.randomness):
        mask = BlindedMask(blind(fresh_m, hidden_m), blind(fresh_t, hidden_t))
        challenger.observe_many(mask.message)
        challenger.observe_many(mask.randomness)
        blinded_masks.append(mask)
    together = None if open_queries is None else \
        open_queries(challenger, config.final_pow_bits, domain_size, config.final_queries, fresh_main)
    if together is not None:
        pow_witness, source_openings, fresh_main_openings = together
    else:
        pow_witness = int(challenger.grind(config.final_pow_bits)) if config.final_pow_bits > 0 else 0
        positions = distinct_query_indices(challenger, domain_size, 0, config.final_queries)
        source_openings = open_source(positions)
        fresh_main_openings = fresh_main.open(positions)
    mask_openings = []
    for group, (_, carried), (_, _, fresh) in zip(groups, masks.groups, fresh_groups):
        positions = distinct_query_indices(challenger, group.shape.domain_size, 0, config.mask_queries)
        mask_openings.append(MaskOpeningPair(carried.open(positions), fresh.open(positions)))
    return BaseCaseZkProof(fresh_main.cap, tuple(o.cap for _, _, o in fresh_groups), masked_claim, blinded_message,
                           blinded_randomness, tuple(blinded_masks), pow_witness, source_openings,
                           fresh_main_openings, tuple(mask_openings))
