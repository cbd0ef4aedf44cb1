"""A p3-whir proof document from anyone can neither crash, hang, nor lie to the verifier.

Each input a hostile-user campaign found (a pow_bits above what grinding supports, JSON nested 100,000 deep, a
num_variables of 2^31, a point coordinate of 2^64 or Infinity, a claimed value or a transcript point off by one,
an unknown key) is a regression test here: the error's type, and that its message names the problem. Inputs
that used to hang or exhaust memory are small ones that would still do so; ``tracemalloc`` bounds what reading
them may allocate. Every golden-p3 proof document and documents ``P3Prover`` writes are accepted, and what
``verify_p3_document`` returns is what the document states (its points and claimed values).
"""

from __future__ import annotations

import functools
import json
import tracemalloc

import numpy as np
import pytest

from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.field import KOALABEAR, field_by_name
from whirgpu.profiles.p3_whir import config as p3_config
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.document import (
    P3Document, read_p3_document, read_p3_document_bytes, verify_p3_document,
)
from whirgpu.profiles.p3_whir.document_checks import DOCUMENT_KEYS
from whirgpu.profiles.p3_whir.format import ProofBounds, pcs_proof_from_postcard
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.json_tree import MAX_JSON_DEPTH, loads_bounded
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.protocol.transcript import MAX_SAMPLE_BITS
from whirgpu.ref.field_np import field_ops

from ..conftest import golden_p3_bytes, golden_p3_names

DOCUMENTS = golden_p3_names("[kb]b_n*_seed*.json")
TRANSCRIPT = "kb_n12_k4_r1_s90_p0_cb_e1_seed0.json"
PRESCRIBED = "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json"
SMALL = "kb_n10_k2_r1_s32_p0_cb_e1_seed0.json"
MIB = 1 << 20


@functools.lru_cache(maxsize=None)
def _doc_text(name: str) -> bytes:
    return golden_p3_bytes(name)


def _doc(name: str) -> dict:
    return json.loads(_doc_text(name))


def _check(doc_or_bytes):
    data = doc_or_bytes if isinstance(doc_or_bytes, bytes) else json.dumps(doc_or_bytes).encode()
    return verify_p3_document(read_p3_document_bytes(data))


def _peak_bytes(function) -> tuple[BaseException | None, int]:
    """What ``function()`` raised (None if nothing) and the most it had allocated at once."""
    tracemalloc.start()
    try:
        function()
        error = None
    except Exception as exc:  # noqa: BLE001 - the test looks at it
        error = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return error, peak


# ---- what must be accepted -----------------------------------------------------------------------------------------

def test_the_policy_knows_every_key_of_the_golden_documents():
    for name in DOCUMENTS:
        assert set(_doc(name)) <= set(DOCUMENT_KEYS), name


@pytest.mark.parametrize("name", DOCUMENTS)
def test_golden_documents_are_accepted_and_prove_what_they_state(name):
    doc = _doc(name)
    field = field_by_name(doc["field"])
    ops = field_ops(field)
    verified = _check(_doc_text(name))
    n, openings = doc["params"]["num_variables"], doc["params"]["evaluations"]
    assert (verified.field, verified.num_openings, verified.config.num_variables) == (field, openings, n)
    assert verified.prescribed == (doc["params"]["points"] == "prescribed")
    assert verified.points.shape == (openings, n, 4) and verified.values.shape == (openings, 4)
    assert ops.from_monty(verified.points).tolist() == doc["points_canonical"]
    assert ops.from_monty(verified.values).tolist() == doc["claimed_values_canonical"]


def test_read_p3_document_still_takes_a_decoded_object():
    document = read_p3_document(_doc(SMALL))
    assert isinstance(document, P3Document) and not document.prescribed
    assert verify_p3_document(document).values.shape == (1, 4)


