"""The verifier assumes no conjecture unless told to: ``min_security`` counts provable bits, ``assume="capacity"``
(``--assume capacity``) opts into the capacity-bound conjecture and the accept line says so. Both profiles."""

from __future__ import annotations

import pytest

import whirgpu
from whirgpu.cli import commands as cli
from whirgpu.errors import ConfigError, VerificationError
from whirgpu.profiles.documents import read_document
from whirgpu.profiles.security import security_report

from ..conftest import golden_p3_bytes

P3_CAPACITY = "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"  # 90 bits under the capacity bound
P3_JOHNSON = "kb_n14_k3_r2_s100_p16_jb_e2_seed0.json"  # 100 bits under the Johnson bound


def _proof(soundness: str, tmp_path) -> str:
    """A 100-bit whir-p3-metal proof at n = 12 (cpu backend), written to a file."""
    params = whirgpu.ProtocolParameters.default(num_variables=12, folding_factor=4, starting_log_inv_rate=1,
                                                security_level=100, pow_bits=8, soundness_type=soundness)
    evaluations, points = whirgpu.api.random_canonical_instance(12, 5)
    with whirgpu.Prover(params, backend="cpu") as prover:
        proof = prover.prove(evaluations, points)
    path = tmp_path / f"{soundness}.whir"
    path.write_bytes(whirgpu.dump(proof, "binary"))
    return str(path)


@pytest.fixture(scope="module")
def proofs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("security")
    found = {("whir-p3-metal", s): _proof(s, tmp) for s in ("capacity", "johnson")}
    for key, name in ((("p3-whir", "capacity"), P3_CAPACITY), (("p3-whir", "johnson"), P3_JOHNSON)):
        path = tmp / name
        path.write_bytes(golden_p3_bytes(name))
        found[key] = str(path)
    return found


def _run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out.strip(), err.strip()


@pytest.mark.parametrize("profile", ["whir-p3-metal", "p3-whir"])
def test_a_capacity_bound_proof_needs_the_opt_in(profile, proofs, capsys):
    path = proofs[profile, "capacity"]
    report = security_report(read_document(path).config)
    level = report.headline_bits
    assert report.conjectural and report.provable_bits < level
    with pytest.raises(VerificationError) as err:
        whirgpu.verify(path, min_security=level)
    assert err.value.check == "min_security"
    assert f"got {report.provable_bits} provable" in str(err.value)
    assert f"{level} bits under the capacity-bound conjecture" in str(err.value)
    assert 'assume="capacity"' in str(err.value)
    whirgpu.verify(path, min_security=level, assume="capacity")
    whirgpu.verify(path, min_security=report.provable_bits)

    code, out, _ = _run(["verify", path, "--min-security", level], capsys)
    assert code == 1 and out.startswith("reject: not what the verifier expects (min_security)")
    assert "--assume capacity" in out
    code, out, _ = _run(["verify", path, "--min-security", level, "--assume", "capacity"], capsys)
    assert code == 0 and f" security={level} regime=capacity(assumed) provable={report.provable_bits} " in out
    assert f"security >= {level} bits (capacity assumed)" in out
    code, out, _ = _run(["verify", path], capsys)  # no opt-in: the line leads with the provable figure
    assert code == 0 and f" security={report.provable_bits} regime=johnson conjectural={level} " in out


@pytest.mark.parametrize("profile", ["whir-p3-metal", "p3-whir"])
def test_a_johnson_bound_proof_at_100_bits_is_accepted_as_it_is(profile, proofs, capsys):
    path = proofs[profile, "johnson"]
    report = security_report(read_document(path).config)
    assert not report.conjectural and report.provable_bits == 100 and report.provable_regime.cli_name == "johnson"
    whirgpu.verify(path, min_security=100)
    assert whirgpu.verify_many([path], min_security=100)[0].ok
    code, out, _ = _run(["verify", path, "--min-security", 100], capsys)
    assert code == 0 and " security=100 regime=johnson soundness=johnson " in out
    assert "conjectural" not in out and "(as expected: security >= 100 bits provable)" in out


def test_an_assumption_other_than_the_capacity_bound_is_the_callers_error(proofs, capsys):
    path = proofs["whir-p3-metal", "johnson"]
    for assume in ("johnson", "Capacity", 1):
        with pytest.raises(ConfigError, match="only conjecture a verifier may be told to assume is 'capacity'"):
            whirgpu.verify(path, assume=assume)
        with pytest.raises(ConfigError):
            whirgpu.verify_many([path], assume=assume)
    code, _, err = _run(["verify", path, "--assume", "johnson"], capsys)
    assert code == 2 and "invalid choice" in err
