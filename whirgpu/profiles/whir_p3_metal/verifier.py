"""The whir-p3-metal profile's verifier: ``MetalWhirVerifier``, the core's ``WhirVerifier`` step order with this
profile's hooks, and ``new_challenger``, the transcript both of this profile's sides start from.

Contract: ``MetalWhirVerifier(config).verify(proof, statement)`` checks a ``WhirProof`` of a ``Statement`` under a
``WhirConfig`` as the Rust reference whir-p3-metal does (``protocol.verifier`` says how it is stricter and in
which order it checks): the statement's claims take alpha^0.. and the initial OOD answers the powers after them,
sumcheck messages are [h(0), h(2)], the query indices are ``sample_query_indices``' and each round's openings
(full Merkle paths over width-16 leaf hashes) are queued and hashed in one batch with the final round's.
``new_challenger(config)`` is the duplex challenger after ``domain_separator(config)`` (digest 8), a fresh copy of
one made once per configuration (absorbing the separator costs a dozen host permutations).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...errors import ProofFormatError
from ...field import P
from ...protocol.proof import DIGEST_ELEMS, OpeningList, QueryOpening, RoundProof, Statement, SumcheckData, WhirProof
from ...protocol.query_indices import sample_query_indices
from ...protocol.transcript import DuplexChallenger
from ...protocol.verifier import Constraint, Start, WhirVerifier, field_array, reject
from ...ref import field_np as F
from ...ref.multilinear import evaluate_rows
from ...ref.sumcheck import evaluate_round_polynomial
from .config import WhirConfig
from .domain_separator import domain_separator


def new_challenger(config: WhirConfig) -> DuplexChallenger:
    """A challenger that has absorbed the domain separator (digest 8), as every proof starts."""
    return _separated_challenger(config).clone()


@lru_cache(maxsize=64)
def _separated_challenger(config: WhirConfig) -> DuplexChallenger:
    challenger = DuplexChallenger()
    challenger.observe_many(F.to_monty(np.asarray(domain_separator(config), dtype=np.uint64)))
    return challenger


class MetalWhirVerifier(WhirVerifier):
    """Checks proofs made under one ``WhirConfig`` (the whir-p3-metal profile)."""

    round_type = RoundProof
    sumcheck_type = SumcheckData

    def _start(self, proof: WhirProof, statement: Statement) -> Start:
        """Check the proof's and statement's types, absorb the commitment and its OOD answers, sample alpha and
        batch the statement's claims (alpha^0.. to the statement's points, then the OOD points)."""
        config = self.config
        n = config.num_variables
        if not isinstance(proof, WhirProof):
            raise ProofFormatError(f"expected a WhirProof, got {type(proof).__name__}")
        if not isinstance(statement, Statement):
            raise ProofFormatError(f"expected a Statement, got {type(statement).__name__}")
        try:
            m = len(statement.points)
        except TypeError:
            raise ProofFormatError(f"statement points: expected an (m, {n}, 4) array, "
                                   f"got {type(statement.points).__name__}") from None
        points = self.check_array(statement.points, (m, n, 4), "statement points")
        values = self.check_array(statement.values, (points.shape[0], 4), "statement values")

        challenger = new_challenger(config)
        root = self.check_array(proof.initial_commitment, (DIGEST_ELEMS,), "initial commitment")
        challenger.observe_many(root)
        ood = self.check_array(proof.initial_ood_answers, (config.commitment_ood_samples, 4), "initial OOD answers")
        ood_points = self.draw_ood_points(challenger, ood, n)
        all_points = np.concatenate([points, ood_points])
        all_values = np.concatenate([values, ood])
        alpha = challenger.sample_ef()
        coefficients = F.ef_powers(alpha, len(all_points))
        claimed_sum = F.ef_sum(F.ef_mul(coefficients, all_values)) if len(all_points) else np.zeros(4, np.uint32)
        constraint = Constraint(n, all_points, coefficients, np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32))
        return Start(challenger, proof, root, constraint, claimed_sum)

    def _round_proofs(self, whir) -> list:
        config = self.config
        if not isinstance(whir.rounds, list) or len(whir.rounds) != config.n_rounds:
            got = len(whir.rounds) if isinstance(whir.rounds, list) else type(whir.rounds).__name__
            raise ProofFormatError(f"expected a list of {config.n_rounds} rounds, got {got}")
        return whir.rounds

    def _round_root(self, name: str, round_proof) -> np.ndarray:
        return self.check_array(round_proof.commitment, (DIGEST_ELEMS,), f"{name} commitment")

    @staticmethod
    def _round_openings(round_proof):
        return round_proof.queries

    @staticmethod
    def _final_openings(whir):
        return whir.final_queries

    @staticmethod
    def _query_indices(challenger, domain_size: int, folding_factor: int, num_queries: int) -> list[int]:
        return sample_query_indices(challenger, domain_size, folding_factor, num_queries)

    @staticmethod
    def _round_value(claimed_sum, h0, h2, r) -> np.ndarray:
        """h(r) of one sumcheck round from the claim and its message [h(0), h(2)]."""
        return evaluate_round_polynomial(claimed_sum, h0, h2, r)

    def _queries(self, name, queries, indices, root, kind, domain_size, folding_factor, folding, openings):
        """Check the openings' form and count, queue their Merkle check against ``root``, and return each row
        folded at the last ``folding_factor`` challenges: (q, 4)."""
        if not isinstance(queries, list):
            raise ProofFormatError(f"{name}: queries must be a list")
        if len(queries) != len(indices):
            raise reject(name, "query-count", f"expected {len(indices)} distinct query openings, got {len(queries)}")
        width = 1 << folding_factor
        depth = (domain_size >> folding_factor).bit_length() - 1
        rows, siblings = opened_rows(name, queries, kind, width, depth)
        if not indices:
            return np.zeros((0, 4), np.uint32)
        openings.add(name, rows, indices, siblings, root)
        last = np.asarray(folding[len(folding) - folding_factor:], np.uint32).reshape(-1, 4)
        return evaluate_rows(rows, last)


def opened_rows(name: str, queries: list, kind: str, width: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The openings' rows (q, width) base or (q, width, 4) EF and Merkle paths (q, depth, 8), as uint32 arrays;
    ProofFormatError names the first malformed opening (kind, then values, then path, query by query)."""
    value_shape = (width,) if kind == "base" else (width, 4)
    path_shape = (depth, DIGEST_ELEMS)
    # The common case, uint32 arrays of the right shapes, is checked for range in one batch; anything else goes
    # through the query-by-query check, which also names the first problem.
    plain = all(
        isinstance(q, QueryOpening) and isinstance(q.kind, str) and q.kind == kind
        and type(q.values) is np.ndarray and q.values.dtype == np.uint32 and q.values.shape == value_shape
        and type(q.siblings) is np.ndarray and q.siblings.dtype == np.uint32 and q.siblings.shape == path_shape
        for q in queries
    )
    if plain:
        blocks = queries.blocks() if isinstance(queries, OpeningList) else None
        if blocks is not None:  # read as one block (the binary reader, an unpickled proof): no copy
            rows, siblings = blocks
        else:
            rows = np.array([q.values for q in queries], np.uint32).reshape((len(queries),) + value_shape)
            siblings = np.array([q.siblings for q in queries], np.uint32).reshape((len(queries),) + path_shape)
        if not (np.any(rows >= P) or np.any(siblings >= P)):
            return rows, siblings
    rows, siblings = [], []
    for j, query in enumerate(queries):
        if not isinstance(query, QueryOpening) or not isinstance(query.kind, str) or query.kind != kind:
            raise ProofFormatError(f"{name}: query {j} must be a {kind} opening")
        rows.append(field_array(query.values, value_shape, f"{name} query {j} values"))
        siblings.append(field_array(query.siblings, path_shape, f"{name} query {j} Merkle path"))
    return (np.array(rows, np.uint32).reshape((len(queries),) + value_shape),
            np.array(siblings, np.uint32).reshape((len(queries),) + path_shape))


def verify(config: WhirConfig, proof: WhirProof, statement: Statement) -> None:
    """Convenience wrapper: raise unless ``proof`` proves ``statement`` under ``config``."""
    MetalWhirVerifier(config).verify(proof, statement)
