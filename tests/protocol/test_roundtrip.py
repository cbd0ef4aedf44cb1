"""Prove -> verify round trips over the reference's end-to-end configuration matrix (whir-spec.md §9.5), and the
public API (``whirgpu.api``) against the golden n10 instance.

The matrix is ``test_whir_end_to_end``'s: λ = 32, r = 1; folds Constant(1..4) and ConstantFromSecondRound (2,1),
(3,1), (3,2), (5,2); all three soundness types; pow_bits ∈ {0, 5, 10}; initial reduction 1..min(3, fold(0));
n from fold(0) to 3·fold(0); 0-2 claims. That is 1314 configurations: the whole of it runs with ``--runslow``
(``FULL_MATRIX``), and a hand-picked ``SUBSET`` of different combinations runs by default.
``test_subset_is_representative`` keeps the subset honest: it fails if the subset stops covering a fold,
soundness type, PoW budget, reduction, claim kind or schedule shape (M = 0, M >= 2, fsr = 0, no OOD).

Every case checks: proving twice gives identical bytes; the binary and whir-p3-json files both load (losslessly)
and verify; a wrong claimed value (or, without claims, an extra false claim) is rejected at the final check.
"""

from __future__ import annotations

import itertools
import json
import zlib
from dataclasses import dataclass, replace

import numpy as np
import pytest

from whirgpu import api
from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.protocol.params import (
    Constant,
    ConstantFromSecondRound,
    FoldingFactor,
    ProtocolParameters,
    SoundnessType,
    WhirConfig,
)
from whirgpu.protocol.proof import Statement
from whirgpu.profiles.whir_p3_metal.serialize import ProofFile, dump, load, params_and_statement_from_json, proof_to_json_tree
from whirgpu.ref import field_np as F
from whirgpu.ref.multilinear import evaluate, expand_from_univariate
from whirgpu.ref.rng import Xoshiro256PlusPlus, random_base, random_ef

from ..conftest import load_golden

UD, JB, CB = SoundnessType.UniqueDecoding, SoundnessType.JohnsonBound, SoundnessType.CapacityBound
SECURITY_LEVEL = 32
LOG_INV_RATE = 1

FOLDS: tuple[FoldingFactor, ...] = (
    Constant(1), Constant(2), Constant(3), Constant(4),
    ConstantFromSecondRound(2, 1), ConstantFromSecondRound(3, 1), ConstantFromSecondRound(3, 2),
    ConstantFromSecondRound(5, 2),
)
POW_BITS = (0, 5, 10)
# A claim is made at a random extension point ("ef"), a base-field point ("base", coordinates in F embedded in
# EF) or a point expand_from_univariate(y, n) of a random EF y ("expand", the shape OOD points have).
CLAIM_SETS: tuple[tuple[str, ...], ...] = ((), ("ef",), ("ef", "ef"), ("base",), ("expand",), ("base", "expand"))


@dataclass(frozen=True)
class Case:
    fold: FoldingFactor
    n: int
    red: int
    soundness: SoundnessType
    pow_bits: int
    claims: tuple[str, ...]

    @property
    def id(self) -> str:
        ff = self.fold
        fold = f"c{ff.k}" if isinstance(ff, Constant) else f"c{ff.k0}_{ff.k}"
        claims = "+".join(self.claims) or "noclaim"
        return f"{fold}-n{self.n}-red{self.red}-{self.soundness.cli_name}-pow{self.pow_bits}-{claims}"

    def params(self) -> ProtocolParameters:
        return ProtocolParameters(
            num_variables=self.n,
            folding_factor=self.fold,
            starting_log_inv_rate=LOG_INV_RATE,
            security_level=SECURITY_LEVEL,
            pow_bits=self.pow_bits,
            soundness_type=self.soundness,
            rs_domain_initial_reduction_factor=self.red,
        )

    def config(self) -> WhirConfig:
        return WhirConfig.from_params(self.params())

    def in_matrix(self) -> bool:
        k0 = self.fold.at_round(0)
        return (self.fold in FOLDS and k0 <= self.n <= 3 * k0 and 1 <= self.red <= min(3, k0)
                and self.pow_bits in POW_BITS and len(self.claims) <= 2)


