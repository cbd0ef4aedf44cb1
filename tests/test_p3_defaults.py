"""The p3-whir profile's one set of defaults (``whirgpu.profiles.p3_whir.defaults``): upstream's example, read by
prove, params, bench, devices --plan, ``P3Prover`` and every help text; the grinding budget raised where upstream
refuses the example's (one ``note:`` line) or refused when given (one ``error:`` line naming the budget that
works); the grinding maximum; the bound on openings.

Expected budgets are found here by asking ``P3WhirConfig.derive`` (upstream's ``WhirConfig::new``) budget by
budget, not by the code under test; expected help words are built from ``EXAMPLE_PARAMETERS``.
"""

from __future__ import annotations

import json
import sys
import types
from dataclasses import replace

import numpy as np
import pytest

from whirgpu.bench.grid import GRIDS, parse_grid
from whirgpu.errors import ConfigError
from whirgpu.field import field_by_name
from whirgpu.profiles.p3_whir import defaults
from whirgpu.profiles.p3_whir.api import P3Prover
from whirgpu.profiles.p3_whir.config import P3Parameters, P3WhirConfig
from whirgpu.profiles.p3_whir.defaults import EXAMPLE_FIELD, EXAMPLE_PARAMETERS, MAX_OPENINGS
from whirgpu.protocol.folding import Constant
from whirgpu.protocol.soundness import SoundnessType

from .conftest import load_golden_p3
from .test_cli import _in_tmp, one_line, run  # noqa: F401 - _in_tmp: the autouse fixture keeps files out of the repo

FIELDS = ("koalabear", "babybear")
EXAMPLE_GOLDEN = "kb_n16_k5_r1_s90_p16_cb_e1_seed0.json"  # golden-p3 README: the example's defaults at small n
# 2^bits < p for the grinding sample: the largest such bits of each field, computed here from p
GRIND_MAX = {name: (field_by_name(name).P - 1).bit_length() - 1 for name in FIELDS}


def _accepts(n: int, params: P3Parameters, field: str) -> bool:
    try:
        P3WhirConfig.derive(n, params, field_by_name(field))
    except ConfigError as exc:
        assert str(exc).startswith("PowBitsExceedBudget"), exc
        return False
    return True


def _smallest(n: int, params: P3Parameters, field: str) -> int:
    """The smallest budget from params.pow_bits up that upstream accepts, asked one budget at a time."""
    return next(b for b in range(params.pow_bits, 64) if _accepts(n, replace(params, pow_bits=b), field))


def _example(fold: int, rate: int, **changes) -> P3Parameters:
    return replace(EXAMPLE_PARAMETERS, folding=Constant(fold), starting_log_inv_rate=rate, **changes)


def _words(text: str) -> str:
    return " ".join(text.split())  # argparse wraps help text anywhere


# ---- the one definition -------------------------------------------------------------------------------------

def test_the_definition_is_upstreams_example():
    """The golden-p3 file made with the example's own arguments (its README) holds the same choices."""
    golden = load_golden_p3(EXAMPLE_GOLDEN)
    p = golden["params"]
    assert golden["field"] == EXAMPLE_FIELD
    assert (p["security_level"], p["pow_bits"], p["folding_factor"], p["starting_log_inv_rate"],
            p["soundness_type"]) == (EXAMPLE_PARAMETERS.security_level, EXAMPLE_PARAMETERS.pow_bits,
                                     EXAMPLE_PARAMETERS.folding.k, EXAMPLE_PARAMETERS.starting_log_inv_rate,
                                     EXAMPLE_PARAMETERS.soundness_type.name)


def test_prove_with_no_parameter_flags_is_upstreams_example(tmp_path, capsys):
    """`prove --profile p3-whir -n 16 --seed 0` (no -k, -r, --security, --pow-bits, --field) writes the golden
    example proof byte for byte, and verify accepts it; no note (the example's budget is accepted at n = 16)."""
    golden = load_golden_p3(EXAMPLE_GOLDEN)
    code, out, err = run(["prove", "--profile", "p3-whir", "-n", golden["params"]["num_variables"], "--seed", 0,
                          "--backend", "cpu", "-o", tmp_path / "p.json"], capsys)
    assert (code, err) == (0, "")
    document = json.loads((tmp_path / "p.json").read_text())
    for key in ("field", "commitment_postcard_hex", "proof_postcard_hex", "points_canonical",
                "claimed_values_canonical"):
        assert document[key] == golden[key], key
    assert document["params"] == golden["params"]
    code, out, _ = run(["verify", tmp_path / "p.json", "--profile", "p3-whir"], capsys)
    assert code == 0


