"""The p3-whir codeword and its tree (``ref.p3_codeword``): every golden-p3 proof file's commitment from its
polynomial (both fields); the openings of every round against the tree they claim to open, at the query indices a
replay of the proof's transcript draws (the initial rows are rows of our codeword; every folded round's EF rows,
flattened, hash to a tree with that round's root); the codeword's columns against a slow evaluation written here;
and the edge sizes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.field import BABYBEAR, KOALABEAR, field_by_name
from whirgpu.profiles.p3_whir.format import pcs_proof_from_json
from whirgpu.protocol.query_indices import distinct_query_indices
from whirgpu.protocol.transcript import DuplexChallenger
from whirgpu.ref.field_np import field_ops
from whirgpu.ref.merkle_pruned import root_from_pruned
from whirgpu.ref.p3_codeword import commitment_root, encode_base, encode_ext, leaf_rows, merkle_levels
from whirgpu.ref.poseidon2 import compress, hash_rows_24
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

PROOFS = [
    "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json",
    "kb_n12_k4_r1_s90_p0_cb_e1_seed0.json",
    "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json",
    "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json",
    "bb_n12_k4_r1_s90_p0_cb_e1_seed0.json",
    "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json",
]
FIELDS = [BABYBEAR, KOALABEAR]


def _golden(name: str):
    doc = load_golden_p3(name)
    field = field_by_name(doc["field"])
    evals = field_ops(field).to_monty(np.asarray(doc["polynomial_evals_canonical"], np.int64))
    return doc, field, evals


@pytest.mark.parametrize("name", PROOFS)
def test_the_commitment_of_every_golden_proof(name):
    doc, field, evals = _golden(name)
    k, rate = doc["config"]["folding_schedule"][0], doc["params"]["starting_log_inv_rate"]
    codeword = encode_base(evals, k, rate, field)
    n = doc["params"]["num_variables"]
    assert codeword.shape == (1 << (n + rate - k), 1 << k)
    assert 1 << (n + rate) == doc["config"]["starting_domain_size"]
    root = merkle_levels(codeword, field)[-1][0]
    assert root.tolist() == doc["commitment"]["cap"][0]  # Montgomery words, as serde writes them
    assert field_ops(field).from_monty(root).tolist() == doc["commitment_root_canonical"]
    assert doc["commitment_canonical"]["cap"] == [doc["commitment_root_canonical"]]
    np.testing.assert_array_equal(commitment_root(evals, k, rate, field), root)


def _sumcheck(ch: DuplexChallenger, data, rounds: int, pow_bits: int) -> None:
    """Each round: observe h(0), h(inf); the round's PoW when it grinds; sample the folding randomness."""
    assert data.evaluations.shape[0] == rounds
    for r in range(rounds):
        ch.observe_many(data.evaluations[r])
        if pow_bits:
            assert ch.check_witness(pow_bits, data.pow_witnesses[r])
        ch.sample_ef()


def _replayed_indices(doc: dict, proof) -> list[list[int]]:
    """The verifier's transcript (README-golden-p3 difference 4), replayed from the proof's own values up to the
    final queries: the query indices of every round, then of the final round."""
    field = field_by_name(doc["field"])
    config, whir = doc["config"], proof.whir
    ch = DuplexChallenger(Poseidon2Constants.smallrng_16_24(field)[0], length_tagged=True)
    ch.observe_many(field_ops(field).to_monty(np.asarray(doc["domain_separator_canonical"], np.int64)))
    ch.observe_many(doc["commitment"]["cap"][0])
    for answer in whir.initial_ood_answers:
        ch.sample_ef()
        ch.observe_ef(answer)
    prescribed = doc["params"]["points"] == "prescribed"
    for opening in proof.evals:
        if not prescribed:
            ch.sample_ef()
        ch.observe_many(opening.current)
        ch.observe_many(opening.next)
    ch.sample_ef()
    schedule = config["folding_schedule"]
    _sumcheck(ch, whir.initial_sumcheck, schedule[0], config["starting_folding_pow_bits"])
    indices = []
    for i, (r, round_proof) in enumerate(zip(config["rounds"], whir.rounds)):
        ch.observe_many(round_proof.commitment.roots[0])
        for answer in round_proof.ood_answers:
            ch.sample_ef()
            ch.observe_ef(answer)
        assert ch.check_witness(r["pow_bits"], round_proof.pow_witness)
        ch.sample()
        indices.append(distinct_query_indices(ch, r["domain_size"], r["folding_factor"], r["num_queries"]))
        ch.sample_ef()
        _sumcheck(ch, round_proof.sumcheck, schedule[i + 1], r["folding_pow_bits"])
    ch.observe_many(whir.final_poly)
    assert ch.check_witness(config["final_pow_bits"], whir.final_pow_witness)
    final = config["final_round_config"]
    indices.append(distinct_query_indices(ch, final["domain_size"], final["folding_factor"], config["final_queries"]))
    return indices


