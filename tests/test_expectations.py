"""What the verifier expects (whirgpu.expectations, whirgpu.verify's keywords, `whirgpu verify --expect /
--min-security / --statement`): a proof made under weaker parameters or about other claims is rejected, naming
the check; a proof that matches is accepted, and `accept` says what was accepted."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import whirgpu
from whirgpu.protocol.regimes import security_report
from whirgpu import ConfigError, ProtocolParameters, VerificationError
from whirgpu.protocol.params import WhirConfig
from whirgpu.protocol.security import security_bits, security_terms
from whirgpu.ref import field_np as F

from .test_cli import accepted, one_line, run

WEAK_ARGS = ["-n", "12", "-k", "4", "-r", "1", "--seed", "0", "--security", "1", "--pow-bits", "0"]
WEAK = ProtocolParameters.default(12, 4, 1, security_level=1, pow_bits=0)


@pytest.fixture(scope="module")
def weak_proof(tmp_path_factory) -> Path:
    """The issue's example: `prove -n 12 -k 4 -r 1 --seed 0 --security 1 --pow-bits 0` (2 queries)."""
    from whirgpu.cli import commands as cli

    out = tmp_path_factory.mktemp("weak") / "weak.whir"
    assert cli.main(["prove", *WEAK_ARGS, "--backend", "cpu", "--out", str(out)]) == 0
    return out


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _rejection(weak_proof, **expect) -> VerificationError:
    with pytest.raises(VerificationError) as info:
        whirgpu.verify(weak_proof, **expect)
    assert info.value.round == "expectations"
    assert not whirgpu.is_valid(weak_proof, **expect)
    return info.value


# ---- security ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec", [(20, 4, 1), (12, 4, 1), (22, 4, 2), (24, 6, 3), (10, 2, 1), (16, 1, 1)])
def test_default_configurations_reach_their_security_level(spec):
    """PoW counts as the configuration defines it: a default configuration reaches its 100 bits exactly."""
    assert security_bits(WhirConfig.from_params(ProtocolParameters.default(*spec))) == 100


def test_a_weak_configuration_reaches_what_its_queries_give():
    config = WhirConfig.from_params(WEAK)
    assert security_bits(config) == 1
    step, bits = min(security_terms(config), key=lambda t: t[1])
    assert step == "round 0 queries" and 1 <= bits < 2


def test_security_without_pow_is_the_query_bound():
    config = WhirConfig.from_params(ProtocolParameters.default(12, 4, 1, security_level=32, pow_bits=0))
    assert security_bits(config) == 32 and config.all_pow_zero()


# ---- the Python API ----------------------------------------------------------------------------------------------

def test_without_expectations_the_weak_proof_is_accepted(weak_proof):
    assert whirgpu.verify(weak_proof) is None and whirgpu.is_valid(weak_proof)


def test_min_security_rejects_the_weak_proof(weak_proof):
    report = security_report(whirgpu.load(weak_proof).config)
    error = _rejection(weak_proof, min_security=100)
    assert error.check == "min_security"
    assert f"at least 100 bits, got {report.provable_bits} provable" in str(error)
    assert report.provable_figure.weakest_step in str(error)
    assert "1 bits even under the capacity-bound conjecture" in str(error)
    error = _rejection(weak_proof, min_security=1)  # its 1 bit is the conjecture's: counted only when assumed
    assert error.check == "min_security" and "--assume capacity" in str(error)
    whirgpu.verify(weak_proof, min_security=1, assume="capacity")
    whirgpu.verify(weak_proof, min_security=0)


def test_params_reject_the_weak_proof_naming_the_field(weak_proof):
    error = _rejection(weak_proof, params=ProtocolParameters.default(12, 4, 1))
    assert error.check == "params.security_level" and "expected 100, got 1" in str(error)
    error = _rejection(weak_proof, params=ProtocolParameters.default(14, 4, 1, security_level=1, pow_bits=0))
    assert error.check == "params.num_variables" and "expected 14, got 12" in str(error)
    error = _rejection(weak_proof, params=ProtocolParameters.default(12, 4, 1, security_level=1, pow_bits=0,
                                                                     soundness_type="johnson"))
    assert error.check == "params.soundness_type" and "expected JohnsonBound, got CapacityBound" in str(error)
    whirgpu.verify(weak_proof, params=WEAK)
    whirgpu.verify(weak_proof, params=WhirConfig.from_params(WEAK))


def test_points_and_values_must_be_the_statement(weak_proof):
    pf = whirgpu.load(weak_proof)
    points = whirgpu.random_instance(12, 0)[1].points
    canonical_points = F.from_monty(points).astype(np.int64)
    values = whirgpu.claimed_values(pf)
    whirgpu.verify(weak_proof, points=canonical_points, values=values)
    whirgpu.verify(weak_proof, points=canonical_points.tolist())
    whirgpu.verify(weak_proof, values=values)

    other = canonical_points.copy()
    other[0, 3, 1] = (other[0, 3, 1] + 1) % whirgpu.P
    error = _rejection(weak_proof, points=other)
    assert error.check == "statement.points" and "point 0 coordinate 3" in str(error)
    error = _rejection(weak_proof, values=[[1, 2, 3, 4]])
    assert error.check == "statement.values" and "expected [1, 2, 3, 4]" in str(error)
    error = _rejection(weak_proof, points=np.concatenate([canonical_points, canonical_points]))
    assert error.check == "statement.num_points"
    error = _rejection(weak_proof, points=canonical_points[:, :10])
    assert error.check == "statement.points"
    error = _rejection(weak_proof, points=canonical_points[..., 0])  # base coordinates: a different point
    assert error.check == "statement.points"


