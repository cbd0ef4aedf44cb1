"""Backend selection (``select_backend``, ``fit_problem``) on this machine and the device report behind
``whirgpu devices`` (the planner's decisions on synthetic limits: tests/test_planner.py).

Expectations are derived from the planner and from what wgpu reports on this machine, so the tests hold on a
machine with a GPU, with only lavapipe (CI), and without wgpu (then the wgpu cases skip, unless
``WHIRGPU_REQUIRE`` names wgpu).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import asdict

import pytest

from whirgpu import Prover
from whirgpu.backends import CPU_FALLBACK, DeviceLimits, fit_problem, select_backend
from whirgpu.devices.report import INTERESTING_FEATURES, LIMIT_KEYS, gather
from whirgpu.errors import BackendUnavailable, DeviceLimitError
from whirgpu.devices.planner import GPU_MIN_VARIABLES
from whirgpu.protocol.params import ProtocolParameters, WhirConfig


def config(n: int, k: int, r: int = 1) -> WhirConfig:
    params = ProtocolParameters.default(num_variables=n, folding_factor=k, starting_log_inv_rate=r)
    return WhirConfig.from_params(params)


def first_misfit(limits: DeviceLimits, budget: bool = True) -> WhirConfig:
    """The smallest configuration (k = 4, rate 1/2) that does not fit ``limits``; skips if the device fits all."""
    for n in range(16, 27):  # n + r - k stays within the two-adicity, 27
        cfg = config(n, 4)
        if fit_problem(limits, cfg, budget=budget):
            return cfg
    pytest.skip(f"{limits.name} fits every configuration up to n = 26")


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("WHIRGPU_BACKEND", "WHIRGPU_ADAPTER", "WHIRGPU_MUL", "WHIRGPU_MAX_GPU_BYTES",
                 "WHIRGPU_MAX_BINDING_BYTES"):
        monkeypatch.delenv(name, raising=False)


def _required(name: str) -> bool:
    return name in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",") if s.strip()}


def _adapter_or_none(impl: str = "wgpu"):
    """The adapter the wgpu (or dawn) backend would open, or None with the reason."""
    from whirgpu.runtime.wgpu_rt import choose_adapter

    try:
        return choose_adapter(impl), None
    except BackendUnavailable as exc:
        return None, str(exc)


def _adapter_or_skip(impl: str):
    found, why = _adapter_or_none(impl)
    if found is None:
        if _required(impl):
            pytest.fail(f"{impl} is required (WHIRGPU_REQUIRE) but unavailable: {why}")
        pytest.skip(f"{impl} unavailable: {why}")
    return found


@pytest.fixture
def adapter():
    return _adapter_or_skip("wgpu")


@pytest.fixture
def dawn_adapter():
    return _adapter_or_skip("dawn")


# ---- select_backend --------------------------------------------------------------------------------------------

def test_auto_on_this_machine():
    found, why = _adapter_or_none()
    choice = select_backend("auto")
    if found is None:
        assert choice.backend.name == "cpu" and choice.reason == f"{why}; {CPU_FALLBACK}"
    elif found.info["adapter_type"] == "CPU":  # e.g. lavapipe: a software rasteriser is not a GPU for auto
        assert choice.backend.name == "cpu"
        assert found.summary in choice.reason and "software rasteriser" in choice.reason
        assert "--backend wgpu" in choice.reason and choice.reason.endswith(CPU_FALLBACK)
    else:
        assert choice.backend.name == "wgpu" and found.summary in choice.reason
    assert "\n" not in choice.reason


def test_wgpu_requested(adapter):
    choice = select_backend("wgpu", config(8, 2))
    assert choice.backend.name == "wgpu"
    assert choice.reason.startswith("requested; ") and adapter.summary in choice.reason
    assert choice.backend.limits().name == adapter.summary


def test_dawn_requested(dawn_adapter):
    choice = select_backend("dawn", config(8, 2))
    assert choice.backend.name == "dawn" and type(choice.backend.rt).__name__ == "DawnRuntime"
    assert choice.reason == f"requested; {dawn_adapter.summary}, emulated multiply"
    limits = choice.backend.limits()
    assert (limits.name, limits.runtime, limits.has_u64) == (dawn_adapter.summary, "dawn", False)


def test_dawn_requested_refuses_a_configuration_over_a_hard_limit(dawn_adapter):
    from whirgpu.runtime.wgpu_rt import DawnRuntime

    limits = DawnRuntime().limits()
    cfg = first_misfit(limits, budget=False)
    with pytest.raises(DeviceLimitError) as info:
        select_backend("dawn", cfg)
    assert str(info.value) == fit_problem(limits, cfg, budget=False)


def test_env_dawn_overrides_auto(dawn_adapter, monkeypatch):
    monkeypatch.setenv("WHIRGPU_BACKEND", "dawn")
    choice = select_backend("auto")  # even a software adapter: the variable asks for dawn
    assert choice.backend.name == "dawn" and choice.reason.startswith("WHIRGPU_BACKEND=dawn; ")


def test_wgpu_requested_refuses_a_configuration_over_a_hard_limit(adapter):
    from whirgpu.backends.gpu import GpuBackend
    from whirgpu.runtime.wgpu_rt import WgpuRuntime

    limits = GpuBackend(WgpuRuntime()).limits()
    cfg = first_misfit(limits, budget=False)
    with pytest.raises(DeviceLimitError) as info:
        select_backend("wgpu", cfg)
    assert str(info.value) == fit_problem(limits, cfg, budget=False)


class _AsHardware:
    """A real adapter that says it is a discrete GPU, to drive auto's fit check on a software adapter."""

    def __init__(self, adapter):
        self._adapter = adapter
        self.info = {**adapter.info, "adapter_type": "DiscreteGPU"}

    def __getattr__(self, name):
        return getattr(self._adapter, name)


