"""The sizes of a proof, derived from its configuration alone (``ProofShape``, for backends that plan a proof's
device buffers before running it)."""

from __future__ import annotations

from ..backends.base import DEFAULT_LAYOUT, ProofShape, QueryStep, TableLayout
from .schedule import Schedule


def _query_step(num_queries: int, domain_size: int, folding_factor: int, ext: bool) -> QueryStep:
    folded = domain_size >> folding_factor
    return QueryStep(num_queries, min(num_queries, folded), (1 << folding_factor) * (4 if ext else 1),
                     folded.bit_length() - 1)


def proof_shape(config: Schedule, n_points: int, layout: TableLayout = DEFAULT_LAYOUT) -> ProofShape:
    """The shape of a proof of ``config`` (any profile's configuration: a ``Schedule``) about ``n_points``
    evaluation claims, its tables laid out as ``layout`` (the profile's prover says which)."""
    n = config.num_variables
    commitments = [(n, config.commitment_ood_samples)]
    queries = []
    sumcheck_rounds = config.fold(0)
    for i, round_config in enumerate(config.rounds):
        commitments.append((round_config.num_variables, round_config.ood_samples))
        queries.append(_query_step(round_config.num_queries, round_config.domain_size, round_config.folding_factor,
                                   i > 0))
        sumcheck_rounds += config.fold(i + 1)
    queries.append(_query_step(config.final_queries, config.final_domain_size, config.fold(config.n_rounds),
                               config.n_rounds > 0))
    final_variables = n - sumcheck_rounds
    sumcheck_rounds += config.final_sumcheck_rounds
    phases = tuple(config.fold(i) for i in range(config.n_rounds + 1)) + (config.final_sumcheck_rounds,)
    return ProofShape(n, n_points, tuple(commitments), tuple(queries), sumcheck_rounds,
                      sumcheck_rounds + config.n_rounds + 1, final_variables, phases, layout)
