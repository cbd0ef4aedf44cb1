"""Shared fixtures: where the Rust reference's golden files come from.

The golden files the tests use ship with the repository, xz-compressed, in ``tests/golden/NAME.xz`` (with the
reference's README), so a fresh clone runs the suite alone. Two optional extra sources are searched too:

1. ``$WHIRGPU_GOLDEN`` (a folder of plain ``NAME`` files), when set: it wins over the shipped copy, so a newer
   golden set can be tried without touching the repository;
2. the shipped copy ``tests/golden/NAME.xz``;
3. ``../shared/golden`` next to the checkout (as in CI), for files the repository does not ship.

A name is read from the first source that has it; ``GOLDEN_PROOFS`` lists the proof files (``n*_f*_r*.json``)
of all three. ``tests/test_golden_files.py`` checks that the shipped copies equal ``../shared/golden``'s where
both exist. A golden file found nowhere fails the test that asks for it rather than skipping silently.

The upstream Plonky3 p3-whir profile's golden files live apart, in ``tests/golden-p3/NAME.xz`` (with their
README and MANIFEST), searched before ``../shared/golden-p3``: ``load_golden_p3`` reads them.
"""

from __future__ import annotations

import atexit
import json
import lzma
import os
import re
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHIPPED_GOLDEN = REPO / "tests" / "golden"
SHARED_GOLDEN = REPO.parent / "shared" / "golden"
SHIPPED_GOLDEN_P3 = REPO / "tests" / "golden-p3"
SHARED_GOLDEN_P3 = REPO.parent / "shared" / "golden-p3"


def golden_sources() -> list[Path]:
    """The folders searched for plain golden files, in order, besides the shipped copies (see above)."""
    env = os.environ.get("WHIRGPU_GOLDEN")
    return [Path(env)] if env else []


def _find(name: str) -> tuple[Path, bool] | None:
    """(path, compressed) of the first source holding ``name``."""
    candidates = [(d / name, False) for d in golden_sources()]
    candidates += [(SHIPPED_GOLDEN / f"{name}.xz", True), (SHARED_GOLDEN / name, False)]
    return next(((path, xz) for path, xz in candidates if path.is_file()), None)


def _golden_names(pattern: str) -> list[str]:
    names = {p.name[:-3] for p in SHIPPED_GOLDEN.glob(f"{pattern}.xz")}
    for d in [*golden_sources(), SHARED_GOLDEN]:
        if d.is_dir():
            names.update(p.name for p in d.glob(pattern))
    return sorted(names)


GOLDEN_PROOFS = _golden_names("n*_f*_r*.json")


@lru_cache(maxsize=None)
def golden_bytes(name: str) -> bytes:
    found = _find(name)
    if found is None:
        pytest.fail(f"golden file {name} not found in {SHIPPED_GOLDEN}, $WHIRGPU_GOLDEN or {SHARED_GOLDEN}")
    path, compressed = found
    return lzma.decompress(path.read_bytes()) if compressed else path.read_bytes()


def golden_text(name: str) -> str:
    return golden_bytes(name).decode()


def load_golden(name: str) -> dict:
    return json.loads(golden_bytes(name))


def golden_p3_names(pattern: str) -> list[str]:
    """The p3-whir golden names matching ``pattern``, shipped or in ../shared/golden-p3."""
    names = {p.name[:-3] for p in SHIPPED_GOLDEN_P3.glob(f"{pattern}.xz")}
    if SHARED_GOLDEN_P3.is_dir():
        names.update(p.name for p in SHARED_GOLDEN_P3.glob(pattern))
    return sorted(names)


@lru_cache(maxsize=None)
def golden_p3_bytes(name: str) -> bytes:
    """A p3-whir golden file: the shipped ``tests/golden-p3/NAME.xz``, else ``../shared/golden-p3/NAME``."""
    shipped, shared = SHIPPED_GOLDEN_P3 / f"{name}.xz", SHARED_GOLDEN_P3 / name
    if shipped.is_file():
        return lzma.decompress(shipped.read_bytes())
    if shared.is_file():
        return shared.read_bytes()
    pytest.fail(f"p3-whir golden file {name} not found in {SHIPPED_GOLDEN_P3} or {SHARED_GOLDEN_P3}")


def load_golden_p3(name: str) -> dict:
    return json.loads(golden_p3_bytes(name))


_unpacked: list[Path] = []


def golden_file(name: str) -> Path:
    """A plain file holding golden ``name`` (for commands that take a path): a shipped copy is decompressed once
    into a temporary folder removed at exit."""
    found = _find(name)
    if found is not None and not found[1]:
        return found[0]
    if not _unpacked:
        _unpacked.append(Path(tempfile.mkdtemp(prefix="whirgpu-golden-")))
        atexit.register(shutil.rmtree, _unpacked[0], True)
    path = _unpacked[0] / name
    if not path.exists():
        path.write_bytes(golden_bytes(name))
    return path


