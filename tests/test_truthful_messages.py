"""Every flag and message tells the truth (issue 37, item 4): a flag that does not apply is refused, not ignored;
an empty output path is refused; install hints work from a clone; the progress line shows in both profiles and
in ``warmup`` (something at least every 2 s); Dawn's absence is one line naming its reason, with nothing of
Dawn's own on stderr; an unusable ``WHIRGPU_CACHE_DIR`` is refused at start-up; ``verify_many(processes=2)``
without a ``__main__`` guard is one whirgpu line."""

from __future__ import annotations

import re
from contextlib import contextmanager
from pathlib import Path

import pytest

from whirgpu.cli import progress as pl

from .test_cli import SMALL, one_line, run

P3_SMALL = ["--profile", "p3-whir", "-n", "8", "--seed", "0", "--backend", "cpu"]


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize("argv", [["prove", *SMALL, "--seed", "0", "--backend", "cpu"], ["prove", *P3_SMALL]],
                         ids=["whir-p3-metal", "p3-whir"])
@pytest.mark.parametrize("flag", ["--out", "-o", "--statement-out"])
def test_an_empty_output_path_is_refused(argv, flag, tmp_path, capsys):
    named = "--out" if flag == "-o" else flag
    default = f" (without --out: {'proof.json' if 'p3-whir' in argv else 'proof.whir'})" if named == "--out" else ""
    for value in ("", " "):
        code, out, err = run([*argv, flag, value], capsys)
        assert (code, out) == (2, "")
        assert one_line(err) == f"error: {named} {value!r} names no file: give a path{default}"
    assert list(tmp_path.iterdir()) == []  # nothing written, not ./proof.whir


@pytest.mark.parametrize("fmt", ["whir-p3-json", "binary"])
def test_format_is_refused_with_the_p3_whir_profile(fmt, tmp_path, capsys):
    code, out, err = run(["prove", *P3_SMALL, "--format", fmt], capsys)
    assert (code, out) == (1, "") and one_line(err) == (f"error: --format {fmt} does not apply to --profile p3-whir "
                                                        "(its proof is a p3-whir-oracle/v1 JSON document)")
    assert list(tmp_path.iterdir()) == []


def test_openings_is_refused_without_the_p3_whir_profile(tmp_path, capsys):
    code, out, err = run(["prove", *SMALL, "--seed", "0", "--backend", "cpu", "--openings", "2"], capsys)
    assert (code, out) == (1, "") and one_line(err).startswith("error: --openings 2 needs --profile p3-whir")
    assert list(tmp_path.iterdir()) == []


