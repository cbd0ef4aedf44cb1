"""Every object the API returns round-trips through the API (issue 37, item 3): ``verify``, ``is_valid``,
``verify_many``, ``claimed_values`` and ``dump`` take what ``Prover.prove``, ``Prover.prove_many`` and
``P3Prover.prove`` return, in every form the API and the documents give them (the object, ``dump``'s bytes in
each format, ``dumps()``'s text, a written file by ``str`` and ``os.PathLike``), in both profiles; ``is_valid`` is
never False for a valid proof; a ``P3ProofDocument`` is judged as its bytes are (nothing it states is trusted);
``whirgpu verify --backend`` gives every document of a mixed batch its verdict.

The proofs are made on the cpu backend and, when wgpu-native opens an adapter, on wgpu (skipped with the reason
otherwise; a failure when ``WHIRGPU_REQUIRE`` names wgpu). The claims each form must give are derived here from
the table and the points (``ref.multilinear.evaluate``), not read from the proof.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import whirgpu
from whirgpu.cli import commands as cli
from whirgpu.errors import BackendUnavailable, ProofFormatError, VerificationError
from whirgpu.field import BABYBEAR
from whirgpu.ref.field_np import field_ops
from whirgpu.ref.multilinear import evaluate

REPO = Path(__file__).resolve().parents[2]
N = 8
PARAMS = whirgpu.ProtocolParameters.default(num_variables=N, folding_factor=2, starting_log_inv_rate=1,
                                            security_level=32, pow_bits=0)
DEFAULT_FORMS = ["object", "dump", "dump-binary", "dump-whir-p3-json", "json-text", "path-binary",
                 "pathlike-whir-p3-json", "dump-of-dump"]
P3_FORMS = ["object", "dump", "dumps-text", "dumps-bytes", "path-written", "pathlike-dump"]
DEFAULT_OBJECTS = ["prove", "prove_many-0", "prove_many-1"]
P3_OBJECTS = ["p3-transcript-points", "p3-given-points"]
KINDS = [(o, f) for o in DEFAULT_OBJECTS for f in DEFAULT_FORMS] + [(o, f) for o in P3_OBJECTS for f in P3_FORMS]


def _required(name: str) -> bool:
    return name in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",") if s.strip()}


def _claims(field, canonical_table, canonical_points) -> list[list[int]]:
    """f(point) for each point, canonical, by the numpy reference: what a proof of the table must claim."""
    ops = field_ops(field)
    table = ops.to_monty(np.asarray(canonical_table, np.uint64))
    return [ops.from_monty(evaluate(table, ops.to_monty(np.asarray(point, np.uint64)), field)).astype(np.int64)
            .tolist() for point in canonical_points]


def _written(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _forms(name: str, made, folder: Path) -> dict:
    """Every form of one returned object, by form name: each made when asked (``form()``), so that an API call
    that fails fails the instances that make it, not the fixture."""
    if name.startswith("p3"):
        written = folder / f"{name}.json"
        return {"object": lambda: made, "dump": lambda: whirgpu.dump(made), "dumps-text": made.dumps,
                "dumps-bytes": lambda: made.dumps().encode(),
                "path-written": lambda: (made.write(written), str(written))[1],
                "pathlike-dump": lambda: _written(folder / f"{name}-dump.json", whirgpu.dump(made))}
    return {"object": lambda: made, "dump": lambda: whirgpu.dump(made),
            "dump-binary": lambda: whirgpu.dump(made, "binary"),
            "dump-whir-p3-json": lambda: whirgpu.dump(made, "whir-p3-json"),
            "json-text": lambda: whirgpu.dump(made, "whir-p3-json").decode(),
            "path-binary": lambda: str(_written(folder / f"{name}.whir", whirgpu.dump(made, "binary"))),
            "pathlike-whir-p3-json": lambda: _written(folder / f"{name}.json", whirgpu.dump(made, "whir-p3-json")),
            "dump-of-dump": lambda: whirgpu.dump(whirgpu.dump(made, "whir-p3-json"), "binary")}


@pytest.fixture(scope="module", params=["cpu", "wgpu"])
def made(request, tmp_path_factory):
    """{object name: (its forms, the canonical points, the claims derived here)} on one backend."""
    backend = request.param
    try:
        prover = whirgpu.Prover(PARAMS, backend=backend)
    except BackendUnavailable as exc:
        if _required(backend):
            pytest.fail(f"{backend} is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"{backend} unavailable: {exc}")
    rng = np.random.default_rng(37)
    tables = [rng.integers(0, whirgpu.P, 1 << N, dtype=np.uint32) for _ in range(3)]
    points = [rng.integers(0, whirgpu.P, (1 + i, N, 4)) for i in range(3)]
    proofs = [prover.prove(tables[0], points[0]), *prover.prove_many(list(zip(tables[1:], points[1:])))]
    p3 = whirgpu.P3Prover(N, backend=prover.backend)
    p3_table = rng.integers(0, p3.field.P, 1 << N, dtype=np.uint32)
    p3_points = rng.integers(0, p3.field.P, (3, N, 4))
    drawn = p3.prove(p3_table, num_openings=2)
    given = p3.prove(p3_table, points=p3_points)
    drawn_points = json.loads(drawn.dumps())["points_canonical"]  # the transcript's: verify checks them
    folder = tmp_path_factory.mktemp(f"round-trip-{backend}")
    found = {}
    for name, proof, table, point in zip(DEFAULT_OBJECTS, proofs, tables, points):
        found[name] = (_forms(name, proof, folder), point, _claims(BABYBEAR, table, point))
    for name, proof, point in (("p3-transcript-points", drawn, drawn_points), ("p3-given-points", given, p3_points)):
        found[name] = (_forms(name, proof, folder), point, _claims(p3.field, p3_table, point))
    yield backend, found, folder
    prover.close()


@pytest.mark.parametrize("name, form", KINDS, ids=[f"{o}-{f}" for o, f in KINDS])
def test_every_returned_object_round_trips(made, name, form):
    _, found, _ = made
    forms, points, claims = found[name]
    source = forms[form]()
    assert whirgpu.verify(source) is None
    assert whirgpu.is_valid(source) is True
    verdict, = whirgpu.verify_many([source])
    assert verdict.ok, verdict.reason
    assert whirgpu.claimed_values(source) == claims
    assert whirgpu.is_valid(source, points=points, values=claims) is True  # the claims are what the proof proves


def test_one_batch_of_every_kind_on_the_host_and_the_backend(made):
    backend, found, _ = made
    sources = [make() for forms, _, _ in found.values() for make in forms.values()]
    assert len(sources) == len(KINDS)
    for where in (None, backend):
        verdicts = whirgpu.verify_many(sources, backend=where)
        assert [v.reason for v in verdicts] == ["accept"] * len(sources)


def test_dump_gives_each_profiles_own_encoding(made):
    _, found, _ = made
    forms = {form: make() for form, make in found["prove"][0].items()}
    assert forms["dump"] == forms["dump-binary"] == whirgpu.dump(forms["dump-whir-p3-json"]) == \
        whirgpu.dump(forms["pathlike-whir-p3-json"]) == whirgpu.dump(forms["json-text"])
    assert whirgpu.dump(forms["path-binary"], "whir-p3-json") == forms["dump-whir-p3-json"]
    for name in P3_OBJECTS:
        p3 = {form: make() for form, make in found[name][0].items()}
        document = p3["object"]
        assert p3["dump"] == document.dumps().encode() == Path(p3["path-written"]).read_bytes()
        assert whirgpu.dump(p3["path-written"]) == whirgpu.dump(p3["dumps-text"]) == p3["dump"]
        for fmt in ("binary", "whir-p3-json"):
            with pytest.raises(ProofFormatError, match=f"^{fmt} is a whir-p3-metal encoding; a p3-whir document"):
                whirgpu.dump(document, fmt)
        with pytest.raises(ProofFormatError, match="^a P3Document keeps no encoding of its own: dump the"):
            whirgpu.dump(whirgpu.read_document(document))
    with pytest.raises(ProofFormatError, match="^unknown proof format 'p3'"):
        whirgpu.dump(forms["object"], "p3")


@pytest.mark.parametrize("change, error", [
    ({"prescribed": True}, VerificationError),   # drawn points stated as the caller's: another transcript
    ({"num_variables": N + 1}, ProofFormatError),  # another configuration than the proof's shape
    ({"proved": None}, ProofFormatError),          # parts that do not serialise
])
def test_a_p3_proof_document_is_judged_as_its_bytes_are(made, change, error):
    """What a ``P3ProofDocument`` states is not trusted: a changed one gets the verdict its bytes get, the same
    error, from every entry point."""
    _, found, _ = made
    changed = dataclasses.replace(found["p3-transcript-points"][0]["object"](), **change)
    with pytest.raises(error) as raised:
        whirgpu.verify(changed)
    if change.get("proved", True) is not None:
        with pytest.raises(error) as from_bytes:
            whirgpu.verify(changed.dumps().encode())
        assert str(raised.value) == str(from_bytes.value)
    assert whirgpu.is_valid(changed) is False
    verdict, = whirgpu.verify_many([changed])
    assert not verdict.ok and str(verdict.error) == str(raised.value)


def _mixed_files(found) -> list[str]:
    return [str(found[name][0][form]()) for name, form in (
        ("prove", "path-binary"), ("p3-transcript-points", "path-written"), ("prove_many-0", "pathlike-whir-p3-json"),
        ("p3-given-points", "path-written"))]


def test_cli_verify_backend_gives_every_document_its_verdict(made, capsys):
    """``verify --backend X`` on a batch of both profiles: every file its line, the host's line."""
    backend, found, _ = made
    files = _mixed_files(found)
    assert cli.main(["verify", *files]) == 0
    host = capsys.readouterr().out
    assert cli.main(["verify", *files, "--backend", backend]) == 0
    out = capsys.readouterr()
    assert (out.out, out.err) == (host, "")
    lines = out.out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == files
    assert all(line.split(": ", 1)[1].startswith("accept ") for line in lines)
    assert ["profile=p3-whir" in line for line in lines] == [False, True, False, True]
    for path in files[1::2]:  # a p3-whir document alone, too
        assert cli.main(["verify", path, "--backend", backend]) == 0
        assert capsys.readouterr().out.startswith("accept ")


