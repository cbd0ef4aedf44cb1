"""GPU runtime fixtures. An unavailable runtime skips its tests with the reason, unless it is listed in
``WHIRGPU_REQUIRE`` (comma-separated, e.g. ``wgpu,msl-cpu``), which turns the skip into a failure (CI sets it)."""

from __future__ import annotations

import os

import pytest

from whirgpu.errors import BackendUnavailable

# (runtime name, multiply variant): WGSL through wgpu-native with both multiplies, through Dawn with the emulated
# one (Dawn has no shader-int64), and the MSL twins on the CPU with Metal's native mulhi
RUNTIMES = [("wgpu", "emulated"), ("wgpu", "u64"), ("dawn", "emulated"), ("msl-cpu", "mulhi")]


def _required(name: str) -> bool:
    return name in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",") if s.strip()}


def open_runtime(name: str, mul: str | None, **limits):
    """A runtime, or a skip with the reason (a failure when ``name`` is required). ``limits`` lower the device
    limits (max_groups_per_dim, max_binding_bytes). ``mul=None``: the multiply the runtime picks by itself (for
    wgpu-native, u64 where the adapter has shader-int64), whose pipelines the default tier compiles anyway."""
    try:
        if name == "wgpu":
            from whirgpu.runtime.wgpu_rt import WgpuRuntime

            return WgpuRuntime(mul=mul, **limits)
        if name == "dawn":
            from whirgpu.runtime.wgpu_rt import DawnRuntime

            return DawnRuntime(mul=mul, **limits)
        if name == "msl-cpu":
            from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime

            return MslCpuRuntime(mul=mul, **limits)
        raise ValueError(f"unknown runtime {name}")
    except BackendUnavailable as exc:
        if _required(name):
            pytest.fail(f"{name} is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"{name} unavailable: {exc}")


@pytest.fixture(scope="module", params=RUNTIMES, ids=[f"{name}-{mul}" for name, mul in RUNTIMES])
def gpu_runtime(request):
    """Every runtime behind the shared kernel set, with the per-dimension workgroup limit lowered to 7 so that
    small launches already take the 2-D grid path. One per test module: Dawn on lavapipe keeps a memory mapping
    for every bind group its device ever created (about 38,600 after test_gpu_backend alone) and crashes at
    vm.max_map_count (65,530), so a session-long Dawn device cannot serve the whole suite."""
    name, mul = request.param
    return open_runtime(name, mul, max_groups_per_dim=7)