@pytest.fixture(scope="session")
def golden() -> list[str]:
    """The golden proof names (a test that asks for it fails when there are none)."""
    if not GOLDEN_PROOFS:
        pytest.fail(f"no golden proofs found in {SHIPPED_GOLDEN} (nor $WHIRGPU_GOLDEN, {SHARED_GOLDEN})")
    return GOLDEN_PROOFS


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """whirgpu as a user installs it: a wheel of this checkout in a fresh venv, checked (tests/installed.py)."""
    from .installed import install_wheel

    try:
        return install_wheel(tmp_path_factory.mktemp("installed"))
    except RuntimeError as exc:
        pytest.fail(f"installing a wheel of this checkout failed: {exc}")


# ---- the suite's cache folder ------------------------------------------------------------------------------------
# whirgpu keeps what it compiles (msl-cpu kernels, the host permutation, wgpu-native's header parse) in
# $WHIRGPU_CACHE_DIR, else the user's ~/.cache/whirgpu. The suite never writes there: pytest_configure points
# WHIRGPU_CACHE_DIR at a temporary folder for the session (every process the tests start inherits it), and
# pytest_unconfigure removes it and restores the variable.

CACHE_DIR_ENV = "WHIRGPU_CACHE_DIR"
_CACHE_KEY = pytest.StashKey[tuple]()


