"""The one prover under the p3-whir profile reproduces every golden-p3 proof byte for byte from its instance: the
commitment, the serde JSON ``proof`` (Montgomery words), the postcard bytes, the opening points and the claims;
and what it proves on other instances is accepted by the one verifier (and a changed claim is not)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import load_golden_p3
from whirgpu.backends.cpu import CpuBackend
from whirgpu.errors import ConfigError, VerificationError
from whirgpu.field import KOALABEAR
from whirgpu.protocol.folding import Constant
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.format import merkle_cap_to_json, merkle_cap_to_postcard, pcs_proof_to_json, \
    pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.prover import P3WhirProver, prove_p3
from whirgpu.profiles.p3_whir.verifier import verify_p3
from whirgpu.protocol.prover import WhirProver
from whirgpu.protocol.soundness import SoundnessType
from whirgpu.ref.field_np import field_ops

from .test_p3_verifier import PROOFS, Case


def golden_instance(name: str):
    """(case, golden document, Montgomery evaluations) of a golden-p3 file."""
    golden = load_golden_p3(name)
    case = Case(name)
    evaluations = field_ops(case.field).to_monty(np.asarray(golden["polynomial_evals_canonical"], dtype=np.uint64))
    return case, golden, evaluations


def check_reproduces(name: str, backend) -> None:
    case, golden, evaluations = golden_instance(name)
    proved = prove_p3(case.config, case.field, backend, evaluations, case.num_openings, case.points)
    ops = field_ops(case.field)
    assert merkle_cap_to_json(proved.commitment) == golden["commitment"]
    assert merkle_cap_to_postcard(proved.commitment).hex() == golden["commitment_postcard_hex"]
    assert pcs_proof_to_json(proved.proof) == golden["proof"]
    assert pcs_proof_to_postcard(proved.proof).hex() == golden["proof_postcard_hex"]
    assert ops.from_monty(proved.points).tolist() == golden["points_canonical"]
    claims = np.stack([e.current[0] for e in proved.proof.evals])
    assert ops.from_monty(claims).tolist() == golden["claimed_values_canonical"]


@pytest.mark.parametrize("name", PROOFS)
def test_cpu_reproduces_golden(name):
    check_reproduces(name, CpuBackend())


def test_one_step_order():
    assert P3WhirProver._prove is WhirProver._prove
    assert P3WhirProver._round is WhirProver._round
    assert P3WhirProver._final_round is WhirProver._final_round


def _config(n: int, fold: int, pow_bits: int = 0) -> P3WhirConfig:
    params = P3Parameters(security_level=32, pow_bits=pow_bits, folding=Constant(fold),
                          soundness_type=SoundnessType.CapacityBound, starting_log_inv_rate=1)
    return P3WhirConfig.derive(n, params, KOALABEAR)


@pytest.mark.parametrize("n,fold,openings", [(6, 2, 1), (9, 3, 3), (7, 4, 2), (8, 1, 1)])
def test_random_instances_verify(n, fold, openings):
    rng = np.random.default_rng(n * 100 + fold)
    ops = field_ops(KOALABEAR)
    config = _config(n, fold)
    evaluations = ops.to_monty(rng.integers(0, KOALABEAR.P, 1 << n, dtype=np.uint64))
    proved = prove_p3(config, KOALABEAR, CpuBackend(), evaluations, num_openings=openings)
    verify_p3(config, proved.commitment, proved.proof, KOALABEAR, num_openings=openings)
    points = ops.to_monty(rng.integers(0, KOALABEAR.P, (openings, n, 4), dtype=np.uint64))
    prescribed = prove_p3(config, KOALABEAR, CpuBackend(), evaluations, points=points)
    verify_p3(config, prescribed.commitment, prescribed.proof, KOALABEAR, points=points)
    with pytest.raises(VerificationError):  # the statement bound: other points do not verify this proof
        verify_p3(config, prescribed.commitment, prescribed.proof, KOALABEAR, points=points[::-1].copy()
                  if openings > 1 else ops.to_monty(np.ones((1, n, 4), np.uint64)))


def test_bad_input_is_a_config_error():
    config = _config(6, 2)
    prover = P3WhirProver(config, KOALABEAR, CpuBackend())
    with pytest.raises(ConfigError, match="2\\^6 = 64 evaluations"):
        prover.prove_p3(np.zeros(32, np.uint32))
    with pytest.raises(ConfigError, match="below p = 2130706433"):
        prover.prove_p3(np.full(64, KOALABEAR.P, np.uint32))
    with pytest.raises(ConfigError, match="num_openings"):
        prover.prove_p3(np.zeros(64, np.uint32), num_openings=0)
    with pytest.raises(ConfigError, match="statement points"):
        prover.prove_p3(np.zeros(64, np.uint32), points=np.zeros((1, 5, 4), np.uint32))


def test_p3_prover_writes_the_golden_document(tmp_path):
    """``P3Prover`` (the public entry point) on the example's instance writes the golden file's commitment, proof,
    postcard bytes, points and claims; the CLI's ``prove --profile p3-whir`` writes the same document, which
    ``verify --profile p3-whir`` accepts."""
    from whirgpu.cli import commands as cli
    from whirgpu.profiles.p3_whir.api import P3Prover
    from whirgpu.ref.rng import Xoshiro256PlusPlus, random_base

    name = "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"
    golden = load_golden_p3(name)
    evaluations = field_ops(KOALABEAR).from_monty(random_base(Xoshiro256PlusPlus(0), 1 << 16, KOALABEAR))
    document = P3Prover(16, backend="cpu").prove(evaluations, seed=0).to_json()
    keys = ("format", "field", "commitment", "commitment_postcard_hex", "proof", "proof_postcard_hex",
            "proof_postcard_len", "points_canonical", "claimed_values_canonical")
    assert {k: document[k] for k in keys} == {k: golden[k] for k in keys}
    assert document["params"] == golden["params"]
    out = tmp_path / "p3.json"
    assert cli.main(["prove", "--profile", "p3-whir", "-n", "16", "-k", "5", "-r", "1", "--security", "90",
                     "--seed", "0", "--backend", "cpu", "-o", str(out)]) == 0
    import json
    assert {k: json.loads(out.read_text())[k] for k in keys} == {k: golden[k] for k in keys}
    assert cli.main(["verify", str(out), "--profile", "p3-whir"]) == 0


def test_p3_prover_refuses_bad_input():
    from whirgpu.profiles.p3_whir.api import P3Prover

    prover = P3Prover(6, P3Parameters(32, 0, Constant(2), SoundnessType.CapacityBound, 1), backend="cpu")
    with pytest.raises(ConfigError, match="evaluations\\[3\\] = 2130706433 .* \\[0, 2130706433\\)"):
        prover.prove([0, 0, 0, KOALABEAR.P] + [0] * 60)
    with pytest.raises(ConfigError, match="2\\^6 = 64 entries"):
        prover.prove([0] * 63)
    with pytest.raises(ConfigError, match="points must have shape"):
        prover.prove([0] * 64, points=np.zeros((1, 5, 4), np.int64))
    with pytest.raises(ConfigError, match="field 'goldilocks'"):
        P3Prover(6, field="goldilocks", backend="cpu")


def test_profile_on_the_planner_and_the_bench_grid(capsys):
    """``devices --plan --profile p3-whir`` plans the p3-whir proof (its layout's buffers: the width-24 leaves'
    constants too), and the bench grid's p3 points read back from their names, budget included."""
    from whirgpu.cli import commands as cli
    from whirgpu.backends.memory import plan_memory
    from whirgpu.bench.grid import parse_grid, parse_point
    from whirgpu.profiles.p3_whir.api import EXAMPLE_PARAMETERS

    assert cli.main(["devices", "--plan", "12:4:1", "--profile", "p3-whir", "--json"]) == 0
    assert '"point": "12:4:1@p3-whir/koalabear"' in capsys.readouterr().out
    p3 = P3WhirConfig.derive(12, EXAMPLE_PARAMETERS, KOALABEAR)
    plan = plan_memory(p3)  # the p3-whir proof built on a counting runtime, up to its readback
    assert plan.pool_bytes and not plan.static_problems
    points = parse_grid("20:5:1,22:5:1", "p3-whir", "koalabear", 17)
    assert [str(p) for p in points] == ["20:5:1@p3-whir/koalabear/pow17", "22:5:1@p3-whir/koalabear/pow17"]
    assert [parse_point(str(p)) for p in points] == points
    with pytest.raises(ConfigError, match="PowBitsExceedBudget"):  # a given budget is kept: refused
        parse_grid("22:5:1", "p3-whir", "koalabear", EXAMPLE_PARAMETERS.pow_bits)
    raised = parse_grid("22:5:1", "p3-whir", "koalabear")[0]  # the default budget is raised (tests/test_p3_defaults.py)
    assert str(raised) == "22:5:1@p3-whir/koalabear" and raised.config().params.pow_bits > EXAMPLE_PARAMETERS.pow_bits
    with pytest.raises(ConfigError, match="needs --profile p3-whir"):
        parse_grid("20:4:1", "whir-p3-metal", "koalabear")
