"""Proof files whose optional fields restate others must agree with them, and ``whirgpu.verify`` takes only proof
files (or their bytes): anything else is a ``ProofFormatError``, never another exception.

- whir-p3-json ``proof_canonical`` (optional, for debugging) is ``proof`` mapped to canonical values; a copy that
  differs anywhere makes the document inconsistent. ``proof`` is what is verified: a false one is a
  ``VerificationError`` as without the copy, and a true one in an inconsistent document a ``ProofFormatError``.
- ``params.num_points`` (optional, in the JSON document and in the binary header) counts the statement's points.
"""

from __future__ import annotations

import functools
import json
import struct

import numpy as np
import pytest

from whirgpu import api
from whirgpu.errors import ProofFormatError, VerificationError
from whirgpu.field import P, from_monty_int
from whirgpu.protocol.params import ProtocolParameters
from whirgpu.profiles.whir_p3_metal.serialize import BINARY_MAGIC, ProofFile, from_binary, from_whir_p3_json, load, to_binary

from ..conftest import golden_text

GOLDEN = "n10_f2_r1_s32_p0_cb.json"


@functools.lru_cache(maxsize=None)
def _golden_text() -> str:
    return golden_text(GOLDEN)


def _doc() -> dict:
    return json.loads(_golden_text())


def _format_error(data, *needles: str) -> ProofFormatError:
    """Decoding ``data`` (a document or bytes) fails with a one-line ProofFormatError naming every needle;
    ``api.verify`` and ``load`` say the same."""
    raw = json.dumps(data) if isinstance(data, dict) else data
    decode = from_whir_p3_json if isinstance(data, dict) else from_binary
    with pytest.raises(ProofFormatError) as info:
        decode(raw)
    message = str(info.value)
    assert "\n" not in message and all(n in message for n in needles), message
    for fn in (api.verify, load):
        with pytest.raises(ProofFormatError):
            fn(raw.encode() if isinstance(raw, str) else raw)
    return info.value


def test_the_golden_document_is_consistent_and_verifies():
    doc = _doc()
    assert "proof_canonical" in doc and doc["params"]["num_points"] == len(doc["points_canonical"]) == 1
    api.verify(json.dumps(doc))


def _canonical_error(doc: dict, *needles: str) -> ProofFormatError:
    """A document whose proof verifies but whose proof_canonical disagrees: it decodes (the difference noted),
    and verification rejects it with a one-line ProofFormatError naming every needle, from text or object."""
    raw = json.dumps(doc)
    pf = from_whir_p3_json(raw)
    assert pf.inconsistency
    for data in (raw, raw.encode(), pf):
        with pytest.raises(ProofFormatError) as info:
            api.verify(data)
        message = str(info.value)
        assert "\n" not in message and all(n in message for n in needles), message
        assert api.is_valid(data) is False
    return info.value


@pytest.mark.parametrize("path", [
    ("initial_commitment", "cap", 0, 3),
    ("rounds", 0, "queries", 2, "values", 3),
    ("final_poly", -1, "value", 3),
    ("final_pow_witness",),
])
def test_proof_canonical_that_disagrees_with_proof_is_rejected(path):
    """One value changed in proof_canonical: the proof itself is true, the document contradicts itself."""
    doc = _doc()
    node = doc["proof_canonical"]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = (node[path[-1]] + 1) % P
    err = _canonical_error(doc, "proof_canonical")
    assert f"proof_canonical.{path[0]}" in str(err)


def test_a_false_proof_stays_a_verification_error():
    """Changing proof (not its copy) makes a false proof: that is what the verifier reports, as it would without
    the copy; the inconsistency matters only for a proof that verifies."""
    doc = _doc()
    doc["proof"]["final_poly"][0]["value"][0] = (doc["proof"]["final_poly"][0]["value"][0] + 1) % P
    assert from_whir_p3_json(json.dumps(doc)).inconsistency
    with pytest.raises(VerificationError):
        api.verify(json.dumps(doc))


