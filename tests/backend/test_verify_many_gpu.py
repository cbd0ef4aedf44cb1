"""``verify_many(..., backend=<gpu>)`` gives every proof of a tamper corpus the verdict the host path gives it: the
batch's Merkle openings hashed by ``merkle_paths`` on every runtime (the ``gpu_runtime`` fixture), never by the host
(the reference is made to raise while the GPU path runs). A changed opened row or Merkle sibling is still caught,
as a 'merkle' rejection of its round; ``whirgpu verify --backend`` gives the host's lines."""

from __future__ import annotations

import random

import pytest

from whirgpu.backends import path_roots
from whirgpu.backends.gpu import GpuBackend
from whirgpu.many.batch_verify import verify_many
from whirgpu.errors import BackendUnavailable
from whirgpu.field import P
from whirgpu.profiles.whir_p3_metal.serialize import dump, to_binary

from ..protocol.test_tamper import CASES, _config_of, _fresh_copy, _get, _proof_file, _set, _value_sites
from .conftest import _required


def _corpus() -> tuple[list, list[int]]:
    """(proofs, the positions of those whose opened row or sibling was changed): each case untouched, each of its
    opening sites changed, a sample of its other sites, and random byte changes of its encoding."""
    rng = random.Random(11)
    corpus, openings = [], []
    for case in CASES:
        corpus.append(_proof_file(case))
        for site in _value_sites(_config_of(case)):
            is_opening = site.direct is not None and site.direct[1] == "merkle"
            if is_opening or rng.random() < 0.1:
                pf = _fresh_copy(case)
                _set(pf, site, (_get(pf, site) + 1 + rng.randrange(P - 1)) % P)
                if is_opening:
                    openings.append(len(corpus))
                corpus.append(pf)
        data = to_binary(_proof_file(case))
        for _ in range(3):
            changed = bytearray(data)
            at = rng.randrange(len(changed))
            changed[at] ^= 1 << rng.randrange(8)
            corpus.append(bytes(changed))
    return corpus, openings


def _outcome(verdict):
    error = verdict.error
    return verdict.ok, type(error), str(error), getattr(error, "round", None), getattr(error, "check", None)


@pytest.fixture(scope="module")
def corpus():
    proofs, openings = _corpus()
    return proofs, openings, [_outcome(v) for v in verify_many(proofs)]


@pytest.fixture
def host_forbidden(monkeypatch):
    """The host's batch hashing raises while the test runs: a GPU path that fell back to it would fail."""
    def refuse(*args, **kwargs):
        raise AssertionError("the host hashed the batch")

    monkeypatch.setattr("whirgpu.ref.merkle.compute_roots_batched", refuse)


def test_gpu_verdicts_equal_host_verdicts(gpu_runtime, corpus, host_forbidden):
    proofs, openings, host = corpus
    backend = GpuBackend(gpu_runtime)
    got = [_outcome(v) for v in verify_many(proofs, backend=backend)]
    assert backend.stats.uploaded > 0
    assert got == host
    assert sum(ok for ok, *_ in got) >= len(CASES) and len(openings) >= 4 * len(CASES)
    for i in openings:  # every changed row or sibling: rejected by the Merkle check of its round
        ok, _, _, round_name, check = got[i]
        assert not ok and check == "merkle" and round_name, (i, got[i])


@pytest.mark.parametrize("name", ["msl-cpu", "wgpu", "cpu"])
def test_backend_names(corpus, name):
    proofs, _, host = corpus
    try:
        got = [_outcome(v) for v in verify_many(proofs[:12], backend=name)]
    except BackendUnavailable as exc:
        if _required(name):
            raise
        pytest.skip(f"{name} unavailable: {exc}")
    assert got == host[:12]
    opened = path_roots.opened_backend(name)
    assert opened.name == name  # the device opened by name stays for the next batch, not reopened per call
    assert [_outcome(v) for v in verify_many(proofs[12:16], backend=name)] == host[12:16]
    assert path_roots.opened_backend(name) is opened


def test_cli_verify_backend(tmp_path, capsys, corpus):
    from whirgpu.cli import commands as cli

    proofs, openings, _ = corpus
    files = []
    for i in (0, openings[0], 1 + len(proofs) // 2):
        path = tmp_path / f"{i}.whir"
        proof = proofs[i]
        path.write_bytes(proof if isinstance(proof, bytes) else dump(proof, "binary"))
        files.append(str(path))
    lines = {}
    for backend in ([], ["--backend", "msl-cpu"]):
        status = cli.main(["verify", *files, *backend])
        lines[bool(backend)] = (status, capsys.readouterr().out)
        single = [cli.main(["verify", path, *backend]) for path in files[:2]]
        lines[bool(backend), "single"] = (single, capsys.readouterr().out)
    assert lines[True] == lines[False] and lines[True][0] == 1
    assert lines[True, "single"] == lines[False, "single"] and lines[True, "single"][0] == [0, 1]
    assert cli.main(["verify", files[0], "--backend", "msl-cpu", "--profile", "p3-whir"]) == 1
    assert "reject: profile: p3-whir was asserted, but this is a whir-p3-metal" in capsys.readouterr().out
