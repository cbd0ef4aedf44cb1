"""One verifier for both profiles: ``whirgpu.verify``, ``is_valid`` and ``verify_many`` recognise a document's
profile from the document itself, check the same expectations under the same names, and mix profiles in a batch."""

from __future__ import annotations

import json

import numpy as np
import pytest

import whirgpu
from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.profiles.documents import profile_of, read_document
from whirgpu.profiles.p3_whir.expectations import P3Expected, p3_expected_config

from ..conftest import golden_p3_bytes, load_golden_p3

DRAWN = "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"  # points drawn from the transcript
PRESCRIBED = "kb_n12_k4_r1_s90_p0_cb_e2_seed7_prescribed.json"
BABYBEAR = "bb_n12_k4_r1_s90_p0_cb_e1_seed0.json"


@pytest.fixture(scope="module")
def default_proof():
    """A small whir-p3-metal proof (cpu backend) and its parameters."""
    params = whirgpu.ProtocolParameters.default(num_variables=8, folding_factor=4, starting_log_inv_rate=1,
                                                security_level=32, pow_bits=0)
    evaluations, points = whirgpu.api.random_canonical_instance(8, 3)
    with whirgpu.Prover(params, backend="cpu") as prover:
        return prover.prove(evaluations, points), params


def _config_of(name: str):
    doc = load_golden_p3(name)
    p = doc["params"]
    return p3_expected_config(p["num_variables"], p["folding_factor"], p["starting_log_inv_rate"], field=doc["field"],
                              security_level=p["security_level"], pow_bits=p["pow_bits"])


@pytest.mark.parametrize("name", [DRAWN, PRESCRIBED, BABYBEAR])
def test_a_p3_whir_document_verifies_from_its_bytes_its_path_and_its_text(name, tmp_path):
    data = golden_p3_bytes(name)
    path = tmp_path / name
    path.write_bytes(data)
    for source in (data, path, str(path), data.decode()):
        assert whirgpu.verify(source) is None
        assert whirgpu.is_valid(source)
    assert profile_of(read_document(data)) == "p3-whir"


def test_p3_expectations_are_checked_under_the_default_profiles_names():
    data = golden_p3_bytes(DRAWN)
    config = _config_of(DRAWN)
    expected = P3Expected(config, num_openings=1, prescribed=False)
    whirgpu.verify(data, params=expected, min_security=90, assume="capacity")
    whirgpu.verify(data, params=expected, min_security=50)  # its provable bits (Johnson bound)
    cases = [
        (dict(min_security=91, assume="capacity"), "min_security"),
        (dict(min_security=90), "min_security"),
        (dict(params=P3Expected(config, num_openings=2, prescribed=False)), "statement.num_points"),
        (dict(params=P3Expected(config, num_openings=1, prescribed=True)), "statement.points"),
        (dict(params=P3Expected(_config_of(BABYBEAR), 1, False)), "params.num_variables"),
        (dict(params=whirgpu.ProtocolParameters.default(num_variables=16, folding_factor=5,
                                                        starting_log_inv_rate=1)), "profile"),
    ]
    for kwargs, check in cases:
        with pytest.raises(VerificationError) as err:
            whirgpu.verify(data, **kwargs)
        assert err.value.check == check, (kwargs, err.value)
        assert not whirgpu.is_valid(data, **kwargs)


def test_another_field_is_a_named_mismatch():
    doc = load_golden_p3(BABYBEAR)
    p = doc["params"]
    koalabear = p3_expected_config(p["num_variables"], p["folding_factor"], p["starting_log_inv_rate"],
                                   field="koalabear", security_level=p["security_level"], pow_bits=p["pow_bits"])
    with pytest.raises(VerificationError) as err:
        whirgpu.verify(golden_p3_bytes(BABYBEAR), params=P3Expected(koalabear, 1, False))
    assert err.value.check == "params.field"