@pytest.mark.parametrize("field", ["koalabear", "babybear"])
def test_documents_p3_prover_writes_are_accepted(field):
    params = P3Parameters(32, 4, Constant(2), SoundnessType.CapacityBound, 1)
    prover = P3Prover(8, params, field, backend="cpu")
    rng = np.random.default_rng(3)
    evaluations = rng.integers(0, prover.field.P, 1 << 8, dtype=np.uint32)
    drawn = prover.prove(evaluations, 2, seed=9)
    verified = _check(drawn.dumps().encode())
    assert not verified.prescribed and np.array_equal(verified.points, drawn.proved.points)
    points = rng.integers(0, prover.field.P, (2, 8, 4))
    prescribed = prover.prove(evaluations, points=points)
    verified = _check(prescribed.dumps().encode())
    assert verified.prescribed and field_ops(prover.field).from_monty(verified.points).tolist() == points.tolist()


# ---- the campaign's inputs -----------------------------------------------------------------------------------------

def test_a_pow_budget_above_what_grinding_supports_is_refused_naming_the_limit():
    assert p3_config.MAX_GRIND_BITS == MAX_SAMPLE_BITS
    doc = _doc(SMALL)
    doc["params"]["pow_bits"] = 40  # upstream derives it (queries sized for security - 40); no check samples it
    config = P3WhirConfig.derive(10, P3Parameters(32, 40, Constant(2), SoundnessType.CapacityBound, 1), KOALABEAR)
    assert config.max_pow_bits > MAX_SAMPLE_BITS
    with pytest.raises(ProofFormatError, match=rf"params: the derived proof-of-work of {config.max_pow_bits} bits "
                                               r"is above MAX_GRIND_BITS 30"):
        _check(doc)


def test_json_nested_100000_deep_is_not_json_within_limits():
    data = b"[" * 100_000 + b"]" * 100_000
    error, peak = _peak_bytes(lambda: read_p3_document_bytes(data))
    assert isinstance(error, ProofFormatError), error
    assert f"nested 100000 deep, above MAX_JSON_DEPTH {MAX_JSON_DEPTH}" in str(error)
    assert peak < 16 * MIB
    doc = _doc(SMALL)
    doc["notes"] = functools.reduce(lambda inner, _: [inner], range(40), [])  # 41 deep, inside a document
    with pytest.raises(ProofFormatError, match=f"nested 42 deep, above MAX_JSON_DEPTH {MAX_JSON_DEPTH}"):
        read_p3_document_bytes(json.dumps(doc).encode())


def test_a_huge_num_variables_is_refused_before_its_schedule_is_built():
    doc = {"format": "p3-whir-oracle/v1", "field": "koalabear", "commitment": None, "proof": None,
           "params": {"num_variables": 1 << 31, "folding_factor": 1, "starting_log_inv_rate": 1,
                      "round_log_inv_rates": [], "security_level": 90, "pow_bits": 0,
                      "soundness_type": "CapacityBound", "evaluations": 1, "points": "transcript"}}
    error, peak = _peak_bytes(lambda: _check(doc))
    assert isinstance(error, ProofFormatError), error
    assert "InitialDomainExceedsUsize: num_variables (2147483648) + starting_log_inv_rate (1)" in str(error)
    assert peak < MIB
    doc["params"].update(num_variables=40, round_log_inv_rates=list(range(1, 10_000)))
    error, peak = _peak_bytes(lambda: _check(doc))
    assert isinstance(error, ProofFormatError) and "round_log_inv_rates" in str(error), error
    assert peak < 4 * MIB


def test_a_later_phase_past_the_two_adicity_is_refused():
    """Upstream checks the first folded domain only; here the final phase folds 10 variables of a 2^46 domain."""
    params = P3Parameters(20, 27, Constant(30), SoundnessType.UniqueDecoding, 7)
    with pytest.raises(ConfigError, match=r"FoldedDomainExceedsTwoAdicity: the final round: folded domain 2\^36"):
        P3WhirConfig.derive(40, params, KOALABEAR)


@pytest.mark.parametrize("value, message", [
    (1 << 64, "18446744073709551616 is not a canonical field element"),
    (-1, "-1 is not a canonical field element"),
    (True, "True is not a canonical field element"),
    (1.0, "1.0 is not a canonical field element"),
    (KOALABEAR.P, f"{KOALABEAR.P} is not a canonical field element"),
    ("Infinity", "Infinity is not JSON"),
    ("NaN", "NaN is not JSON"),
    ("1e999", "out of range"),
    ("1" + "0" * 50, "an integer of 51 digits"),
])
def test_a_bad_point_coordinate_is_a_format_error(value, message):
    doc = _doc(PRESCRIBED)
    doc["points_canonical"][0][0][0] = "@@"
    raw = json.dumps(doc).replace('"@@"', value if isinstance(value, str) else json.dumps(value)).encode()
    with pytest.raises(ProofFormatError, match=message):
        _check(raw)


