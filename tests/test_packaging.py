"""What a Python package is expected to ship: both license texts (MIT OR Apache-2.0) in the repository, the sdist
and the wheel; ``py.typed``; a changelog in Keep a Changelog form. The archives are built with hatchling when it
is importable here (pip builds them in an isolated environment otherwise)."""

from __future__ import annotations

import re
import tarfile
import zipfile

import pytest

from .conftest import REPO

LICENSES = ("LICENSE-MIT", "LICENSE-APACHE")


def test_license_files_and_declaration():
    mit = (REPO / "LICENSE-MIT").read_text()
    apache = (REPO / "LICENSE-APACHE").read_text()
    assert "Copyright (c) the whirgpu developers" in mit and "Permission is hereby granted" in mit
    assert "Apache License" in apache and "Version 2.0, January 2004" in apache
    assert "Copyright the whirgpu developers" in apache
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'license = "MIT OR Apache-2.0"' in pyproject
    assert 'license-files = ["LICENSE-MIT", "LICENSE-APACHE"]' in pyproject


def test_typed_marker():
    assert (REPO / "whirgpu" / "py.typed").is_file()


def test_changelog_keeps_a_changelog():
    text = (REPO / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n") and "Keep a Changelog" in text
    assert "## [Unreleased]" in text
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", text, flags=re.M)
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(rf'^version = "{re.escape(versions[0])}"$', pyproject, flags=re.M), versions
    sections = set(re.findall(r"^### (\w+)$", text, flags=re.M))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, sections


def test_archives_carry_the_licenses_and_the_marker(tmp_path, monkeypatch):
    build = pytest.importorskip("hatchling.build", reason="hatchling is not installed here")
    monkeypatch.chdir(REPO)
    wheel = tmp_path / build.build_wheel(str(tmp_path))
    sdist = tmp_path / build.build_sdist(str(tmp_path))
    names = zipfile.ZipFile(wheel).namelist()
    assert "whirgpu/py.typed" in names
    for name in LICENSES:
        assert any(n.endswith(f".dist-info/licenses/{name}") for n in names), name
    metadata = next(zipfile.ZipFile(wheel).read(n) for n in names if n.endswith(".dist-info/METADATA")).decode()
    assert "License-Expression: MIT OR Apache-2.0" in metadata
    with tarfile.open(sdist) as archive:
        members = {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}
    assert {*LICENSES, "CHANGELOG.md", "whirgpu/py.typed"} <= members