def _full_matrix() -> list[Case]:
    """Every configuration of the matrix; the claim set rotates through CLAIM_SETS (0, 1 and 2 claims, and the
    base/expand kinds) so that each (fold, n) meets every claim set while the run stays finite."""
    cases = []
    for fold in FOLDS:
        k0 = fold.at_round(0)
        for n, red, soundness, pow_bits in itertools.product(
            range(k0, 3 * k0 + 1), range(1, min(3, k0) + 1), (UD, JB, CB), POW_BITS
        ):
            cases.append(Case(fold, n, red, soundness, pow_bits, CLAIM_SETS[len(cases) % len(CLAIM_SETS)]))
    return cases


FULL_MATRIX = _full_matrix()

C1, C2, C3, C4 = Constant(1), Constant(2), Constant(3), Constant(4)
S21, S31, S32, S52 = (ConstantFromSecondRound(2, 1), ConstantFromSecondRound(3, 1), ConstantFromSecondRound(3, 2),
                      ConstantFromSecondRound(5, 2))

# The default subset: each line a different combination. Comments give the derived schedule (M intermediate
# rounds, fsr final sumcheck rounds) and what the line is there for.
SUBSET: list[Case] = [
    # Constant(1): the smallest polynomials; M = 0.
    Case(C1, 1, 1, CB, 0, ("ef",)),                  # n = 1 = k0: fsr = 0, a one-variable polynomial
    Case(C1, 2, 1, UD, 5, ("base",)),                # UD: no OOD samples at all; base-field claim
    Case(C1, 3, 1, JB, 10, ("ef", "ef")),            # n = 3k0, two claims, grinding
    # Constant(2)
    Case(C2, 2, 2, UD, 0, ()),                       # fsr = 0, no claims, no OOD: commitment consistency only
    Case(C2, 4, 1, CB, 10, ("expand",)),             # expanded-point claim
    Case(C2, 5, 2, JB, 5, ("ef",)),
    Case(C2, 6, 1, UD, 10, ("base", "expand")),      # n = 3k0
    # Constant(3)
    Case(C3, 3, 3, JB, 10, ("ef", "ef")),            # fsr = 0 with red = fold
    Case(C3, 6, 1, CB, 5, ()),                       # fsr = 3
    Case(C3, 7, 2, UD, 0, ("ef",)),                  # n > 6: R = 1 round of folding, fsr = 4
    Case(C3, 9, 3, CB, 0, ("base", "expand")),       # n = 3k0
    # Constant(4): the only Constant fold of the matrix with intermediate rounds (n = 11, 12 -> M = 1).
    Case(C4, 4, 1, CB, 0, ("ef",)),                  # fsr = 0
    Case(C4, 8, 2, JB, 0, ("expand",)),              # M = 0, fsr = 4
    Case(C4, 11, 3, CB, 10, ("ef", "ef")),           # M = 1, fsr = 3
    Case(C4, 12, 1, UD, 5, ("base",)),               # M = 1 without OOD, red 1
    Case(C4, 12, 2, JB, 10, ()),                     # M = 1, no claims
    # ConstantFromSecondRound(2, 1)
    Case(S21, 2, 1, JB, 0, ("ef", "ef")),            # fsr = 0 (n' = 0)
    Case(S21, 4, 2, UD, 10, ("expand",)),
    Case(S21, 6, 1, CB, 5, ("base",)),
    # ConstantFromSecondRound(3, 1)
    Case(S31, 3, 1, UD, 5, ()),                      # fsr = 0
    Case(S31, 7, 3, CB, 10, ("ef",)),
    Case(S31, 9, 2, JB, 0, ("base", "expand")),      # n' = 6 < 7: still M = 0
    # ConstantFromSecondRound(3, 2)
    Case(S32, 3, 3, CB, 10, ("base",)),              # fsr = 0
    Case(S32, 6, 2, JB, 5, ("ef", "ef")),
    Case(S32, 9, 1, UD, 0, ("expand",)),
    # ConstantFromSecondRound(5, 2): M up to 2, extension-field openings in the rounds and the final round.
    Case(S52, 5, 3, UD, 10, ("ef",)),                # fsr = 0
    Case(S52, 11, 1, CB, 0, ()),                     # n' = 6: M = 0, fsr = 6
    Case(S52, 12, 2, JB, 10, ("expand",)),           # M = 1, fsr = 5
    Case(S52, 13, 3, UD, 5, ("base", "expand")),     # M = 1 without OOD
    Case(S52, 14, 1, JB, 0, ("ef", "ef")),           # M = 2, fsr = 5
    Case(S52, 15, 2, CB, 5, ("ef",)),                # M = 2, fsr = 6, n = 3k0
    # Beyond the matrix (n > 3k0): intermediate rounds with the small folds, whose round-i queries open rows of
    # width 2 and 8 of an extension-field tree.
    Case(C1, 8, 1, CB, 5, ("ef",)),                  # M = 1, fold 1 everywhere
    Case(C3, 13, 2, JB, 10, ("base",)),              # M = 2
]


