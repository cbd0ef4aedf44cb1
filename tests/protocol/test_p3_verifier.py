"""The one verifier under the p3-whir profile: every golden-p3 proof is accepted; changing any single value of one
(a sumcheck message, a claimed value, an OOD answer, a Merkle sibling, an opened row, the final polynomial, a PoW
witness, the commitment root) is rejected with ``VerificationError``, and a proof of the wrong shape (opening
count, round count, openings of the wrong kind or size) with ``ProofFormatError``; never anything else."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import field_by_name
from whirgpu.protocol.folding import Constant
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.format import merkle_cap_from_json, pcs_proof_from_json
from whirgpu.profiles.p3_whir.verifier import P3Statement, P3WhirVerifier, verify_p3
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.protocol.verifier import WhirVerifier
from whirgpu.ref.field_np import field_ops

PROOFS = ["bb_n12_k4_r1_s90_p0_cb_e1_seed0.json", "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json",
          "kb_n12_k4_r1_s90_p0_cb_e1_seed0.json", "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json",
          "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json", "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"]
POW_PROOFS = [name for name in PROOFS if "_p16_" in name]


SAME = object()  # verify with the golden file's own points


class Case:
    """One golden file, ready to verify: its config, field, JSON trees and (prescribed mode) points."""

    def __init__(self, name: str):
        golden = load_golden_p3(name)
        p = golden["params"]
        self.field = field_by_name(golden["field"])
        params = P3Parameters(p["security_level"], p["pow_bits"], Constant(p["folding_factor"]),
                              SoundnessType.parse(p["soundness_type"]), p["starting_log_inv_rate"],
                              tuple(p["round_log_inv_rates"]))
        self.config = P3WhirConfig.derive(p["num_variables"], params, self.field)
        self.proof_json, self.commitment_json = golden["proof"], golden["commitment"]
        self.num_openings = p["evaluations"]
        self.points = None
        if p["points"] == "prescribed":
            self.points = field_ops(self.field).to_monty(np.asarray(golden["points_canonical"], dtype=np.uint64))

    def verify(self, proof_json=None, commitment_json=None, num_openings=None, points=SAME):
        proof = pcs_proof_from_json(self.proof_json if proof_json is None else proof_json)
        cap = merkle_cap_from_json(self.commitment_json if commitment_json is None else commitment_json)
        verify_p3(self.config, cap, proof, self.field, points=self.points if points is SAME else points,
                  num_openings=self.num_openings if num_openings is None else num_openings)


_cases: dict[str, Case] = {}


def case(name: str) -> Case:
    if name not in _cases:
        _cases[name] = Case(name)
    return _cases[name]


def words(tree, path=()):
    """Every integer of a JSON tree, as (path, value)."""
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from words(value, path + (key,))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            yield from words(value, path + (index,))
    elif isinstance(tree, int) and not isinstance(tree, bool):
        yield path, tree


def changed(tree, path, p: int, value=None):
    """A copy of ``tree`` with the word at ``path`` replaced (by the next field element unless ``value``)."""
    tree = copy.deepcopy(tree)
    node = tree
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = (node[path[-1]] + 1) % p if value is None else value
    return tree


def first_word(tree, *parts):
    """The first word whose path contains each of ``parts`` in order (keys or 'Base'/'Extension')."""
    for path, _ in words(tree):
        keys = [k for k in path if isinstance(k, str)]
        it = iter(keys)
        if all(part in it for part in parts):
            return path
    return None


def test_the_p3_profile_shares_the_step_order():
    assert P3WhirVerifier.walk is WhirVerifier.walk


@pytest.mark.parametrize("name", PROOFS)
def test_every_golden_proof_verifies(name):
    case(name).verify()


TAMPERINGS = {
    "initial sumcheck value": ("whir", "initial_sumcheck", "polynomial_evaluations"),
    "round sumcheck value": ("whir", "rounds", "sumcheck", "polynomial_evaluations"),
    "final sumcheck value": ("whir", "final_sumcheck", "polynomial_evaluations"),
    "claimed value": ("evals", "current"),
    "initial OOD answer": ("whir", "initial_ood_answers"),
    "round OOD answer": ("whir", "rounds", "ood_answers"),
    "round commitment": ("whir", "rounds", "commitment", "cap"),
    "round 0 Merkle sibling": ("whir", "rounds", "openings", "sibling_hashes"),
    "round 0 row value": ("whir", "rounds", "openings", "rows"),
    "final Merkle sibling": ("whir", "final_openings", "sibling_hashes"),
    "final row value": ("whir", "final_openings", "rows"),
    "final polynomial": ("whir", "final_poly"),
    "final PoW witness": ("whir", "final_pow_witness"),
    "round PoW witness": ("whir", "rounds", "pow_witness"),
}


@pytest.mark.parametrize("what", sorted(TAMPERINGS))
@pytest.mark.parametrize("name", PROOFS)
def test_a_changed_value_is_rejected(name, what):
    c = case(name)
    path = first_word(c.proof_json, *TAMPERINGS[what])
    if path is None:
        pytest.skip(f"{name} has no {what}")
    with pytest.raises(VerificationError):
        c.verify(changed(c.proof_json, path, c.field.P))


@pytest.mark.parametrize("name", POW_PROOFS)
def test_a_changed_sumcheck_pow_witness_is_rejected(name):
    c = case(name)
    path = first_word(c.proof_json, "whir", "pow_witnesses")
    if path is None:
        pytest.skip(f"{name}: no sumcheck grinds")
    with pytest.raises(VerificationError) as info:
        c.verify(changed(c.proof_json, path, c.field.P))
    assert info.value.check == "pow"


@pytest.mark.parametrize("name", PROOFS)
def test_a_changed_commitment_root_is_rejected(name):
    c = case(name)
    with pytest.raises(VerificationError):
        c.verify(commitment_json=changed(c.commitment_json, ("cap", 0, 3), c.field.P))


@pytest.mark.parametrize("name", ["kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json"])
def test_a_changed_prescribed_point_is_rejected(name):
    c = case(name)
    points = c.points.copy()
    points[1, 2, 0] = (int(points[1, 2, 0]) + 1) % c.field.P
    with pytest.raises(VerificationError):
        c.verify(points=points)


@pytest.mark.parametrize("name", PROOFS)
def test_random_single_word_changes_are_rejected(name):
    """Any word of the proof, chosen at random: rejected with one of the verifier's two errors, never accepted."""
    c = case(name)
    all_words = list(words(c.proof_json))
    rng = random.Random(name)
    for path, _ in rng.sample(all_words, 12):
        with pytest.raises((VerificationError, ProofFormatError)):
            c.verify(changed(c.proof_json, path, c.field.P))