def test_auto_checks_the_fit_on_a_gpu(adapter, monkeypatch):
    import whirgpu.runtime.wgpu_rt as wgpu_rt

    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", lambda impl="wgpu": _AsHardware(adapter))
    tiny = config(8, 2)  # below the discrete class's threshold: the numpy reference is expected faster
    choice = select_backend("auto", tiny)
    assert choice.backend.name == "cpu" and choice.reason.startswith("n=8 is below ")
    small = config(GPU_MIN_VARIABLES["discrete"].min_variables, 4)  # at the threshold; selected, never proved
    choice = select_backend("auto", small)
    assert choice.backend.name == "wgpu" and "fits" in choice.reason
    limits = choice.backend.limits()
    big = first_misfit(limits)
    problem = fit_problem(limits, big)
    choice = select_backend("auto", big)
    assert choice.backend.name == "cpu" and choice.reason == f"{problem}; {CPU_FALLBACK}"
    # the Prover hands its configuration over, so auto sees the same problem
    prover = Prover(big.params, backend="auto")
    assert prover.backend.name == "cpu" and prover.backend_reason == choice.reason
    assert Prover(small.params, backend="auto").backend.name == "wgpu"


def test_auto_uses_dawn_when_only_dawn_is_installed(dawn_adapter, monkeypatch):
    import whirgpu.runtime.wgpu_rt as wgpu_rt

    monkeypatch.setitem(sys.modules, "wgpu", None)  # `import wgpu` now raises ImportError; wgpudawn still imports
    asked = []

    def as_hardware(impl="wgpu"):  # a fresh adapter each time: a Dawn adapter opens one device
        asked.append(impl)
        return _AsHardware(wgpu_rt.list_adapters(impl)[0])

    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", as_hardware)
    via = "Dawn (wgpu is not installed, wgpudawn is): "
    choice = select_backend("auto", config(8, 2))  # below every threshold: the numpy reference, no GPU probed
    assert choice.backend.name == "cpu" and choice.reason.startswith("n=8 is below ") and not asked
    choice = select_backend("auto", config(GPU_MIN_VARIABLES["discrete"].min_variables, 4))  # selected, not proved
    assert choice.backend.name == "dawn" and choice.reason.startswith(via + "GPU found: ")
    assert set(asked) == {"dawn"}
    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", lambda impl="wgpu": wgpu_rt.list_adapters(impl)[0])
    if dawn_adapter.info["adapter_type"] == "CPU":  # the real software adapter: the CPU, saying it is Dawn's
        choice = select_backend("auto")
        assert choice.backend.name == "cpu" and choice.reason.startswith(via + "no hardware GPU: ")
        assert "--backend dawn forces it" in choice.reason


