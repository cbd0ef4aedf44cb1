"""pytest-benchmark suites that compare whirgpu's backends side by side: ``pytest benchmarks/ --benchmark-only``.

Backends (the ``backend`` fixture's ids):

- ``cpu``: the numpy reference (``CpuBackend``); its results are the correctness reference of every other row.
- ``wgsl-emulated`` / ``wgsl-u64``: the WGSL kernels through wgpu on the adapter ``WHIRGPU_ADAPTER`` names (else
  the best one), with the emulated or the native 64-bit multiply. A software adapter (Mesa lavapipe/llvmpipe)
  counts, and its rows say so in ``extra_info`` and in the backend summary printed after the tables.
- ``dawn``: the same WGSL kernels through Dawn (the ``wgpudawn`` package: Chrome's WebGPU engine, Tint compiling
  the WGSL) on the same choice of adapter, with the emulated multiply (Dawn has no shader-int64).
- ``msl``: the hand-written MSL kernels through Metal (macOS only).
- ``msl-cpu``: the MSL kernels compiled as C++ on the CPU, a slow verification runtime: opt in with ``--msl-cpu``
  (or ``WHIRGPU_BENCH_MSL_CPU=1``).

A backend that cannot run here is skipped with its reason (``-rs`` lists them; the summary after the tables
repeats them once per backend); another backend never stands in for it.

Every benchmark times one call of its primitive including the wait for the device (the result read back, or
``runtime.wait()``); inputs are prepared outside the timed function, the first call (pipeline compilation) is
untimed, and the number of rounds is chosen so a benchmark takes about ``--benchmark-max-time`` seconds (at least
``--benchmark-min-rounds``). After timing, the result is compared once with the cpu backend's on the same input
(``--no-bench-check`` skips that, e.g. at sizes where the numpy reference is slow).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

from whirgpu.backends.base import Backend
from whirgpu.bench.steady import warm_up
from whirgpu.errors import BackendUnavailable, DeviceLimitError, DeviceOutOfMemory

BACKEND_IDS = ("cpu", "wgsl-emulated", "wgsl-u64", "dawn", "msl", "msl-cpu")
DEFAULT_SIZES = (12, 16)
DEFAULT_GRIND_BITS = (8, 12)
DEFAULT_FOLDS = (4,)
DEFAULT_RATES = (1,)
MAX_ROUNDS = 1000
MSL_CPU_ENV = "WHIRGPU_BENCH_MSL_CPU"


# -- options -----------------------------------------------------------------------------------------------------
def _int_list(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.replace(" ", "").split(",") if v)
    except ValueError:
        raise pytest.UsageError(f"expected comma-separated integers, got {text!r}") from None
    if not values:
        raise pytest.UsageError(f"expected comma-separated integers, got {text!r}")
    return values


def pytest_addoption(parser):
    group = parser.getgroup("whirgpu benchmarks")
    group.addoption("--msl-cpu", action="store_true", default=False,
                    help=f"also run the msl-cpu rows (the MSL kernels as C++ on the CPU; slow). Env: {MSL_CPU_ENV}=1")
    group.addoption("--bench-sizes", metavar="N,N,...", default=None,
                    help="log2 table sizes (primitives) and num_variables (proofs); default "
                         + ",".join(map(str, DEFAULT_SIZES)))
    group.addoption("--bench-folds", metavar="K,K,...", default=None,
                    help="folding factors of the proof benchmarks; default " + ",".join(map(str, DEFAULT_FOLDS)))
    group.addoption("--bench-rates", metavar="R,R,...", default=None,
                    help="log2 inverse rates of the proof benchmarks; default " + ",".join(map(str, DEFAULT_RATES)))
    group.addoption("--bench-grind-bits", metavar="B,B,...", default=None,
                    help="proof-of-work bits of the grind benchmarks; default "
                         + ",".join(map(str, DEFAULT_GRIND_BITS)))
    group.addoption("--no-bench-check", action="store_true", default=False,
                    help="skip comparing each result with the cpu backend's (the numpy reference is slow at 2^22+)")


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("benchmark"):
        raise pytest.UsageError("benchmarks/ needs pytest-benchmark: pip install -e \".[bench]\"")
    config.addinivalue_line("markers", "grind_bits: the benchmark's size parameter is --bench-grind-bits")


def _option_list(config, name: str, default: tuple[int, ...]) -> tuple[int, ...]:
    value = config.getoption(name)
    return _int_list(value) if value else default


def pytest_generate_tests(metafunc):
    """Every benchmark takes ``size`` (so ``--benchmark-group-by=param:size`` works across the suites): log2 of
    the table for primitives, num_variables for proofs, and the proof-of-work bits for ``grind`` (a test
    marked ``grind_bits``). Proofs also take ``fold`` and ``rate``."""
    config = metafunc.config
    if "size" in metafunc.fixturenames:
        if metafunc.definition.get_closest_marker("grind_bits"):
            bits = _option_list(config, "bench_grind_bits", DEFAULT_GRIND_BITS)
            metafunc.parametrize("size", bits, ids=[f"{b}bits" for b in bits])
        else:
            sizes = _option_list(config, "bench_sizes", DEFAULT_SIZES)
            metafunc.parametrize("size", sizes, ids=[f"n{n}" for n in sizes])
    if "fold" in metafunc.fixturenames:
        folds = _option_list(config, "bench_folds", DEFAULT_FOLDS)
        metafunc.parametrize("fold", folds, ids=[f"f{k}" for k in folds])
    if "rate" in metafunc.fixturenames:
        rates = _option_list(config, "bench_rates", DEFAULT_RATES)
        metafunc.parametrize("rate", rates, ids=[f"r{r}" for r in rates])


# -- backends ----------------------------------------------------------------------------------------------------
@dataclass
class BenchBackend:
    """One row kind of the tables: a ready backend and what it runs on (``info`` goes into extra_info)."""

    id: str
    backend: Backend
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def is_reference(self) -> bool:
        return self.id == "cpu"

    def sync(self) -> None:
        """Wait until the device has finished everything submitted (no-op on the host backend)."""
        runtime = getattr(self.backend, "rt", None)
        if runtime is not None:
            runtime.wait()


_OPENED: dict[str, BenchBackend] = {}
_SKIPPED: dict[str, str] = {}


def _msl_cpu_opted_in(config) -> bool:
    return bool(config.getoption("msl_cpu")) or os.environ.get(MSL_CPU_ENV, "") not in ("", "0")


def _kind(backend_id: str, limits) -> str:
    if backend_id == "cpu":
        return "the correctness reference of every other row"
    if backend_id == "msl-cpu":
        return "MSL compiled as C++ on the CPU (verification runtime, not a GPU timing)"
    if limits.device_type == "CPU":
        return f"software {limits.api} (lavapipe/llvmpipe on the CPU, not a GPU timing)"
    return f"{limits.device_type} GPU"


def _open(backend_id: str, config) -> Backend:
    """The backend behind ``backend_id``, or BackendUnavailable with the reason it cannot run here."""
    if backend_id == "cpu":
        from whirgpu.backends.cpu import CpuBackend

        return CpuBackend()
    from whirgpu.backends.gpu import GpuBackend

    if backend_id.startswith("wgsl-"):
        from whirgpu.runtime.wgpu_rt import WgpuRuntime

        return GpuBackend(WgpuRuntime(mul=backend_id.removeprefix("wgsl-")))
    if backend_id == "dawn":
        from whirgpu.runtime.wgpu_rt import DawnRuntime

        return GpuBackend(DawnRuntime(mul="emulated"))
    if backend_id == "msl":
        if sys.platform != "darwin":
            raise BackendUnavailable(f"Metal needs macOS (this is {sys.platform})")
        try:
            from whirgpu.runtime.metal_rt import MetalRuntime
        except ImportError as exc:
            raise BackendUnavailable(f"the Metal runtime cannot be imported: {exc}") from None
        return GpuBackend(MetalRuntime(mul="mulhi"))
    if backend_id == "msl-cpu":
        if not _msl_cpu_opted_in(config):
            raise BackendUnavailable(f"slow verification runtime (MSL as C++ on the CPU); opt in with --msl-cpu "
                                     f"or {MSL_CPU_ENV}=1")
        from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime

        return GpuBackend(MslCpuRuntime(mul="mulhi"))
    raise ValueError(f"unknown backend id {backend_id!r}")


def open_bench_backend(backend_id: str, config) -> BenchBackend:
    """The session's ``BenchBackend`` for ``backend_id``, opened once; skips (with the reason) when unavailable."""
    if backend_id in _SKIPPED:
        pytest.skip(_SKIPPED[backend_id])
    if backend_id not in _OPENED:
        try:
            backend = _open(backend_id, config)
        except BackendUnavailable as exc:
            _SKIPPED[backend_id] = f"{backend_id}: {exc}"
            pytest.skip(_SKIPPED[backend_id])
        limits = backend.limits()
        runtime = getattr(backend, "rt", None)
        _OPENED[backend_id] = BenchBackend(backend_id, backend, {
            "backend": backend_id,
            "device": limits.name,
            "device_type": limits.device_type,
            "api": limits.api,
            "kind": _kind(backend_id, limits),
            "software": backend_id == "cpu" or limits.device_type == "CPU",
            "mul": getattr(runtime, "mul", None) or "numpy",
            "storage": getattr(backend, "storage", None) or "host",  # the GPU backend's storage policy
            "unified_memory": limits.unified_memory,
        })
    return _OPENED[backend_id]