@pytest.mark.parametrize("name", PROOFS)
def test_a_wrong_opening_count_is_a_format_error(name):
    c = case(name)
    with pytest.raises(ProofFormatError):
        c.verify(num_openings=c.num_openings + 1, points=None)
    tree = copy.deepcopy(c.proof_json)
    tree["evals"].append(copy.deepcopy(tree["evals"][0]))
    with pytest.raises(ProofFormatError):
        c.verify(tree, points=None)


def _edit(tree, edit):
    tree = copy.deepcopy(tree)
    edit(tree["whir"])
    return tree


def _variant(openings: dict) -> str:
    return next(iter(openings))


SHAPE_EDITS = {
    "a round dropped": lambda w: w["rounds"].pop() if w["rounds"] else w.update(final_poly=None),
    "an initial OOD answer dropped": lambda w: w["initial_ood_answers"].pop(),
    "a final row shortened": lambda w: [row.pop() for row in w["final_openings"][_variant(w["final_openings"])][
        "rows"]],
    "the final polynomial shortened": lambda w: w["final_poly"][0].pop(),
    "the final polynomial missing": lambda w: w.update(final_poly=None),
    "a sumcheck round dropped": lambda w: w["initial_sumcheck"]["polynomial_evaluations"].pop(),
    "openings of the wrong kind": lambda w: w.update(final_openings={
        ("Base" if _variant(w["final_openings"]) == "Extension" else "Extension"): {
            "rows": [], "proof": {"sibling_hashes": []}}}),
}


@pytest.mark.parametrize("what", sorted(SHAPE_EDITS))
@pytest.mark.parametrize("name", ["kb_n10_k2_r1_s32_p0_cb_e1_seed0.json", "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json"])
def test_a_proof_of_the_wrong_shape_is_a_format_error(name, what):
    c = case(name)
    with pytest.raises(ProofFormatError):
        c.verify(_edit(c.proof_json, SHAPE_EDITS[what]))


@pytest.mark.parametrize("name", ["kb_n10_k2_r1_s32_p0_cb_e1_seed0.json", "bb_n12_k4_r1_s90_p0_cb_e1_seed0.json"])
def test_a_missing_opened_row_or_sibling_is_rejected(name):
    """The row count and the sibling count follow from the transcript's indices: a failed opening, not a shape."""
    c = case(name)

    def drop_row(w):
        w["final_openings"][_variant(w["final_openings"])]["rows"].pop()

    def drop_sibling(w):
        w["final_openings"][_variant(w["final_openings"])]["proof"]["sibling_hashes"].pop()

    with pytest.raises(VerificationError) as info:
        c.verify(_edit(c.proof_json, drop_row))
    assert info.value.check == "query-count"
    with pytest.raises(VerificationError) as info:
        c.verify(_edit(c.proof_json, drop_sibling))
    assert info.value.check == "merkle"


def test_words_outside_the_field_are_format_errors():
    """A proof decoded without the prime may hold words >= p: the verifier refuses them as malformed."""
    c = case("kb_n10_k2_r1_s32_p0_cb_e1_seed0.json")
    for parts in [("whir", "initial_ood_answers"), ("whir", "final_openings", "rows"), ("evals", "current")]:
        tree = changed(c.proof_json, first_word(c.proof_json, *parts), c.field.P, value=c.field.P)
        with pytest.raises(ProofFormatError):
            c.verify(tree)


def test_a_wrong_statement_is_a_format_error():
    c = case("kb_n10_k2_r1_s32_p0_cb_e1_seed0.json")
    proof = pcs_proof_from_json(c.proof_json)
    cap = merkle_cap_from_json(c.commitment_json)
    verifier = P3WhirVerifier(c.config, c.field)
    for statement in [None, P3Statement(None), P3Statement(cap, 0), P3Statement(cap, 1, np.zeros((1, 3, 4)))]:
        with pytest.raises(ProofFormatError):
            verifier.verify(proof, statement)
    with pytest.raises(ProofFormatError):
        verifier.verify(None, P3Statement(cap))
