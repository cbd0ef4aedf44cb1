"""The p3-whir profile's domain separator: the words its transcript absorbs first (upstream Plonky3
``whir/src/fiat_shamir/{domain_separator,pattern}.rs``, ``add_domain_separator`` = ``commit_statement`` then
``add_whir_proof``).

Contract: ``p3_domain_separator(config, digest_elems=8)`` returns canonical ints (each below 2^26, so the same
word in every 31-bit field). An entry is (tag << 24) | (label << 16) | count with tag Sample 0 / Observe 1 /
Hint 2 and upstream's labels (``domain_separator``'s tags, sample and hint labels; its own observe labels); a
protocol parameter is the entry (Observe, ProtocolParam, 0) followed by the value itself. Where the whir-p3-metal separator (``domain_separator``) adds tag, label and
count, this one packs them, binds pow_bits and every round's rate, and lost the StirAnswers observe label.
"""

from __future__ import annotations

import enum

from whirgpu.protocol.domain_separator import HintLabel, Pattern, SampleLabel, Tag, query_bytes
from whirgpu.protocol.folding import Constant, ConstantFromSecondRound
from whirgpu.profiles.p3_whir.config import P3WhirConfig

COUNT_BITS = 16
LABEL_BITS = 8


class ObserveLabel(enum.IntEnum):
    """Upstream's observe labels: whir-p3-metal's without STIR_ANSWERS (so the later ones moved down)."""

    MERKLE_DIGEST = 0
    OOD_ANSWERS = 1
    SUMCHECK_POLY = 2
    FINAL_COEFFS = 3
    POW_NONCE = 4
    PROTOCOL_PARAM = 5


def entry(tag: Tag, label: int, count: int) -> int:
    if not 0 <= count < 1 << COUNT_BITS:
        raise ValueError(f"domain separator count {count} outside [0, 2^{COUNT_BITS})")
    return (int(tag) << (COUNT_BITS + LABEL_BITS)) | (int(label) << COUNT_BITS) | count


class _Pattern(Pattern):
    """Upstream's encoding of an entry and its observe labels; the rest of the pattern is shared."""

    labels = ObserveLabel

    @staticmethod
    def _entry(tag: Tag, label: int, count: int) -> int:
        return entry(tag, label, count)


def _bind_params(pattern: _Pattern, config: P3WhirConfig) -> None:
    p = config.params
    for value in (config.num_variables, p.security_level, p.starting_log_inv_rate, p.pow_bits, config.n_rounds):
        pattern.protocol_param(value)
    for r in config.round_parameters:
        pattern.protocol_param(r.log_inv_rate)
    pattern.protocol_param(int(p.soundness_type))
    if isinstance(p.folding, Constant):
        values = [0, p.folding.k]
    elif isinstance(p.folding, ConstantFromSecondRound):
        values = [1, p.folding.k0, p.folding.k]
    else:
        values = [2, len(p.folding), *p.folding]
    for value in values:
        pattern.protocol_param(value)


def p3_domain_separator(config: P3WhirConfig, digest_elems: int = 8) -> list[int]:
    pattern = _Pattern()
    _bind_params(pattern, config)
    pattern.observe(digest_elems, ObserveLabel.MERKLE_DIGEST)
    pattern.ood(config.commitment_ood_samples)
    pattern.sample(1, SampleLabel.INITIAL_COMBINATION_RANDOMNESS)
    pattern.sumcheck(config.folding_schedule[0], config.starting_folding_pow_bits)
    domain_size = config.starting_domain_size
    for i, r in enumerate(config.round_parameters):
        q_bytes = query_bytes(domain_size, config.folding_schedule[i])
        pattern.observe(digest_elems, ObserveLabel.MERKLE_DIGEST)
        pattern.ood(r.ood_samples)
        pattern.pow(r.pow_bits)
        pattern.sample(1, SampleLabel.TRANSCRIPT_CHECKPOINT)
        pattern.sample(r.num_queries * q_bytes, SampleLabel.STIR_QUERIES)
        pattern.hint(HintLabel.STIR_QUERIES)
        pattern.hint(HintLabel.MERKLE_PROOF)
        pattern.sample(1, SampleLabel.COMBINATION_RANDOMNESS)
        pattern.sumcheck(config.folding_schedule[i + 1], r.folding_pow_bits)
        domain_size >>= config.rs_reduction_factor(i)
    q_bytes = query_bytes(domain_size, config.folding_schedule[config.n_rounds])
    pattern.observe(1 << config.final_sumcheck_rounds, ObserveLabel.FINAL_COEFFS)
    pattern.pow(config.final_pow_bits)
    pattern.sample(q_bytes * config.final_queries, SampleLabel.FINAL_QUERIES)
    pattern.hint(HintLabel.STIR_ANSWERS)
    pattern.hint(HintLabel.MERKLE_PROOF)
    pattern.sumcheck(config.final_sumcheck_rounds, config.final_folding_pow_bits)
    pattern.hint(HintLabel.DEFERRED_WEIGHT_EVALUATIONS)
    return pattern.entries