def _seed(case: Case) -> int:
    return zlib.crc32(case.id.encode())


def _instance(case: Case) -> tuple[np.ndarray, Statement]:
    """A random polynomial (Montgomery) and the case's claims with their true values, all from the case's id."""
    rng = Xoshiro256PlusPlus(_seed(case))
    n = case.n
    poly = random_base(rng, 1 << n)
    points = []
    for kind in case.claims:
        if kind == "ef":
            points.append(random_ef(rng, n))
        elif kind == "base":
            points.append(F.ef_from_base(random_base(rng, n)))
        elif kind == "expand":
            points.append(expand_from_univariate(random_ef(rng, 1)[0], n))
        else:  # pragma: no cover - a typo in the table
            raise AssertionError(kind)
    points = np.asarray(points, np.uint32).reshape(-1, n, 4)
    values = np.asarray([evaluate(poly, z) for z in points], np.uint32).reshape(-1, 4)
    return poly, Statement(points, values)


def _check_shape(config: WhirConfig, pf: ProofFile) -> None:
    """The proof has the schedule's shape: M rounds, 2^fsr final coefficients, at most q distinct openings each."""
    proof = pf.proof
    assert proof.initial_ood_answers.shape == (config.commitment_ood_samples, 4)
    assert proof.initial_sumcheck.num_rounds == config.fold(0)
    assert len(proof.rounds) == config.n_rounds
    for i, (rp, rc) in enumerate(zip(proof.rounds, config.rounds)):
        assert rp.ood_answers.shape == (rc.ood_samples, 4)
        assert 1 <= len(rp.queries) <= rc.num_queries
        assert {q.kind for q in rp.queries} == {"base" if i == 0 else "extension"}
        assert rp.sumcheck.num_rounds == config.fold(i + 1)
    assert proof.final_poly.shape == (1 << config.final_sumcheck_rounds, 4)
    assert 1 <= len(proof.final_queries) <= config.final_queries
    assert {q.kind for q in proof.final_queries} == {"base" if config.n_rounds == 0 else "extension"}
    if config.final_sumcheck_rounds:
        assert proof.final_sumcheck.num_rounds == config.final_sumcheck_rounds
    else:
        assert proof.final_sumcheck is None


def _false_statement(poly: np.ndarray, statement: Statement, case: Case) -> Statement:
    """The statement with one claimed value off by one; with no claims, one extra claim whose value is off by one."""
    points, values = statement.points.copy(), statement.values.copy()
    if len(points) == 0:
        z = random_ef(Xoshiro256PlusPlus(_seed(case) ^ 0xBAD), case.n).reshape(1, case.n, 4)
        points = z
        values = evaluate(poly, z[0]).reshape(1, 4)
    j = _seed(case) % len(points)
    c = 0 if case.claims and case.claims[j] == "base" else _seed(case) % 4
    values[j, c] = F.add(values[j, c], F.ONE)
    return Statement(points, values)