# ---- every point of the default grid ------------------------------------------------------------------------

@pytest.mark.parametrize("field", FIELDS)
def test_every_default_grid_point_derives_with_the_budget_rule(field):
    """Each point of the default bench grid at the example's parameters: the budget the rule picks is the smallest
    upstream accepts (every smaller one from the example's up is refused), within the grinding maximum, and the
    note appears exactly when it was raised; the bench grid, the API and the CLI flags agree on it."""
    points = parse_grid("default", "p3-whir", field)
    assert [(p.n, p.fold, p.rate) for p in points] == [(p.n, p.fold, p.rate) for p in GRIDS["default"]]
    raised = 0
    for point in points:
        asked = _example(point.fold, point.rate)
        budget = _smallest(point.n, asked, field)
        assert budget <= GRIND_MAX[field], point
        resolved = defaults.resolve(point.n, asked, field, explicit=False)
        assert resolved.params.pow_bits == budget and resolved.config.max_pow_bits <= budget, point
        assert point.config().params == resolved.params
        assert (point.note() is not None) == (budget > EXAMPLE_PARAMETERS.pow_bits), point
        assert P3Prover(point.n, resolved.params, field, backend="cpu").params == resolved.params
        raised += budget > EXAMPLE_PARAMETERS.pow_bits
    assert raised, "the default grid has points where upstream refuses the example's budget"


def test_the_api_raises_the_default_budget_and_keeps_a_given_one():
    n = next(n for n in range(16, 30) if _smallest(n, EXAMPLE_PARAMETERS, EXAMPLE_FIELD) > EXAMPLE_PARAMETERS.pow_bits)
    budget = _smallest(n, EXAMPLE_PARAMETERS, EXAMPLE_FIELD)
    prover = P3Prover(n, backend="cpu")
    assert prover.params == replace(EXAMPLE_PARAMETERS, pow_bits=budget)
    assert prover.pow_note == (f"pow budget raised from {EXAMPLE_PARAMETERS.pow_bits} to {budget} bits, the smallest "
                               f"upstream accepts at n={n} fold={EXAMPLE_PARAMETERS.folding.k} "
                               f"rate={EXAMPLE_PARAMETERS.starting_log_inv_rate} "
                               f"security={EXAMPLE_PARAMETERS.security_level}")
    assert P3Prover(n - 1, backend="cpu").pow_note is None  # n - 1 takes the example's budget as it is
    with pytest.raises(ConfigError, match=f"^PowBitsExceedBudget: .*; pow_bits {budget} is the smallest budget"):
        P3Prover(n, EXAMPLE_PARAMETERS, backend="cpu")


# ---- the note, the refusal, the grinding maximum (CLI) ------------------------------------------------------

# Small enough to prove here (n = 9) yet refused at the example's budget: security 110 under the Johnson bound.
RAISED = dict(n=9, fold=4, rate=2, security=110, soundness="johnson")


def _raised_argv() -> list:
    r = RAISED
    return ["-n", r["n"], "-k", r["fold"], "-r", r["rate"], "--security", r["security"], "--soundness", r["soundness"]]


def _raised_budget() -> int:
    r = RAISED
    return _smallest(r["n"], _example(r["fold"], r["rate"], security_level=r["security"],
                                      soundness_type=SoundnessType.parse(r["soundness"])), EXAMPLE_FIELD)


def test_prove_raises_the_budget_with_one_note_and_the_proof_verifies(tmp_path, capsys):
    budget = _raised_budget()
    assert budget > EXAMPLE_PARAMETERS.pow_bits
    r = RAISED
    code, out, err = run(["prove", "--profile", "p3-whir", *_raised_argv(), "--seed", 3, "--backend", "cpu", "-o",
                          tmp_path / "p.json"], capsys)
    assert code == 0
    assert one_line(err) == (f"note: pow budget raised from {EXAMPLE_PARAMETERS.pow_bits} to {budget} bits, the "
                             f"smallest upstream accepts at n={r['n']} fold={r['fold']} rate={r['rate']} "
                             f"security={r['security']}")
    assert json.loads((tmp_path / "p.json").read_text())["params"]["pow_bits"] == budget
    code, out, _ = run(["verify", tmp_path / "p.json", "--profile", "p3-whir"], capsys)
    assert code == 0 and f"pow_bits={budget}" in out


