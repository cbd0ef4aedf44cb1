"""The hiding PCS's configuration (upstream ``ZkWhirConfig::new``, ``MaskCodeShape``) and its domain separator
(``add_domain_separator`` = ``commit_statement_hvzk`` + ``add_zk_whir_proof``).

Contract: ``ZkWhirConfig.derive(num_variables, params, field, ell_zk=4, mask_log_inv_rate=1)`` returns the
derived configuration or raises ``ConfigError`` with upstream's error name (``MaskLengthTooSmall``,
``MaskRateTooHigh``, ``RandomnessExceedsSlack``, ``MaskDomainExceedsTwoAdicity``, or the inner ``WhirConfig``'s).
``inner`` is the plain ``P3WhirConfig``; its commitment OOD samples and final folding PoW are not transcript steps
here, and ``final_queries`` / ``final_pow_bits`` of this object shadow the inner ones for the base case.
``to_json_dict()`` is the oracle's ``zk_config`` block; ``zk_domain_separator(config)`` the canonical pattern words.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from ....errors import ConfigError
from ....protocol.domain_separator import HintLabel, Pattern, query_bytes
from ....protocol.folding import Constant, ConstantFromSecondRound
from ..config import P3Parameters, P3WhirConfig, queries, queries_error
from ..domain_separator import entry

EF_EXTRA_TWO_ADICITY = 2  # BinomialExtensionField<F, 4>::TWO_ADICITY = F::TWO_ADICITY + 2


def _log2_ceil(x: int) -> int:
    return (x - 1).bit_length() if x > 1 else 0


def _next_power_of_two(x: int) -> int:
    return 1 << _log2_ceil(x)


@dataclass(frozen=True)
class MaskCodeShape:
    """A mask code: messages of ``message_len`` EF, ``randomness_len`` EF of encoding randomness, evaluated on the
    subgroup of ``domain_size`` = next_pow2(message_len + randomness_len) << mask_log_inv_rate."""

    message_len: int
    randomness_len: int
    domain_size: int

    @classmethod
    def new(cls, message_len: int, randomness_len: int, log_inv_rate: int) -> MaskCodeShape:
        return cls(message_len, randomness_len, _next_power_of_two(message_len + randomness_len) << log_inv_rate)

    def to_json_dict(self) -> dict:
        return {"domain_size": self.domain_size, "message_len": self.message_len,
                "randomness_len": self.randomness_len}


@dataclass(frozen=True)
class MaskGroupShape:
    """Masks committed together as one interleaved oracle: ``width`` codewords of one shape."""

    shape: MaskCodeShape
    width: int


def terminal_source_budget(soundness, security_level: int, protocol_security_level: int, message_len: int,
                           domain_size: int, num_queries: int) -> tuple[int, int]:
    """The base case's (queries, pow bits): queries grow until the code of dimension next_pow2(message + queries)
    on the final folded domain needs no more; every position when that dimension reaches the domain."""
    while True:
        dyadic = _next_power_of_two(message_len + num_queries)
        if dyadic >= domain_size:
            return domain_size, 0
        log_inv_rate = domain_size.bit_length() - dyadic.bit_length()
        more = queries(soundness, protocol_security_level, log_inv_rate)
        if more <= num_queries:
            gap = max(0.0, float(security_level) - queries_error(soundness, log_inv_rate, num_queries))
            return num_queries, math.ceil(gap)
        num_queries = more


@dataclass(frozen=True)
class ZkWhirConfig:
    inner: P3WhirConfig
    ell_zk: int
    mask_log_inv_rate: int
    final_queries: int
    final_pow_bits: int
    oracle_randomness: tuple[int, ...]
    sumcheck_mask: MaskCodeShape
    switch_masks: tuple[MaskCodeShape, ...]
    mask_queries: int

    @property
    def num_variables(self) -> int:
        return self.inner.num_variables

    @property
    def n_rounds(self) -> int:
        return self.inner.n_rounds

    def fold(self, phase: int) -> int:
        return self.inner.folding_schedule[phase]

    def inv_rate(self, round: int) -> int:
        return 1 << self.inner.round_parameters[round].log_inv_rate

    def mask_groups(self) -> list[MaskGroupShape]:
        """The committed mask oracles in proof order: sumcheck batch 0, then per round its switch mask and the
        next sumcheck batch."""
        groups = [MaskGroupShape(self.sumcheck_mask, self.fold(0))]
        for round in range(self.n_rounds):
            groups.append(MaskGroupShape(self.switch_masks[round], 1))
            groups.append(MaskGroupShape(self.sumcheck_mask, self.fold(round + 1)))
        return groups

    def source_code(self) -> tuple[int, int, int]:
        """The base case's folded source code: (message_len, randomness_len, domain_size)."""
        final = self.inner.final_round_config()
        return (1 << final.num_variables, self.oracle_randomness[-1], final.domain_size >> final.folding_factor)

    def to_json_dict(self) -> dict:
        return {"ell_zk": self.ell_zk, "final_pow_bits": self.final_pow_bits, "final_queries": self.final_queries,
                "inner_final_pow_bits": self.inner.final_pow_bits,
                "inner_final_queries": self.inner.final_queries,
                "mask_groups": [{"shape": g.shape.to_json_dict(), "width": g.width} for g in self.mask_groups()],
                "mask_log_inv_rate": self.mask_log_inv_rate, "mask_queries": self.mask_queries,
                "oracle_randomness": list(self.oracle_randomness),
                "sumcheck_mask": self.sumcheck_mask.to_json_dict(),
                "switch_masks": [m.to_json_dict() for m in self.switch_masks]}

    @classmethod
    def derive(cls, num_variables: int, params: P3Parameters, field, ell_zk: int = 4,
               mask_log_inv_rate: int = 1) -> ZkWhirConfig:
        if ell_zk < 3:
            raise ConfigError(f"MaskLengthTooSmall: sumcheck mask length {ell_zk} is below the minimum of 3")
        if mask_log_inv_rate == 0:
            raise ConfigError("MaskRateTooHigh: mask_log_inv_rate must be at least 1")
        s, level = params.soundness_type, params.security_level
        inner = P3WhirConfig.derive(num_variables, params, field)
        n_rounds = inner.n_rounds
        union = _log2_ceil(2 * n_rounds + 2)
        mask_queries = queries(s, level + union, mask_log_inv_rate)
        final = inner.final_round_config()
        final_queries, final_pow = terminal_source_budget(
            s, level, max(0, level - params.pow_bits), 1 << final.num_variables,
            final.domain_size >> final.folding_factor, inner.final_queries)
        randomness = tuple([r.num_queries for r in inner.round_parameters] + [final_queries])
        for round, budget in enumerate(randomness):
            if round == 0:
                rows = 1 << (num_variables - inner.folding_schedule[0])
                height = rows << params.starting_log_inv_rate
            else:
                previous = inner.round_parameters[round - 1]
                rows = 1 << (previous.num_variables - inner.folding_schedule[round])
                height = rows << previous.log_inv_rate
            if budget > height - rows:
                raise ConfigError(f"RandomnessExceedsSlack: round {round}: {budget} randomness rows exceed the "
                                  f"{height - rows} spare codeword rows")
        message_lens = [ell_zk] + [randomness[j] + inner.round_parameters[j].ood_samples for j in range(n_rounds)]
        ef_two_adicity = field.TWO_ADICITY + EF_EXTRA_TWO_ADICITY
        for message_len in message_lens:
            log_domain = _log2_ceil(message_len + mask_queries) + mask_log_inv_rate
            if log_domain > ef_two_adicity:
                raise ConfigError(f"MaskDomainExceedsTwoAdicity: mask domain 2^{log_domain} exceeds "
                                  f"extension-field two-adicity 2^{ef_two_adicity}")
        if max(message_lens) + mask_queries > 1 << field.TWO_ADICITY:
            raise ConfigError("mask domains beyond the base field's two-adicity are not supported here")
        return cls(inner, ell_zk, mask_log_inv_rate, final_queries, final_pow, randomness,
                   MaskCodeShape.new(ell_zk, mask_queries, mask_log_inv_rate),
                   tuple(MaskCodeShape.new(m, mask_queries, mask_log_inv_rate) for m in message_lens[1:]),
                   mask_queries)


