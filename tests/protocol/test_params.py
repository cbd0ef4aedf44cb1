"""WhirConfig against the reference: golden ``derived`` blocks, whir-spec.md §5 tables, validation."""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import GOLDEN_PROOFS, load_golden
from whirgpu.errors import ConfigError
from whirgpu.field import TWO_ADIC_GENERATORS
from whirgpu.protocol.params import (
    MAX_GRIND_BITS,
    Constant,
    ConstantFromSecondRound,
    FoldingFactor,
    ProtocolParameters,
    SoundnessType,
    WhirConfig,
    format_schedule,
)

UD, JB, CB = SoundnessType.UniqueDecoding, SoundnessType.JohnsonBound, SoundnessType.CapacityBound


def config(n, f, r, **kw) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(n, f, r, **kw))


# ---------------------------------------------------------------------------------------------------------------
# Golden files


def test_golden_proofs_present():
    assert len(GOLDEN_PROOFS) >= 5


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_derived_matches_golden(golden, name):
    g = load_golden(name)
    cfg = WhirConfig.from_params(ProtocolParameters.from_golden_params(g["params"]))
    assert cfg.to_derived_dict() == g["derived"]
    # Key order too: the reference writes them alphabetically.
    assert json.dumps(cfg.to_derived_dict()) == json.dumps(g["derived"], sort_keys=True)


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_params_dict_round_trips_golden(golden, name):
    g = load_golden(name)["params"]
    params = ProtocolParameters.from_golden_params(g)
    written = params.params_dict(
        num_points=g["num_points"], seed=g["seed"], sumcheck_strategy=g["sumcheck_strategy"]
    )
    assert written == g
    assert ProtocolParameters.from_golden_params(params.params_dict()) == params


@pytest.mark.parametrize("name", GOLDEN_PROOFS)
def test_golden_schedule_details(golden, name):
    g = load_golden(name)
    cfg = WhirConfig.from_params(ProtocolParameters.from_golden_params(g["params"]))
    n, r = cfg.num_variables, cfg.starting_log_inv_rate
    assert cfg.rounds[0].domain_size == 1 << (n + r)
    for i, rc in enumerate(cfg.rounds):
        assert rc.folded_domain_gen == TWO_ADIC_GENERATORS[rc.log_domain_size - cfg.fold(i)]
        assert rc.rs_reduction_factor == (cfg.rs_domain_initial_reduction_factor if i == 0 else 1)
        # The domain shrinks by red_i, and the rate grows by fold(i) - red_i.
        if i + 1 < cfg.n_rounds:
            assert cfg.rounds[i + 1].domain_size == rc.domain_size >> rc.rs_reduction_factor
            assert cfg.rounds[i + 1].log_inv_rate == rc.next_log_inv_rate
        # The commitment made in round i has 2^(nv_i + rate) points on D_i >> red_i.
        log_new_domain = rc.log_domain_size - rc.rs_reduction_factor
        assert rc.num_variables + cfg.round_log_inv_rate(i) == log_new_domain
    last = cfg.rounds[-1]
    assert cfg.final_domain_size == last.domain_size >> last.rs_reduction_factor
    fr = cfg.final_round_config()
    assert fr.folded_domain_gen == TWO_ADIC_GENERATORS[fr.log_domain_size - cfg.fold(cfg.n_rounds)]
    assert fr.num_variables == cfg.final_sumcheck_rounds


# ---------------------------------------------------------------------------------------------------------------
# whir-spec.md §5 "Derived values" (λ = 100, pow_bits 16, CapacityBound, red = min(f, 3))

SPEC_TABLE = [
    # n, f, r, M, fsr, queries, final q, pow, final pow, foldpow0, foldpow_i
    (20, 2, 1, 6, 6, [91, 91, 44, 29, 22, 18], 15, [15] * 4 + [13, 11], 11, 3, [1, 2, 3, 4, 5, 6]),
    (22, 1, 1, 15, 6, [91] * 15, 91, [15] * 15, 15, 5, [4, 3, 2, 1] + [0] * 11),
    (22, 4, 1, 3, 6, [91, 44, 18], 11, [15, 15, 11], 12, 5, [4, 9, 14]),
    (22, 6, 3, 2, 4, [29, 15], 8, [15, 17], 12, 11, [14, 23]),
    (24, 1, 1, 17, 6, [91] * 17, 91, [15] * 17, 15, 7, [6, 5, 4, 3, 2, 1] + [0] * 11),
    (24, 4, 1, 4, 4, [91, 44, 18, 11], 8, [15, 15, 13, 15], 12, 7, [6, 11, 16, 21]),
]


