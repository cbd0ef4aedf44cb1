"""The Fiat-Shamir domain separator's vocabulary: the field elements the transcript absorbs before anything else.

Contract (whir-spec.md §6.4, p3-whir ``fiat_shamir/{domain_separator,pattern}.rs``): ``Pattern`` writes a
separator entry by entry (canonical BabyBear ints); each profile's ``domain_separator`` (``profiles/<profile>/
domain_separator.py``) writes its pattern with it. Each entry is a label, not an operation:
``sub-label + count + tag`` with tag Sample = 0, Observe = 1, Hint = 2 (a hint has no count), and protocol
parameters are the pairs [ProtocolParam + Observe, value]. Only the prover/verifier's real observe/sample calls move
the transcript afterwards; this list is absorbed once, first.
"""

from __future__ import annotations

import enum

from whirgpu.field import P

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