def test_params_must_pin_the_number_of_openings_and_who_chose_the_points():
    """A configuration alone pins neither the number of openings nor who chose the points: as ``params`` it is a
    ConfigError pointing to P3Expected (not a silent pass for a proof of another statement shape), unless the
    expected points are given too."""
    data = golden_p3_bytes(DRAWN)
    config = _config_of(DRAWN)
    for params, missing in [(config, "num_openings nor prescribed"), (P3Expected(config, num_openings=1),
                                                                      "prescribed"),
                            (P3Expected(config, prescribed=False), "num_openings")]:
        for call in (whirgpu.verify, whirgpu.is_valid):
            with pytest.raises(whirgpu.ConfigError, match=f"not {missing}: .*P3Expected"):
                call(data, params=params)
    doc = load_golden_p3(DRAWN)
    whirgpu.verify(data, params=config, points=doc["points_canonical"])  # the points pin both
    with pytest.raises(VerificationError) as err:
        whirgpu.verify(golden_p3_bytes(PRESCRIBED), params=P3Expected(_config_of(PRESCRIBED), 1, False))
    assert err.value.check in ("statement.points", "statement.num_points")


@pytest.mark.parametrize("name", [DRAWN, PRESCRIBED])
def test_the_statement_is_what_the_proof_proves(name):
    """Points (drawn or prescribed) and claimed values are compared with what the verifier replayed and checked;
    one changed coordinate or value is a mismatch naming it."""
    doc = load_golden_p3(name)
    data = golden_p3_bytes(name)
    points, values = doc["points_canonical"], doc["claimed_values_canonical"]
    whirgpu.verify(data, points=points, values=values)
    bad_points = json.loads(json.dumps(points))
    bad_points[0][1][2] = (bad_points[0][1][2] + 1) % 0x7F000001
    bad_values = json.loads(json.dumps(values))
    bad_values[-1][0] = (bad_values[-1][0] + 1) % 0x7F000001
    for kwargs, check in ((dict(points=bad_points), "statement.points"), (dict(values=bad_values), "statement.values"),
                          (dict(points=points[:1] * (len(points) + 1)), "statement.num_points")):
        with pytest.raises(VerificationError) as err:
            whirgpu.verify(data, **kwargs)
        assert err.value.check == check
    with pytest.raises(ConfigError, match=r"\[0, 2130706433\)"):  # KoalaBear's p bounds a canonical expectation
        whirgpu.verify(data, values=np.full((len(values), 4), 0x7F000001, np.int64))


def test_verify_many_mixes_profiles_in_order(default_proof):
    proof_file, params = default_proof
    default_bytes = whirgpu.dump(proof_file, "binary")
    tampered = load_golden_p3(DRAWN)
    tampered["proof"]["whir"]["initial_ood_answers"][0]["value"][0] ^= 1
    batch = [golden_p3_bytes(DRAWN), default_bytes, json.dumps(tampered).encode(), b'{"format": "nothing"}',
             golden_p3_bytes(PRESCRIBED)]
    verdicts = whirgpu.verify_many(batch)
    assert [v.ok for v in verdicts] == [True, True, False, False, True]
    assert isinstance(verdicts[2].error, (VerificationError, ProofFormatError))
    assert "not a proof document of any profile" in str(verdicts[3].error)
    expected = whirgpu.verify_many(batch, params=params)  # default-profile params: the p3 documents are refused
    assert [v.ok for v in expected] == [False, True, False, False, False]
    assert expected[0].error.check == "profile"
    assert [v.reason for v in whirgpu.verify_many(batch, processes=2)] == [v.reason for v in verdicts]


def test_a_file_of_no_profile_is_said_to_be_so_in_one_line():
    for data in (b"[1, 2]", b'{"format": "p3-whir-oracle/v3"}', b"\x00\x01binary?", b"{" * 10, b"[" * 200000):
        with pytest.raises(ProofFormatError) as err:
            whirgpu.verify(data)
        assert "\n" not in str(err.value) and "not" in str(err.value)
    with pytest.raises(ProofFormatError, match="missing key"):  # v2 (p3-whir tables) is a profile's format
        whirgpu.verify(b'{"format": "p3-whir-oracle/v2"}')