@pytest.mark.parametrize("command", ["prove", "params"])
def test_a_given_budget_upstream_refuses_is_one_error_naming_the_one_that_works(command, capsys):
    budget = _raised_budget()
    base = [command, "--profile", "p3-whir", *_raised_argv()]
    code, out, err = run([*base, "--pow-bits", EXAMPLE_PARAMETERS.pow_bits]
                         + (["--seed", 0, "--backend", "cpu"] if command == "prove" else []), capsys)
    assert (code, out) == (1, "")
    line = one_line(err)
    assert line.startswith("error: PowBitsExceedBudget: ") and f"--pow-bits {budget} is the smallest budget" in line
    if command == "params":  # the budget it names is accepted, silently (proving it: the test above)
        code, out, err = run([*base, "--pow-bits", budget, "--json"], capsys)
        assert (code, err) == (0, "") and json.loads(out)["max_pow_bits"] <= budget


def _past_grinding(field: str) -> tuple[int, int, int, int]:
    """(n, fold, rate, budget): a grid-sized point whose smallest accepted budget lies past the grinding
    maximum."""
    for n in range(20, 29):
        for fold in range(1, 7):
            for rate in range(1, 5):
                try:
                    P3WhirConfig.derive(n, _example(fold, rate, pow_bits=64), field_by_name(field))
                except ConfigError:
                    continue  # refused whatever the budget (e.g. the two-adicity)
                budget = _smallest(n, _example(fold, rate), field)
                if budget > GRIND_MAX[field]:
                    return n, fold, rate, budget
    raise AssertionError("no such point")


@pytest.mark.parametrize("field", FIELDS)
def test_past_the_grinding_maximum_is_refused_with_the_reason(field, capsys):
    n, fold, rate, budget = _past_grinding(field)
    base = ["params", "--profile", "p3-whir", "--field", field, "-n", n, "-k", fold, "-r", rate]
    code, out, err = run(base, capsys)
    line = one_line(err)
    assert (code, out) == (1, "") and line.startswith("error: PowBitsExceedBudget: ")
    assert f"up to {GRIND_MAX[field]} bits" in line and f"upstream accepts {budget} bits at the least" in line
    code, out, err = run([*base, "--pow-bits", budget], capsys)  # accepted by upstream, but cannot be ground
    line = one_line(err)
    assert (code, out) == (1, "") and "more than the transcript can grind" in line
    assert f"({GRIND_MAX[field]} bits: 2^bits < p)" in line


# ---- bench and devices --plan say the same ------------------------------------------------------------------

def _raised_grid_point() -> str:
    point = next(p for p in GRIDS["default"]
                 if _smallest(p.n, _example(p.fold, p.rate), EXAMPLE_FIELD) > EXAMPLE_PARAMETERS.pow_bits)
    return str(point)


def test_bench_notes_each_raised_point(monkeypatch, capsys):
    seen = {}

    def run_kernels(points, *rest):
        seen["points"] = points
        return 0

    monkeypatch.setitem(sys.modules, "whirgpu.bench.kernels", types.SimpleNamespace(run_kernels=run_kernels))
    point = _raised_grid_point()
    code, _, err = run(["bench", "--kernels", "--profile", "p3-whir", "--grid", point, "--backends", "cpu"], capsys)
    n, fold, rate = (int(v) for v in point.split(":"))
    budget = _smallest(n, _example(fold, rate), EXAMPLE_FIELD)
    assert code == 0 and seen["points"][0].config().params.pow_bits == budget
    assert one_line(err) == (f"note: {point}@p3-whir/{EXAMPLE_FIELD}: pow budget raised from "
                             f"{EXAMPLE_PARAMETERS.pow_bits} to {budget} bits, the smallest upstream accepts at n={n} "
                             f"fold={fold} rate={rate} security={EXAMPLE_PARAMETERS.security_level}")
    code, _, err = run(["bench", "--kernels", "--profile", "p3-whir", "--grid", point, "--backends", "cpu",
                        "--pow-bits", EXAMPLE_PARAMETERS.pow_bits], capsys)
    assert code == 1 and f"--pow-bits {budget} is the smallest budget" in one_line(err)


def test_devices_plan_notes_a_raised_point(capsys):
    point = _raised_grid_point()
    n, fold, rate = (int(v) for v in point.split(":"))
    budget = _smallest(n, _example(fold, rate), EXAMPLE_FIELD)
    code, out, err = run(["devices", "--plan", point, "--profile", "p3-whir", "--json"], capsys)
    assert code == 0 and json.loads(out)["point"] == f"{point}@p3-whir/{EXAMPLE_FIELD}"
    assert one_line(err).startswith(f"note: pow budget raised from {EXAMPLE_PARAMETERS.pow_bits} to {budget} bits")


