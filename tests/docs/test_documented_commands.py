"""Every command the README and docs/*.md show runs as written (docs/TESTING.md, "The documentation test").

What runs, and how:
- every command of a ```sh, ```bash or ```console block, through bash, in a temporary folder per page (the blocks
  of a page share it, in order: a ``prove ... --out p.whir`` before ``verify p.whir`` works; the folder links
  ``docs`` to the repository's, so ``python3 docs/examples/...`` resolves). Nothing is rewritten: the commands run
  in a fresh venv holding a wheel of this checkout (the ``installed`` fixture, tests/installed.py), its bin first
  on PATH and no PYTHONPATH, so ``whirgpu`` is the installed console script and ``python3`` imports the installed
  package, as for a user who ran the install line. The exit code must be 0,
  or what the output comment after the command says (``# reject: ...`` and ``# error: ...``: 1; ``(exit N)`` at
  its end: N), and the output's first word (stdout's, else stderr's) must be the comment's first word.
- install steps (``pip install``, ``python3 -m pip install``, ``apt-get install``, ``git clone``, joined to a
  command by ``&&`` or alone) are not run: installing is not this test's business, and the checkout is already
  installed. A pip step is checked instead: it installs this checkout (``.``) or ``whirgpu``, with extras that
  pyproject.toml defines; an apt step names packages.
- every ```python block, as a script in the page's folder, by the venv's python; every docs/examples/*.py is run
  by a documented
  command (so each runs once, with the small arguments the docs give it).
- a block after ``<!-- needs: RUNTIME -->`` runs only in the exhaustive tier (its first compile on a software
  GPU takes minutes), and is skipped when that runtime cannot run here, unless WHIRGPU_REQUIRE lists it; a block
  after ``<!-- not run: REASON -->`` never runs, and those exemptions must be exactly ``NOT_RUN``.
- lines of blocks without a language that start with ``whirgpu `` (usage listings: long benchmarks, other
  machines) are parsed by the command line's own parser: an option or value it does not know fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from .documented import REPO, SHELL, Block, blocks, commands, pages

NOT_RUN = {  # (page, reason): every block the documentation test does not run
    ("README.md", "it is the test suite itself"),
    ("docs/PERFORMANCE.md", "needs a GPU"),  # the pytest-benchmark suites at n = 20 and 22, minutes on a CPU
}
TIMEOUT_S = 600

_RUNNABLE = [block for page in pages() for block in blocks(page)
             if (block.lang in SHELL or block.lang == "python") and not (block.note and block.note[0] == "not run")]


def _param(block: Block):
    marks = [pytest.mark.exhaustive] if block.note and block.note[0] == "needs" else []
    return pytest.param(block, id=block.name, marks=marks)


class _Folders:
    """One temporary folder per page, how many of the page's runnable blocks have run in it, and the venv they run
    in."""

    def __init__(self, root: Path, installed):
        self.root, self.done, self.installed = root, {}, installed

    def folder(self, page: Path) -> Path:
        folder = self.root / page.stem
        if not folder.exists():
            folder.mkdir()
            (folder / "docs").symlink_to(REPO / "docs")
        return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory, installed):
    return _Folders(tmp_path_factory.mktemp("documented"), installed)


def _env(installed) -> dict:
    env = installed.env()
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _required(runtime: str) -> bool:
    return runtime in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",")}


def _run_block(block: Block, folder: Path, installed) -> None:
    if block.lang == "python":
        script = folder / f"block_{block.line}.py"
        script.write_text(block.text)
        done = subprocess.run([str(installed.python), script.name], cwd=folder, env=_env(installed),
                              capture_output=True, text=True, timeout=TIMEOUT_S)
        if done.returncode != 0 and block.note and block.note[0] == "needs" and "BackendUnavailable" in done.stderr:
            if not _required(block.note[1]):
                pytest.skip(f"{block.name} needs {block.note[1]}: {done.stderr.strip().splitlines()[-1]}")
        assert done.returncode == 0, f"{block.name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        return
    for command in commands(block):
        for step in command.install_steps:
            _check_install(step, block)
        if not command.run_steps:
            continue
        line = " && ".join(command.run_steps)
        done = subprocess.run(["bash", "-c", line], cwd=folder, env=_env(installed), capture_output=True,
                              text=True, timeout=TIMEOUT_S)
        where = f"{block.name}: `{command.text}`"
        assert done.returncode == command.expected_exit(), (
            f"{where} exited {done.returncode}, expected {command.expected_exit()}:\n{done.stdout[-2000:]}\n"
            f"{done.stderr[-3000:]}")
        word = command.expected_first_word()
        if word is not None:
            output = done.stdout if done.stdout.strip() else done.stderr
            got = output.split()[0] if output.split() else ""
            assert got == word, f"{where} printed {output[:300]!r}, expected it to start with {word!r}"


def _extras() -> set[str]:
    text = (REPO / "pyproject.toml").read_text()
    section = text.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return set(re.findall(r"^(\w+)\s*=", section, flags=re.M))


def _check_install(step: str, block: Block) -> None:
    words = shlex.split(step, comments=True)
    if words[0] == "sudo":
        words = words[1:]
    where = f"{block.name}: `{step}`"
    if words[0] in ("apt-get", "apt"):
        assert words[1] == "install" and all(re.fullmatch(r"-\S+|[a-z0-9][a-z0-9.+-]*", w) for w in words[2:]), where
        return
    if words[0] == "git":
        return
    args = words[words.index("install") + 1:]
    targets = [a for a in args if not a.startswith("-")]
    assert targets, where
    for target in targets:
        found = re.fullmatch(r"(\.|whirgpu)(?:\[([\w,]+)\])?", target)
        assert found, f"{where}: {target!r} is neither this checkout nor whirgpu"
        unknown = set((found.group(2) or "").split(",")) - {""} - _extras()
        assert not unknown, f"{where}: extras {sorted(unknown)} are not in pyproject.toml"


@pytest.mark.parametrize("block", [_param(b) for b in _RUNNABLE])
def test_documented_block_runs(block: Block, folders: _Folders):
    """The block runs as written, after the page's earlier blocks (run here first when they were not selected)."""
    folder = folders.folder(block.page)
    mine = [b for b in _RUNNABLE if b.page == block.page and not (b.note and b.note[0] == "needs")]
    done = folders.done.setdefault(block.page, set())
    for earlier in mine:
        if earlier.line >= block.line:
            break
        if earlier.line not in done:
            _run_block(earlier, folder, folders.installed)
            done.add(earlier.line)
    _run_block(block, folder, folders.installed)
    done.add(block.line)


