"""The suite's own rules (tests/conftest.py, docs/TESTING.md): its cache folder is a temporary one, never the
user's; a runtime is present only when an adapter opens; the default tier's summary line counts what pytest
deselects; the default tier runs every test function."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from whirgpu import cache_dir

from .conftest import (CACHE_DIR_ENV, COLLECTED_KEY, EXHAUSTIVE_ENV, REPO, STRESS, default_tier, item_runtime,
                       user_cache_root, webgpu_adapter)


def test_the_suite_caches_in_a_temporary_folder_not_the_users():
    """In process and in every process a test starts (they inherit the variable)."""
    ours = Path(os.environ[CACHE_DIR_ENV]).resolve()
    assert ours != user_cache_root().resolve() and user_cache_root().resolve() not in ours.parents
    assert Path(tempfile.gettempdir()).resolve() in ours.parents, ours
    assert cache_dir.root().resolve() == ours
    done = subprocess.run([sys.executable, "-c", "from whirgpu import cache_dir; print(cache_dir.root())"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == ours


def test_a_webgpu_runtime_without_an_adapter_is_absent(monkeypatch):
    """Dawn that imports but opens no adapter (no Vulkan loader, Mesa 22.3's lavapipe) skips with the reason, or
    fails when WHIRGPU_REQUIRE lists it."""
    from whirgpu.runtime.wgpu_rt import adapters

    monkeypatch.setattr(adapters, "list_explained", lambda impl="wgpu": ([], "no adapter (as on Mesa 22.3)"))
    monkeypatch.setenv("WHIRGPU_REQUIRE", "wgpu,msl-cpu")
    with pytest.raises(pytest.skip.Exception, match="dawn unavailable: Dawn found no Vulkan"):
        webgpu_adapter("dawn")
    monkeypatch.setenv("WHIRGPU_REQUIRE", "wgpu, dawn")
    with pytest.raises(pytest.fail.Exception, match=r"dawn is required \(WHIRGPU_REQUIRE\) but unavailable"):
        webgpu_adapter("dawn")


def test_the_tier_line_counts_what_pytest_deselects():
    """A file whose deselected instances include slow ones: the line's count is pytest's own."""
    env = {k: v for k, v in os.environ.items() if k != EXHAUSTIVE_ENV}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "tests/backend/test_device_transcript.py"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    ours = re.search(r"default tier: (\d+) tests deselected", done.stdout)
    theirs = re.search(r"\((\d+) deselected\)", done.stdout)
    assert ours and theirs, done.stdout[-2000:]
    assert int(ours.group(1)) == int(theirs.group(1)) > 0


def _webgpu(item) -> bool:
    return (item_runtime(item.nodeid) or "").startswith(("wgpu", "dawn"))


def test_the_default_tier_runs_every_test_function(request):
    """The tier rule (tests/conftest.py) applied to everything this session collected: every test function keeps
    an instance, and one that has WebGPU instances keeps a WebGPU one (so every kernel's differential test runs on
    a WebGPU runtime), but for the STRESS tests and the tests marked ``exhaustive`` themselves, each listed."""
    items, marked = request.config.stash[COLLECTED_KEY]
    kept, _ = default_tier(items)
    functions: dict[str, list] = {}
    for item in items:
        functions.setdefault(item.nodeid.partition("[")[0], []).append(item)
    kept_ids = {id(item) for item in kept}
    exempt = set(STRESS) | {name for name, members in functions.items()
                            if all(item.nodeid in marked for item in members)}
    missing = [name for name, members in functions.items()
               if name not in exempt and not any(id(item) in kept_ids for item in members)]
    assert missing == [], f"test functions with no instance in the default tier: {missing}"
    no_webgpu = [name for name, members in functions.items()
                 if name not in exempt and any(_webgpu(item) for item in members)
                 and not any(id(item) in kept_ids and _webgpu(item) for item in members)]
    assert no_webgpu == [], f"test functions with WebGPU instances but none in the default tier: {no_webgpu}"
    assert request.node.nodeid.partition("[")[0] in functions  # the check saw this very session's items
