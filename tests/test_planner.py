"""The device planner: device classes, budgets, decisions and reasons on synthetic limits; backend selection
refusing before it allocates; ``whirgpu devices --plan``.

Whether the memory plan bounds what a proof really allocates is tested in tests/backend/test_planner_memory.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

import whirgpu.backends as backends
from whirgpu.backends import CPU_FALLBACK, DeviceLimits, fit_problem, select_backend
from whirgpu.backends.base import StorageMode
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.memory import plan_memory, sized
from whirgpu.runtime.upload import UploadPlan
from whirgpu.cli.commands import main
from whirgpu.errors import BackendUnavailable, ConfigError, DeviceLimitError
from whirgpu.cli.plan import PlanTarget
from whirgpu.devices.overrides import parse_bytes
from whirgpu.devices.planner import GPU_MIN_VARIABLES, MAX_GPU_BYTES_ENV, device_class, plan_device
from whirgpu.protocol.params import ProtocolParameters, WhirConfig

GIB = 1 << 30
DISCRETE = GPU_MIN_VARIABLES["discrete"]  # the thresholds the tests derive their configurations from


def config(n: int, k: int, r: int = 1) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                             starting_log_inv_rate=r))


def gpu(device_type: str = "DiscreteGPU", api: str = "Vulkan", name: str = "Test GPU", **changes) -> DeviceLimits:
    """Synthetic limits with room for every configuration the tests plan."""
    limits = DeviceLimits(name=name, api=api, device_type=device_type, max_buffer_size=1 << 40,
                          max_storage_binding_size=1 << 40)
    return replace(limits, **changes)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("WHIRGPU_BACKEND", "WHIRGPU_ADAPTER", "WHIRGPU_STORAGE", MAX_GPU_BYTES_ENV,
                 "WHIRGPU_MAX_BINDING_BYTES"):
        monkeypatch.delenv(name, raising=False)


# ---- device classes ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("limits,expected", [
    (gpu("DiscreteGPU"), "discrete"),
    (gpu("IntegratedGPU"), "integrated"),
    (gpu("VirtualGPU"), "integrated"),
    (gpu("CPU", name="llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan"), "software"),
    (gpu("CPU", api="MSL-CPU", name="MSL on the CPU"), "software"),
    (gpu("IntegratedGPU", api="Metal (MSL)", name="Apple M3 Max", features=("apple9", "mac2", "metal3")), "apple"),
    (gpu("IntegratedGPU", api="Metal", name="Apple M1 (IntegratedGPU) via Metal"), "apple"),
    (gpu("IntegratedGPU", api="Metal (MSL)", name="Intel(R) UHD Graphics 630", features=("mac2",)), "integrated"),
    (gpu("DiscreteGPU", api="Metal (MSL)", name="AMD Radeon Pro 5500M", features=("mac2",)), "discrete"),
    (CpuBackend().limits(), "cpu"),
])
def test_device_class(limits, expected):
    assert device_class(limits) == expected


def test_the_threshold_table():
    assert {cls: t.min_variables for cls, t in GPU_MIN_VARIABLES.items()} == \
        {"discrete": 16, "integrated": 16, "apple": 16, "software": None}
    assert all(isinstance(t.source, str) and t.source.strip() for t in GPU_MIN_VARIABLES.values())
    assert "H100" in GPU_MIN_VARIABLES["discrete"].source
    for cls in ("integrated", "apple"):  # assumed from the discrete figure, and saying so
        assert "not measured" in GPU_MIN_VARIABLES[cls].source
    assert all("not measured" not in GPU_MIN_VARIABLES[cls].source for cls in ("discrete", "software"))


# ---- WHIRGPU_MAX_GPU_BYTES ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("1073741824", GIB), ("512M", 512 << 20), ("8G", 8 * GIB), ("1.5GiB", 3 * GIB // 2), ("64k", 64 << 10),
    ("2 GB", 2 * GIB), ("1t", 1 << 40), ("100B", 100), (" 3g ", 3 * GIB),
])
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-5", "1e9", "5iB", "12X", "0", "0.1B", "1.5.2G"])
def test_parse_bytes_refuses(text):
    with pytest.raises(ConfigError, match=f"{MAX_GPU_BYTES_ENV}="):
        parse_bytes(text)


def test_a_bad_env_value_is_a_config_error(monkeypatch):
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "a lot")
    with pytest.raises(ConfigError, match="WHIRGPU_MAX_GPU_BYTES='a lot' is not a byte count"):
        plan_device(config(12, 2), gpu())
    with pytest.raises(ConfigError, match="WHIRGPU_MAX_GPU_BYTES"):
        select_backend("auto", config(12, 2))
    with pytest.raises(ConfigError, match="WHIRGPU_MAX_GPU_BYTES"):  # every variable is checked, whatever backend
        select_backend("cpu")  # runs (whirgpu.environment), though the numpy reference has no device memory to cap


# ---- decisions and reasons ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("device_type,cls,label", [("DiscreteGPU", "discrete", "a discrete GPU"),
                                                   ("IntegratedGPU", "integrated", "an integrated GPU")])
def test_below_and_above_the_threshold(device_type, cls, label):
    threshold = GPU_MIN_VARIABLES[cls]
    t = threshold.min_variables
    below = plan_device(config(t - 1, 4), gpu(device_type))  # nothing is allocated: plans only
    assert below.fits and not below.expected_faster and below.decision == "cpu"
    assert below.reason == (f"n={t - 1} is below {t}, where {label} (Test GPU) starts to beat the numpy reference "
                            f"({threshold.source}); {CPU_FALLBACK}")
    above = plan_device(config(t, 4), gpu(device_type))
    assert above.fits and above.expected_faster and above.decision == "gpu"
    assert above.reason.startswith("fits: peak ") and above.reason.endswith(f"n={t} >= {t} for {label} "
                                                                            f"({threshold.source})")
    assert "max_buffer_size" in above.reason and "max_storage_binding_size" in above.reason
    assert "\n" not in above.reason


def test_apple_threshold():
    limits = gpu("IntegratedGPU", api="Metal (MSL)", name="Apple M3 Max", features=("apple9",),
                 recommended_working_set=48 * GIB, unified_memory=True)
    t = GPU_MIN_VARIABLES["apple"].min_variables
    plan = plan_device(config(t, 4), limits)
    assert plan.device_class == "apple" and plan.decision == "gpu"
    assert "of 48 GiB (recommended_working_set)" in plan.reason and "for an Apple GPU" in plan.reason
    assert plan_device(config(t - 1, 4), limits).decision == "cpu"


@pytest.mark.parametrize("api,runtime,backend", [("Vulkan", "", "wgpu"), ("Vulkan", "wgpu", "wgpu"),
                                                 ("Vulkan", "dawn", "dawn"), ("MSL-CPU", "", "msl-cpu")])
def test_software_never(api, runtime, backend):
    limits = gpu("CPU", api=api, name="llvmpipe", runtime=runtime)
    plan = plan_device(config(20, 4), limits)
    assert plan.device_class == "software" and plan.fits and not plan.expected_faster and plan.decision == "cpu"
    assert plan.reason.startswith("llvmpipe ") and f"--backend {backend} forces it" in plan.reason
    assert "same CPU cores" in plan.reason and plan.reason.endswith(CPU_FALLBACK)


def test_the_cpu_is_the_reference():
    plan = plan_device(config(12, 2), CpuBackend().limits())
    assert (plan.device_class, plan.decision, plan.reason) == ("cpu", "cpu", "the numpy reference")


def exact_limits(cfg: WhirConfig, **changes) -> DeviceLimits:
    """Limits exactly at the configuration's needs (max buffer = largest buffer, binding = largest whole binding,
    working set = peak). The plan depends on the binding limit (windows), so iterate to the fixed point."""
    limits = gpu(**changes)
    for _ in range(4):
        memory = plan_memory(cfg, limits)
        exact = replace(limits, max_buffer_size=memory.largest_buffer.buffer_bytes,
                        max_storage_binding_size=memory.largest_binding.binding_bytes,
                        recommended_working_set=memory.peak_bytes)
        if exact == limits:
            return limits
        limits = exact
    raise AssertionError("the plan does not settle")


@pytest.mark.parametrize("n,k,r", [(8, 2, 1), (12, 1, 2), (14, 4, 1), (16, 3, 3)])
def test_fits_exactly_at_the_limits(n, k, r):
    cfg = config(n, k, r)
    limits = exact_limits(cfg)
    plan = plan_device(cfg, limits)
    assert plan.fits and plan.problems == [] and fit_problem(limits, cfg) is None


def test_windowed_buffers_may_exceed_the_binding_limit():
    """Under a binding limit a quarter of the round-0 weights, the weights are bound in windows: their buffer
    passes the limit, no binding does, and the proof fits."""
    cfg = config(14, 4)
    limits = gpu(max_storage_binding_size=(16 << 14) // 4)
    plan = plan_memory(cfg, limits)
    windowed = [n for n in plan.needs if not n.whole]
    assert {n.name for n in windowed if n.buffer_bytes > limits.max_storage_binding_size} >= {"round 0 weights (weights)"}
    assert all(n.binding_bytes <= limits.max_storage_binding_size for n in plan.needs)
    assert plan_device(cfg, limits).fits


# the kernels that first bind the buffers the backend stores as several past max_buffer_size (codewords, Merkle
# levels, tables): a need's name ends with that kernel's stem
SPLIT_KERNELS = ("to_monty", "transpose_pad", "merkle_leaves", "merkle_compress", "weights", "fold", "sumcheck")


def _splits(name: str) -> bool:
    return name.startswith("round") and any(f"({stem}" in name for stem in SPLIT_KERNELS)


def test_a_buffer_over_max_buffer_size():
    cfg = config(14, 2)
    limits = exact_limits(cfg)
    largest = max((n for n in plan_memory(cfg, limits).needs if not _splits(n.name)), key=lambda n: n.buffer_bytes)
    small = replace(limits, max_buffer_size=largest.buffer_bytes - 1)
    plan = plan_device(cfg, small)
    # codewords, Merkle levels and tables are split into buffers that fit; the regions, factor tables, ... are not
    split = [n for n in plan.memory.needs if _splits(n.name)]
    assert split and all(n.buffer_bytes <= small.max_buffer_size for n in split)
    message = (f"{largest.name} needs a buffer of {sized(largest.buffer_bytes)}, over max_buffer_size "
               f"{sized(largest.buffer_bytes - 1)} on Test GPU")
    assert message.startswith(f"{largest.name} needs a buffer of {largest.buffer_bytes} bytes (")
    assert {p.kind for p in plan.problems} == {"limit"} and plan.problems[0].message == message
    assert plan.decision == "cpu" and plan.reason == f"{message}; {CPU_FALLBACK}"
    assert plan.refusal(explicit=True) == plan.refusal(explicit=False) == message == fit_problem(small, cfg)


def test_a_whole_binding_over_max_storage_binding_size():
    """A binding the backend cannot window (a factor table, bound table by table) over the limit is refused,
    naming the need; codewords, Merkle levels, tables, regions and work words are laid out to fit."""
    cfg = config(14, 2)
    small = replace(exact_limits(cfg), max_storage_binding_size=64 << 10)
    plan = plan_device(cfg, small)
    problem = plan.refusal(explicit=True)
    over = [n for n in plan.memory.needs if n.binding_bytes > small.max_storage_binding_size]
    assert over and all("factor_tables" in n.name for n in over)
    assert problem.startswith(f"{over[0].name} needs one binding of {over[0].binding_bytes} bytes")
    assert f"over max_storage_binding_size {64 << 10} bytes" in problem
    assert plan.decision == "cpu" and plan.reason.startswith(problem)


def test_over_the_recommended_working_set():
    cfg = config(14, 4)
    limits = exact_limits(cfg)
    peak = plan_device(cfg, limits).peak_bytes
    over = replace(limits, recommended_working_set=peak - 1)
    plan = plan_device(cfg, over)
    message = (f"the proof needs {peak} bytes ({peak / (1 << 20):.4g} MiB) at its peak, over "
               f"recommended_working_set {peak - 1} bytes ({(peak - 1) / (1 << 20):.4g} MiB) on Test GPU")
    assert [(p.kind, p.message) for p in plan.problems] == [("working_set", message)]
    assert plan.decision == "cpu" and plan.reason == f"{message}; {CPU_FALLBACK}"
    assert plan.refusal(explicit=False) == fit_problem(over, cfg) == message
    assert plan.refusal(explicit=True) is None and fit_problem(over, cfg, budget=False) is None  # auto's alone
    assert (plan.budget, plan.budget_source) == (peak - 1, "recommended_working_set")


def test_unknown_budget():
    plan = plan_device(config(DISCRETE.min_variables, 4), gpu(recommended_working_set=0))  # the GPU's reason
    assert plan.budget is None
    assert plan.budget_source == "unknown: wgpu does not report device memory; set WHIRGPU_MAX_GPU_BYTES"
    assert "budget unknown" in plan.reason
    dawn = plan_device(config(DISCRETE.min_variables, 4), gpu(runtime="dawn"))
    assert dawn.budget_source == "unknown: Dawn does not report device memory; set WHIRGPU_MAX_GPU_BYTES"
    assert dawn.memory.peak_bytes == plan.memory.peak_bytes  # the same runtime code, the same buffers


def test_over_max_gpu_bytes(monkeypatch):
    cfg = config(14, 4)
    limits = exact_limits(cfg)
    peak = plan_device(cfg, limits).peak_bytes
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, str(peak - 1))
    plan = plan_device(cfg, limits)
    assert [p.kind for p in plan.problems] == ["max_gpu_bytes"]
    assert plan.problems[0].message.startswith(f"the proof needs {peak} bytes")
    assert f"over WHIRGPU_MAX_GPU_BYTES = {peak - 1} bytes" in plan.problems[0].message
    assert plan.refusal(explicit=True) == plan.problems[0].message  # a cap binds an explicit backend too
    assert plan.decision == "cpu" and (plan.budget, plan.budget_source) == (peak - 1, MAX_GPU_BYTES_ENV)
    # an argument overrides the variable and is named as such
    plan = plan_device(cfg, limits, max_gpu_bytes=peak - 2)
    assert "over max_gpu_bytes = " in plan.refusal(explicit=True)
    assert plan_device(cfg, limits, max_gpu_bytes=peak).fits


def test_the_budget_is_the_smaller_of_the_two(monkeypatch):
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "512M")
    plan = plan_device(config(12, 2), gpu(recommended_working_set=GIB))
    assert (plan.budget, plan.budget_source) == (512 << 20, MAX_GPU_BYTES_ENV)
    plan = plan_device(config(12, 2), gpu(recommended_working_set=256 << 20))
    assert (plan.budget, plan.budget_source) == (256 << 20, "recommended_working_set")


def test_modes_follow_the_storage_policy():
    for policy in ("shared", "private"):
        memory = plan_device(config(12, 2), gpu(), policy).memory
        assert {n.mode for n in memory.needs if not n.runtime} == {StorageMode(policy)}
    memory = plan_device(config(12, 2), gpu(), "hybrid").memory
    for need in memory.needs:
        if not need.runtime:
            assert need.mode is (StorageMode.SHARED if need.host_facing else StorageMode.PRIVATE), need.name


def test_the_upload_ring_is_planned_from_its_threshold():
    """A table of at least the upload plan's threshold goes through the runtime's staging ring, which the plan
    counts (whole, as the runtime makes it at its first staged write: 4 slots of the table's chunk, which is the
    table spread over the slots in whole MiB, at least 8 MiB or the whole table, at most 32 MiB); smaller tables
    use no ring."""
    for n, planned in ((12, 0), (20, 4 * (4 << 20)), (24, 64 << 20), (26, 128 << 20)):
        needs = {need.name: need for need in plan_memory(config(n, 4), gpu()).needs if need.runtime}
        got = needs["wgpu upload staging ring"].nbytes if "wgpu upload staging ring" in needs else 0
        assert got == planned, f"n = {n}: planned {got} bytes of upload ring"
    assert (1 << 20) * 4 >= UploadPlan().threshold > (1 << 12) * 4


def test_the_json_form_adds_up():
    doc = plan_device(config(DISCRETE.min_variables, 4), gpu()).to_dict()
    json.dumps(doc)
    assert sum(b["bytes"] for b in doc["buffers"]) == doc["peak_bytes"] == doc["pool_bytes"] + doc["runtime_bytes"]
    assert doc["decision"] == "gpu" and doc["class"] == "discrete" and doc["fits"]
    assert doc["threshold"] == {"min_variables": DISCRETE.min_variables, "source": DISCRETE.source}


# ---- select_backend: auto with the planner; explicit backends refuse before allocating ---------------------------

class _Adapter:
    summary = "Test GPU"
    info = {"adapter_type": "DiscreteGPU", "backend_type": "Vulkan"}


def _fake_wgpu(monkeypatch, limits: DeviceLimits):
    """auto sees one adapter with ``limits``; opening it fails the test (auto must decide first)."""
    import whirgpu.runtime.wgpu_rt as wgpu_rt

    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", lambda impl="wgpu": _Adapter())
    monkeypatch.setattr(wgpu_rt.adapters, "adapter_limits", lambda adapter, impl=None: limits)

    def no_device(*args, **kwargs):
        raise AssertionError("auto opened the device for a proof it gives to the CPU")

    monkeypatch.setattr(wgpu_rt, "WgpuRuntime", no_device)


def test_auto_falls_back_below_the_threshold(monkeypatch):
    _fake_wgpu(monkeypatch, gpu())
    t = DISCRETE.min_variables
    # another class taking smaller proofs makes auto consult the device below the discrete threshold
    monkeypatch.setitem(GPU_MIN_VARIABLES, "integrated", replace(GPU_MIN_VARIABLES["integrated"],
                                                                 min_variables=t - 2))
    choice = select_backend("auto", config(t - 1, 2))  # this class's own threshold, the device consulted
    assert choice.backend.name == "cpu" and choice.reason == plan_device(config(t - 1, 2), gpu()).reason
    assert choice.reason.startswith(f"n={t - 1} is below {t}, ")


def test_auto_probes_no_gpu_below_every_class_threshold(monkeypatch):
    import whirgpu.runtime.wgpu_rt as wgpu_rt

    smallest = min(t.min_variables for t in GPU_MIN_VARIABLES.values() if t.min_variables is not None)
    monkeypatch.setattr(wgpu_rt.adapters, "choose_adapter", lambda impl="wgpu": pytest.fail("auto probed an adapter"))
    monkeypatch.setattr(wgpu_rt.adapters, "import_webgpu", lambda impl="wgpu": pytest.fail("auto imported a GPU stack"))
    choice = select_backend("auto", config(smallest - 1, 2))
    assert choice.backend.name == "cpu"
    assert choice.reason == (f"n={smallest - 1} is below {smallest}, the smallest size at which any GPU is "
                             f"expected to beat the numpy reference for a first proof (no GPU probed); "
                             f"{CPU_FALLBACK}")


def test_auto_falls_back_over_max_gpu_bytes(monkeypatch):
    _fake_wgpu(monkeypatch, gpu())
    cfg = config(DISCRETE.min_variables, 4)  # at the threshold: only the cap sends it to the CPU
    assert plan_device(cfg, gpu()).decision == "gpu"
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "1M")
    choice = select_backend("auto", cfg)
    assert choice.backend.name == "cpu"
    assert "over WHIRGPU_MAX_GPU_BYTES = 1048576 bytes (1 MiB) on Test GPU" in choice.reason
    assert choice.reason.endswith(CPU_FALLBACK)


def test_auto_falls_back_on_a_software_adapter(monkeypatch):
    _fake_wgpu(monkeypatch, gpu("CPU", name="llvmpipe (LLVM 15.0.6, 256 bits) (CPU) via Vulkan"))
    for cfg in (config(20, 4), None):
        choice = select_backend("auto", cfg)
        assert choice.backend.name == "cpu" and choice.reason.startswith("no hardware GPU: llvmpipe")
        assert "software rasteriser" in choice.reason and choice.reason.endswith(CPU_FALLBACK)


class _SpyRuntime:
    """A runtime that reports ``limits`` and counts allocations (any allocation before the refusal is a bug)."""

    name = "msl-cpu"

    def __init__(self, limits: DeviceLimits, inner=None):
        self._limits = limits
        self._inner = inner
        self.allocs = 0

    def limits(self):
        return self._limits

    def alloc(self, nbytes, mode=StorageMode.PRIVATE):
        self.allocs += 1
        if self._inner is None:
            raise AssertionError("allocated")
        return self._inner.alloc(nbytes, mode)

    def prefetch(self, kernels):
        return 0  # Runtime.prefetch's default: nothing compiles ahead

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _spy_factory(monkeypatch, spy):
    monkeypatch.setattr(backends, "_runtime", lambda name: spy)


@pytest.mark.parametrize("name", ["wgpu", "dawn", "metal", "msl-cpu"])
def test_explicit_refuses_a_hard_limit_before_allocating(name, monkeypatch):
    cfg = config(14, 2)
    limits = replace(exact_limits(cfg), name="Test GPU")
    whole = max(n.buffer_bytes for n in plan_memory(cfg, limits).needs if not _splits(n.name) and not n.runtime)
    limits = replace(limits, max_buffer_size=whole - 1)
    spy = _SpyRuntime(limits)
    _spy_factory(monkeypatch, spy)
    with pytest.raises(DeviceLimitError) as info:
        select_backend(name, cfg)
    assert "over max_buffer_size" in str(info.value) and "on Test GPU" in str(info.value)
    assert spy.allocs == 0


def test_explicit_ignores_the_threshold_and_the_working_set(monkeypatch):
    cfg = config(8, 2)
    limits = replace(exact_limits(cfg), recommended_working_set=1)
    assert plan_device(cfg, limits).decision == "cpu"
    spy = _SpyRuntime(limits)
    _spy_factory(monkeypatch, spy)
    constructed = []
    monkeypatch.setattr("whirgpu.backends.gpu.GpuBackend", lambda rt, storage=None: constructed.append(rt) or
                        CpuBackend())
    select_backend("msl-cpu", cfg)
    assert constructed == [spy]


def _msl_cpu():
    try:
        from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime

        return MslCpuRuntime()
    except BackendUnavailable as exc:
        pytest.skip(f"msl-cpu unavailable: {exc}")


def _wgpu():
    try:
        from whirgpu.runtime.wgpu_rt import WgpuRuntime

        return WgpuRuntime()
    except BackendUnavailable as exc:
        pytest.skip(f"wgpu unavailable: {exc}")


def _dawn():
    try:
        from whirgpu.runtime.wgpu_rt import DawnRuntime

        return DawnRuntime()
    except BackendUnavailable as exc:
        pytest.skip(f"dawn unavailable: {exc}")


@pytest.mark.parametrize("name,opener", [("msl-cpu", _msl_cpu), ("wgpu", _wgpu), ("dawn", _dawn)])
def test_explicit_refuses_over_max_gpu_bytes_before_allocating(name, opener, monkeypatch):
    runtime = opener()
    spy = _SpyRuntime(runtime.limits(), runtime)
    spy.name = runtime.name
    _spy_factory(monkeypatch, spy)
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "64K")
    cfg = config(8, 2)  # below every threshold: an explicit backend runs it all the same, if it fits
    with pytest.raises(DeviceLimitError, match=r"over WHIRGPU_MAX_GPU_BYTES = 65536 bytes \(64 KiB\) on "):
        select_backend(name, cfg)
    assert spy.allocs == 0
    monkeypatch.setenv("WHIRGPU_BACKEND", name)  # the variable asks for the backend as explicitly
    with pytest.raises(DeviceLimitError, match="WHIRGPU_MAX_GPU_BYTES"):
        select_backend("auto", cfg)
    assert spy.allocs == 0
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "1G")
    choice = select_backend("auto", cfg)
    assert choice.backend.rt is spy and choice.reason.startswith(f"WHIRGPU_BACKEND={name}; ")
    assert spy.allocs == 1  # the backend's placeholder buffer, once it was allowed to exist


# ---- whirgpu devices --plan ----------------------------------------------------------------------------------------

def test_plan_command_text(capsys):
    assert main(["devices", "--plan", "12:4:1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plan 12:4:1 (2^12 values, fold 4, rate 1: ")
    assert "storage policy hybrid" in out and out.rstrip().splitlines()[-1].startswith("auto would pick: ")
    choice = select_backend("auto", config(12, 4))
    assert f"auto would pick: {choice.backend.name} — {choice.reason}" in out


def test_plan_command_json(capsys):
    assert main(["devices", "--plan", "12:4:1", "--storage", "private", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["point"], doc["num_variables"], doc["folding_factor"], doc["rate"]) == ("12:4:1", 12, 4, 1)
    assert doc["storage"] == "private" and doc["max_gpu_bytes"] is None
    assert doc["thresholds"] == {cls: {"min_variables": t.min_variables, "source": t.source}
                                 for cls, t in GPU_MIN_VARIABLES.items()}
    assert {d["backend"] for d in doc["devices"]} >= {"msl-cpu"}
    for device in doc["devices"]:
        if not device["available"]:
            assert device["note"]
            continue
        assert sum(b["bytes"] for b in device["buffers"]) == device["peak_bytes"]
        assert {b["mode"] for b in device["buffers"] if b["role"] != "runtime"} == {"private"}
        assert device["decision"] in ("gpu", "cpu") and device["reason"]
    choice = select_backend("auto", config(12, 4), "private")
    assert doc["auto"] == {"backend": choice.backend.name, "reason": choice.reason}


def test_plan_command_on_a_discrete_gpu(capsys, monkeypatch):
    import whirgpu.cli.plan as plan_command

    limits = gpu(name="NVIDIA Test (DiscreteGPU) via Vulkan", recommended_working_set=0)
    monkeypatch.setattr(plan_command, "plan_targets", lambda: [PlanTarget("wgpu", limits, selected=True),
                                                          PlanTarget("metal", None, "Metal needs macOS")])
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "8G")
    point = f"{DISCRETE.min_variables}:4:1"  # at the discrete threshold; planned, never allocated
    assert main(["devices", "--plan", point]) == 0
    out = capsys.readouterr().out
    assert "[wgpu] NVIDIA Test (DiscreteGPU) via Vulkan  [class discrete]  [--backend wgpu opens this one]" in out
    assert "WHIRGPU_MAX_GPU_BYTES 8589934592 bytes (8 GiB)" in out
    assert re.search(r"\n    budget +8 GiB \(WHIRGPU_MAX_GPU_BYTES\): peak ", out)
    assert re.search(r"\n    decision +gpu: fits: ", out) and "[metal] unavailable: Metal needs macOS" in out
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "100K")
    assert main(["devices", "--plan", point, "--json"]) == 0
    (device, _) = json.loads(capsys.readouterr().out)["devices"]
    assert device["decision"] == "cpu" and device["problems"][0]["kind"] == "max_gpu_bytes"


@pytest.mark.parametrize("point,message", [
    ("12:4", "error: '12:4' is not N:F:R[/johnson|/unique] (three integers, e.g. 20:4:1)"),
    ("a:b:c", "error: 'a:b:c' is not N:F:R[/johnson|/unique] (three integers, e.g. 20:4:1)"),
    ("12:0:1", "error: 12:0:1: "),
])
def test_plan_command_bad_point(point, message, capsys):
    assert main(["devices", "--plan", point]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(message) and captured.err.count("\n") == 1


def test_plan_command_bad_env(capsys, monkeypatch):
    monkeypatch.setenv(MAX_GPU_BYTES_ENV, "huge")
    assert main(["devices", "--plan", "12:4:1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: WHIRGPU_MAX_GPU_BYTES='huge' is not a byte count") and err.count("\n") == 1


@pytest.mark.parametrize("n,k,r,buffer,binding", [
    (24, 1, 3, 1 << 40, (1 << 31) - 4),  # round-0 leaves of 2 GiB on an H100: two 1 GiB windows
    (26, 4, 1, (1 << 31) - 1, 128 << 20),  # lavapipe: a 512 MiB codeword in 128 MiB windows
])
def test_split_commitments_fit_where_memory_allows(n, k, r, buffer, binding):
    """Codewords and Merkle levels are split, so only memory (or max_gpu_bytes) refuses these configurations."""
    cfg = config(n, k, r)
    limits = gpu(max_buffer_size=buffer, max_storage_binding_size=binding)
    memory = plan_memory(cfg, limits)
    assert [p for p in memory.limit_problems(limits) if "codeword" in p or "merkle" in p] == []
    split = [need for need in memory.needs if "codeword" in need.name or "merkle" in need.name]
    assert all(need.buffer_bytes <= buffer and need.binding_bytes <= binding for need in split)
    plan = plan_device(cfg, limits, max_gpu_bytes=memory.peak_bytes - 1)
    assert "max_gpu_bytes" in [p.kind for p in plan.problems]


def test_split_tables_fit_where_memory_allows():
    """28:2:1 on an H100 (wgpu-native's limits): the 4 GiB round-0 weights pass max_buffer_size and are stored as
    two 2 GiB buffers (the polynomial and every folded table fit one), so no limit refuses the proof; only the
    memory budget (or max_gpu_bytes) does."""
    cfg = config(28, 2, 1)
    buffer, binding = 4292870144, 2147483644
    limits = gpu(max_buffer_size=buffer, max_storage_binding_size=binding)
    memory = plan_memory(cfg, limits)
    assert memory.limit_problems(limits) == []
    needs = {need.name: need for need in memory.needs}
    weights = needs["round 0 weights (weights)"]
    assert (weights.count, weights.buffer_bytes, weights.nbytes) == (2, 16 << 27, 16 << 28)
    assert weights.binding_bytes <= binding and not weights.whole
    assert needs["round 0 polynomial (to_monty)"].count == 1 and needs["round 0 polynomial (to_monty)"].buffer_bytes == 4 << 28
    assert all(need.buffer_bytes <= buffer for need in memory.needs)
    assert fit_problem(limits, cfg) is None and plan_device(cfg, limits).problems == []
    plan = plan_device(cfg, limits, max_gpu_bytes=memory.peak_bytes - 1)
    assert [p.kind for p in plan.problems] == ["max_gpu_bytes"]
    assert plan_device(cfg, replace(limits, recommended_working_set=memory.peak_bytes),
                       max_gpu_bytes=memory.peak_bytes).problems == []


@pytest.mark.parametrize("point", ["20:4:1", "22:6:3/johnson", "24:4:1/unique"])
def test_plan_command_names_the_security_regime(point, capsys):
    """`devices --plan` plans the provable grids' larger query counts and says which regime its figure holds in."""
    from whirgpu.bench.grid import parse_grid
    from whirgpu.protocol.regimes import describe, security_report

    report = security_report(parse_grid(point)[0].config())
    assert main(["devices", "--plan", point]) == 0
    assert capsys.readouterr().out.splitlines()[1] == describe(report)
    assert main(["devices", "--plan", point, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["security"] == report.to_json_dict() and doc["point"] == point