@pytest.mark.parametrize("row", SPEC_TABLE, ids=lambda row: f"n{row[0]}_f{row[1]}_r{row[2]}")
def test_spec_derived_values_table(row):
    n, f, r, m, fsr, queries, final_q, pows, final_pow, foldpow0, foldpows = row
    cfg = config(n, f, r)
    assert cfg.rs_domain_initial_reduction_factor == min(f, 3)
    assert (cfg.n_rounds, cfg.final_sumcheck_rounds) == (m, fsr)
    assert [rc.num_queries for rc in cfg.rounds] == queries
    assert cfg.final_queries == final_q
    assert [rc.pow_bits for rc in cfg.rounds] == pows
    assert cfg.final_pow_bits == final_pow
    assert cfg.starting_folding_pow_bits == foldpow0
    assert [rc.folding_pow_bits for rc in cfg.rounds] == foldpows
    # "With CB at λ = 100, ood is always 2."
    assert cfg.commitment_ood_samples == 2 and all(rc.ood_samples == 2 for rc in cfg.rounds)
    assert cfg.final_folding_pow_bits == 0
    assert cfg.max_fft_size_log2 == n + r - f


def test_spec_queries_by_rate():
    # "Queries at rate 1/2/3 are 91/44/29" (CB, λ = 100, pow 16).
    assert [CB.queries(84, r) for r in (1, 2, 3)] == [91, 44, 29]


def test_spec_some_configs_exceed_pow_budget():
    # "Some configurations need 20-23 bits of folding PoW per sumcheck round, above the max of 16."
    cfg = config(22, 6, 3)
    assert max(rc.folding_pow_bits for rc in cfg.rounds) == 23
    assert cfg.check_pow_bits() is False
    assert "Warning" in format_schedule(cfg)


def test_spec_pow_free_example():
    # λ = 80, pow_bits 0, n = 20, k = 4, r = 1, red = 3, CB: no PoW anywhere.
    cfg = config(20, 4, 1, security_level=80, pow_bits=0)
    assert (cfg.n_rounds, cfg.final_sumcheck_rounds) == (3, 4)
    assert [rc.num_queries for rc in cfg.rounds] == [87, 42, 17]
    assert cfg.final_queries == 11
    assert cfg.all_pow_zero() and cfg.check_pow_bits()


def test_spec_main_rs_defaults_schedule_shape():
    # main.rs uses KoalaBear, so only the field-independent part applies: n = 25, k = 5 -> M = 3, fsr = 5.
    assert Constant(5).compute_number_of_rounds(25) == (3, 5)


def test_all_pow_zero_and_check_pow_bits():
    cfg = config(16, 4, 1, security_level=100, pow_bits=16)
    d = cfg.to_derived_dict()
    assert d["all_pow_zero"] is False and d["check_pow_bits"] is True
    assert cfg.max_derived_pow_bits == 15


# ---------------------------------------------------------------------------------------------------------------
# Soundness formulas (f64, as the reference)


def test_soundness_formula_values():
    # CB at log_inv_rate 1: eta = 2^-(1 + log2 10 + 1) = 1/40, delta = 1 - 1/2 - 1/40.
    assert CB.log_eta(1) == -(1.0 + math.log2(10) + 1.0)
    assert math.isclose(CB.log_1_delta(1), math.log2(0.5 + 1 / 40), rel_tol=1e-15)
    assert JB.list_size_bits(10, 2) == pytest.approx(1 - 1 + 2 / 2 + math.log2(10) + 1)
    assert UD.list_size_bits(10, 2) == 0.0
    assert UD.prox_gaps_error(10, 2, 124) == 124 - 12
    assert JB.prox_gaps_error(10, 2, 124) == pytest.approx(124 - (12 + math.log2(2 * 10.5**5 / 3) + 3))
    assert CB.prox_gaps_error(10, 2, 124) == pytest.approx(124 - (14 + 2 + math.log2(10) + 1))
    assert UD.determine_ood_samples(100, 20, 1, 124) == 0
    assert UD.ood_error(20, 1, 124, 3) == 0.0
    with pytest.raises(ConfigError, match="num_functions"):
        UD.prox_gaps_error(1, 1, 64, 1)


def test_queries_rounding_is_ceiling():
    for st in SoundnessType:
        for r in range(1, 8):
            q = st.queries(84, r)
            assert q - 1 < st.queries_float(84, r) <= q