def user_cache_root() -> Path:
    """The cache folder whirgpu would use for this user without ``WHIRGPU_CACHE_DIR`` (``whirgpu.cache_dir``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base, "whirgpu")


def pytest_configure(config):
    folder = Path(tempfile.mkdtemp(prefix="whirgpu-test-cache-"))
    config.stash[_CACHE_KEY] = (folder, os.environ.get(CACHE_DIR_ENV))
    os.environ[CACHE_DIR_ENV] = str(folder)


def pytest_unconfigure(config):
    folder, before = config.stash.get(_CACHE_KEY, (None, None))
    if folder is None:
        return
    if before is None:
        os.environ.pop(CACHE_DIR_ENV, None)
    else:
        os.environ[CACHE_DIR_ENV] = before
    shutil.rmtree(folder, ignore_errors=True)


# ---- runtimes that cannot run here ------------------------------------------------------------------------------
# A runtime is present when it opens: for wgpu and dawn, when their implementation enumerates an adapter (Dawn
# imported but refusing every adapter, e.g. Mesa 22.3's lavapipe, is absent). An absent runtime skips its tests
# with the reason, or fails them when WHIRGPU_REQUIRE lists it (CI).

REQUIRE_ENV = "WHIRGPU_REQUIRE"


def required(runtime: str) -> bool:
    """Whether ``WHIRGPU_REQUIRE`` (comma-separated) lists ``runtime``."""
    return runtime in {s.strip() for s in os.environ.get(REQUIRE_ENV, "").split(",") if s.strip()}


def unavailable(runtime: str, why: str):
    """Skip the test with ``why``; fail it instead when ``runtime`` is required."""
    if required(runtime):
        pytest.fail(f"{runtime} is required ({REQUIRE_ENV}) but unavailable: {why}")
    pytest.skip(f"{runtime} unavailable: {why}")


def webgpu_adapter(impl: str):
    """The adapter ``--backend impl`` (wgpu or dawn) opens, or ``unavailable(impl, reason)``."""
    from whirgpu.errors import BackendUnavailable
    from whirgpu.runtime.wgpu_rt import choose_adapter

    try:
        return choose_adapter(impl)
    except BackendUnavailable as exc:
        unavailable(impl, str(exc))


# ---- test tiers ------------------------------------------------------------------------------------------------
# The default tier is what a newcomer's `python3 -m pytest -q` runs: every test function, but the big parametrised
# GPU suites (tests/backend/) at a few of their parametrisations each. The exhaustive tier (WHIRGPU_EXHAUSTIVE=1,
# or --exhaustive; CI sets the variable) runs every test. The rule, in `default_tier`:
# - THINNED suites keep, per test function and runtime, PER_RUNTIME instances, chosen greedily so that together
#   they cover as many parameter values as possible (ties: spread over the list, short of its end);
# - in every suite but the SMOKE files, a test function keeps the instances of one WebGPU runtime: the first of
#   `webgpu_order` among its instances', i.e. wgpu-native with the multiply `--backend wgpu` picks on this machine
#   (`auto_wgpu_multiply`: u64 where the adapter has shader-int64, as lavapipe; else emulated), then wgpu-native's
#   other multiply, then Dawn. Every other WebGPU runtime is another compile of the same kernel source (on
#   lavapipe with an empty shader cache, a proof's kernels cost a minute of CPU per runtime and field) for the
#   same bits; choosing the multiply the `--backend wgpu` tests (CLI, API, cold start) use anyway means the
#   suites compile no pipeline those tests do not. The other multiply and Dawn run their SMOKE tests (every field
#   operation, both fields), Dawn also a whole proof (tests/test_cli.py, tests/backend/test_wgpu_impls.py), and
#   the tests that exist only for them; `tests/test_suite_setup.py` checks that every test function keeps an
#   instance, and one with WebGPU instances a WebGPU one;
# - STRESS tests (resource lifetimes over many devices or provers, a minute or more each), and tests marked
#   `exhaustive` themselves, run only exhaustively.
# `-k`, a test id (`file::test`), or `-m exhaustive` (the deselected tests alone) turn the thinning off.

EXHAUSTIVE_ENV = "WHIRGPU_EXHAUSTIVE"
THINNED = ("tests/backend/",)
PER_RUNTIME = 2
SMOKE = ("tests/backend/test_kernels_field.py", "tests/backend/test_wgpu_impls.py")
STRESS = {
    "tests/backend/test_prover_close.py::test_fifty_provers_keep_rss_flat": "50 provers in turn",
    "tests/backend/test_wgpu_impls.py::test_a_process_proving_on_many_dawn_runtimes_survives": "many Dawn devices",
    "tests/backend/test_msl_cpu_runtime.py::test_a_second_runtime_after_wgpu_work_survives": "a second process",
}
WEBGPU_ORDER = ("wgpu-u64", "wgpu", "wgpu-emulated", "dawn-emulated", "dawn")  # where auto picks u64 (lavapipe)
_RUNTIME = re.compile(r"(?<!\w)(wgpu-emulated|wgpu-u64|dawn-emulated|msl-cpu-mulhi|msl-cpu|dawn|wgpu|cpu)(?!\w)")


def exhaustive_requested(config) -> bool:
    """Whether this run is the exhaustive tier: --exhaustive, or WHIRGPU_EXHAUSTIVE set to a true switch."""
    value = os.environ.get(EXHAUSTIVE_ENV, "").strip().lower()
    if value not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        raise pytest.UsageError(f"{EXHAUSTIVE_ENV}={value!r} is not a switch: give 1 (every test) or 0")
    return config.getoption("--exhaustive") or value in ("1", "true", "yes", "on")


def item_runtime(nodeid: str) -> str | None:
    """The GPU runtime an instance runs on, as its id names it (``wgpu-u64``, ``dawn``, ...), or None."""
    params = nodeid.partition("[")[2]
    found = _RUNTIME.search(params)
    return found.group(1) if found else None


def _webgpu(runtime: str | None) -> bool:
    return runtime is not None and runtime.startswith(("wgpu", "dawn"))


def _webgpu_choice(runtimes: set, order: tuple[str, ...]) -> str | None:
    """The one WebGPU runtime a (non-SMOKE) test function keeps in the default tier: the first of ``order``
    among its instances' (None: it has no WebGPU instance)."""
    return next((r for r in order if r in runtimes), next((r for r in sorted(runtimes - {None}) if _webgpu(r)), None))


