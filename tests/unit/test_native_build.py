"""The compiled permutation never makes a first proof wait: with an empty cache the first call starts the build in
the background and runs the numpy reference meanwhile, then swaps in the compiled code (race-free: concurrent
callers only ever see one or the other, and both give the same words); a proof made before, during or after the
swap, or without any compiler, is the same bytes. A failed build is said once, not retried until ``warmup``.

The background build is exercised with a stand-in compiler (a shell script that copies the library the real
compiler built once for this session's cache), so these tests do not pay for a compile."""

from __future__ import annotations

import os
import shutil
import stat
import threading
import time

import numpy as np
import pytest

import whirgpu
from whirgpu.api import random_canonical_instance
from whirgpu import activity
from whirgpu.errors import ShaderCompileError
from whirgpu.native import build as native_build, permute as native
from whirgpu.protocol import transcript, verifier
from whirgpu.protocol.parameters import ProtocolParameters
from whirgpu.ref.poseidon2 import permute_ints, permute_lanes
from whirgpu.ref.poseidon2_constants import Poseidon2Constants

P2 = Poseidon2Constants.smallrng(1)
PARAMS = dict(num_variables=8, folding_factor=2, starting_log_inv_rate=1, security_level=32, pow_bits=4)


@pytest.fixture(scope="module")
def real_library():
    """The library the real compiler builds (in the session's usual cache), or skip without a compiler."""
    loaded = native._library()
    if loaded is None:
        pytest.skip("no C compiler here")
    return native._NATIVE.paths()[0]


@pytest.fixture(scope="module")
def compiled_proof(real_library) -> bytes:
    """A small proof (verified) made with the compiled permutation."""
    _clear_callers()
    try:
        return _proof_bytes()
    finally:
        _clear_callers()


def _clear_callers() -> None:
    transcript.single_permutation.cache_clear()
    verifier.fast_permute_lanes.cache_clear()


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """An empty cache folder and a fresh library object, the callers' caches cleared before and after, notices
    captured in a list."""
    monkeypatch.setenv("WHIRGPU_CACHE_DIR", str(tmp_path / "cache"))
    library = native_build.NativeLibrary("host-p2", native.SOURCE, native._NATIVE.flags, native._CDEF,
                                         native._NATIVE.what, native._NATIVE.fallback)
    monkeypatch.setattr(native, "_NATIVE", library)
    monkeypatch.setattr(activity, "_said", set())
    notes: list[str] = []
    previous = activity.set_sink(notes.append)
    _clear_callers()
    yield library, notes
    library.wait_for_background(60)
    activity.set_sink(previous)
    _clear_callers()