def test_rounding_margins_on_bench_grid():
    """Every value that gets a ceil/floor on the bench grid is far (relative to f64 ulps) from an integer, so a
    last-bit difference between libm's and this platform's log2/pow cannot change a derived number."""
    grid = [(n, f, r) for n in (18, 20, 22, 24) for f in (1, 2, 3, 4, 6, 8) for r in (1, 2, 3)]
    checked = 0
    for n, f, r in grid:
        try:
            cfg = config(n, f, r)
        except ConfigError:
            continue
        st, lam, b = cfg.soundness_type, cfg.security_level, cfg.field_size_bits
        lam_p = lam - cfg.max_pow_bits
        values = [st.folding_pow_bits_float(lam, b, n, r)]
        for rc in cfg.rounds:
            values.append(st.queries_float(lam_p, rc.log_inv_rate))
            values.append(st.folding_pow_bits_float(lam, b, rc.num_variables, rc.next_log_inv_rate))
            qe = st.queries_error(rc.log_inv_rate, rc.num_queries)
            ce = st.queries_combination_error(
                b, rc.num_variables, rc.next_log_inv_rate, rc.ood_samples, rc.num_queries
            )
            values.append(lam - min(qe, ce))
        values.append(st.queries_float(lam_p, cfg.final_log_inv_rate))
        values.append(lam - st.queries_error(cfg.final_log_inv_rate, cfg.final_queries))
        for v in values:
            if v > 0:
                assert abs(v - round(v)) > 1e-9, (n, f, r, v)
        checked += 1
    assert checked >= 29


# ---------------------------------------------------------------------------------------------------------------
# Soundness type and folding factor parsing


@pytest.mark.parametrize(
    "name,expected",
    [
        ("unique", UD),
        ("johnson", JB),
        ("capacity", CB),
        ("UniqueDecoding", UD),
        ("JohnsonBound", JB),
        ("CapacityBound", CB),
        ("CAPACITY", CB),
        ("cb", CB),
        (0, UD),
        (2, CB),
        (JB, JB),
    ],
)
def test_soundness_parse(name, expected):
    assert SoundnessType.parse(name) is expected


def test_soundness_values_and_names():
    assert [int(s) for s in (UD, JB, CB)] == [0, 1, 2]
    assert [s.cli_name for s in (UD, JB, CB)] == ["unique", "johnson", "capacity"]


@pytest.mark.parametrize("bad", ["bogus", "", 3, True, 1.5, None])
def test_soundness_parse_unknown(bad):
    with pytest.raises(ConfigError) as e:
        SoundnessType.parse(bad)
    if not isinstance(bad, int) or isinstance(bad, bool):
        for accepted in ("unique", "johnson", "capacity", "UniqueDecoding", "JohnsonBound", "CapacityBound"):
            assert accepted in str(e.value)


def test_folding_factor_basics():
    c = Constant(4)
    assert [c.at_round(i) for i in range(3)] == [4, 4, 4]
    v = ConstantFromSecondRound(3, 5)
    assert [v.at_round(i) for i in range(3)] == [3, 5, 5]
    assert c.to_serde() == {"Constant": 4}
    assert v.to_serde() == {"ConstantFromSecondRound": [3, 5]}
    assert FoldingFactor.from_serde({"Constant": 4}) == c
    assert FoldingFactor.from_serde({"ConstantFromSecondRound": [3, 5]}) == v
    assert FoldingFactor.parse("4") == c and FoldingFactor.parse("3,5") == v and FoldingFactor.parse(4) == c
    assert c.total_number(3) == 16 and ConstantFromSecondRound(3, 2).total_number(3) == 9
    assert c.domain_separator_values() == [0, 4] and v.domain_separator_values() == [1, 3, 5]


def test_compute_number_of_rounds():
    # Constant(3) around MAX_NUM_VARIABLES_TO_SEND_COEFFS = 6.
    c = Constant(3)
    got = [c.compute_number_of_rounds(n) for n in (5, 6, 7, 9, 10, 13)]
    assert got == [(0, 2), (0, 3), (0, 4), (0, 6), (1, 4), (2, 4)]
    v = ConstantFromSecondRound(4, 3)
    got = [v.compute_number_of_rounds(n) for n in (5, 6, 7, 10, 11, 14)]
    assert got == [(0, 1), (0, 2), (0, 3), (0, 6), (1, 4), (2, 4)]


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "x"])
def test_folding_factor_rejects(bad):
    with pytest.raises(ConfigError, match="folding factor"):
        Constant(bad)
    with pytest.raises(ConfigError, match="folding factor"):
        ConstantFromSecondRound(bad, 2)
    with pytest.raises(ConfigError, match="folding factor"):
        ConstantFromSecondRound(2, bad)


def test_folding_factor_bad_serde():
    for bad in ({"Const": 4}, {"ConstantFromSecondRound": 4}, {}, "4,5,6", "a"):
        with pytest.raises(ConfigError, match="folding"):
            FoldingFactor.parse(bad)