def test_a_parameter_of_the_wrong_type_or_size_is_named():
    for key, value in [("num_variables", True), ("security_level", 1 << 70), ("folding_factor", 0),
                       ("evaluations", 0), ("soundness_type", "capacity"), ("points", "both"), ("seed", -1),
                       ("starting_log_inv_rate", 2.0), ("round_log_inv_rates", "4"), ("layout", "PrefixProver")]:
        doc = _doc(SMALL)
        doc["params"][key] = value
        with pytest.raises(ProofFormatError, match=f"params.{key}"):
            _check(doc)


# ---- lies ----------------------------------------------------------------------------------------------------------

def _plus_one(doc: dict, key: str, *index: int) -> dict:
    node = doc[key]
    for i in index[:-1]:
        node = node[i]
    node[index[-1]] = (node[index[-1]] + 1) % field_by_name(doc["field"]).P
    return doc


@pytest.mark.parametrize("name, key, index, check", [
    (TRANSCRIPT, "claimed_values_canonical", (0, 0), "claimed_values"),
    (TRANSCRIPT, "points_canonical", (0, 0, 0), "points"),
    (TRANSCRIPT, "points_canonical", (0, 11, 3), "points"),
    (TRANSCRIPT, "initial_ood_points_canonical", (1, 2, 1), "ood_points"),
    (PRESCRIBED, "claimed_values_canonical", (1, 3), "claimed_values"),
    (PRESCRIBED, "initial_ood_points_canonical", (0, 0, 0), "ood_points"),
])
def test_a_stated_value_the_proof_does_not_prove_is_rejected_naming_it(name, key, index, check):
    with pytest.raises(VerificationError, match=f"{key}\\[{index[0]}\\] is not what the proof proves") as caught:
        _check(_plus_one(_doc(name), key, *index))
    assert (caught.value.round, caught.value.check) == ("statement", check)


def test_a_changed_prescribed_point_is_a_different_statement_the_proof_fails():
    with pytest.raises(VerificationError):
        _check(_plus_one(_doc(PRESCRIBED), "points_canonical", 0, 5, 2))


@pytest.mark.parametrize("key, index", [
    ("proof_canonical", None), ("commitment_canonical", ("cap", 0, 3)), ("commitment_root_canonical", (7,)),
    ("polynomial_evals_canonical", (100,)), ("domain_separator_canonical", (3,)), ("proof_postcard_len", None),
    ("proof_postcard_hex", None), ("commitment_postcard_hex", None), ("config", ("final_queries",)),
    ("plonky3_commit", None),
])
def test_a_copy_that_disagrees_is_a_format_error_naming_it(key, index):
    doc = _doc(SMALL)
    if key == "proof_canonical":
        doc[key]["whir"]["final_poly"][0][1]["value"][2] += 1
    elif key == "proof_postcard_len":
        doc[key] += 1
    elif key.endswith("_hex"):  # the last word of the last root / last opening value: still a field element
        doc[key] = doc[key][:-8] + ("00000000" if doc[key][-8:] != "00000000" else "01000000")
    elif key == "plonky3_commit":
        doc[key] = doc[key][::-1]
    else:
        node = doc[key]
        for i in index[:-1]:
            node = node[i]
        node[index[-1]] += 1
    with pytest.raises(ProofFormatError, match=f"^{key}"):
        _check(doc)


def test_informational_keys_are_bounded_text():
    doc = _doc(SMALL)
    doc["notes"].append("a note")
    doc["protocol"] = "another description"
    doc["params"]["seed"] = 12345
    _check(doc)
    for key, value in [("notes", ["x" * 5000]), ("notes", ["x"] * 65), ("mmcs", 3), ("instance_draw", None)]:
        bad = _doc(SMALL)
        bad[key] = value
        with pytest.raises(ProofFormatError, match=f"^{key}"):
            _check(bad)


