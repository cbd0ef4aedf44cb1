"""The two WebGPU implementations behind ``runtime/wgpu_rt.py``: wgpu-native (``WgpuRuntime``) and Dawn
(``DawnRuntime``, through ``wgpudawn``). The kernels themselves are checked bit-exact on both by the
``gpu_runtime`` fixture; this file checks what differs between them: feature names, shader-int64, adapters that
open one device, compiler diagnostics, timestamps, waiting, and Dawn's warnings on stderr."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from whirgpu.api import random_instance
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import BackendUnavailable, ShaderCompileError
from whirgpu.kernels.compose import ComposedSource
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.runtime import wgpu_rt

from ..conftest import REPO
from .conftest import _required, open_runtime

IMPLS = ["wgpu", "dawn"]


def test_feature_names_either_spelling():
    assert wgpu_rt.feature_name({"subgroups", "timestamp-query"}, "subgroup") == "subgroups"
    assert wgpu_rt.feature_name({"subgroup"}, "subgroup") == "subgroup"
    assert wgpu_rt.feature_name({"subgroup-barrier"}, "subgroup") is None
    assert wgpu_rt.feature_name({"shader-int64"}, "shader-int64") == "shader-int64"
    assert wgpu_rt.canonical_features(["subgroups", "timestamp-query", "subgroup"]) == ("subgroup", "timestamp-query")


def test_unknown_implementation():
    with pytest.raises(ValueError, match="unknown WebGPU implementation 'webgl'; choose one of wgpu, dawn"):
        wgpu_rt.list_adapters("webgl")


def test_dawn_limits_and_features():
    rt = open_runtime("dawn", "emulated")
    adapter = wgpu_rt.choose_adapter("dawn")
    limits = rt.limits()
    assert (limits.runtime, limits.name, limits.api) == ("dawn", adapter.summary, adapter.info["backend_type"])
    assert not limits.has_u64 and "shader-int64" not in adapter.features and rt.mul == "emulated"
    assert "subgroups" not in limits.features  # reported under wgpu-native's name
    assert ("subgroup" in limits.features) == ("subgroups" in adapter.features)
    assert limits.has_timestamps == ("timestamp-query" in adapter.features)
    assert wgpu_rt.adapter_limits(adapter) == wgpu_rt.adapter_limits(adapter, "dawn")  # told by the adapter object
    planned = wgpu_rt.adapter_limits(adapter)
    assert (planned.max_buffer_size, planned.max_storage_binding_size) == \
        (limits.max_buffer_size, limits.max_storage_binding_size)


def test_dawn_refuses_the_u64_multiply(monkeypatch):
    open_runtime("dawn", "emulated")  # skips (or fails, when required) without Dawn
    with pytest.raises(BackendUnavailable, match="the u64 multiply needs shader-int64, which .* lacks through Dawn"):
        wgpu_rt.DawnRuntime(mul="u64")
    monkeypatch.setenv("WHIRGPU_MUL", "u64")
    with pytest.raises(BackendUnavailable, match="^WHIRGPU_MUL=u64: the u64 multiply needs shader-int64"):
        wgpu_rt.DawnRuntime()
    monkeypatch.setenv("WHIRGPU_MUL", "auto")
    assert wgpu_rt.DawnRuntime().mul == "emulated"


def test_a_dawn_adapter_opens_one_device_so_each_runtime_takes_a_fresh_one():
    first = open_runtime("dawn", "emulated")
    second = wgpu_rt.DawnRuntime(mul="emulated")
    assert first.adapter is not second.adapter
    for rt in (first, second):
        buffer = rt.alloc(16)
        rt.write(buffer, np.arange(4, dtype=np.uint32))
        assert rt.read(buffer).tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("impl", IMPLS)
def test_compile_errors_name_the_source_file_and_line(impl, monkeypatch):
    rt = open_runtime(impl, "emulated")
    lines = ["@compute @workgroup_size(1)", "fn copy_vec4() {", "    let x: u32 = 1.5;", "}"]
    broken = ComposedSource("\n".join(lines) + "\n", tuple(("kernels/broken.wgsl", i + 10) for i in range(4)))
    monkeypatch.setattr(wgpu_rt.pipelines, "compose", lambda *args, **kwargs: broken)
    with pytest.raises(ShaderCompileError) as info:
        rt.kernel("calibrate", "copy_vec4")
    message = str(info.value)
    assert message.startswith(f"kernel calibrate (emulated multiply, {wgpu_rt.IMPLS[impl].label}): ")
    assert "kernels/broken.wgsl:12:" in message  # composed line 3


@pytest.mark.parametrize("impl", IMPLS)
def test_wait_returns_once_the_work_is_done(impl):
    rt = open_runtime(impl, "emulated")
    data = np.arange(4096, dtype=np.uint32)
    src, dst = rt.alloc(data.nbytes), rt.alloc(data.nbytes)
    rt.write(src, data)
    batch = rt.batch()
    batch.copy(src, 0, dst, 0, data.nbytes)
    batch.submit()
    rt.wait()
    assert rt.read(dst).tolist() == data.tolist()


def _kernel_times_of_a_proof(rt) -> list[tuple[str, float]]:
    config = WhirConfig.from_params(ProtocolParameters.default(num_variables=8, folding_factor=2,
                                                               starting_log_inv_rate=1))
    prover = MetalWhirProver(config, GpuBackend(rt))
    instance = random_instance(8, 0)
    prover.prove(*instance)  # compiles
    rt.set_profiling(True)
    try:
        rt.kernel_times()
        prover.prove(*instance)
        return rt.kernel_times()
    finally:
        rt.set_profiling(False)


def test_dawn_times_every_kernel_a_proof_launches():
    """GPU timestamps per dispatch on Dawn (resolved in nanoseconds, not quantized): the same launches as on
    wgpu-native, each with a positive time."""
    dawn = open_runtime("dawn", "emulated")
    if not dawn.limits().has_timestamps:
        pytest.skip(f"{dawn.adapter.summary} has no timestamp-query through Dawn")
    wgpu = open_runtime("wgpu", "emulated")
    times = _kernel_times_of_a_proof(dawn)
    assert [label for label, _ in times] == [label for label, _ in _kernel_times_of_a_proof(wgpu)]
    assert all(ns > 0 for _, ns in times) and len({ns for _, ns in times}) > len(times) // 2


def test_dawn_warnings_are_dropped():
    """In a fresh process: Dawn's two 'artificially reduced' warnings never reach stderr (that other lines written
    meanwhile still do: tests/test_truthful_messages.py)."""
    open_runtime("dawn", "emulated")
    code = ("import whirgpu.runtime.wgpu_rt.adapters as w\n"
            "print(len(w.list_adapters('dawn')))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and int(done.stdout) >= 1, done.stderr
    assert done.stderr == ""


def test_dawn_is_required_when_listed(monkeypatch):
    """WHIRGPU_REQUIRE names runtimes; dawn is one of them (CI lists it)."""
    monkeypatch.setenv("WHIRGPU_REQUIRE", "wgpu, dawn,msl-cpu")
    assert _required("dawn") and _required("wgpu") and not _required("metal")


def test_a_process_proving_on_many_dawn_runtimes_survives():
    """In a fresh process, 30 proofs each on a Dawn runtime of its own, each dropped after its proof: their devices
    are freed only by Python's cycle collector, and without the collection a runtime runs before opening a device
    Dawn on lavapipe crashed (inside lavapipe) at about the 22nd."""
    open_runtime("dawn", "emulated")
    code = ("from whirgpu.runtime import wgpu_rt\n"
            "from whirgpu.backends.gpu import GpuBackend\n"
            "from whirgpu.protocol.params import ProtocolParameters, WhirConfig\n"
            "from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver\n"
            "from whirgpu.api import random_instance\n"
            "cfg = WhirConfig.from_params(ProtocolParameters(num_variables=8, folding_factor=2, "
            "starting_log_inv_rate=1, security_level=32, rs_domain_initial_reduction_factor=1, pow_bits=0))\n"
            "poly, statement = random_instance(8, 1)\n"
            "for _ in range(30):\n"
            "    MetalWhirProver(cfg, GpuBackend(wgpu_rt.DawnRuntime(mul='emulated'))).prove(poly, statement)\n"
            "print('survived')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0 and done.stdout.strip() == "survived", done.stderr[-2000:]