# ---- domain separator ------------------------------------------------------------------------------------------

class ZkObserveLabel(enum.IntEnum):
    """Upstream's ``Observe`` labels at 5dc50e51, the zk ones included."""

    MERKLE_DIGEST = 0
    OOD_ANSWERS = 1
    SUMCHECK_POLY = 2
    FINAL_COEFFS = 3
    POW_NONCE = 4
    PROTOCOL_PARAM = 5
    ZK_SUMCHECK_MU_TILDE = 6
    ZK_SUMCHECK_POLY = 7
    ZK_SUMCHECK_CLAIM = 8
    ZK_BASE_CASE_CLAIM = 9
    ZK_BASE_CASE_REVEAL = 10


class ZkSampleLabel(enum.IntEnum):
    """Upstream's ``Sample`` labels at 5dc50e51."""

    INITIAL_COMBINATION_RANDOMNESS = 0
    FOLDING_RANDOMNESS = 1
    COMBINATION_RANDOMNESS = 2
    STIR_QUERIES = 3
    FINAL_QUERIES = 4
    POW_QUERIES = 5
    OOD_QUERY = 6
    TRANSCRIPT_CHECKPOINT = 7
    ZK_SUMCHECK_COMBINATION_RANDOMNESS = 8


class ZkPattern(Pattern):
    labels = ZkObserveLabel

    @staticmethod
    def _entry(tag, label: int, count: int) -> int:
        return entry(tag, label, count)

    def zk_sumcheck(self, rounds: int, pow_bits: int, ell_zk: int, digest_elems: int) -> None:
        """``add_zk_residual_sumcheck``: the bound claim, the mask root, mu_tilde, eps, then per round the wire
        (max(ell_zk, 3) - 1 coefficients), PoW, the folding challenge."""
        self.observe(1, ZkObserveLabel.ZK_SUMCHECK_CLAIM)
        self.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
        self.observe(1, ZkObserveLabel.ZK_SUMCHECK_MU_TILDE)
        self.sample(1, ZkSampleLabel.ZK_SUMCHECK_COMBINATION_RANDOMNESS)
        for _ in range(rounds):
            self.observe(max(ell_zk, 3) - 1, ZkObserveLabel.ZK_SUMCHECK_POLY)
            self.pow(pow_bits)
            self.sample(1, ZkSampleLabel.FOLDING_RANDOMNESS)