def test_the_defaults_still_apply(tmp_path, capsys):
    """Without --format / --openings each profile writes what it always did."""
    assert run(["prove", *SMALL, "--seed", "0", "--backend", "cpu"], capsys)[0] == 0
    assert run(["prove", *P3_SMALL], capsys)[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proof.json", "proof.whir"]


def test_the_progress_line_is_asked_for_in_both_profiles(monkeypatch, capsys):
    """`prove` wraps the proof in the progress line (shown past 2 s, on a terminal) whatever the profile."""
    labels: list[tuple[str, bool]] = []

    @contextmanager
    def recording(label, enabled, *rest, **options):
        labels.append((label, enabled))
        yield

    monkeypatch.setattr(pl, "wanted", lambda as_json: not as_json)
    monkeypatch.setattr(pl, "progress_line", recording)
    assert run(["prove", *SMALL, "--seed", "0", "--backend", "cpu"], capsys)[0] == 0
    assert run(["prove", *P3_SMALL], capsys)[0] == 0
    assert run(["prove", *P3_SMALL, "--json", "--out", "again.json"], capsys)[0] == 0
    assert labels == [("proving n=8 fold=2 on cpu", True), ("proving p3-whir koalabear n=8 fold=5 on cpu", True),
                      ("proving p3-whir koalabear n=8 fold=5 on cpu", False)]


# ---- install hints ----------------------------------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1]
HINT_FILES = [*sorted((PACKAGE / "whirgpu").rglob("*.py")), *sorted((PACKAGE / "docs").rglob("*.md")),
              *sorted((PACKAGE / "docs").rglob("*.py")), PACKAGE / "README.md"]


def test_no_install_hint_names_the_unpublished_package():
    """whirgpu is not on the package index: ``pip install 'whirgpu[dawn]'`` fails, so no hint may say it (an
    extra from a clone is ``'.[dawn]'``; the package itself, ``wgpudawn``, installs from anywhere)."""
    hint = re.compile(r"pip install\s+(-e\s+)?['\"]?whirgpu\[")
    found = [f"{path.relative_to(PACKAGE)}:{number}" for path in HINT_FILES
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if hint.search(line) and "once it is published" not in line]  # README's note on the future
    assert found == []


def test_the_install_hints_name_the_extras_requirements():
    """Each hint installs exactly what pyproject.toml's extra holds (the same version range)."""
    tomllib = pytest.importorskip("tomllib")
    from whirgpu.runtime.wgpu_rt.adapters import IMPLS

    extras = tomllib.loads((PACKAGE / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["dawn"] == ["wgpudawn>=0.32,<0.33"] and extras["plot"] == ["matplotlib>=3.7"]
    assert extras["ray"] == ["ray>=2.9"]
    assert f"pip install '{extras['dawn'][0]}'" in IMPLS["dawn"].install
    assert "pip install 'wgpu>=0.32,<0.33'" in IMPLS["wgpu"].install
    texts = {path: path.read_text() for path in HINT_FILES}
    assert any(f"pip install '{extras['plot'][0]}'" in t for p, t in texts.items() if p.name == "plot.py")
    assert any(f"pip install '{extras['ray'][0]}'" in t for p, t in texts.items() if p.name == "ray.py")


# ---- WHIRGPU_CACHE_DIR ------------------------------------------------------------------------------------------

@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("value, words", [("/proc/nope", "cannot create it in /proc ("), ("/proc", "is not writable (")])
def test_an_unusable_cache_dir_is_refused_at_start_up(value, words, monkeypatch, capsys):
    """/proc passes every permission check for root, yet nothing can be created in it: the start-up check tries."""
    monkeypatch.setenv("WHIRGPU_CACHE_DIR", value)
    code, out, err = run(["params", "-n", "10", "-k", "2", "-r", "1"], capsys)
    assert (code, out) == (1, "")
    assert one_line(err).startswith(f"error: WHIRGPU_CACHE_DIR={value!r}") and words in err


def test_the_cache_dir_check_leaves_nothing_behind(tmp_path):
    from whirgpu import cache_dir

    cache_dir.check(str(tmp_path))
    cache_dir.check(str(tmp_path / "a" / "b"))
    assert list(tmp_path.iterdir()) == []


# ---- verify_many(processes=) from a script without a __main__ guard ---------------------------------------------

UNGUARDED = """import whirgpu
print(whirgpu.verify_many([{proof!r}, {proof!r}], processes=2))
"""
GUARDED = """import whirgpu


def main():
    print([v.ok for v in whirgpu.verify_many([{proof!r}, {proof!r}], processes=2)])


if __name__ == "__main__":
    main()
"""


def _run_script(path: Path, text: str):
    import os
    import subprocess
    import sys

    from .conftest import REPO

    path.write_text(text)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300, env=env,
                          cwd=path.parent)


def test_verify_many_in_processes_without_a_main_guard_says_what_to_do(tmp_path, capsys):
    """Spawned workers re-run the script's top level: without the guard the caller gets one whirgpu line naming
    the script, the line and the two ways out (not multiprocessing's RuntimeError from every worker); with it,
    the verdicts."""
    proof = str(tmp_path / "p.whir")
    assert run(["prove", *SMALL, "--seed", "0", "--backend", "cpu", "--out", proof], capsys)[0] == 0
    script = tmp_path / "unguarded.py"
    done = _run_script(script, UNGUARDED.format(proof=proof))
    assert done.returncode == 1 and done.stdout == "" and "RuntimeError" not in done.stderr
    assert done.stderr.splitlines()[-1] == (
        f"whirgpu.errors.ConfigError: verify_many(processes=2) runs at the top level of {script} (line 2), which "
        'every spawned worker process re-runs: put the call under `if __name__ == "__main__":`, or pass '
        "processes=1")
    done = _run_script(tmp_path / "guarded.py", GUARDED.format(proof=proof))
    assert (done.returncode, done.stdout) == (0, "[True, True]\n"), done.stderr


# ---- Dawn's absence: one line with its reason, nothing of Dawn's own on stderr ----------------------------------

LOADER_WARNING = (b"Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or "
                  b"directory\n    at operator() (/tmp/dawn-build/src/src/dawn/native/vulkan/BackendVk.cpp:368)\n\n")
INDEXING_WARNING = (b"Warning: Vulkan shaderUniform*ArrayDynamicIndexing required.\n - While initializing adapter "
                    b"(backend=BackendType::Vulkan)\n    at InitializeImpl (/tmp/dawn-build/src/src/dawn/native/vulkan/"
                    b"PhysicalDeviceVk.cpp:257)\n\n")
LIMIT_WARNING = (b"Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit "
                 b"dynamic offset allocation limit.\n")
LAVAPIPE_22 = "Mesa 22.3.6 (LLVM 15.0.6) (llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan)"


class _Adapter:
    def __init__(self, api: str):
        self.info = {"backend_type": api, "adapter_type": "CPU"}


def _fake_dawn(monkeypatch, written: bytes, adapters=()):
    """A ``wgpudawn`` whose enumeration writes ``written`` to file descriptor 2, as Dawn's C++ does."""
    import os
    import sys
    import types

    def enumerate_adapters_sync():
        os.write(2, written)
        return list(adapters)

    module = types.ModuleType("wgpudawn")
    module.gpu = types.SimpleNamespace(enumerate_adapters_sync=enumerate_adapters_sync)
    monkeypatch.setitem(sys.modules, "wgpudawn", module)


@pytest.mark.parametrize("written, drivers, words", [
    (LIMIT_WARNING + LOADER_WARNING, (),
     "no adapter (the Vulkan loader did not load: libvulkan.so.1: cannot open shared object file: No such file or "
     "directory)"),
    (INDEXING_WARNING, (LAVAPIPE_22,),
     "no adapter (Mesa 22.3.6 lavapipe lacks shaderUniform*ArrayDynamicIndexing, which Dawn requires; lavapipe has "
     "it from Mesa 25)"),
    (INDEXING_WARNING, (),
     "no adapter (the Vulkan driver lacks shaderUniform*ArrayDynamicIndexing, which Dawn requires; lavapipe has it "
     "from Mesa 25)"),
    (b"Warning: something new\n  at x.cpp:1\n", (), "no adapter (Dawn: something new)"),
], ids=["loader", "mesa-22.3", "unnamed-driver", "other"])
def test_dawns_absence_is_one_reason_and_its_warnings_stay_off_stderr(written, drivers, words, monkeypatch,
                                                                      capfd):
    from whirgpu.devices.report import list_webgpu_adapters

    _fake_dawn(monkeypatch, written)
    assert list_webgpu_adapters("dawn", drivers) == ([], words)
    assert capfd.readouterr() == ("", "")


def test_dawns_other_lines_still_reach_stderr_when_it_has_adapters(monkeypatch, capfd):
    from whirgpu.runtime.wgpu_rt.adapters import enumerate_explained

    _fake_dawn(monkeypatch, b"kept line\n" + LIMIT_WARNING + b"Warning: a new one\n", [_Adapter("Vulkan")])
    adapters, why = enumerate_explained("dawn")
    assert len(adapters) == 1 and why == ""
    assert capfd.readouterr() == ("", "kept line\nWarning: a new one\n")


def test_devices_names_dawns_absence_in_one_line(monkeypatch, capfd):
    import sys

    monkeypatch.setitem(sys.modules, "wgpu", None)  # only the fake Dawn to list
    _fake_dawn(monkeypatch, LOADER_WARNING)
    from whirgpu.cli import commands as cli

    assert cli.main(["devices"]) == 0
    out, err = capfd.readouterr()
    assert err == "" and "Warning" not in out
    assert [line for line in out.splitlines() if line.startswith("dawn")] == [
        "dawn: no adapter (the Vulkan loader did not load: libvulkan.so.1: cannot open shared object file: No such "
        "file or directory)"]


def _can_hide_the_vulkan_loader() -> bool:
    import glob
    import os
    import shutil

    return (os.geteuid() == 0 and shutil.which("unshare") is not None
            and bool(glob.glob("/usr/lib/x86_64-linux-gnu/libvulkan.so*")))


@pytest.mark.skipif(not _can_hide_the_vulkan_loader(), reason="needs root, unshare and a Vulkan loader to hide")
def test_devices_without_a_vulkan_loader_for_real(tmp_path):
    """The Vulkan loader hidden (bind-mounted over by /dev/null in a private mount namespace): each implementation
    says so in one line, and Dawn's own 'Couldn't load Vulkan' never reaches stderr."""
    import os
    import subprocess
    import sys

    from .conftest import REPO

    hide = "for f in /usr/lib/x86_64-linux-gnu/libvulkan.so*; do mount --bind /dev/null \"$f\"; done; "
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(["unshare", "-m", "sh", "-c", hide + f"exec {sys.executable} -m whirgpu devices"],
                          capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    if done.returncode != 0 and "unshare" in done.stderr:
        pytest.skip(f"unshare refused: {done.stderr.strip()}")
    assert done.returncode == 0 and done.stderr == ""
    heads = [line for line in done.stdout.splitlines() if line.startswith(("wgpu:", "dawn:"))]
    assert heads and all(": no adapter (the Vulkan loader did not load: " in line for line in heads
                         if "not installed" not in line)


# ---- warmup: something at least every 2 s ------------------------------------------------------------------------

class _Terminal:
    """A terminal stand-in that notes when each write came."""

    def __init__(self, times: list):
        self.times, self.text = times, []

    def write(self, text: str) -> int:
        if text:
            import time

            self.times.append(time.monotonic())
            self.text.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        raise OSError("not a real terminal")


def test_warmup_shows_something_at_least_every_2_s(monkeypatch, capsys):
    """A part slowed to 3.5 s (the real ones take up to minutes on a cold lavapipe): on a terminal the progress line
    is drawn while it runs, so no two writes (nor the start and the first write) are more than 2 s apart."""
    import sys
    import time

    from whirgpu.cli import warmup

    def slow_permutation(part):
        time.sleep(3.5)
        part("C Poseidon2 permutation", "slowed for the test", 3.5)

    monkeypatch.setattr(warmup, "_permutation", slow_permutation)
    monkeypatch.setenv("TERM", "xterm")
    times: list[float] = []
    out, err = _Terminal(times), _Terminal(times)
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    start = time.monotonic()
    assert run(["warmup", "--backend", "cpu"], capsys)[0] == 0
    end = time.monotonic()
    marks = [start, *sorted(times), end]
    gaps = [later - earlier for earlier, later in zip(marks, marks[1:])]
    assert max(gaps) <= 2.0, f"{max(gaps):.2f} s without a write"
    written = "".join(out.text + err.text)
    assert "warmup --backend cpu" in written and "building the C Poseidon2 permutation" in written
    assert "C Poseidon2 permutation: slowed for the test" in written and "warmup done in " in written