# ---------------------------------------------------------------------------------------------------------------
# Validation


def make(**kw) -> WhirConfig:
    base = dict(
        num_variables=16,
        folding_factor=Constant(4),
        starting_log_inv_rate=1,
        security_level=100,
        pow_bits=16,
        soundness_type=CB,
        rs_domain_initial_reduction_factor=3,
    )
    base.update(kw)
    return WhirConfig.from_params(ProtocolParameters(**base))


@pytest.mark.parametrize(
    "kw,patterns",
    [
        (
            dict(num_variables=28, starting_log_inv_rate=4),
            ["TWO_ADICITY 27", "num_variables 28", "rate 4", "= 28"],
        ),
        (
            dict(num_variables=30, folding_factor=Constant(2), rs_domain_initial_reduction_factor=2),
            ["TWO_ADICITY", "29"],
        ),
        (dict(rs_domain_initial_reduction_factor=5), ["rs_domain_initial_reduction_factor 5", "4"]),
        (dict(rs_domain_initial_reduction_factor=-1), ["rs_domain_initial_reduction_factor", "-1"]),
        (dict(num_variables=3), ["folding factor 4", "num_variables 3"]),
        (dict(num_variables=0), ["num_variables", "0"]),
        (dict(starting_log_inv_rate=0), ["starting_log_inv_rate", "0"]),
        (dict(security_level=0, pow_bits=0), ["security_level", "0"]),
        (dict(pow_bits=-1), ["pow_bits", "-1"]),
        (dict(pow_bits=100), ["pow_bits 100", "security_level 100"]),
        (dict(security_level=200, pow_bits=16), ["MAX_GRIND_BITS", str(MAX_GRIND_BITS)]),
        (
            dict(num_variables=15, folding_factor=Constant(8), rs_domain_initial_reduction_factor=3),
            ["folding factor 8", "15"],
        ),
        (
            dict(
                num_variables=24,
                folding_factor=ConstantFromSecondRound(4, 1),
                starting_log_inv_rate=6,
                rs_domain_initial_reduction_factor=1,
            ),
            ["TWO_ADICITY", "round 1", "28"],
        ),
        (dict(folding_factor=ConstantFromSecondRound(2, 20)), ["folding factor 20", "16"]),
        (dict(num_variables=16.0), ["num_variables", "integer"]),
        (dict(security_level=True), ["security_level", "integer"]),
        (dict(soundness_type="nope"), ["unknown soundness type", "capacity"]),
    ],
)
def test_config_errors(kw, patterns):
    with pytest.raises(ConfigError) as e:
        make(**kw)
    for p in patterns:
        assert p in str(e.value), (p, str(e.value))


def test_from_params_type_check():
    with pytest.raises(ConfigError, match="ProtocolParameters"):
        WhirConfig.from_params({"num_variables": 10})


def test_from_golden_params_checks():
    g = load_golden(GOLDEN_PROOFS[0])["params"]
    with pytest.raises(ConfigError, match="discriminant"):
        ProtocolParameters.from_golden_params({**g, "soundness_type_discriminant": 0})
    with pytest.raises(ConfigError, match="merkle_cap_height"):
        ProtocolParameters.from_golden_params({**g, "merkle_cap_height": 1})
    with pytest.raises(ConfigError, match="poseidon2_seed"):
        ProtocolParameters.from_golden_params({**g, "poseidon2_seed": 7})
    partial = dict(g)
    del partial["security_level"]
    with pytest.raises(ConfigError, match="security_level"):
        ProtocolParameters.from_golden_params(partial)


def test_defaults():
    p = ProtocolParameters.default(20, 2)
    assert (p.security_level, p.pow_bits, p.soundness_type, p.starting_log_inv_rate) == (100, 16, CB, 1)
    assert p.rs_domain_initial_reduction_factor == 2
    assert ProtocolParameters.default(20, 6).rs_domain_initial_reduction_factor == 3
    explicit = ProtocolParameters.default(20, 6, rs_domain_initial_reduction_factor=1)
    assert explicit.rs_domain_initial_reduction_factor == 1
    assert ProtocolParameters.default(20, "3,2").folding_factor == ConstantFromSecondRound(3, 2)
    with pytest.raises(TypeError):
        # rs_domain_initial_reduction_factor has no default outside ProtocolParameters.default.
        ProtocolParameters(num_variables=10, folding_factor=2, starting_log_inv_rate=1, security_level=80)


