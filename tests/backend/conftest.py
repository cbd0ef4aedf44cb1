"""GPU runtime fixtures. An unavailable runtime skips its tests with the reason, unless it is listed in
``WHIRGPU_REQUIRE`` (comma-separated, e.g. ``wgpu``), which turns the skip into a failure (CI sets it)."""

from __future__ import annotations

import os

import pytest

from whirgpu.errors import BackendUnavailable


def _required(name: str) -> bool:
    return name in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",") if s.strip()}


@pytest.fixture(scope="session", params=["emulated", "u64"])
def wgpu_runtime(request):
    """A wgpu runtime per multiply variant, with the per-dimension workgroup limit lowered to 7 so that
    small launches already take the 2-D grid path."""
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    try:
        return WgpuRuntime(mul=request.param, max_groups_per_dim=7)
    except BackendUnavailable as exc:
        if _required("wgpu"):
            pytest.fail(f"wgpu is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
        pytest.skip(f"wgpu unavailable: {exc}")