def check_round_trip(case: Case) -> None:
    config = case.config()
    poly, statement = _instance(case)
    prover = api.Prover(config, backend="cpu")

    first = prover.prove_monty(poly, statement)
    second = api.Prover(config, backend="cpu").prove_monty(poly.copy(), statement)
    _check_shape(config, first)

    binary = dump(first, "binary")
    text = dump(first, "whir-p3-json")
    assert dump(second, "binary") == binary, "proving twice gave different proofs"
    assert dump(second, "whir-p3-json") == text

    for blob, fmt in ((binary, "binary"), (text, "whir-p3-json")):
        loaded = load(blob)  # format told apart automatically
        assert dump(loaded, fmt) == blob, f"{fmt} does not load losslessly"
        api.verify(blob)

    bad = ProofFile(first.params, _false_statement(poly, statement, case), first.proof)
    with pytest.raises(VerificationError) as info:
        api.verify(bad)
    assert info.value.check == "sumcheck-claim"


# ---- the matrix ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", SUBSET, ids=[c.id for c in SUBSET])
def test_round_trip(case):
    check_round_trip(case)


@pytest.mark.slow
@pytest.mark.parametrize("case", FULL_MATRIX, ids=[c.id for c in FULL_MATRIX])
def test_round_trip_full_matrix(case):
    check_round_trip(case)


def test_full_matrix_is_the_reference_matrix():
    assert len(FULL_MATRIX) == 1314
    assert len({c.id for c in FULL_MATRIX}) == len(FULL_MATRIX)
    assert all(c.in_matrix() for c in FULL_MATRIX)
    for fold in FOLDS:
        k0 = fold.at_round(0)
        ns = {c.n for c in FULL_MATRIX if c.fold == fold}
        assert ns == set(range(k0, 3 * k0 + 1))
        assert {c.claims for c in FULL_MATRIX if c.fold == fold} == set(CLAIM_SETS)


def test_subset_is_representative():
    ids = [c.id for c in SUBSET]
    assert len(set(ids)) == len(ids), "duplicate cases"
    assert 25 <= len(SUBSET) <= 40
    in_matrix = [c for c in SUBSET if c.in_matrix()]
    assert len(SUBSET) - len(in_matrix) <= 2, "keep the subset inside the reference's matrix"
    # every combination different: no two cases share (fold, soundness, pow, red) -- the knobs that change the
    # schedule -- so each case exercises a different one
    knobs = [(c.fold, c.soundness, c.pow_bits, c.red) for c in SUBSET]
    assert len(set(knobs)) == len(knobs)

    configs = {c.id: c.config() for c in SUBSET}
    assert {c.fold for c in in_matrix} == set(FOLDS)
    assert {c.soundness for c in SUBSET} == {UD, JB, CB}
    assert {c.pow_bits for c in SUBSET} == set(POW_BITS)
    assert {c.red for c in SUBSET} == {1, 2, 3}
    assert {c.claims for c in SUBSET} >= set(CLAIM_SETS)
    for fold in FOLDS:
        cases = [c for c in in_matrix if c.fold == fold]
        k0 = fold.at_round(0)
        assert any(c.n == k0 for c in cases) and any(c.n == 3 * k0 for c in cases), fold
    shapes = [configs[c.id] for c in SUBSET]
    assert any(cfg.n_rounds == 0 for cfg in shapes)
    assert any(cfg.n_rounds == 1 for cfg in shapes)
    assert any(cfg.n_rounds >= 2 for cfg in shapes)
    assert any(cfg.final_sumcheck_rounds == 0 for cfg in shapes)
    assert any(cfg.final_sumcheck_rounds == 6 for cfg in shapes)
    assert any(cfg.n_rounds >= 1 and cfg.soundness_type is UD for cfg in shapes)  # rounds without OOD
    assert any(cfg.n_rounds >= 1 and cfg.max_derived_pow_bits > 0 for cfg in shapes)  # round grinding
    assert any(isinstance(c.fold, ConstantFromSecondRound) and configs[c.id].n_rounds >= 1 for c in SUBSET)
    # each schedule shape the matrix can produce (M, fsr == 0) appears
    matrix_shapes = {(cfg.n_rounds, cfg.final_sumcheck_rounds == 0) for cfg in map(Case.config, FULL_MATRIX)}
    assert matrix_shapes <= {(cfg.n_rounds, cfg.final_sumcheck_rounds == 0) for cfg in shapes}