@pytest.fixture(scope="session", params=BACKEND_IDS)
def backend(request) -> BenchBackend:
    """Each backend id in turn; an unavailable one skips its rows with the reason."""
    return open_bench_backend(request.param, request.config)


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    if not _OPENED and not _SKIPPED:
        return
    terminalreporter.section("whirgpu backends")
    for backend_id in BACKEND_IDS:
        if backend_id in _OPENED:
            info = _OPENED[backend_id].info
            how = "" if backend_id == "cpu" else f", {info['mul']} multiply, {info['storage']} storage"
            terminalreporter.write_line(f"{backend_id:14} {info['device']}{how}: {info['kind']}")
        elif backend_id in _SKIPPED:
            terminalreporter.write_line(f"{backend_id:14} skipped: {_SKIPPED[backend_id].split(': ', 1)[1]}")


# -- timing and the correctness guard ---------------------------------------------------------------------------
def _digest(arrays) -> tuple:
    """A compact fingerprint of a result (shapes and a hash of the words), so references cost no memory."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    h = hashlib.sha256()
    for a in arrays:
        h.update(str(a.shape).encode())
        h.update(a.astype(np.uint32, copy=False).tobytes())
    return tuple(a.shape for a in arrays), h.hexdigest()


class References:
    """The cpu backend's results, per input (``key``): filled by the cpu rows, or computed on demand."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._digests: dict[tuple, tuple] = {}

    def check(self, bb: BenchBackend, key: tuple, got, compute: Callable[[], Any]) -> None:
        """``got`` and ``compute()`` are tuples of host arrays (or bytes); fail unless they are equal word for
        word. The cpu row's result is the reference itself."""
        if not self.enabled:
            return
        got = _as_arrays(got)
        if bb.is_reference:
            self._digests.setdefault(key, _digest(got))
            return
        if key not in self._digests:
            self._digests[key] = _digest(_as_arrays(compute()))
        if _digest(got) != self._digests[key]:
            want = _as_arrays(compute())  # the failure path: recompute to say where they differ
            for i, (g, w) in enumerate(zip(got, want)):
                np.testing.assert_array_equal(g, w, err_msg=f"{bb.id} {key}: output {i} differs from the cpu "
                                                            f"backend's (a wrong kernel?)")
            raise AssertionError(f"{bb.id} {key}: result differs from the cpu backend's")