def test_python_m_whirgpu_verify_backend_wgpu_on_a_mixed_batch(made):
    backend, found, _ = made
    if backend != "wgpu":
        pytest.skip("the subprocess run is the wgpu variant's")
    env = {k: v for k, v in os.environ.items() if k not in ("WHIRGPU_BACKEND", "WHIRGPU_DEBUG")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    files = _mixed_files(found)
    done = subprocess.run([sys.executable, "-m", "whirgpu", "verify", "--backend", "wgpu", *files], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == files
    assert all(line.split(": ", 1)[1].startswith("accept ") for line in lines)


def test_dump_refuses_a_document_that_contradicts_itself(made):
    """A whir-p3-json document whose ``proof_canonical`` is not its ``proof``: ``verify`` rejects it, so ``dump``
    does not write it anew without the copy (which would verify), from its text or once loaded."""
    _, found, _ = made
    doc = json.loads(found["prove"][0]["dump-whir-p3-json"]())
    doc["proof_canonical"]["final_pow_witness"] = (doc["proof_canonical"]["final_pow_witness"] + 1) % whirgpu.P
    text = json.dumps(doc)
    with pytest.raises(ProofFormatError) as rejected:
        whirgpu.verify(text)
    for source in (text, whirgpu.load(text)):
        for fmt in (None, "binary", "whir-p3-json"):
            with pytest.raises(ProofFormatError) as refused:
                whirgpu.dump(source, fmt)
            assert str(refused.value) == str(rejected.value)


def test_claimed_values_of_a_p3_document_with_misshapen_openings(made):
    """One opening of two values where the configuration says one: a ``ProofFormatError``, not an array error."""
    from whirgpu.profiles.p3_whir.proof import OpeningEvals

    _, found, _ = made
    read = whirgpu.read_document(found["p3-given-points"][0]["object"]())
    evals = (OpeningEvals(np.zeros((2, 4), np.uint32), np.zeros((0, 4), np.uint32)),) * read.num_openings
    changed = dataclasses.replace(read, proof=dataclasses.replace(read.proof, evals=evals))
    with pytest.raises(ProofFormatError, match=rf"^proof evals: expected {read.num_openings} opening\(s\) of one"):
        whirgpu.claimed_values(changed)
    assert whirgpu.is_valid(changed) is False


def test_verify_many_in_processes_takes_every_returned_object(made):
    """A ``P3ProofDocument`` holds its prover's closures and does not pickle: it travels to the workers as its
    bytes; one that does not serialise gets its verdict here, in its place."""
    backend, found, _ = made
    if backend != "cpu":
        pytest.skip("the workers verify on the host: the cpu variant covers it")
    p3 = found["p3-transcript-points"][0]["object"]()
    batch = [p3, found["prove"][0]["object"](), dataclasses.replace(p3, proved=None),
             dataclasses.replace(p3, prescribed=True), found["p3-given-points"][0]["object"]()]
    here = [(v.ok, str(v.error)) for v in whirgpu.verify_many(batch)]
    assert [ok for ok, _ in here] == [True, True, False, False, True]
    assert [(v.ok, str(v.error)) for v in whirgpu.verify_many(batch, processes=2)] == here
