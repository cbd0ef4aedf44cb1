"""``whirgpu warmup`` prepares the caches and says what each part took (exit 0), or one ``error:`` line; a slow
first compile says what it compiles and why, once (``activity.doing``'s announce), a quick one says nothing."""

from __future__ import annotations

import sys
import time

import pytest

from whirgpu import activity
from whirgpu.native import permute as native

from .test_cli import one_line, run


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(activity, "_said", set())


def test_warmup_cpu(capsys):
    code, out, err = run(["warmup", "--backend", "cpu"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    if native._library() is not None:
        assert lines[0].startswith("C Poseidon2 permutation: ") and str(native._NATIVE.paths()[0]) in lines[0]
    assert lines[1].startswith("backend: cpu, the numpy reference (requested), opened in ")
    assert lines[2] == "kernels: none to compile on the cpu backend"
    assert lines[3].startswith("warmup done in ") and "later processes reuse " in lines[3]


def test_warmup_without_a_compiler_still_succeeds(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "no-such-compiler-here")
    monkeypatch.setenv("WHIRGPU_CACHE_DIR", str(tmp_path / "cache"))
    code, out, _ = run(["warmup", "--backend", "cpu"], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith("C Poseidon2 permutation: skipped: no C compiler ('no-such-compiler-here'")


@pytest.mark.skipif(sys.platform == "darwin", reason="metal opens on macOS")
def test_warmup_on_a_backend_that_cannot_open_is_one_error_line(capsys):
    code, _, err = run(["warmup", "--backend", "metal", "--profile", "p3-whir"], capsys)
    assert code == 1 and one_line(err).startswith("error: ") and "macOS" in err


def test_a_slow_block_announces_once(monkeypatch):
    monkeypatch.setattr(activity, "ANNOUNCE_AFTER_S", 0.05)
    notes: list[str] = []
    previous = activity.set_sink(notes.append)
    try:
        with activity.doing("compiling kernel a", announce="compiling 2 kernels", key="k"):
            assert activity.current() == "compiling kernel a"
            time.sleep(0.3)
        with activity.doing("compiling kernel b", announce="compiling 2 kernels", key="k"):
            time.sleep(0.1)
        with activity.doing("quick", announce="never said", key="q"):
            pass
        with activity.doing("first half", announce="said in the second", key="c"):
            time.sleep(0.03)
        with activity.doing("second half", announce="said in the second", key="c"):
            time.sleep(0.2)
    finally:
        activity.set_sink(previous)
    assert notes == ["note: compiling 2 kernels", "note: said in the second"]
    assert activity.current() == ""


def test_notices_go_to_stderr_once(capsys):
    assert activity.notice("hello", key="x") and not activity.notice("hello again", key="x")
    assert capsys.readouterr().err == "note: hello\n" and activity.said("x")


def test_a_notice_prints_above_the_progress_line():
    import io

    from rich.console import Console

    from whirgpu.cli import progress as pl

    buffer = io.StringIO()
    with pl.progress_line("proving n=20", True, delay=0.0, console=Console(file=buffer, force_terminal=True,
                                                                            width=200)):
        deadline = time.monotonic() + 10
        while "proving n=20" not in buffer.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        activity.notice("compiling WGSL pipelines (first use)", key="test")
    assert "note: compiling WGSL pipelines (first use)" in buffer.getvalue()
    assert activity._sink is None  # the line gave the notices back to stderr