def test_red_zero_is_accepted_like_the_reference():
    cfg = make(rs_domain_initial_reduction_factor=0)
    assert cfg.rounds[1].domain_size == cfg.rounds[0].domain_size
    assert cfg.rounds[0].next_log_inv_rate == 1 + 4


def test_n_small_has_no_rounds():
    cfg = config(4, 2, 1, security_level=32, pow_bits=0)
    assert cfg.n_rounds == 0 and cfg.final_sumcheck_rounds == 2
    assert cfg.final_domain_size == 1 << 5
    assert cfg.final_round_config().folded_domain_gen == TWO_ADIC_GENERATORS[5 - 2]
    assert cfg.to_derived_dict()["rounds"] == []


def test_constant_from_second_round_config():
    cfg = WhirConfig.from_params(
        ProtocolParameters(
            num_variables=16,
            folding_factor=ConstantFromSecondRound(5, 2),
            starting_log_inv_rate=1,
            security_level=32,
            pow_bits=0,
            soundness_type=CB,
            rs_domain_initial_reduction_factor=2,
        )
    )
    # n' = 11 -> M = ceil(5 / 2) = 3, fsr = 11 - 6 = 5.
    assert (cfg.n_rounds, cfg.final_sumcheck_rounds) == (3, 5)
    assert [rc.folding_factor for rc in cfg.rounds] == [5, 2, 2]
    assert [rc.num_variables for rc in cfg.rounds] == [11, 9, 7]
    assert cfg.params_dict()["folding_factor"] == {"ConstantFromSecondRound": [5, 2]}


# ---------------------------------------------------------------------------------------------------------------
# Sanity over a matrix


@pytest.mark.parametrize("st", list(SoundnessType))
def test_matrix_is_sane(st):
    valid = 0
    for n in range(1, 25):
        for f in range(1, 7):
            for r in (1, 2, 3):
                for lam, pow_bits in ((32, 0), (80, 0), (100, 16)):
                    try:
                        cfg = config(n, f, r, security_level=lam, pow_bits=pow_bits, soundness_type=st)
                    except ConfigError as e:
                        # Only the structural limits may refuse a configuration here.
                        assert f > n or "TWO_ADICITY" in str(e) or "MAX_GRIND_BITS" in str(e), (n, f, r, lam, e)
                        continue
                    valid += 1
                    d = cfg.to_derived_dict()
                    assert d["n_rounds"] == len(d["rounds"])
                    assert cfg.final_sumcheck_rounds >= 0
                    assert cfg.total_folded == n
                    assert all(rc.num_queries >= 1 for rc in cfg.rounds) and cfg.final_queries >= 1
                    assert (cfg.commitment_ood_samples == 0) == (st is UD)
                    assert all((rc.ood_samples == 0) == (st is UD) for rc in cfg.rounds)
                    assert cfg.max_derived_pow_bits <= MAX_GRIND_BITS
                    for rc in cfg.rounds:
                        assert rc.folded_domain_size >= 1
                        assert rc.num_variables >= 0
                    fr = cfg.final_round_config()
                    assert fr.folded_domain_size >= 1
                    text = format_schedule(cfg)
                    assert text.count("\n") >= 4 + cfg.n_rounds
                    json.dumps(cfg.to_json_dict())
    assert valid > 500


def test_format_schedule_rows():
    cfg = config(22, 4, 1)
    text = format_schedule(cfg)
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("round"))
    rows = lines[header + 2 : header + 2 + cfg.n_rounds + 2]
    assert rows[0].split()[:4] == ["initial", "22", "4", "2^23"]
    assert rows[1].split() == ["0", "18", "4", "2^20", "2^-2", "91", "2", "15", "4"]
    assert rows[-1].split()[0] == "final"
    assert rows[-1].split()[5:] == ["11", "-", "12", "0"]
    assert "n = 22" in lines[0]
    assert lines[1].startswith("security 100 bits under the capacity-bound conjecture; ")  # every figure its regime


def test_to_json_dict():
    cfg = config(22, 4, 1)
    d = cfg.to_json_dict()
    assert d["derived"] == cfg.to_derived_dict()
    assert d["params"] == cfg.params_dict()
    assert d["schedule"]["final_domain_size"] == cfg.final_domain_size
    assert json.loads(json.dumps(d)) == d


def test_params_re_exports_the_homes():
    """``whirgpu.protocol.params`` is the one import for all of it: every class and function it exports is the
    object its home module defines."""
    import importlib
    import types

    from whirgpu.protocol import params

    for name in params.__all__:
        value = getattr(params, name)
        if isinstance(value, (type, types.FunctionType)):
            assert value.__module__ != params.__name__, name
            assert getattr(importlib.import_module(value.__module__), name) is value, name