def test_malformed_expectations_are_the_callers_error(weak_proof):
    for expect in ({"params": "12:4:1"}, {"min_security": -1}, {"min_security": "100"}, {"min_security": True},
                   {"points": [[[whirgpu.P, 0, 0, 0]] * 12]}, {"values": [["a", 0, 0, 0]]},
                   {"points": np.zeros((1, 12, 3), np.int64)}):
        with pytest.raises(ConfigError):
            whirgpu.verify(weak_proof, **expect)
        with pytest.raises(ConfigError):
            whirgpu.is_valid(weak_proof, **expect)


def test_parameters_are_checked_before_the_proof(weak_proof):
    """A false proof under unexpected parameters is rejected for its parameters: no work spent on the proof."""
    data = bytearray(weak_proof.read_bytes())
    data[-1] ^= 1
    with pytest.raises(VerificationError) as info:
        whirgpu.verify(bytes(data), params=ProtocolParameters.default(12, 4, 1))
    assert info.value.check == "params.security_level"


# ---- the command line --------------------------------------------------------------------------------------------

def test_cli_accept_says_what_was_accepted(weak_proof, capsys):
    code, out, err = run(["verify", weak_proof], capsys)
    assert code == 0 and err == "" and accepted(out)
    report = security_report(whirgpu.load(weak_proof).config)
    assert one_line(out).startswith(f"accept n=12 fold=4 rate=1 security={report.provable_bits} regime="
                                    f"{report.provable_regime.cli_name} conjectural=1 soundness=capacity pow_bits=0 "
                                    f"points=1 ")
    assert "no expectations" in out


@pytest.mark.parametrize("flags, check", [
    (["--min-security", "100"], "(min_security)"),
    (["--expect", "12:4:1"], "(params.security_level)"),
    (["--expect", "12:4:1", "--security", "1", "--pow-bits", "0", "--soundness", "johnson"],
     "(params.soundness_type)"),
    (["--expect", "12:4:1", "--security", "1", "--pow-bits", "0", "--initial-reduction", "2"],
     "(params.rs_domain_initial_reduction_factor)"),
    (["--expect", "12:2:1", "--security", "1", "--pow-bits", "0"], "(params.folding_factor)"),
])
def test_cli_rejects_the_weak_proof_naming_the_check(weak_proof, capsys, flags, check):
    code, out, err = run(["verify", weak_proof, *flags], capsys)
    assert code == 1 and err == ""
    assert one_line(out).startswith("reject: not what the verifier expects ") and check in out


def test_cli_accepts_matching_expectations(weak_proof, capsys, tmp_path):
    pf = whirgpu.load(weak_proof)
    points = F.from_monty(pf.statement.points).astype(np.int64).tolist()
    statement = tmp_path / "statement.json"
    statement.write_text(json.dumps({"points": points, "values": whirgpu.claimed_values(pf)}))
    code, out, err = run(["verify", weak_proof, "--expect", "12:4:1", "--security", "1", "--pow-bits", "0",
                          "--soundness", "capacity", "--min-security", "1", "--assume", "capacity", "--statement",
                          statement], capsys)
    assert code == 0 and err == "" and accepted(out)
    assert "(as expected: parameters, security >= 1 bits (capacity assumed), statement)" in out

    statement.write_text(json.dumps({"points": points}))
    assert run(["verify", weak_proof, "--statement", statement], capsys)[0] == 0
    statement.write_text(json.dumps({"points": points, "values": [[0, 0, 0, 0]]}))
    code, out, _ = run(["verify", weak_proof, "--statement", statement], capsys)
    assert code == 1 and "(statement.values)" in one_line(out)


@pytest.mark.parametrize("flags, message", [
    (["--security", "1"], "--security refines --expect"),
    (["--expect", "12:4"], "is not N:F:R"),
    (["--expect", "12:40:1"], "folding factor 40 is greater than num_variables 12"),
    (["--min-security", "-1"], "--min-security must be >= 0"),
])
def test_cli_bad_expectations_are_one_line_errors(weak_proof, capsys, flags, message):
    code, out, err = run(["verify", weak_proof, *flags], capsys)
    assert code == 1 and out == "" and one_line(err).startswith("error: ") and message in err


@pytest.mark.parametrize("content, message", [
    ("[]", 'expected a JSON object'),
    ('{"points": [], "extra": 1}', "unknown key 'extra'"),
    ('{"values": []}', 'with "points"'),
    ("{", "is not JSON"),
    ('{"points": [[["x", 0, 0, 0]]]}', "points: "),
])
def test_cli_bad_statement_files_are_one_line_errors(weak_proof, capsys, tmp_path, content, message):
    statement = tmp_path / "s.json"
    statement.write_text(content)
    code, out, err = run(["verify", weak_proof, "--statement", statement], capsys)
    assert code == 1 and out == "" and one_line(err).startswith("error: ") and message in err