@pytest.mark.parametrize("name", PROOFS)
def test_every_opening_against_its_tree(name):
    """Round 0 opens our codeword: its rows at the replayed indices, and its multiproof climbs to our root. Every
    later opening (a round's, then the final one) opens the previous round's EF codeword: its rows, flattened by
    ``leaf_rows``, and its multiproof climb to that round's committed root."""
    doc, field, evals = _golden(name)
    proof = pcs_proof_from_json(doc["proof"], field.P)
    whir = proof.whir
    indices = _replayed_indices(doc, proof)
    k, rate = doc["config"]["folding_schedule"][0], doc["params"]["starting_log_inv_rate"]
    codeword = encode_base(evals, k, rate, field)
    levels = merkle_levels(codeword, field)
    perm16, perm24 = Poseidon2Constants.smallrng_16_24(field)
    openings = [r.openings for r in whir.rounds] + [whir.final_openings]
    roots = [levels[-1][0]] + [r.commitment.roots[0] for r in whir.rounds]
    # opening i reads the codeword round i folds: its height is the round's domain over its folding
    depths = [(r["domain_size"] >> r["folding_factor"]).bit_length() - 1
              for r in doc["config"]["rounds"] + [doc["config"]["final_round_config"]]]
    assert depths[0] == len(levels) - 1
    assert openings[0].kind == "base"
    np.testing.assert_array_equal(openings[0].rows, codeword[indices[0]])
    for opening, queried, root, depth in zip(openings, indices, roots, depths):
        assert opening.kind == ("base" if opening is openings[0] else "extension")
        assert opening.num_queries == len(queried)
        leaves = hash_rows_24(leaf_rows(opening.rows), perm24)
        climbed = root_from_pruned(queried, leaves, opening.sibling_hashes, depth, lambda a, b: compress(a, b, perm16))
        np.testing.assert_array_equal(climbed, root)


# ---- the codeword against its definition -------------------------------------------------------------------------

def _slow_codeword(values: list, n: int, k: int, rate: int, field) -> list:
    """Canonical values (2^n, each an int, or a list of EF coefficients) -> rows[s][j]: column j's polynomial
    sum_t values[t 2^k + j] x^t at x = g^((P - 1) / 2^(n + rate - k)) ^ s, g the field's multiplicative generator.
    Python ints; EF values are evaluated coefficient by coefficient (the points are in the base field)."""
    p, log_h = field.P, n + rate - k
    omega = pow(field.generator, (p - 1) >> log_h, p)
    assert pow(omega, 1 << log_h, p) == 1 and (log_h == 0 or pow(omega, 1 << (log_h - 1), p) != 1)

    def horner(coeffs: list, x: int) -> int:
        acc = 0
        for c in reversed(coeffs):
            acc = (acc * x + c) % p
        return acc

    rows = []
    for s in range(1 << log_h):
        x = pow(omega, s, p)
        row = []
        for j in range(1 << k):
            column = values[j::1 << k]
            if isinstance(values[0], list):
                row.append([horner([v[c] for v in column], x) for c in range(len(values[0]))])
            else:
                row.append(horner(column, x))
        rows.append(row)
    return rows


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("n, k, rate", [(0, 0, 1), (3, 3, 1), (3, 3, 2), (4, 2, 1), (5, 1, 3), (6, 4, 2), (4, 0, 1)])
def test_base_columns_are_their_polynomials(field, n, k, rate):
    ops = field_ops(field)
    rng = np.random.default_rng(n * 100 + k * 10 + rate)
    values = rng.integers(0, field.P, 1 << n).tolist()
    codeword = encode_base(ops.to_monty(np.asarray(values, np.int64)), k, rate, field)
    assert codeword.shape == (1 << (n + rate - k), 1 << k) and codeword.dtype == np.uint32
    assert ops.from_monty(codeword).tolist() == _slow_codeword(values, n, k, rate, field)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