def zk_domain_separator(config: ZkWhirConfig, digest_elems: int = 8) -> list[int]:
    """The canonical words of ``HidingWhirPcs::add_domain_separator::<digest_elems>``."""
    inner, p = config.inner, config.inner.params
    pat = ZkPattern()
    for value in (inner.num_variables, p.security_level, p.starting_log_inv_rate, p.pow_bits, inner.n_rounds,
                  *(r.log_inv_rate for r in inner.round_parameters), int(p.soundness_type)):
        pat.protocol_param(value)
    if isinstance(p.folding, Constant):
        folding = [0, p.folding.k]
    elif isinstance(p.folding, ConstantFromSecondRound):
        folding = [1, p.folding.k0, p.folding.k]
    else:
        folding = [2, len(p.folding), *p.folding]
    for value in folding:
        pat.protocol_param(value)
    pat.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
    for value in (config.ell_zk, config.mask_queries, config.mask_log_inv_rate, *config.oracle_randomness):
        pat.protocol_param(value)
    pat.sample(1, ZkSampleLabel.INITIAL_COMBINATION_RANDOMNESS)
    pat.zk_sumcheck(config.fold(0), inner.starting_folding_pow_bits, config.ell_zk, digest_elems)
    domain_size = inner.starting_domain_size
    for i, r in enumerate(inner.round_parameters):
        q_bytes = query_bytes(domain_size, config.fold(i))
        pat.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
        pat.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
        pat.ood(r.ood_samples)
        pat.pow(r.pow_bits)
        pat.sample(1, ZkSampleLabel.TRANSCRIPT_CHECKPOINT)
        pat.sample(r.num_queries * q_bytes, ZkSampleLabel.STIR_QUERIES)
        pat.hint(HintLabel.STIR_QUERIES)
        pat.hint(HintLabel.MERKLE_PROOF)
        pat.sample(1, ZkSampleLabel.COMBINATION_RANDOMNESS)
        pat.zk_sumcheck(config.fold(i + 1), r.folding_pow_bits, config.ell_zk, digest_elems)
        domain_size >>= inner.rs_reduction_factor(i)
    message_len, randomness_len, folded_size = config.source_code()
    q_bytes = query_bytes(folded_size, 0)
    groups = config.mask_groups()
    pat.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
    for _ in groups:
        pat.observe(digest_elems, ZkObserveLabel.MERKLE_DIGEST)
    pat.observe(1, ZkObserveLabel.ZK_BASE_CASE_CLAIM)
    pat.sample(1, ZkSampleLabel.COMBINATION_RANDOMNESS)
    pat.observe(message_len + randomness_len, ZkObserveLabel.ZK_BASE_CASE_REVEAL)
    for group in groups:
        for _ in range(group.width):
            pat.observe(group.shape.message_len + group.shape.randomness_len, ZkObserveLabel.ZK_BASE_CASE_REVEAL)
    pat.pow(config.final_pow_bits)
    pat.sample(config.final_queries * q_bytes, ZkSampleLabel.FINAL_QUERIES)
    pat.hint(HintLabel.STIR_ANSWERS)
    pat.hint(HintLabel.MERKLE_PROOF)
    for group in groups:
        pat.sample(config.mask_queries * query_bytes(group.shape.domain_size, 0), ZkSampleLabel.STIR_QUERIES)
        pat.hint(HintLabel.STIR_ANSWERS)
        pat.hint(HintLabel.MERKLE_PROOF)
    return pat.entries
