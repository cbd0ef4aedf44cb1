"""The README is a front door: short, its two commands first, the test command the one CI runs, every page of docs/
reachable from it, and every link of the documentation resolving. (Its commands and examples run in
tests/docs/test_documented_commands.py.)"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
TEST_COMMAND = 'python3 -m pip install -e ".[test]" && python3 -m pytest -q'


def _text(path: Path) -> str:
    return path.read_text()


def _flat(path: Path) -> str:
    return " ".join(_text(path).split())


def test_the_readme_is_short_and_its_two_commands_come_first():
    lines = _text(README).splitlines()
    assert len(lines) <= 300, len(lines)
    head = "\n".join(lines[:60])
    assert re.search(r"^python3 -m pip install \. && whirgpu prove .* && whirgpu verify \S+$", head, flags=re.M)
    assert f"\n{TEST_COMMAND}\n" in head


def test_ci_runs_exactly_the_readme_test_command_in_the_exhaustive_tier():
    commands = [line for line in _text(README).splitlines() if "pytest" in line and line.startswith("python3 -m pip")]
    assert commands == [TEST_COMMAND]
    ci = [line.strip() for line in _text(REPO / ".ci" / "run").splitlines()]
    assert ci[-1] == TEST_COMMAND
    assert "export WHIRGPU_EXHAUSTIVE=1" in " ".join(ci)


def test_the_readme_says_what_the_tests_take_and_how_to_run_everything():
    text = _flat(README)
    assert "WHIRGPU_EXHAUSTIVE=1" in text and "--exhaustive" in text
    assert re.search(r"default tier takes about \d+ minutes", text), "the default tier's measured time"


def test_the_p3_whir_profile_names_its_upstream_and_what_it_does_not_speak():
    text = _flat(README)
    assert "5dc50e51" in text and "0.7.0-rc" in text
    assert "#2080" in text and "#2089" in text and "does not speak that transcript yet" in text
    assert "whir-p3-metal" in text and "https://github.com/privacy-ethereum/whir-p3-metal" in text


def test_every_docs_page_is_reachable_from_the_readme():
    text = _text(README)
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f"(docs/{page.name})" in text, page.name
    assert "(docs/examples/)" in text


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def test_every_relative_link_resolves():
    for page in [README, *sorted((REPO / "docs").glob("*.md"))]:
        text = re.sub(r"```.*?```", "", _text(page), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            assert resolved.exists(), f"{page.name}: {target}"
            if anchor:
                headings = re.findall(r"^#+ (.*)$", _text(resolved), flags=re.M)
                assert anchor in {_slug(h) for h in headings}, f"{page.name}: {target}"


def test_verify_time_agrees_with_performance_md():
    """The API page states n = 20's verify time once, as docs/PERFORMANCE.md last measured it."""
    text = _flat(REPO / "docs" / "API.md")
    claims = {int(ms) for sentence in re.split(r"(?<=\.) ", text) if "erif" in sentence and "n = 20" in sentence
              for ms in re.findall(r"about (\d+) ms", sentence)}
    performance = _flat(REPO / "docs" / "PERFORMANCE.md")
    measured = re.search(r"n = 20 (\d+(?:\.\d+)?) ms", performance)
    assert measured and claims == {round(float(measured.group(1)))}, (claims, measured and measured.group(0))


def test_the_docs_do_not_say_dawn_cannot_be_profiled():
    text = " ".join(_flat(page) for page in [README, *sorted((REPO / "docs").glob("*.md"))])
    assert "cannot profile Dawn" not in text and "--kernels --backends dawn" in text
