"""The Fiat-Shamir domain separator: the field elements the transcript absorbs before anything else.

Contract (whir-spec.md §6.4, p3-whir ``fiat_shamir/{domain_separator,pattern}.rs``): ``domain_separator(config)``
returns canonical BabyBear ints, the pattern of ``commit_statement::<DIGEST>`` followed by ``add_whir_proof``.
Each entry is a label, not an operation: ``sub-label + count + tag`` with tag Sample = 0, Observe = 1, Hint = 2
(a hint has no count), and protocol parameters are the pairs [ProtocolParam + Observe, value]. Only the
prover/verifier's real observe/sample calls move the transcript afterwards; this list is absorbed once, first.
"""

from __future__ import annotations

import enum

from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.protocol.config import WhirConfig

DIGEST_ELEMS = 8  # what the sweep, the ffi and the tests pass; main.rs and the criterion bench pass 32


class Tag(enum.IntEnum):
    SAMPLE = 0
    OBSERVE = 1
    HINT = 2


class SampleLabel(enum.IntEnum):
    INITIAL_COMBINATION_RANDOMNESS = 0
    FOLDING_RANDOMNESS = 1
    COMBINATION_RANDOMNESS = 2
    STIR_QUERIES = 3
    FINAL_QUERIES = 4
    POW_QUERIES = 5
    OOD_QUERY = 6
    TRANSCRIPT_CHECKPOINT = 7


class ObserveLabel(enum.IntEnum):
    MERKLE_DIGEST = 0
    OOD_ANSWERS = 1
    SUMCHECK_POLY = 2
    STIR_ANSWERS = 3
    FINAL_COEFFS = 4
    POW_NONCE = 5
    PROTOCOL_PARAM = 6


class HintLabel(enum.IntEnum):
    STIR_QUERIES = 0
    STIR_ANSWERS = 1
    MERKLE_PROOF = 2
    DEFERRED_WEIGHT_EVALUATIONS = 3


def query_bytes(domain_size: int, folding_factor: int) -> int:
    """ceil(ilog2(2 * (D >> k) - 1) / 8): bytes of one query index into the folded domain."""
    folded = domain_size >> folding_factor
    return -(-((2 * folded - 1).bit_length() - 1) // 8)


class Pattern:
    """The pattern being written: ``entries`` (canonical ints). ``_entry(tag, label, count)`` encodes one entry and
    ``labels`` names the observe labels: a profile whose separator differs only there subclasses this."""

    labels = ObserveLabel

    def __init__(self) -> None:
        self.entries: list[int] = []

    @staticmethod
    def _entry(tag: Tag, label: int, count: int) -> int:
        return (int(label) + count + tag) % P

    def observe(self, count: int, label) -> None:
        self.entries.append(self._entry(Tag.OBSERVE, label, count))

    def sample(self, count: int, label: SampleLabel) -> None:
        self.entries.append(self._entry(Tag.SAMPLE, label, count))

    def hint(self, label: HintLabel) -> None:
        self.entries.append(self._entry(Tag.HINT, label, 0))

    def protocol_param(self, value: int) -> None:
        self.entries += [self._entry(Tag.OBSERVE, self.labels.PROTOCOL_PARAM, 0), value % P]

    def ood(self, samples: int) -> None:
        if samples > 0:
            self.sample(samples, SampleLabel.OOD_QUERY)
            self.observe(samples, self.labels.OOD_ANSWERS)

    def pow(self, bits: int) -> None:
        # Labels only: the real operations are "observe one F, sample one F".
        if bits > 0:
            self.sample(32, SampleLabel.POW_QUERIES)
            self.observe(8, self.labels.POW_NONCE)

    def sumcheck(self, rounds: int, pow_bits: int) -> None:
        for _ in range(rounds):
            self.observe(2, self.labels.SUMCHECK_POLY)
            self.sample(1, SampleLabel.FOLDING_RANDOMNESS)
            self.pow(pow_bits)


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