def _fake_compiler(tmp_path, library_path=None, delay=0.3, fail=False) -> str:
    """A stand-in for cc: after ``delay`` seconds it copies ``library_path`` to its -o argument (or fails)."""
    script = tmp_path / "fakecc"
    action = 'echo "fakecc: boom" >&2; exit 1' if fail else f'cp "{library_path}" "$out"'
    script.write_text(f'#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = "-o" ] && out="$2"; shift; done\n'
                      f"sleep {delay}\n{action}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def _proof_bytes() -> bytes:
    params = ProtocolParameters.default(**PARAMS)
    poly, points = random_canonical_instance(8, 3)
    proof = whirgpu.Prover(params, backend="cpu").prove(poly, points)
    whirgpu.verify(proof)  # the verifier's single and lane permutations take the same path
    return whirgpu.dump(proof, "binary")


def _states(count: int) -> np.ndarray:
    return np.random.default_rng(count).integers(0, P2.params.field.P, size=(16, count)).astype(np.uint64)


def test_background_build_swaps_in_the_compiled_code(fresh, tmp_path, monkeypatch, real_library, compiled_proof):
    library, notes = fresh
    monkeypatch.setenv("CC", _fake_compiler(tmp_path, real_library, delay=1.0))
    single = native.native_permute(P2)
    lanes = native.native_permute_lanes(P2)
    assert isinstance(single, native._Swap) and not single.compiled  # nobody waited for the compiler
    assert isinstance(lanes, native._Swap) and not lanes.compiled
    state = list(range(1, 17))
    assert single(list(state)) == permute_ints(list(state), P2)
    states = _states(9)
    kept = states.copy()
    assert np.array_equal(lanes(states), permute_lanes(states.copy(), P2)) and np.array_equal(states, kept)
    assert _proof_bytes() == compiled_proof  # made on the numpy path while the build runs
    assert library.wait_for_background(60)
    assert single.compiled and lanes.compiled
    assert single(list(state)) == permute_ints(list(state), P2)
    assert np.array_equal(lanes(states), permute_lanes(states.copy(), P2)) and np.array_equal(states, kept)
    target, lock, failed = library.paths()
    assert target.is_file() and not lock.exists() and not failed.exists()
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no source or partial output left
    _clear_callers()
    assert not isinstance(native.native_permute(P2), native._Swap)  # loaded now: the compiled function itself
    assert _proof_bytes() == compiled_proof
    assert notes == []  # a build in the background is not a wait: nothing to say


def test_without_a_compiler_the_numpy_path_gives_the_same_proof(fresh, monkeypatch, compiled_proof):
    library, notes = fresh
    monkeypatch.setenv("CC", "no-such-compiler-here")
    assert native.native_permute(P2) is None and native.native_permute_lanes(P2) is None
    assert _proof_bytes() == compiled_proof
    assert len(notes) == 1 and "no C compiler ('no-such-compiler-here'" in notes[0]
    assert "numpy" in notes[0] and "whirgpu warmup" in notes[0] and notes[0].startswith("note: ")
    assert not library.paths()[0].exists()


def test_the_cli_says_it_once_on_stderr(tmp_path, monkeypatch, capsys):
    from whirgpu.cli import commands as cli

    monkeypatch.setattr(activity, "_said", set())
    monkeypatch.setenv("WHIRGPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "no-such-compiler-here")
    monkeypatch.chdir(tmp_path)
    _clear_callers()
    try:
        assert cli.main(["prove", "-n", "8", "-k", "2", "-r", "1", "--security", "32", "--pow-bits", "4",
                         "--seed", "1", "--backend", "cpu", "-o", "p.whir"]) == 0
        assert cli.main(["verify", "p.whir"]) == 0
    finally:
        _clear_callers()
    err = capsys.readouterr().err
    assert err.count("note: no C compiler") == 1 and len(err.splitlines()) == 1, err


def test_a_failed_build_is_said_once_and_not_retried_until_warmup(fresh, tmp_path, monkeypatch):
    library, notes = fresh
    monkeypatch.setenv("CC", _fake_compiler(tmp_path, delay=0, fail=True))
    swap = native.native_permute(P2)
    assert isinstance(swap, native._Swap)
    assert library.wait_for_background(60) and not swap.compiled
    assert swap(list(range(16))) == permute_ints(list(range(16)), P2)
    target, lock, failed = library.paths()
    assert failed.is_file() and "boom" in failed.read_text() and not lock.exists() and not target.exists()
    _clear_callers()
    assert native.native_permute(P2) is None and native.native_permute(P2) is None  # no second build
    assert len(notes) == 1 and "failed to build" in notes[0] and "fakecc: boom" in notes[0]
    with pytest.raises(ShaderCompileError, match="failed to build.*boom.*log: "):
        native.build_now(retry_failed=True)


def test_the_swap_is_race_free():
    """Threads call while the compiled function is installed: every result is right, none is lost."""
    calls = {"reference": 0, "compiled": 0}
    reached = set()  # the threads one of whose own calls reached the compiled function
    lock = threading.Lock()

    def reference(x):
        with lock:
            calls["reference"] += 1
        return x * 3

    def compiled(x):
        with lock:
            calls["compiled"] += 1
            reached.add(threading.get_ident())
        return x + x + x

    swap = native._Swap(reference, lambda loaded: compiled)
    wrong, done = [], []
    started = threading.Barrier(5)
    deadline = time.monotonic() + 30.0

    def hammer(offset):
        # Each thread calls before the install and keeps calling until its own call reaches the compiled
        # function, so the swap happens with every thread mid-stream, however fast the machine is.
        started.wait()
        i = 0
        while time.monotonic() < deadline:
            if swap(offset + i) != 3 * (offset + i):
                wrong.append(i)
            i += 1
            # the thread's own call, not another's counted meanwhile (that made a loaded machine see 1 of 4)
            if i >= 1000 and threading.get_ident() in reached:
                break
        done.append(i)

    threads = [threading.Thread(target=hammer, args=(k * 10**6,)) for k in range(4)]
    for thread in threads:
        thread.start()
    started.wait()
    while calls["reference"] < 4000:  # every thread is running on the reference
        time.sleep(0.001)
    swap._install(object())
    for thread in threads:
        thread.join()
    assert wrong == [] and calls["reference"] + calls["compiled"] == sum(done)
    assert len(done) == 4 and swap.compiled and len(reached) == 4 and calls["compiled"] >= 4


def test_concurrent_first_calls_start_one_build(fresh, tmp_path, monkeypatch, real_library):
    """Many threads asking at once get working functions and leave one build, one library."""
    library, _ = fresh
    monkeypatch.setenv("CC", _fake_compiler(tmp_path, real_library, delay=0.5))
    results, barrier = [], threading.Barrier(8)

    def first_call():
        barrier.wait()
        results.append(native.native_permute(P2)(list(range(16))))

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [permute_ints(list(range(16)), P2)] * 8
    assert library.wait_for_background(60) and library.paths()[0].is_file()


def test_a_build_lock_is_left_to_its_holder_unless_stale(tmp_path):
    lock = tmp_path / "x.building"
    assert native_build.NativeLibrary._claim(lock) and lock.read_text().strip() == str(os.getpid())
    assert not native_build.NativeLibrary._claim(lock)  # another build holds it
    old = time.time() - native_build.STALE_LOCK_S - 5
    os.utime(lock, (old, old))
    assert native_build.NativeLibrary._claim(lock)  # a build that died long ago: taken over


def test_build_now_reports_cached_then_waits_for_nothing(real_library):
    how, path = native.build_now()
    assert how == "cached" and path == real_library
    assert shutil.which(native._NATIVE.compiler_name()) is not None
