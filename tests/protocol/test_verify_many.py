"""Batch verification gives every proof the verdict ``verify`` gives it alone: over a sample of the tamper suite's
single-value changes (every site of the golden and fresh cases, each changed word), random byte changes of the
binary encoding (the fuzz corpus's kind), untouched proofs, and expectations that a proof does not meet; all in one
batch, so the openings of good and bad proofs are hashed together."""

from __future__ import annotations

import random

import numpy as np
import pytest

from whirgpu.api import verify
from whirgpu.many.batch_verify import verify_many
from whirgpu.errors import ConfigError, ProofFormatError, VerificationError
from whirgpu.field import P
from whirgpu.profiles.whir_p3_metal.serialize import to_binary

from .test_tamper import CASES, _config_of, _fresh_copy, _get, _proof_file, _set, _value_sites


def _single(proof, **expect):
    try:
        verify(proof, **expect)
    except (ProofFormatError, VerificationError) as exc:
        return type(exc), str(exc), getattr(exc, "round", None), getattr(exc, "check", None)
    return None


def _corpus() -> list:
    rng = random.Random(5)
    corpus = []
    for case in CASES:
        corpus.append(_proof_file(case))
        for site in _value_sites(_config_of(case)):
            if rng.random() < 0.5:  # a sample of the sites, each changed once
                pf = _fresh_copy(case)
                _set(pf, site, (_get(pf, site) + 1 + rng.randrange(P - 1)) % P)
                corpus.append(pf)
        data = to_binary(_proof_file(case))
        for _ in range(12):  # random byte changes of the encoding: format errors and false proofs alike
            changed = bytearray(data)
            at = rng.randrange(len(changed))
            changed[at] ^= 1 << rng.randrange(8)
            corpus.append(bytes(changed))
    return corpus


def _verdict_key(verdict):
    return None if verdict.ok else (type(verdict.error), str(verdict.error), getattr(verdict.error, "round", None),
                                    getattr(verdict.error, "check", None))


@pytest.fixture(scope="module")
def corpus():
    return _corpus()


def test_batch_verdicts_equal_single_verdicts(corpus):
    verdicts = verify_many(corpus)
    assert len(verdicts) == len(corpus)
    assert sum(v.ok for v in verdicts) >= len(CASES)  # the untouched proofs at least
    assert sum(not v.ok for v in verdicts) > len(corpus) // 2
    for i, (proof, verdict) in enumerate(zip(corpus, verdicts)):
        assert _verdict_key(verdict) == _single(proof), f"corpus item {i}"


def test_worker_processes_give_the_same_verdicts(corpus):
    """Chunks verified in two worker processes: every verdict (its error's type, text, round and check) as the
    batch in this process gives it, in order; the workers stay for the next call."""
    sample = corpus[::3]
    here = [_verdict_key(v) for v in verify_many(sample)]
    assert [_verdict_key(v) for v in verify_many(sample, processes=2)] == here
    assert any(key is not None and key[2] is not None for key in here)  # round and check crossed the process line
    assert verify_many([], processes=2) == []
    config = _config_of(CASES[0])
    with pytest.raises(ConfigError):  # raised in a worker, re-raised here
        verify_many(sample[:2], min_security=-1, processes=2)
    with pytest.raises(ConfigError, match="choose one"):
        verify_many(sample[:2], processes=2, backend="cpu")
    with pytest.raises(ConfigError, match="processes must be a positive int"):
        verify_many(sample[:2], processes=0)
    assert [v.ok for v in verify_many(sample[:4], params=config.params, processes=2)] == \
        [v.ok for v in verify_many(sample[:4], params=config.params)]


def test_a_dead_worker_pool_is_replaced(corpus):
    import os
    import signal

    from whirgpu.many import batch_verify as batch_verify

    from whirgpu.many import processes as processes

    sample = corpus[:6]
    here = [_verdict_key(v) for v in verify_many(sample)]
    assert [_verdict_key(v) for v in verify_many(sample, processes=2)] == here
    pool = processes.shared_pool(2, batch_verify._warm_worker)
    for pid in list(pool._processes):
        os.kill(pid, signal.SIGKILL)
    assert [_verdict_key(v) for v in verify_many(sample, processes=2)] == here
    assert processes.shared_pool(2, batch_verify._warm_worker) is not pool


def test_expectations_apply_to_every_proof():
    proofs = [_proof_file(case) for case in CASES]
    config = _config_of(CASES[0])
    verdicts = verify_many(proofs, params=config.params, min_security=1)
    for proof, verdict in zip(proofs, verdicts):
        single = _single(proof, params=config.params, min_security=1)
        assert (verdict.ok, None if verdict.ok else str(verdict.error)) == (single is None,
                                                                          None if single is None else single[1])
    assert verdicts[0].ok and not all(v.ok for v in verdicts)
    with pytest.raises(ConfigError):  # a malformed expectation is the caller's mistake
        verify_many(proofs, min_security=-1)
    assert verify_many([]) == []
    assert np.all([v.reason.startswith(("accept", "reject: ")) for v in verdicts])


def test_cli_verifies_files_as_a_batch(tmp_path, capsys):
    from whirgpu.cli import commands as cli
    from whirgpu.profiles.whir_p3_metal.serialize import dump

    good = [tmp_path / f"{case}.whir" for case in CASES[:2]]
    for path, case in zip(good, CASES):
        path.write_bytes(dump(_proof_file(case), "binary"))
    bad = tmp_path / "bad.whir"
    pf = _fresh_copy(CASES[0])
    site = _value_sites(_config_of(CASES[0]))[0]
    _set(pf, site, (_get(pf, site) + 1) % P)
    bad.write_bytes(dump(pf, "binary"))
    assert cli.main(["verify", str(good[0]), str(bad), str(good[1])]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[0] for line in lines] == [str(good[0]), str(bad), str(good[1])]
    assert lines[0].split(": ", 1)[1].startswith("accept") and lines[2].split(": ", 1)[1].startswith("accept")
    assert lines[1].split(": ", 1)[1] == f"reject: {_single(pf)[1]}"
    assert cli.main(["verify", str(good[0]), str(good[1])]) == 0
    capsys.readouterr()
    assert cli.main(["verify", str(good[0]), str(bad), str(good[1]), "--processes", "2"]) == 1
    assert capsys.readouterr().out.splitlines() == lines  # the same lines from worker processes
    for wrong in (["--processes", "0"], ["--processes", "2", "--backend", "cpu"]):
        assert cli.main(["verify", str(good[0]), str(good[1])] + wrong) == 1
        assert "--processes needs a positive count" in capsys.readouterr().err


def test_lockstep_walks_of_a_few_proofs_give_the_same_verdicts(corpus, monkeypatch):
    """Groups cut into lockstep walks of three proofs (``LOCKSTEP_MAX``), and walks of one proof turned off
    (``LOCKSTEP_MIN``): the verdicts are those of the whole-batch call and of ``verify`` alone."""
    from whirgpu.many import batch_verify

    expected = [_verdict_key(v) for v in verify_many(corpus)]
    monkeypatch.setattr(batch_verify, "LOCKSTEP_MAX", 3)
    assert [_verdict_key(v) for v in verify_many(corpus)] == expected
    monkeypatch.setattr(batch_verify, "LOCKSTEP_MIN", 10 ** 9)
    assert [_verdict_key(v) for v in verify_many(corpus)] == expected
