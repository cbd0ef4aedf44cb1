"""Progress on long work: a transient line on a terminal only (never with --json, never into a pipe), shown once
the work has run past its delay, with the activity runtimes report; and a Ctrl-C during an msl-cpu compile
kills the compiler's whole process group (no orphaned cc1plus)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from whirgpu import activity

from whirgpu.cli import commands as cli
from whirgpu.cli import progress as pl

from .conftest import REPO


def _console(buffer):
    from rich.console import Console

    return Console(file=buffer, force_terminal=True, width=120)


def test_the_line_shows_after_its_delay_with_the_activity():
    buffer = io.StringIO()
    with pl.progress_line("proving n=20", True, delay=0.0, console=_console(buffer)):
        with activity.doing("compiling kernel sumcheck (msl-cpu)"):
            deadline = time.monotonic() + 10
            while "compiling kernel sumcheck" not in buffer.getvalue() and time.monotonic() < deadline:
                time.sleep(0.05)
    assert "proving n=20" in buffer.getvalue() and "compiling kernel sumcheck (msl-cpu)" in buffer.getvalue()
    assert activity.current() == ""


def test_quick_work_shows_nothing():
    buffer = io.StringIO()
    with pl.progress_line("proving", True, delay=30.0, console=_console(buffer)):
        pass
    assert buffer.getvalue() == ""
    with pl.progress_line("proving", False, delay=0.0, console=_console(buffer)):
        time.sleep(0.2)
    assert buffer.getvalue() == ""


def test_wanted_only_on_a_terminal_and_never_for_json(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(sys, "stderr", Tty())
    assert pl.wanted(False) and not pl.wanted(True)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert not pl.wanted(False)


def test_activity_notes_nest():
    with activity.doing("outer"):
        with activity.doing("inner"):
            assert activity.current() == "inner"
        assert activity.current() == "outer"
    assert activity.current() == ""


def test_prove_asks_for_the_line_only_without_json(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    asked = []
    monkeypatch.setattr(pl, "wanted", lambda as_json: asked.append(as_json) or False)
    small = ["-n", "8", "-k", "2", "-r", "1", "--security", "32", "--pow-bits", "5", "--seed", "0", "--backend", "cpu"]
    assert cli.main(["prove", *small]) == 0
    assert cli.main(["prove", *small, "--json"]) == 0
    assert asked == [False, True]
    capsys.readouterr()


FAKE_CXX = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fake c++ 1.0"; exit 0; fi
sleep 300 &
echo $! > "$FAKE_CXX_CHILD"
wait
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has already died
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs /proc to see the compiler's children")
def test_ctrl_c_during_a_compile_kills_the_compilers_children(tmp_path):
    """A fake compiler that starts a child (as g++ starts cc1plus) and waits; SIGINT to the Python process in
    the middle of the compile must leave no such child running."""
    cxx = tmp_path / "fake-cxx"
    cxx.write_text(FAKE_CXX)
    cxx.chmod(0o755)
    marker = tmp_path / "child.pid"
    # The child takes SIGINT as a terminal delivers it, whatever signal state this test process hands down.
    script = textwrap.dedent("""
        import signal
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from whirgpu.runtime.msl_cpu_rt import build
        try:
            build("int x;", "probe", None)
        except KeyboardInterrupt:
            raise SystemExit(130)
    """)
    env = {**os.environ, "CXX": str(cxx), "FAKE_CXX_CHILD": str(marker), "WHIRGPU_CACHE_DIR": str(tmp_path / "c"),
           "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)
    child = None
    try:
        deadline = time.monotonic() + 60
        while not (marker.exists() and marker.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        child = int(marker.read_text())
        assert _alive(child)
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            with open(f"/proc/{proc.pid}/status") as status:  # what the interpreter was doing, for the log
                state = [line.strip() for line in status if line.startswith(("State", "Threads", "Sig", "Shd"))]
            raise AssertionError(f"the interrupted process did not exit within 60 s: {state}") from None
        assert code == 130
        deadline = time.monotonic() + 10
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(child), "the compiler's child outlived the interrupt"
    finally:
        if proc.poll() is None:
            proc.kill()
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)


def test_notes_of_threads_leave_nothing_behind():
    """Two threads whose blocks overlap (entered A, B; left A, B) leave no note (a stack of one reference left B's
    outer, A, behind)."""
    import threading

    entered, leave_a = threading.Event(), threading.Event()

    def first():
        with activity.doing("A"):
            entered.set()
            leave_a.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    entered.wait(5)
    with activity.doing("B"):
        assert activity.current() == "B"
        leave_a.set()
        thread.join(5)
        assert activity.current() == "B"
    assert activity.current() == ""


def test_a_prover_phase_is_the_current_activity():
    """A progress line shows the phase the prover is in (``PhaseTimer.phase`` reports it to ``activity``)."""
    from whirgpu import activity
    from whirgpu.protocol.prover import PhaseTimer

    timer = PhaseTimer()
    with timer.phase("sumcheck"):
        assert activity.current() == "sumcheck"
        with timer.phase("merkle"):
            assert activity.current() == "merkle"
        assert activity.current() == "sumcheck"
    assert activity.current() == "" and set(timer.seconds) == {"sumcheck", "merkle"}