@pytest.mark.parametrize("where", ["document", "params", "self_check", "proof", "commitment"])
def test_an_unknown_key_is_refused_naming_it(where):
    doc = _doc(SMALL)
    target = doc if where == "document" else doc[where]
    target["surprise_key"] = 1
    with pytest.raises(ProofFormatError, match="surprise_key"):
        _check(doc)


def test_a_repeated_key_is_refused():
    text = _doc_text(SMALL)
    repeated = text.replace(b'"claimed_values_canonical":', b'"claimed_values_canonical":[[1,2,3,4]],'
                                                               b'"claimed_values_canonical":', 1)
    assert repeated != text
    with pytest.raises(ProofFormatError, match="'claimed_values_canonical' appears twice"):
        read_p3_document_bytes(repeated)


def test_a_self_check_that_says_reject_is_refused():
    doc = _doc(SMALL)
    doc["self_check"]["verify"] = "reject"
    with pytest.raises(ProofFormatError, match="self_check.verify"):
        _check(doc)


def test_missing_prescribed_points_are_refused():
    doc = _doc(PRESCRIBED)
    del doc["points_canonical"]
    with pytest.raises(ProofFormatError, match="points_canonical: missing"):
        _check(doc)


# ---- bounded decoding ----------------------------------------------------------------------------------------------

def _small_config() -> P3WhirConfig:
    p = _doc(SMALL)["params"]
    return P3WhirConfig.derive(p["num_variables"], P3Parameters(p["security_level"], p["pow_bits"], Constant(
        p["folding_factor"]), SoundnessType.CapacityBound, p["starting_log_inv_rate"]), KOALABEAR)


def test_postcard_lengths_are_bounded_by_the_configuration_before_anything_is_allocated():
    bounds = ProofBounds.of(_small_config(), 1)
    # initial OOD answers: a varint length of 2^62 (ten bytes), then nothing
    huge = bytes([0x80] * 8 + [0x40])
    with pytest.raises(ProofFormatError, match=r"length 4611686018427387904, more than the 1 the configuration"):
        pcs_proof_from_postcard(huge, KOALABEAR.P, bounds)
    with pytest.raises(ProofFormatError, match="needs at least"):
        pcs_proof_from_postcard(huge, KOALABEAR.P)
    # half a million empty rows in round 0's openings (one byte each): refused by the bound, not read row by row
    initial = bytes([1]) + bytes(16) + bytes([2]) + bytes(64) + bytes([0])  # 1 OOD answer, 2 sumcheck pairs, no PoW
    round_0 = bytes([1, 1, 1]) + bytes(32) + bytes([1]) + bytes(16) + bytes(4)  # 1 round: a root, 1 OOD, a witness
    rows = bytes([0]) + bytes([0xA0, 0xC2, 0x1E]) + bytes(1 << 20)  # Base, 500000 rows
    data = initial + round_0 + rows
    error, peak = _peak_bytes(lambda: pcs_proof_from_postcard(data, KOALABEAR.P, bounds))
    assert isinstance(error, ProofFormatError), error
    assert "rounds[0].openings.Base.rows length" in str(error) or "Base.rows at byte" in str(error), error
    assert "length 500000, more than the 35 the configuration allows" in str(error), error
    assert peak < 4 * MIB


def test_json_lists_are_bounded_by_the_configuration():
    doc = _doc(SMALL)
    rows = doc["proof"]["whir"]["final_openings"]["Extension"]["rows"]
    rows.extend([[]] * 10_000)
    with pytest.raises(ProofFormatError, match=r"final_openings.Extension.rows: 10017 entries, more than the 17"):
        _check(doc)


def test_the_bounded_parser_is_total_on_odd_text():
    for data, message in [(b"\xff\xfe", "not UTF-8"), (b'"' + b'\\"' * 200_000, "unterminated string"),
                          (b'{"a": 1, "a": 1}', "appears twice"), (b"[1, 2", "not JSON"), (3, "expected JSON text")]:
        with pytest.raises(ProofFormatError, match=message):
            loads_bounded(data)
    assert loads_bounded('{"s": "[[[[{{{{", "n": [1, -2, 3.5]}') == {"s": "[[[[{{{{", "n": [1, -2, 3.5]}
    assert loads_bounded(b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH) == \
        functools.reduce(lambda inner, _: [inner], range(MAX_JSON_DEPTH - 1), [])