def test_false_statement_really_changes_the_claims():
    """The rejection checks above are only meaningful if the altered statement differs from the true one."""
    for case in SUBSET[:8]:
        poly, statement = _instance(case)
        bad = _false_statement(poly, statement, case)
        truth = np.asarray([evaluate(poly, z) for z in bad.points], np.uint32).reshape(-1, 4)
        assert not np.array_equal(bad.values, truth), case.id


def test_base_and_expanded_claims_have_the_intended_form():
    poly, statement = _instance(Case(C2, 6, 1, UD, 10, ("base", "expand")))
    base, expanded = statement.points
    assert not base[:, 1:].any(), "a base-field point has zero higher coefficients"
    y = expanded[-1]
    for t in range(4, -1, -1):
        assert np.array_equal(expanded[t], F.ef_square(expanded[t + 1])), "expanded: [y^(2^(n-1)), ..., y^2, y]"
    assert y[1:].any()


# ---- the public API against the golden n10 instance --------------------------------------------------------------

GOLDEN_N10 = "n10_f2_r1_s32_p0_cb.json"


@pytest.fixture(scope="module")
def golden_n10(golden):
    doc = load_golden(GOLDEN_N10)
    assert doc["params"]["seed"] == 0 and doc["derived"]["all_pow_zero"]
    return doc


@pytest.fixture(scope="module")
def n10_proof(golden_n10):
    params, _ = params_and_statement_from_json(golden_n10)
    prover = api.Prover(params, backend="cpu")
    return prover.prove(golden_n10["polynomial_evals_canonical"], golden_n10["points_canonical"])


def test_random_instance_is_the_golden_instance(golden_n10):
    poly, statement = api.random_instance(10, 0)
    assert F.from_monty(poly).tolist() == golden_n10["polynomial_evals_canonical"]
    assert F.from_monty(statement.points).tolist() == golden_n10["points_canonical"]
    assert F.from_monty(statement.values).tolist() == golden_n10["claimed_values_canonical"]
    other, _ = api.random_instance(10, 1)
    assert not np.array_equal(other, poly)


def test_api_prove_reproduces_the_golden_proof(golden_n10, n10_proof):
    pf = n10_proof
    assert F.from_monty(pf.statement.values).tolist() == golden_n10["claimed_values_canonical"]
    assert F.from_monty(pf.statement.points).tolist() == golden_n10["points_canonical"]
    assert proof_to_json_tree(pf.proof) == golden_n10["proof"]


def test_api_verify_and_is_valid(n10_proof):
    pf = n10_proof
    binary, text = dump(pf, "binary"), dump(pf, "whir-p3-json")
    for form in (pf, binary, bytearray(binary), text, text.decode()):
        assert api.verify(form) is None
        assert api.is_valid(form) is True

    wrong = ProofFile(pf.params, Statement(pf.statement.points, F.add(pf.statement.values, F.ONE)), pf.proof)
    with pytest.raises(VerificationError):
        api.verify(wrong)
    assert api.is_valid(wrong) is False

    doc = json.loads(text)
    doc["proof"]["final_poly"][0]["value"][0] = (doc["proof"]["final_poly"][0]["value"][0] + 1) % P
    tampered = json.dumps(doc).encode()
    with pytest.raises(VerificationError):
        api.verify(tampered)
    assert api.is_valid(tampered) is False

    for garbage in (b"", b"\x00\x01garbage", binary[:-4], binary + b"\x00"):
        with pytest.raises(ProofFormatError):
            api.verify(garbage)
        assert api.is_valid(garbage) is False