# ---- openings ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("count", [0, MAX_OPENINGS + 1, 100000])
def test_openings_are_bounded_with_the_bound_in_the_message(count, capsys):
    code, out, err = run(["prove", "--profile", "p3-whir", "-n", 8, "--seed", 0, "--backend", "cpu", "--openings",
                          count], capsys)
    assert (code, out) == (1, "")
    assert one_line(err) == f"error: --openings {count}: a proof opens at 1 to {MAX_OPENINGS} points (MAX_OPENINGS)"


def test_the_api_bounds_openings_and_prescribed_points():
    prover = P3Prover(6, P3Parameters(32, 0, Constant(2), SoundnessType.CapacityBound, 1), backend="cpu")
    with pytest.raises(ConfigError, match=f"num_openings {MAX_OPENINGS + 1}: a proof opens at 1 to {MAX_OPENINGS}"):
        prover.prove([0] * 64, MAX_OPENINGS + 1)
    with pytest.raises(ConfigError, match=f"prescribed points {MAX_OPENINGS + 1}: .* 1 to {MAX_OPENINGS}"):
        prover.prove([0] * 64, points=np.zeros((MAX_OPENINGS + 1, 6, 4), np.int64))


# ---- help texts ----------------------------------------------------------------------------------------------

def _example_words() -> list[str]:
    p = EXAMPLE_PARAMETERS
    return [f"security {p.security_level}", f"pow {p.pow_bits}", f"fold {p.folding.k}",
            f"rate {p.starting_log_inv_rate}", f"{p.soundness_type.cli_name} bound", EXAMPLE_FIELD]


@pytest.mark.parametrize("command", ["params", "prove"])
def test_params_and_prove_help_name_the_definition(command, capsys):
    code, out, _ = run([command, "--help"], capsys)
    text, p = _words(out), EXAMPLE_PARAMETERS
    assert code == 0
    for words in _example_words():
        assert words in text, words
    assert f"default {p.folding.k} with --profile p3-whir" in text
    assert f"default {p.starting_log_inv_rate} with --profile p3-whir" in text
    assert f"{p.security_level} with --profile p3-whir" in text
    assert f"with --profile p3-whir the example's {p.pow_bits}" in text
    assert "not built yet" not in text


def test_bench_and_devices_help_name_the_definition(capsys):
    p = EXAMPLE_PARAMETERS
    code, out, _ = run(["bench", "--help"], capsys)
    text = _words(out)
    assert code == 0
    assert f"security {p.security_level}, pow {p.pow_bits}, {p.soundness_type.cli_name} bound, {EXAMPLE_FIELD}" in text
    assert f"default {p.pow_bits}, the example's" in text and f"(default {EXAMPLE_FIELD})" in text
    code, out, _ = run(["devices", "--help"], capsys)
    text = _words(out)
    assert code == 0
    assert f"security {p.security_level}, {p.soundness_type.cli_name} bound, pow {p.pow_bits}" in text
    assert f"(default {EXAMPLE_FIELD})" in text


def test_openings_help_names_the_bound(capsys):
    _, out, _ = run(["prove", "--help"], capsys)
    assert f"at most {MAX_OPENINGS}" in _words(out)


def test_a_negative_budget_and_an_unreachable_security_level_are_one_line_each(capsys):
    code, out, err = run(["params", "--profile", "p3-whir", "-n", 20, "--pow-bits", -1], capsys)
    assert (code, out) == (1, "") and one_line(err) == "error: --pow-bits must be an integer >= 0, got -1"
    code, out, err = run(["params", "--profile", "p3-whir", "-n", 20, "--security", 200], capsys)
    assert (code, out) == (1, "") and one_line(err).startswith("error: PowBitsExceedBudget: no grinding budget")


def test_an_unreachable_level_names_the_nearest_that_derives(capsys):
    """Past what grinding can close, the refusal names the field and the largest level that derives at the point,
    which does derive (and one bit more does not)."""
    code, out, err = run(["params", "--profile", "p3-whir", "-n", 20, "-k", 4, "--security", 128, "--soundness",
                          "johnson"], capsys)
    line = one_line(err)
    assert (code, out) == (1, "") and "degree-4 extension (~2^124 elements)" in line
    level = int(line.split("the largest security level that derives here is ")[1].split(" bits")[0])
    base = ["params", "--profile", "p3-whir", "-n", 20, "-k", 4, "--soundness", "johnson", "--pow-bits", 30]
    assert run([*base, "--security", level], capsys)[0] == 0
    assert run([*base, "--security", level + 1], capsys)[0] == 1
