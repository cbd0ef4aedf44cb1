"""The hiding PCS against upstream's own code, through the prebuilt oracle (``../shared/oracle-p3/bin``; these
tests skip, with the reason, where it is absent):
- zk cases the oracle makes now (both fields, other ell_zk / mask rates / seeds, grinding in the rounds, the base
  case and the masked sumchecks, no or two code-switching rounds, padded tables) are reproduced here byte for
  byte and accepted by the numpy verifier;
- a proof made here with a mask seed the oracle never used is accepted by upstream's verifier (``oracle-p3 verify
  --whir-only``), and a tampered one is rejected.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard
from whirgpu.profiles.p3_whir.zk.document import read_zk_instance, verify_zk_document
from whirgpu.profiles.p3_whir.zk.format import (
    zk_commitment_from_json,
    zk_proof_to_json,
    zk_proof_to_postcard,
)
from whirgpu.profiles.p3_whir.zk.prover import zk_challenger, zk_commit, zk_open
from whirgpu.profiles.p3_whir.zk.verifier import zk_verify
from whirgpu.ref.chacha_rng import StdRng

from .p3_tables_cases import NO_ORACLE, ORACLE

pytestmark = pytest.mark.skipif(not ORACLE.is_file(), reason=NO_ORACLE)

CASES = {
    "bb_ell5_rate2_pow": "--field babybear --tables 13x1 --fold 4 --rate 2 --security 60 --pow-bits 8 "
                         "--soundness cb --seed 11 --evaluations 2 --mask-seed 42 --ell-zk 5 --mask-log-inv-rate 2",
    "kb_two_rounds": "--field koalabear --tables 15x1 --fold 4 --rate 2 --security 32 --pow-bits 0 --soundness cb "
                     "--seed 12 --evaluations 1 --mask-seed 18446744073709551615 --ell-zk 3 --mask-log-inv-rate 1",
    "kb_jb_fold3": "--field koalabear --tables 11x1 --fold 3 --rate 3 --security 40 --pow-bits 12 --soundness jb "
                   "--seed 13 --evaluations 4 --mask-seed 5 --ell-zk 4 --mask-log-inv-rate 1",
    "kb_jb_folding_pow": "--field koalabear --tables 12x1 --fold 3 --rate 2 --security 100 --pow-bits 20 "
                         "--soundness jb --seed 3 --mask-seed 9 --ell-zk 4 --mask-log-inv-rate 1",
    "kb_no_rounds": "--field koalabear --tables 6x1 --fold 5 --rate 6 --security 32 --pow-bits 0 --soundness cb "
                    "--seed 3 --evaluations 2 --mask-seed 1 --ell-zk 4 --mask-log-inv-rate 1",
    "bb_tables_padded": "--field babybear --tables 9x2,3x1,8x3 --open 0:1/2:0,2/1:0/0:0 --fold 4 --rate 2 "
                        "--security 32 --pow-bits 0 --soundness cb --seed 14 --mask-seed 77 --ell-zk 4 "
                        "--mask-log-inv-rate 1",
}


def run_oracle(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(ORACLE), *args], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def oracle_docs(tmp_path_factory) -> dict[str, tuple]:
    folder = tmp_path_factory.mktemp("oracle-zk")
    docs = {}
    for name, arguments in CASES.items():
        out = folder / f"{name}.json"
        result = run_oracle("prove-tables", "--zk", *arguments.split(), "--out", str(out))
        assert result.returncode == 0, result.stdout + result.stderr
        docs[name] = (out, json.loads(out.read_text()))
    return docs


def _prove(inst, mask_seed: int):
    challenger = zk_challenger(inst.config, inst.field)
    rng = StdRng.seed_from_u64(mask_seed)
    committed = zk_commit(inst.config, inst.field, inst.polynomial, challenger, rng)
    return committed, zk_open(inst.config, inst.field, committed, inst.points, challenger, rng)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_oracle_case_is_reproduced_and_verified(oracle_docs, case):
    _, doc = oracle_docs[case]
    inst = read_zk_instance(doc)
    committed, proof = _prove(inst, inst.mask_seed)
    assert merkle_cap_to_postcard(committed.oracle.cap).hex() == doc["commitment_postcard_hex"]
    assert zk_proof_to_postcard(proof).hex() == doc["proof_postcard_hex"]
    zk_verify(inst.config, inst.field, zk_commitment_from_json(doc["commitment"], inst.field), proof, inst.points)
    verify_zk_document(doc)


@pytest.mark.slow
def test_upstream_verifier_accepts_a_proof_made_here(oracle_docs, tmp_path):
    _, doc = oracle_docs["kb_two_rounds"]
    inst = read_zk_instance(doc)
    committed, proof = _prove(inst, 123456789)
    assert zk_proof_to_json(proof) != doc["proof"]
    ours = dict(doc, commitment={"_marker": None, "cap": committed.oracle.cap.roots.tolist()},
                proof=zk_proof_to_json(proof))
    good = tmp_path / "ours.json"
    good.write_text(json.dumps(ours))
    result = run_oracle("verify", "--in", str(good), "--whir-only")
    assert result.returncode == 0 and result.stdout.startswith("accept"), result.stdout + result.stderr
    tampered = json.loads(json.dumps(ours))
    tampered["proof"]["base_case"]["masked_claim"]["value"][0] ^= 1
    bad = tmp_path / "tampered.json"
    bad.write_text(json.dumps(tampered))
    result = run_oracle("verify", "--in", str(bad), "--whir-only")
    assert result.returncode == 1 and result.stdout.startswith("reject"), result.stdout + result.stderr


def test_config_rejections_match_upstreams():
    """A configuration upstream's ZkWhirConfig::new rejects is rejected here with the same words."""
    from whirgpu.errors import ConfigError
    from whirgpu.field import KOALABEAR
    from whirgpu.profiles.p3_whir.zk.config import ZkWhirConfig
    from whirgpu.profiles.p3_whir.zk.document import zk_parameters
    result = run_oracle("prove-tables", "--zk", "--field", "koalabear", "--tables", "10x1", "--fold", "3", "--rate",
                        "2", "--security", "100", "--pow-bits", "20", "--soundness", "jb", "--out", "/dev/null")
    assert result.returncode != 0
    upstream = (result.stdout + result.stderr).strip().split("): ", 1)[1]
    params = {"zk": True, "soundness_type": "JohnsonBound", "round_log_inv_rates": [], "security_level": 100,
              "pow_bits": 20, "folding_factor": 3, "starting_log_inv_rate": 2, "num_variables": 10, "ell_zk": 4,
              "mask_log_inv_rate": 1}
    n, p, ell_zk, mask_rate = zk_parameters(params)
    with pytest.raises(ConfigError) as caught:
        ZkWhirConfig.derive(n, p, KOALABEAR, ell_zk, mask_rate)
    assert str(caught.value).split(": ", 1)[1] == upstream