def _id_parts(item) -> tuple:
    """(position, id) per parameter of an instance but its runtime: what the greedy cover counts (the runtimes
    have their own quota)."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return ()
    parts = getattr(callspec, "_idlist", None)
    if parts is None:  # a pytest without the private id list: the parameter values themselves
        parts = [f"{name}={value!r}" for name, value in sorted(callspec.params.items())]
    return tuple((i, part) for i, part in enumerate(parts) if not _RUNTIME.fullmatch(part))


def auto_wgpu_multiply() -> str:
    """The multiply ``--backend wgpu`` picks here (``WHIRGPU_MUL``, else u64 when the adapter has shader-int64,
    else emulated); emulated when wgpu-native cannot open (its tests skip then)."""
    wanted = (os.environ.get("WHIRGPU_MUL") or "auto").strip().lower()
    if wanted in ("emulated", "u64"):
        return wanted
    try:
        from whirgpu.runtime.wgpu_rt import choose_adapter

        return "u64" if "shader-int64" in choose_adapter("wgpu").features else "emulated"
    except Exception:  # noqa: BLE001 - no wgpu package, no adapter: the wgpu instances skip with the reason
        return "emulated"


def webgpu_order(mul: str) -> tuple[str, ...]:
    """WEBGPU_ORDER with wgpu-native's ``mul`` first: the instances a function keeps use the pipelines the
    tests that open ``--backend wgpu`` compile anyway."""
    first = f"wgpu-{mul}"
    return (first, *(r for r in WEBGPU_ORDER if r != first))


def default_tier(items: list, parts=_id_parts, order: tuple[str, ...] = WEBGPU_ORDER) -> tuple[list, list]:
    """(kept, deselected): the default tier of ``items`` in their order, by the rule above. ``parts(item)`` gives
    an instance's (position, id) pairs; items need ``nodeid``; ``order``: which WebGPU runtime a function keeps
    (the first of its instances' in this order)."""
    groups: dict[str, list] = {}
    for item in items:
        groups.setdefault(item.nodeid.partition("[")[0], []).append(item)
    drop = {id(item) for item in items if _marked(item)}
    for function, members in groups.items():
        if function in STRESS:
            drop.update(id(item) for item in members)
            continue
        runtimes = {item_runtime(item.nodeid) for item in members}
        webgpu = _webgpu_choice(runtimes, order) if not function.startswith(SMOKE) else None
        pool = [item for item in members if id(item) not in drop
                and (webgpu is None or not _webgpu(item_runtime(item.nodeid))
                     or item_runtime(item.nodeid) == webgpu)]
        keep = _cover(pool, parts) if function.startswith(THINNED) else {id(item) for item in pool}
        drop.update(id(item) for item in members if id(item) not in keep)
    kept = [item for item in items if id(item) not in drop]
    return kept, [item for item in items if id(item) in drop]


def _marked(item) -> bool:
    """Whether the test itself is marked ``exhaustive`` (a documented block that needs a GPU, say)."""
    closest = getattr(item, "get_closest_marker", None)
    return closest is not None and closest("exhaustive") is not None


def _cover(pool: list, parts) -> set[int]:
    """Up to PER_RUNTIME instances per runtime of ``pool``: each pick the one adding most uncovered parameter
    values, ties going to the instance nearest the pick's share of the list (pick k of K: position k/K), so the
    picks spread over the sizes without reaching the largest."""
    covered: set = set()
    quota: dict = {}
    chosen: set[int] = set()
    candidates = [(index, item, set(parts(item)), item_runtime(item.nodeid)) for index, item in enumerate(pool)]
    picks = PER_RUNTIME * len({runtime for *_, runtime in candidates})
    for pick in range(picks):
        target = pick * len(pool) / picks
        best, best_key = None, None
        for index, item, values, runtime in candidates:
            if id(item) in chosen or quota.get(runtime, 0) >= PER_RUNTIME:
                continue
            key = (-len(values - covered), abs(index - target), index)
            if best_key is None or key < best_key:
                best, best_key = (item, values, runtime), key
        if best is None:
            break
        item, values, runtime = best
        chosen.add(id(item))
        covered |= values
        quota[runtime] = quota.get(runtime, 0) + 1
    return chosen


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")
    parser.addoption("--exhaustive", action="store_true", default=False,
                     help=f"run every test (as {EXHAUSTIVE_ENV}=1 does): without it, the big parametrised GPU "
                          "suites run a few instances of each test function (tests/conftest.py, docs/TESTING.md)")


def pytest_collection_modifyitems(config, items):
    _select_tier(config, items)
    if config.getoption("--runslow") or "slow" in (config.getoption("-m") or ""):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def _select_tier(config, items) -> None:
    # what tests/test_suite_setup.py checks the tier rule against: the items, and those marked exhaustive themselves
    config.stash[COLLECTED_KEY] = (list(items), {item.nodeid for item in items if _marked(item)})
    if exhaustive_requested(config) or config.getoption("-k") or any("::" in arg for arg in config.args):
        return
    kept, dropped = default_tier(items, order=webgpu_order(auto_wgpu_multiply()))
    for item in dropped:
        item.add_marker(pytest.mark.exhaustive)
    if "exhaustive" in (config.getoption("-m") or ""):
        return  # -m exhaustive selects exactly the instances the default tier leaves out
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
        config.stash[_TIER_KEY] = len(dropped)  # what pytest counts as deselected for the tier, slow ones too


_TIER_KEY = pytest.StashKey[int]()
COLLECTED_KEY = pytest.StashKey[tuple]()  # every item collected, before the tier's selection


def pytest_terminal_summary(terminalreporter, config):
    dropped = config.stash.get(_TIER_KEY, 0)
    if dropped:
        terminalreporter.write_line(f"default tier: {dropped} tests deselected (the GPU suites run a few instances "
                                    f"of each test); {EXHAUSTIVE_ENV}=1 (or --exhaustive) runs every test")