def test_api_prove_accepts_canonical_inputs_in_every_form(golden_n10, n10_proof):
    params, _ = params_and_statement_from_json(golden_n10)
    prover = api.Prover(params, backend="cpu")
    evals = golden_n10["polynomial_evals_canonical"]
    points = golden_n10["points_canonical"]
    expected = dump(n10_proof, "binary")
    assert dump(prover.prove(np.asarray(evals, np.uint32), np.asarray(points, np.uint64)), "binary") == expected
    assert dump(prover.prove(np.asarray(evals, np.int64), points), "binary") == expected
    assert prover.backend.name == "cpu" and prover.backend_reason


def test_api_prove_base_points_and_no_points():
    params = ProtocolParameters.default(num_variables=6, folding_factor=2, security_level=32, pow_bits=0)
    prover = api.Prover(params, backend="cpu")
    rng = np.random.default_rng(7)
    evals = rng.integers(0, P, 64)
    base_points = rng.integers(0, P, (2, 6))
    as_ext = np.concatenate([base_points[..., None], np.zeros((2, 6, 3), np.int64)], axis=-1)
    pf = prover.prove(evals, base_points)
    assert dump(pf, "binary") == dump(prover.prove(evals, as_ext), "binary")
    # the claimed values are the multilinear extension at the points (checked here with Python ints)
    for z, value in zip(base_points.tolist(), F.from_monty(pf.statement.values).tolist()):
        table = [int(v) for v in evals]
        for zt in z:
            half = len(table) // 2
            table = [(lo + zt * (hi - lo)) % P for lo, hi in zip(table[:half], table[half:])]
        assert value == [table[0], 0, 0, 0]
    assert api.is_valid(pf)

    for empty in ([], np.zeros((0, 6, 4), np.int64), np.zeros((0, 6), np.int64)):
        pf = prover.prove(evals, empty)
        assert pf.statement.num_claims == 0
        assert api.is_valid(pf)


@pytest.mark.parametrize(
    "evals, points, message",
    [
        (list(range(63)), [], "2^6 = 64 entries"),
        (list(range(64)) + [0], [], "2^6 = 64 entries"),
        ([P] + [0] * 63, [], f"[0, {P})"),
        ([-1] + [0] * 63, [], f"[0, {P})"),
        ([1 << 70] + [0] * 63, [], "not an integer array"),
        ([0.5] * 64, [], "expected integers"),
        (list(range(64)), [[[0, 0, 0, 0]] * 5], "shape (m, 6, 4) or (m, 6)"),
        (list(range(64)), [[0] * 7], "shape (m, 6, 4) or (m, 6)"),
        (list(range(64)), [[[0, 0, 0]] * 6], "shape (m, 6, 4) or (m, 6)"),
        (list(range(64)), [[P] * 6], f"[0, {P})"),
        (list(range(64)), [[0] * 6, [0] * 5], "points"),  # ragged
    ],
)
def test_api_prove_rejects_bad_input(evals, points, message):
    params = ProtocolParameters.default(num_variables=6, folding_factor=2, security_level=32, pow_bits=0)
    with pytest.raises(ConfigError) as info:
        api.Prover(params, backend="cpu").prove(evals, points)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_api_prover_rejects_bad_parameters():
    with pytest.raises(ConfigError, match="greater than num_variables 3"):
        api.Prover(replace(SUBSET[0].params(), num_variables=3, folding_factor=Constant(4)), backend="cpu")
    with pytest.raises(ConfigError, match="exceeds TWO_ADICITY 27"):
        api.Prover(ProtocolParameters.default(num_variables=28, folding_factor=1), backend="cpu")
