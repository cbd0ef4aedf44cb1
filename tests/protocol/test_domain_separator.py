"""The domain separator against every golden proof file, and its structure (whir-spec.md §6.4)."""

from __future__ import annotations

import pytest

from tests.conftest import GOLDEN_PROOFS, load_golden
from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.profiles.whir_p3_metal.domain_separator import commit_statement_pattern, domain_separator
from whirgpu.protocol.params import ConstantFromSecondRound, ProtocolParameters, SoundnessType, WhirConfig


def config(n, f, r, **kw) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(n, f, r, **kw))


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_domain_separator_matches_golden(golden, name):
    g = load_golden(name)
    cfg = WhirConfig.from_params(ProtocolParameters.from_golden_params(g["params"]))
    assert domain_separator(cfg) == g["domain_separator_canonical"]


def test_header_and_commit_statement():
    cfg = config(16, 4, 1, security_level=80, pow_bits=0, soundness_type="johnson")
    # [7, v] for n, λ, r, max_pow, soundness, then Constant -> 0, k; then the root and one OOD sample.
    assert commit_statement_pattern(cfg) == [7, 16, 7, 80, 7, 1, 7, 0, 7, 1, 7, 0, 7, 4, 9, 7, 3]
    assert domain_separator(cfg)[:17] == commit_statement_pattern(cfg)


def test_header_constant_from_second_round_and_digest32():
    cfg = WhirConfig.from_params(
        ProtocolParameters(
            num_variables=16,
            folding_factor=ConstantFromSecondRound(5, 2),
            starting_log_inv_rate=2,
            security_level=32,
            pow_bits=0,
            soundness_type=SoundnessType.UniqueDecoding,
            rs_domain_initial_reduction_factor=2,
        )
    )
    head = commit_statement_pattern(cfg, digest_elems=32)
    # UD: no OOD entries after the 32-element root (0 + 32 + 1).
    assert head == [7, 16, 7, 32, 7, 2, 7, 0, 7, 0, 7, 1, 7, 5, 7, 2, 33]
    ds = domain_separator(cfg, digest_elems=32)
    assert ds[: len(head)] == head
    # Each round's commitment uses the same digest size.
    assert ds.count(33) == 1 + cfg.n_rounds


def test_rs_reduction_not_absorbed():
    a = config(16, 4, 1, rs_domain_initial_reduction_factor=3)
    b = config(16, 4, 1, rs_domain_initial_reduction_factor=2)
    assert commit_statement_pattern(a) == commit_statement_pattern(b)


def test_structure_pow_and_final():
    # The golden PoW configuration: rounds grind 15 bits, round-1 sumcheck 3 bits, final 11 bits.
    cfg = config(16, 4, 1, security_level=100, pow_bits=16)
    ds = domain_separator(cfg)
    pow_pair = [37, 14]  # sam(32, PowQueries=5), obs(8, PowNonce=5)
    n_pow = sum(1 for i in range(len(ds) - 1) if ds[i : i + 2] == pow_pair)
    grinds = sum(1 for rc in cfg.rounds if rc.pow_bits) + (cfg.final_pow_bits > 0)
    grinds += cfg.fold(0) * (cfg.starting_folding_pow_bits > 0)
    grinds += sum(cfg.fold(i + 1) * (rc.folding_pow_bits > 0) for i, rc in enumerate(cfg.rounds))
    grinds += cfg.final_sumcheck_rounds * (cfg.final_folding_pow_bits > 0)
    assert n_pow == grinds == 2 + 4 + 1
    # Ends with hint(DeferredWeightEvaluations) = 3 + 2.
    assert ds[-1] == 5


def test_final_queries_bytes_when_no_rounds():
    # M = 0: the final queries index the initial domain 2^(n+r) folded by fold(0).
    cfg = config(5, 2, 1, security_level=32, pow_bits=0)
    assert cfg.n_rounds == 0
    ds = domain_separator(cfg)
    folded_bits = 5 + 1 - 2
    bytes_per_query = -(-folded_bits // 8)
    assert 4 + bytes_per_query * cfg.final_queries in ds  # sam(bytes·q, FinalQueries=4)
    # fsr = 3: obs(2^3, FinalCoeffs=4) + 1.
    assert 8 + 4 + 1 in ds


def test_hint3_even_without_final_sumcheck():
    cfg = config(6, 6, 1, security_level=32, pow_bits=0)
    assert cfg.final_sumcheck_rounds == 0
    ds = domain_separator(cfg)
    assert ds[-3:] == [3, 4, 5]  # hint(StirAnswers), hint(MerkleProof), hint(DeferredWeightEvaluations)


def test_entries_are_canonical():
    for n, f, r in [(20, 2, 1), (22, 1, 1), (24, 4, 1)]:
        assert all(0 <= x < P for x in domain_separator(config(n, f, r)))


def test_bad_digest_elems():
    cfg = config(10, 2, 1, security_level=32, pow_bits=0)
    for bad in (0, -8, True, 8.0):
        with pytest.raises(ConfigError, match="digest_elems"):
            domain_separator(cfg, digest_elems=bad)
