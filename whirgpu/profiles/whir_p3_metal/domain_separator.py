"""The whir-p3-metal profile's Fiat-Shamir domain separator: the field elements the transcript absorbs first.

Contract (whir-spec.md §6.4, p3-whir ``fiat_shamir/{domain_separator,pattern}.rs`` at the reference's commit):
``domain_separator(config)`` returns canonical BabyBear ints, the pattern of ``commit_statement::<DIGEST>``
followed by ``add_whir_proof``, written with the core's ``Pattern``; ``commit_statement_pattern(config)`` is its
first part. The header's parameters are [ProtocolParam + Observe, value] pairs.
"""

from __future__ import annotations

from whirgpu.errors import ConfigError
from whirgpu.profiles.whir_p3_metal.config import WhirConfig
from whirgpu.protocol.domain_separator import DIGEST_ELEMS, HintLabel, ObserveLabel, Pattern, SampleLabel, query_bytes


def commit_statement_pattern(config: WhirConfig, digest_elems: int = DIGEST_ELEMS) -> list[int]:
    """The ``commit_statement`` part: the parameter header, the root, the commitment's OOD samples."""
    pat = Pattern()
    _commit_statement(pat, config, digest_elems)
    return pat.entries


def _commit_statement(pat: Pattern, config: WhirConfig, digest_elems: int) -> None:
    if isinstance(digest_elems, bool) or not isinstance(digest_elems, int) or digest_elems < 1:
        raise ConfigError(f"digest_elems must be a positive integer, got {digest_elems!r}")
    # rs_domain_initial_reduction_factor is not part of the header (as in the reference).
    for value in (
        config.num_variables,
        config.security_level,
        config.starting_log_inv_rate,
        config.max_pow_bits,
        int(config.soundness_type),
        *config.folding_factor.domain_separator_values(),
    ):
        pat.protocol_param(value)
    pat.observe(digest_elems, ObserveLabel.MERKLE_DIGEST)
    pat.ood(config.commitment_ood_samples)


def _add_whir_proof(pat: Pattern, config: WhirConfig, digest_elems: int) -> None:
    pat.sample(1, SampleLabel.INITIAL_COMBINATION_RANDOMNESS)
    pat.sumcheck(config.fold(0), config.starting_folding_pow_bits)

    for i, rc in enumerate(config.rounds):
        q_bytes = query_bytes(rc.domain_size, rc.folding_factor)
        pat.observe(digest_elems, ObserveLabel.MERKLE_DIGEST)
        pat.ood(rc.ood_samples)
        pat.pow(rc.pow_bits)
        pat.sample(1, SampleLabel.TRANSCRIPT_CHECKPOINT)
        pat.sample(rc.num_queries * q_bytes, SampleLabel.STIR_QUERIES)
        pat.hint(HintLabel.STIR_QUERIES)
        pat.hint(HintLabel.MERKLE_PROOF)
        pat.sample(1, SampleLabel.COMBINATION_RANDOMNESS)
        pat.sumcheck(config.fold(i + 1), rc.folding_pow_bits)

    final = config.final_round_config()
    q_bytes = query_bytes(final.domain_size, final.folding_factor)
    pat.observe(1 << config.final_sumcheck_rounds, ObserveLabel.FINAL_COEFFS)
    pat.pow(config.final_pow_bits)  # no checkpoint before the final queries
    pat.sample(q_bytes * config.final_queries, SampleLabel.FINAL_QUERIES)
    pat.hint(HintLabel.STIR_ANSWERS)
    pat.hint(HintLabel.MERKLE_PROOF)
    pat.sumcheck(config.final_sumcheck_rounds, config.final_folding_pow_bits)
    pat.hint(HintLabel.DEFERRED_WEIGHT_EVALUATIONS)  # appended even when there is no final sumcheck


def domain_separator(config: WhirConfig, digest_elems: int = DIGEST_ELEMS) -> list[int]:
    """The whole pattern (``commit_statement`` then ``add_whir_proof``) as canonical ints in [0, P)."""
    pat = Pattern()
    _commit_statement(pat, config, digest_elems)
    _add_whir_proof(pat, config, digest_elems)
    return pat.entries