def test_not_run_blocks_are_the_listed_exemptions():
    found = {(str(b.page.relative_to(REPO)), b.note[1]) for page in pages() for b in blocks(page)
             if b.note and b.note[0] == "not run"}
    assert found == NOT_RUN


def test_every_annotation_is_known_and_precedes_a_runnable_block():
    for page in pages():
        for block in blocks(page):
            if block.note:
                assert block.lang in (*SHELL, "python"), f"{block.name}: an annotation on a {block.lang!r} block"
                assert block.note[0] == "not run" or block.note[1] in ("wgpu", "dawn", "metal", "msl-cpu"), \
                    block.name
        notes = re.findall(r"<!--\s*([\w ]+):", page.read_text())
        assert set(notes) <= {"not run", "needs"}, (page, notes)


def test_every_example_is_run_by_a_documented_command():
    run = " ".join(c.text for b in _RUNNABLE if b.lang in SHELL for c in commands(b))
    for example in sorted((REPO / "docs" / "examples").glob("*.py")):
        assert f"docs/examples/{example.name}" in run, f"no documented command runs {example.name}"


def test_usage_listings_parse():
    """Lines starting with ``whirgpu `` in blocks without a language parse with the CLI's own parser."""
    from whirgpu.cli.commands import _build_parser

    parser = _build_parser()
    checked = 0
    for page in pages():
        for block in blocks(page):
            if block.lang != "":
                continue
            for line in block.text.splitlines():
                if not line.startswith("whirgpu "):
                    continue
                argv = shlex.split(line, comments=True)[1:]
                try:
                    parser.parse_args(argv)
                except SystemExit as exc:
                    pytest.fail(f"{block.name}: `{line.strip()}` does not parse (exit {exc.code})")
                checked += 1
    assert checked > 0


def test_shell_commands_are_found():
    """The parser of shell blocks finds the README's two commands and an output comment with its exit code."""
    readme = [c for b in blocks(REPO / "README.md") if b.lang in SHELL for c in commands(b)]
    assert any("whirgpu prove" in c.text and c.install_steps for c in readme)
    texts = "\n".join(c.text for c in readme)
    assert 'python3 -m pip install -e ".[test]" && python3 -m pytest -q' in texts
    block = Block(REPO / "README.md", "sh", "whirgpu verify a.whir  # trailing prose\n# reject: no\n#   more\n"
                  "whirgpu verify b \\\n  --x 1\n# error: gone (exit 2)\n\n# prose\nwhirgpu devices\n", 1, None)
    found = commands(block)
    assert [c.text for c in found] == ["whirgpu verify a.whir  # trailing prose", "whirgpu verify b --x 1",
                                       "whirgpu devices"]
    assert [c.expected_exit() for c in found] == [1, 2, 0]
    assert [c.expected_first_word() for c in found] == ["reject:", "error:", None]


def test_commands_run_the_installed_script_of_this_checkout(installed, tmp_path):
    """In the documented commands' environment ``whirgpu`` and ``python3`` are the venv's, and the package they
    load is the wheel of this checkout (tests/installed.py checks its modules), not the checkout itself."""
    done = subprocess.run(["bash", "-c", "command -v whirgpu; command -v python3; "
                           "python3 -c 'import whirgpu; print(whirgpu.__file__)'"],
                          cwd=tmp_path, env=_env(installed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    script, python, package = done.stdout.split()
    assert (script, python) == (str(installed.bin / "whirgpu"), str(installed.bin / "python3"))
    assert installed.venv in Path(package).parents and REPO not in Path(package).resolve().parents