def _as_arrays(values) -> tuple:
    return tuple(np.frombuffer(v, np.uint8) if isinstance(v, bytes) else np.asarray(v) for v in values)


@pytest.fixture(scope="session")
def references(request) -> References:
    return References(not request.config.getoption("no_bench_check"))


class Measure:
    """Runs one benchmark: untimed warm-up, rounds sized to --benchmark-max-time, then the timed rounds."""

    def __init__(self, benchmark, config):
        self.benchmark = benchmark
        self.budget = float(config.getoption("benchmark_max_time"))
        self.min_rounds = int(config.getoption("benchmark_min_rounds"))

    def warm_proofs(self, bb: BenchBackend, prove: Callable[[], Any]) -> None:
        """Untimed ``prove()`` calls until ``bb``'s backend has replayed the shape's recorded launches, then one
        more (``whirgpu.bench.steady.warm_up``; one on a backend that does not replay), so the timed rounds are
        the steady state; ``extra_info["steady"]`` says whether one was replayed (null: no replay there)."""
        def once(i: int, total: int | None) -> float:
            start = time.perf_counter()
            prove()
            return time.perf_counter() - start

        self.benchmark.extra_info["steady"] = warm_up(bb.backend, once, 1).steady

    def __call__(self, bb: BenchBackend, group: str, fn: Callable, *, make_args: Callable[[], tuple] | None = None,
                 release: Callable[[Any], None] | None = None, extra: dict | None = None):
        """Time ``fn(*make_args())`` followed by ``bb.sync()``; ``make_args`` runs untimed before each round
        and ``release`` (untimed) frees each round's output before the next. Returns the last round's output."""
        self.benchmark.group = group
        self.benchmark.extra_info.update(bb.info)
        self.benchmark.extra_info.update(extra or {})
        outputs: list = []

        def setup():
            while outputs:
                out = outputs.pop()
                if release is not None:
                    release(out)
            return (make_args() if make_args else ()), {}

        def target(*args):
            out = fn(*args)
            bb.sync()
            outputs.append(out)
            return out

        def once() -> float:
            args, _ = setup()
            start = time.perf_counter()
            target(*args)
            return time.perf_counter() - start

        try:
            seconds = once()  # compiles pipelines, fills the buffer pool
            if seconds < self.budget / 10:
                seconds = once()  # a warm estimate
        except (DeviceLimitError, DeviceOutOfMemory) as exc:
            pytest.skip(f"{bb.id}: {exc}")
        rounds = max(self.min_rounds, min(MAX_ROUNDS, int(self.budget / max(seconds, 1e-9))))
        result = self.benchmark.pedantic(target, setup=setup, rounds=rounds, iterations=1)
        outputs.clear()  # the caller owns (and releases) the last output
        return result


@pytest.fixture
def measure(benchmark, request) -> Measure:
    return Measure(benchmark, request.config)