@pytest.mark.parametrize("n, k, rate", [(2, 2, 1), (4, 2, 2), (5, 3, 1)])
def test_ext_columns_are_their_polynomials(field, n, k, rate):
    ops = field_ops(field)
    rng = np.random.default_rng(n * 100 + k * 10 + rate + 7)
    values = rng.integers(0, field.P, (1 << n, 4)).tolist()
    codeword = encode_ext(ops.to_monty(np.asarray(values, np.int64)), k, rate, field)
    assert codeword.shape == (1 << (n + rate - k), 1 << k, 4)
    assert ops.from_monty(codeword).tolist() == _slow_codeword(values, n, k, rate, field)


def test_ef_rows_flatten_element_by_element():
    """Row s of an EF codeword is hashed as [e_0.c0..c3, e_1.c0..c3, ...]: a base codeword holding exactly those
    words has the same tree."""
    rng = np.random.default_rng(11)
    ops = field_ops(KOALABEAR)
    codeword = ops.to_monty(rng.integers(0, KOALABEAR.P, (8, 4, 4)))
    flat = leaf_rows(codeword)
    assert flat.shape == (8, 16)
    assert flat[3, 4 * 2 + 1] == codeword[3, 2, 1]
    np.testing.assert_array_equal(merkle_levels(codeword, KOALABEAR)[-1], merkle_levels(flat, KOALABEAR)[-1])
    np.testing.assert_array_equal(leaf_rows(flat), flat)


@pytest.mark.parametrize("field", FIELDS, ids=lambda f: f.name)
def test_a_single_row_is_its_own_root(field):
    """k = n with rate 0 gives one row: the tree is one leaf, its digest the root."""
    ops = field_ops(field)
    evals = ops.to_monty(np.arange(1, 9))
    codeword = encode_base(evals, 3, 0, field)
    assert codeword.shape == (1, 8)
    np.testing.assert_array_equal(codeword[0], evals)  # the constant polynomial evaluates to its coefficient
    levels = merkle_levels(codeword, field)
    assert len(levels) == 1
    leaf = hash_rows_24(evals[None, :], Poseidon2Constants.smallrng_16_24(field)[1])
    np.testing.assert_array_equal(levels[0], leaf)


def test_the_contract_is_enforced():
    with pytest.raises(ValueError, match="folding factor 4 for a polynomial of 3 variables"):
        encode_base(np.zeros(8, np.uint32), 4, 1, KOALABEAR)
    with pytest.raises(ValueError, match="power of two"):
        encode_base(np.zeros(12, np.uint32), 2, 1, KOALABEAR)
    with pytest.raises(ValueError, match="must be 1-D"):
        encode_base(np.zeros((8, 4), np.uint32), 2, 1, KOALABEAR)
    with pytest.raises(ValueError, match=r"must be \(2\^n, 4\)"):
        encode_ext(np.zeros(8, np.uint32), 2, 1, KOALABEAR)
    with pytest.raises(ValueError, match="negative"):
        encode_base(np.zeros(8, np.uint32), 2, -1, KOALABEAR)
    with pytest.raises(ValueError, match="power of two"):
        merkle_levels(np.zeros((3, 4), np.uint32), KOALABEAR)