def test_proof_canonical_type_changes_count():
    """true is not 1, and a missing or extra key is a difference (JSON equality alone would accept true == 1)."""
    doc = _doc()
    witness = doc["proof_canonical"]["final_pow_witness"]
    assert witness in (0, 1)
    doc["proof_canonical"]["final_pow_witness"] = bool(witness)
    _canonical_error(doc, "proof_canonical", "final_pow_witness")
    doc = _doc()
    doc["proof_canonical"]["extra"] = 1
    _canonical_error(doc, "proof_canonical")
    doc = _doc()
    del doc["proof_canonical"]["rounds"][0]["queries"][-1]
    _canonical_error(doc, "proof_canonical", "rounds")


def test_the_cli_rejects_an_inconsistent_document(tmp_path, capsys):
    from whirgpu.cli import commands as cli

    doc = _doc()
    doc["proof_canonical"]["initial_ood_answers"][0]["value"][2] += 1
    path = tmp_path / "inconsistent.json"
    path.write_text(json.dumps(doc))
    assert cli.main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("reject: proof_canonical") and out.count("\n") == 1


def test_proof_canonical_is_proof_in_canonical_form():
    """What the check compares against, derived here from the README's definition (canonical = m * R^-1 mod p)."""
    doc = _doc()

    def canonical(tree):
        if isinstance(tree, dict):
            return {k: canonical(v) for k, v in tree.items()}
        if isinstance(tree, list):
            return [canonical(v) for v in tree]
        return from_monty_int(tree) if isinstance(tree, int) and not isinstance(tree, bool) else tree

    assert canonical(doc["proof"]) == doc["proof_canonical"]
    del doc["proof_canonical"]  # optional: without it the document is as good as before
    api.verify(json.dumps(doc))


@pytest.mark.parametrize("num_points", [0, 2, 7, -1, "1", 1.0, True, None])
def test_num_points_that_disagrees_with_the_points_is_rejected(num_points):
    doc = _doc()
    doc["params"]["num_points"] = num_points
    _format_error(doc, "params.num_points")


def test_num_points_is_optional_and_counts_zero_points():
    doc = _doc()
    del doc["params"]["num_points"]
    api.verify(json.dumps(doc))
    doc = _doc()
    doc["points_canonical"], doc["claimed_values_canonical"] = [], []
    doc["params"]["num_points"] = 0
    pf = from_whir_p3_json(json.dumps(doc))  # consistent: decodes (the claim is then a false one)
    assert pf.statement.num_claims == 0
    doc["params"]["num_points"] = 1
    _format_error(doc, "params.num_points")


def _binary_with_params(params_changes: dict) -> bytes:
    """The golden proof in the binary format, its header's params block changed."""
    data = to_binary(from_whir_p3_json(_golden_text()))
    (length,) = struct.unpack_from("<I", data, len(BINARY_MAGIC))
    start = len(BINARY_MAGIC) + 4
    header = json.loads(data[start:start + length])
    header["params"].update(params_changes)
    raw = json.dumps(header).encode()
    return BINARY_MAGIC + struct.pack("<I", len(raw)) + raw + data[start + length:]


def test_binary_header_num_points_must_match_num_claims():
    api.verify(_binary_with_params({}))
    api.verify(_binary_with_params({"num_points": 1}))
    for bad in (0, 2, "1"):
        _format_error(_binary_with_params({"num_points": bad}), "params.num_points")


# ---- whirgpu.verify's argument ----------------------------------------------------------------------------------

@pytest.mark.parametrize("junk", [None, 5, 1.5, [], {}, object(), np.zeros(3, np.uint32)])
def test_verify_of_something_else_is_a_format_error(junk):
    with pytest.raises(ProofFormatError, match="ProofFile"):
        api.verify(junk)
    assert api.is_valid(junk) is False


def test_verify_of_a_proof_file_with_bad_params():
    pf = from_whir_p3_json(_golden_text())
    for params in (None, {"num_variables": 10}, "params"):
        with pytest.raises(ProofFormatError, match="params"):
            api.verify(ProofFile(params, pf.statement, pf.proof))
    too_large = ProtocolParameters.default(num_variables=30, folding_factor=2, starting_log_inv_rate=1)
    with pytest.raises(ProofFormatError, match="params"):
        api.verify(ProofFile(too_large, pf.statement, pf.proof))


def test_verify_takes_bytes_like_input():
    raw = _golden_text()
    for data in (raw, raw.encode(), bytearray(raw.encode()), memoryview(raw.encode())):
        api.verify(data)