def test_auto_falls_back_when_wgpu_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "wgpu", None)  # `import wgpu` now raises ImportError
    monkeypatch.setitem(sys.modules, "wgpudawn", None)  # and so does `import wgpudawn`
    choice = select_backend("auto", config(GPU_MIN_VARIABLES["discrete"].min_variables, 4))  # would take a GPU
    assert choice.backend.name == "cpu"
    assert "wgpu package is not installed" in choice.reason and choice.reason.endswith(CPU_FALLBACK)
    with pytest.raises(BackendUnavailable, match="wgpu package is not installed"):
        select_backend("wgpu")
    with pytest.raises(BackendUnavailable, match=r"wgpudawn package is not installed .*pip install 'wgpudawn>=0\.32,<0\.33'"):
        select_backend("dawn")


def test_auto_falls_back_when_no_adapter(monkeypatch):
    import whirgpu.runtime.wgpu_rt as wgpu_rt

    def none_found(impl="wgpu"):
        raise BackendUnavailable("no Vulkan, Metal or D3D12 adapter found (test)")

    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", none_found)
    choice = select_backend("auto")
    assert choice.backend.name == "cpu"
    assert choice.reason == f"no Vulkan, Metal or D3D12 adapter found (test); {CPU_FALLBACK}"


def test_env_cpu_overrides_auto(monkeypatch):
    monkeypatch.setenv("WHIRGPU_BACKEND", "cpu")
    choice = select_backend("auto")
    assert (choice.backend.name, choice.reason) == ("cpu", "WHIRGPU_BACKEND=cpu")
    monkeypatch.setenv("WHIRGPU_BACKEND", "wgpu")
    assert select_backend("cpu").backend.name == "cpu"  # only auto is overridden


def test_env_wgpu_overrides_auto(monkeypatch):
    found, why = _adapter_or_none()
    monkeypatch.setenv("WHIRGPU_BACKEND", "wgpu")
    if found is None:
        if _required("wgpu"):
            pytest.fail(f"wgpu is required (WHIRGPU_REQUIRE) but unavailable: {why}")
        with pytest.raises(BackendUnavailable):
            select_backend("auto")
        return
    choice = select_backend("auto")  # even a software adapter: the variable asks for wgpu
    assert choice.backend.name == "wgpu" and choice.reason.startswith("WHIRGPU_BACKEND=wgpu; ")


@pytest.mark.parametrize("value", ["bogus", "auto"])
def test_env_must_name_a_backend(value, monkeypatch):
    monkeypatch.setenv("WHIRGPU_BACKEND", value)
    with pytest.raises(BackendUnavailable, match=f"WHIRGPU_BACKEND='{value}' is not a backend"):
        select_backend("auto")


@pytest.mark.skipif(sys.platform == "darwin", reason="checks the refusal off macOS")
def test_env_metal_off_macos_names_macos(monkeypatch):
    monkeypatch.setenv("WHIRGPU_BACKEND", "metal")
    with pytest.raises(BackendUnavailable, match="Metal needs macOS"):
        select_backend("auto")


def test_unknown_name():
    with pytest.raises(BackendUnavailable, match="unknown backend 'quantum'"):
        select_backend("quantum")


# ---- the device report -----------------------------------------------------------------------------------------

def _rows(report: dict, runtime: str = "wgpu") -> list[dict]:
    return [entry for entry in report["adapters"] if entry["runtime"] == runtime]


@pytest.mark.parametrize("impl,module", [("wgpu", "wgpu"), ("dawn", "wgpudawn")])
def test_report_lists_what_each_implementation_enumerates(impl, module):
    import importlib

    report = gather()
    runtimes = [e["runtime"] for e in report["adapters"] if e["api"] != "Metal (MSL)"]
    assert runtimes == ["wgpu"] * runtimes.count("wgpu") + ["dawn"] * runtimes.count("dawn")  # wgpu's, then Dawn's
    report["adapters"] = _rows(report, impl)
    try:
        webgpu = importlib.import_module(module)
    except ImportError:
        assert report["adapters"] == [] and report[f"{impl}_error"]
        return
    enumerated = webgpu.gpu.enumerate_adapters_sync()
    assert [a["name"] for a in report["adapters"]] == [a.summary for a in enumerated]
    for entry, adapter in zip(report["adapters"], enumerated):
        features = set(adapter.features)
        if impl == "dawn":
            assert "shader-int64" not in features and entry["mul"] == "emulated"
            features = {"subgroup" if f == "subgroups" else f for f in features}  # reported as wgpu names it
        assert entry["api"] == adapter.info["backend_type"]
        assert entry["device_type"] == adapter.info["adapter_type"]
        assert entry["used"] == (entry["api"] in ("Vulkan", "Metal", "D3D12"))
        if entry["api"] == "OpenGL":
            assert entry["note"] == "not used (OpenGL)"
        assert entry["limits"]["max_buffer_size"] == adapter.limits["max-buffer-size"]
        assert entry["limits"]["max_storage_binding_size"] == adapter.limits["max-storage-buffer-binding-size"]
        assert set(entry["limits"]) == set(LIMIT_KEYS)
        assert entry["features"] == {f: f in features for f in INTERESTING_FEATURES}
        assert entry["mul"] == ("u64" if "shader-int64" in features else "emulated")
    found, _ = _adapter_or_none(impl)
    selected = [a["name"] for a in report["adapters"] if a["selected"]]
    assert selected == ([found.summary] if found is not None else [])


