"""Stacked multi-table proofs against upstream's own code, through the prebuilt oracle (``../shared/oracle-p3/bin``;
these tests skip, with the reason, where it is absent, as in a fresh clone):
- cases the oracle makes now, of shapes, fields, layouts and grinding the golden files do not cover, are reproduced
  here byte for byte (commitment and postcard proof) and verified;
- proofs made here of columns the oracle never saw are accepted by upstream's verifier (``oracle-p3 verify
  --whir-only``: without it the oracle also checks that the columns are its SmallRng(seed) draw), and a tampered
  one is rejected.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from whirgpu.profiles.p3_whir.format import merkle_cap_to_postcard, pcs_proof_to_postcard
from whirgpu.profiles.p3_whir.tables.prover import prove_tables
from whirgpu.profiles.p3_whir.tables.verifier import verify_tables

from .p3_tables_cases import NO_ORACLE, ORACLE, TablesCase, oracle_document
from .test_p3_tables import TABLE_BACKENDS, make_backend, parse

pytestmark = pytest.mark.skipif(not ORACLE.is_file(), reason=NO_ORACLE)

# oracle-p3 prove-tables arguments: equal heights in prefix order with a bit-reversed selector, several batches
# and next openings; a padded table, a wide one and a prescribed schedule with rate 2; grinding in prefix order;
# three equal tables with two never opened; BabyBear and KoalaBear
CASES = {
    "bb_prefix_equal": "--field babybear --tables 9x2,9x2,7x3 --layout prefix --open 0:0:1/1:1:0/2:0,1,2:2 "
                       "--fold 3 --rate 1 --security 32 --pow-bits 0 --soundness cb --seed 11",
    "kb_suffix_prescribed": "--field koalabear --tables 12x1,6x5,2x1 --layout suffix --open 1:4,0:3/2::0/0:0/1:1: "
                            "--fold 4 --rate 2 --security 40 --pow-bits 0 --soundness cb --seed 12 "
                            "--points prescribed",
    "kb_prefix_pow": "--field koalabear --tables 8x4 --layout prefix --open 0:0,1,2,3:3,2,1,0 --fold 5 --rate 1 "
                     "--security 32 --pow-bits 8 --soundness cb --seed 13",
    "bb_suffix_unopened": "--field babybear --tables 7x1,7x1,7x1 --layout suffix --open 2:0:0 --fold 2 --rate 1 "
                          "--security 32 --pow-bits 0 --soundness cb --seed 14",
    "kb_suffix_ungrouped": "--field koalabear --tables 5x2,5x1 --layout suffix --open 1:0/0:1/0:0:1 --fold 2 "
                           "--rate 1 --security 32 --pow-bits 0 --soundness cb --seed 16",
    "kb_prefix_prescribed_padded": "--field koalabear --tables 10x2,3x2 --layout prefix --open 1:1:0/0:0,1:/1::1 "
                                   "--fold 4 --rate 1 --security 32 --pow-bits 0 --soundness cb --seed 15 "
                                   "--points prescribed",
}


def run_oracle(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(ORACLE), *args], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def oracle_cases(tmp_path_factory) -> dict[str, TablesCase]:
    folder = tmp_path_factory.mktemp("oracle-tables")
    cases = {}
    for name, arguments in CASES.items():
        out = folder / f"{name}.json"
        result = run_oracle("prove-tables", *arguments.split(), "--out", str(out))
        assert result.returncode == 0, result.stdout + result.stderr
        cases[name] = TablesCase(json.loads(out.read_text()))
    return cases


@pytest.mark.parametrize("backend_name", TABLE_BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_oracle_cases_reproduce_and_verify(oracle_cases, backend_name, name):
    c = oracle_cases[name]
    arguments = CASES[name].split()
    given = parse(arguments[arguments.index("--tables") + 1], arguments[arguments.index("--open") + 1])
    assert given == c.protocol  # batches grouped by table, stably, as upstream's OpeningProtocol holds them
    assert given.open_spec == c.document["params"]["open"]
    proved = prove_tables(c.config, c.field, make_backend(backend_name), c.columns, c.protocol, c.layout, c.points)
    assert merkle_cap_to_postcard(proved.commitment).hex() == c.document["commitment_postcard_hex"]
    assert pcs_proof_to_postcard(proved.proof).hex() == c.document["proof_postcard_hex"]
    verify_tables(c.config, c.field, c.commitment(), c.proof(), c.protocol, c.layout, c.points)


def _verdict(path, *flags) -> str:
    result = run_oracle("verify", "--in", str(path), *flags)
    return result.stdout.strip() or result.stderr.strip()


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_accepts_proofs_made_here(oracle_cases, tmp_path, name):
    """Fresh columns (not the oracle's SmallRng draw) and, in prescribed mode, fresh points: the oracle's verifier
    rebuilds the configuration and the schedule from ``params`` and accepts the proof made here."""
    c = oracle_cases[name]
    rng = np.random.default_rng(len(name))
    columns = [rng.integers(0, c.field.P, array.shape, dtype=np.uint64).astype(np.uint32) for array in c.columns]
    points = None
    if c.points is not None:
        points = [c.ops.to_monty(rng.integers(0, c.field.P, p.shape, dtype=np.uint64)) for p in c.points]
    proved = prove_tables(c.config, c.field, make_backend("cpu"), columns, c.protocol, c.layout, points)
    opened = verify_tables(c.config, c.field, proved.commitment, proved.proof, c.protocol, c.layout, points)
    document = oracle_document(c.document["params"], c.document["field"], proved.commitment, proved.proof,
                               opened.points, opened.current, opened.next)
    path = tmp_path / "whirgpu.json"
    path.write_text(json.dumps(document))
    assert _verdict(path, "--whir-only") == "accept"
    evals = document["proof"]["evals"]
    first = evals[0]["current"][0] if evals[0]["current"] else evals[0]["next"][0]
    first["value"][0] = (first["value"][0] + 1) % c.field.P
    path.write_text(json.dumps(document))
    assert _verdict(path, "--whir-only").startswith("reject")