def test_report_says_what_auto_picks():
    report = gather()
    choice = select_backend("auto")
    assert report["auto"] == {"backend": choice.backend.name, "reason": choice.reason}
    assert report["cpu"]["api"] == "numpy" and report["cpu"]["used"]


def test_report_without_wgpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "wgpu", None)
    report = gather()
    assert _rows(report) == [] and "wgpu package is not installed" in report["wgpu_error"]
    dawn, why = _adapter_or_none("dawn")
    if dawn is not None:  # Dawn opens an adapter all the same, and auto turns to it
        assert report["auto"]["reason"].startswith("Dawn (wgpu is not installed, wgpudawn is): ")
    else:  # wgpudawn imported but no adapter opens (no Vulkan loader, Mesa < 25): the numpy reference
        assert report["auto"]["backend"] == "cpu" and _rows(report, "dawn") == [], (why, report["auto"])
    monkeypatch.setitem(sys.modules, "wgpudawn", None)
    report = gather()
    assert _rows(report) == _rows(report, "dawn") == []
    assert "wgpudawn package is not installed" in report["dawn_error"]
    assert report["auto"]["backend"] == "cpu" and "not installed" in report["auto"]["reason"]


def test_report_with_a_bad_env_still_reports(monkeypatch):
    monkeypatch.setenv("WHIRGPU_BACKEND", "bogus")
    report = gather()
    assert report["auto"]["backend"] is None and "WHIRGPU_BACKEND='bogus'" in report["auto"]["reason"]


def test_report_has_a_metal_row_only_on_macos():
    rows = [entry for entry in gather()["adapters"] if entry["api"] == "Metal (MSL)"]
    assert len(rows) == (1 if sys.platform == "darwin" else 0)


def test_metal_row_from_the_device_summary(monkeypatch):
    import whirgpu.devices.report as devices
    import whirgpu.runtime.metal_rt as metal_rt

    limits = DeviceLimits(name="Apple M3 Max", api="Metal (MSL)", device_type="IntegratedGPU",
                          max_buffer_size=1 << 34, max_storage_binding_size=1 << 34, max_workgroup_storage=32768,
                          max_invocations_per_workgroup=1024, max_workgroups_per_dimension=(1 << 32) - 1,
                          features=("apple9", "mac2", "metal3", "mul-mulhi"))
    summary = {"name": limits.name, "limits": asdict(limits), "mul": "mulhi", "family": ["apple9"],
               "unified_memory": True}
    monkeypatch.setattr(devices.sys, "platform", "darwin")
    monkeypatch.setattr(metal_rt, "metal_device_summary", lambda: (summary, None))
    (row,) = devices.list_metal()
    assert (row["name"], row["api"], row["device_type"], row["used"], row["note"], row["mul"]) == \
        ("Apple M3 Max", "Metal (MSL)", "IntegratedGPU", True, "", "mulhi")
    assert row["limits"] == {key: getattr(limits, key) for key in LIMIT_KEYS}
    assert row["all_features"] == sorted(limits.features) and not row["selected"]
    monkeypatch.setattr(metal_rt, "metal_device_summary", lambda: (None, "no Metal device (test)"))
    (row,) = devices.list_metal()
    assert not row["used"] and row["note"] == "unavailable: no Metal device (test)"
    assert set(row["limits"]) == set(LIMIT_KEYS)


def test_msl_cpu_entry_follows_the_compiler(monkeypatch):
    from whirgpu.devices.report import msl_cpu_entry

    assert msl_cpu_entry()["available"] == (shutil.which(os.environ.get("CXX", "c++")) is not None)
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    entry = msl_cpu_entry()
    assert not entry["available"] and "no-such-compiler-here" in entry["note"] and "C++" in entry["note"]
