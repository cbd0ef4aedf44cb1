"""``WHIRGPU_MAX_BINDING_BYTES`` and ``--max-binding`` (whirgpu.devices.overrides): parsing, precedence, every runtime
that opens here (wgpu, dawn, msl-cpu; metal against the fake Objective-C runtime in
tests/backend/test_metal_runtime.py), ``whirgpu devices`` (text and --json), the plan, backend selection and
the CLI's errors.

The device's own limit is read independently of the code under test: from the adapter's raw
``max-storage-buffer-binding-size`` (wgpu, dawn) or from a runtime opened with no override (msl-cpu).
"""

from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest

from whirgpu.devices import overrides as overrides
from whirgpu.api import Prover, random_instance
from whirgpu.backends import DeviceLimits, select_backend
from whirgpu.cli.commands import main
from whirgpu.errors import BackendUnavailable, ConfigError, DeviceLimitError
from whirgpu.devices.overrides import binding_option, binding_override, parse_binding_bytes, resolve_binding
from whirgpu.devices.planner import plan_device
from whirgpu.protocol.params import ProtocolParameters, WhirConfig
from whirgpu.profiles.whir_p3_metal.serialize import dump

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
ENV = "WHIRGPU_MAX_BINDING_BYTES"  # spelled out: the name is the contract
SMALL = ["-n", "10", "-k", "3", "-r", "1", "--seed", "0"]


def config(n: int, k: int, r: int = 1) -> WhirConfig:
    return WhirConfig.from_params(ProtocolParameters.default(num_variables=n, folding_factor=k,
                                                             starting_log_inv_rate=r))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in ("WHIRGPU_BACKEND", "WHIRGPU_ADAPTER", "WHIRGPU_MUL", "WHIRGPU_MAX_GPU_BYTES", ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # prove's default output lands here


def _required(name: str) -> bool:
    return name in {s.strip() for s in os.environ.get("WHIRGPU_REQUIRE", "").split(",") if s.strip()}


def _unavailable(name: str, exc: Exception):
    if _required(name):
        pytest.fail(f"{name} is required (WHIRGPU_REQUIRE) but unavailable: {exc}")
    pytest.skip(f"{name} unavailable: {exc}")


def open_runtime(name: str, **kw):
    """A runtime of ``name`` (wgpu, dawn, msl-cpu) or a skip (a failure when WHIRGPU_REQUIRE names it)."""
    from whirgpu.runtime.msl_cpu_rt import MslCpuRuntime
    from whirgpu.runtime.wgpu_rt import DawnRuntime, WgpuRuntime

    try:
        return {"wgpu": WgpuRuntime, "dawn": DawnRuntime, "msl-cpu": MslCpuRuntime}[name](**kw)
    except BackendUnavailable as exc:
        _unavailable(name, exc)


def device_binding(name: str, monkeypatch) -> int:
    """The device's own storage-binding limit, read without the override."""
    if name in ("wgpu", "dawn"):
        from whirgpu.runtime.wgpu_rt import choose_adapter

        try:
            return int(choose_adapter(name).limits["max-storage-buffer-binding-size"])
        except BackendUnavailable as exc:
            _unavailable(name, exc)
    with monkeypatch.context() as m:
        m.delenv(ENV, raising=False)
        return open_runtime(name).limits().max_storage_binding_size


def run(argv, capsys):
    """main(argv) in-process -> (exit code, stdout, stderr)."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ---- parsing ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("134217728", 128 * MIB), ("128M", 128 * MIB), ("64k", 64 * KIB), ("1.5GiB", 3 * GIB // 2), ("4096", 4096),
    ("4K", 4096), (" 2 GB ", 2 * GIB), ("8G", 8 * GIB),
])
def test_parse_binding_bytes(text, expected):
    assert parse_binding_bytes(text) == expected


@pytest.mark.parametrize("text,why", [
    ("lots", "is not a byte count"), ("", "is not a byte count"), ("-4K", "is not a byte count"),
    ("0", "at least 1 byte"), ("4092", "at least MIN_BINDING_BYTES = 4096"), ("1K", "multiple of 4"),
    ("4098", "multiple of 4"), ("0.1M", "104857 bytes"),
])
def test_parse_binding_bytes_refuses_naming_the_variable_and_value(text, why):
    with pytest.raises(ConfigError, match=f"^{ENV}={text!r}.*{why}"):
        parse_binding_bytes(text)


def test_env_and_option_precedence(monkeypatch):
    assert binding_override() is None
    monkeypatch.setenv(ENV, "   ")  # blank is unset
    assert binding_override() is None
    monkeypatch.setenv(ENV, "64K")
    assert binding_override() == (64 * KIB, ENV)
    with binding_option("32K"):
        assert binding_override() == (32 * KIB, "--max-binding")
        with binding_option(None):  # no option given: the outer one stays
            assert binding_override() == (32 * KIB, "--max-binding")
    assert binding_override() == (64 * KIB, ENV)  # restored after the command
    with pytest.raises(ConfigError, match="^--max-binding='12X' is not a byte count"):
        with binding_option("12X"):
            pass
    assert binding_override() == (64 * KIB, ENV)
    monkeypatch.setenv(ENV, "huge")
    with pytest.raises(ConfigError, match=f"{ENV}='huge'"):
        binding_override()


def test_resolve_binding(monkeypatch):
    monkeypatch.setenv(ENV, "64K")
    assert resolve_binding(128 * MIB) == overrides.BindingLimit(64 * KIB, 128 * MIB, ENV)
    assert resolve_binding(128 * MIB, 256) == overrides.BindingLimit(256, 128 * MIB, "max_binding_bytes")
    assert resolve_binding(32 * KIB) == overrides.BindingLimit(32 * KIB, 32 * KIB)  # above the device: its own
    assert resolve_binding(64 * KIB) == overrides.BindingLimit(64 * KIB, 64 * KIB)  # equal: not lowered
    monkeypatch.delenv(ENV)
    assert resolve_binding(128 * MIB) == overrides.BindingLimit(128 * MIB, 128 * MIB)
    assert resolve_binding(128 * MIB, 0) == overrides.BindingLimit(128 * MIB, 128 * MIB)  # 0: not given


# ---- every runtime ----------------------------------------------------------------------------------------------

RUNTIMES = ("wgpu", "dawn", "msl-cpu")


@pytest.mark.parametrize("name", RUNTIMES)
def test_the_env_lowers_each_runtime_and_the_runtime_enforces_it(name, monkeypatch):
    device = device_binding(name, monkeypatch)
    monkeypatch.setenv(ENV, "4K")
    rt = open_runtime(name)
    limits = rt.limits()
    assert rt.max_binding_bytes == limits.max_storage_binding_size == 4096
    assert (limits.binding_lowered_by, limits.device_storage_binding_size) == (ENV, device)
    big = rt.alloc(8192)
    batch = rt.batch()
    batch.dispatch(rt.kernel("field_selftest"), [big, big, big], None, 1)
    with pytest.raises(DeviceLimitError, match="binding 0 of 8192 bytes exceeds max_storage_binding_size 4096"):
        batch.submit()


@pytest.mark.parametrize("name", RUNTIMES)
def test_a_constructor_argument_wins_and_a_large_value_keeps_the_device_limit(name, monkeypatch):
    device = device_binding(name, monkeypatch)
    monkeypatch.setenv(ENV, "64K")
    limits = open_runtime(name, max_binding_bytes=8192).limits()
    assert (limits.max_storage_binding_size, limits.binding_lowered_by) == (8192, "max_binding_bytes")
    monkeypatch.setenv(ENV, str(device + 4))
    limits = open_runtime(name).limits()
    assert (limits.max_storage_binding_size, limits.binding_lowered_by, limits.device_storage_binding_size) == \
        (device, "", 0)


@pytest.mark.parametrize("impl", ("wgpu", "dawn"))
def test_adapter_limits_apply_the_override(impl, monkeypatch):
    from whirgpu.runtime.wgpu_rt import adapter_limits, choose_adapter

    device = device_binding(impl, monkeypatch)
    monkeypatch.setenv(ENV, "128K")
    limits = adapter_limits(choose_adapter(impl), impl)
    assert (limits.max_storage_binding_size, limits.binding_lowered_by, limits.device_storage_binding_size) == \
        (min(128 * KIB, device), ENV, device)


@pytest.mark.parametrize("name", RUNTIMES)
def test_select_backend_refuses_then_proves_the_same_bytes(name, monkeypatch):
    """Under a 16 KiB binding limit, 12:1:2's transcript scratch (bound whole, 20.75 KiB) is refused before
    allocation (the message says the limit was lowered); under 32 KiB its 64 KiB codeword and 256 KiB of leaf
    digests are bound in windows and the proof is the cpu backend's, byte for byte."""
    device = device_binding(name, monkeypatch)
    monkeypatch.setenv(ENV, "16K")
    with pytest.raises(DeviceLimitError, match=rf"over max_storage_binding_size 16384 bytes \(16 KiB\) "
                                               rf"\(lowered by {ENV}; device: {device} bytes"):
        select_backend(name, config(12, 1, 2))
    monkeypatch.setenv(ENV, "32K")
    params = ProtocolParameters.default(num_variables=12, folding_factor=1, starting_log_inv_rate=2)
    prover = Prover(params, backend=name)
    assert f"max_storage_binding_size 32 KiB (lowered by {ENV}; device: " in prover.backend_reason
    assert prover.backend.limits().max_storage_binding_size == 32 * KIB
    poly, statement = random_instance(12, 3)
    expected = Prover(params, backend="cpu").prove_monty(poly, statement)
    got = prover.prove_monty(poly, statement)
    assert dump(got, "binary") == dump(expected, "binary")


# ---- the planner ------------------------------------------------------------------------------------------------

def test_plan_reasons_say_the_limit_was_lowered():
    device = DeviceLimits(name="Big GPU", api="Vulkan", device_type="DiscreteGPU", max_buffer_size=1 << 40,
                          max_storage_binding_size=2 * GIB)
    lowered = overrides.BindingLimit(128 * MIB, 2 * GIB, ENV).apply(device)
    plan = plan_device(config(20, 4), lowered)
    assert plan.decision == "gpu"
    assert "of max_storage_binding_size 128 MiB (lowered by WHIRGPU_MAX_BINDING_BYTES; device: 2 GiB)" in plan.reason
    assert (plan.to_dict()["binding_lowered_by"], plan.to_dict()["device_storage_binding_size"]) == (ENV, 2 * GIB)
    assert "lowered" not in plan_device(config(20, 4), device).reason
    assert plan_device(config(20, 4), device).to_dict()["binding_lowered_by"] is None
    tiny = replace(lowered, max_storage_binding_size=16 * KIB)  # below 12:1:2's transcript scratch, bound whole
    problem = plan_device(config(12, 1, 2), tiny).refusal(explicit=True)
    assert problem and "16384 bytes (16 KiB) (lowered by WHIRGPU_MAX_BINDING_BYTES; device: 2147483648 bytes (2 GiB))" \
        in problem


def test_devices_plan_reports_the_lowered_limit(monkeypatch, capsys):
    monkeypatch.setenv(ENV, "16K")  # 12:1:2's transcript scratch, bound whole, needs 20.75 KiB
    code, out, _ = run(["devices", "--plan", "12:1:2", "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["max_binding_bytes"] == {"bytes": 16 * KIB, "source": ENV}
    available = [d for d in doc["devices"] if d["available"]]
    assert any(d["backend"] == "msl-cpu" for d in available) or not _required("msl-cpu")
    for entry in available:
        assert entry["max_storage_binding_size"] == 16 * KIB and entry["binding_lowered_by"] == ENV
        assert entry["device_storage_binding_size"] > 16 * KIB
        assert entry["decision"] == "cpu" and "(lowered by WHIRGPU_MAX_BINDING_BYTES; device: " in entry["reason"]
    code, out, _ = run(["devices", "--plan", "12:1:2", "--max-binding", "64K"], capsys)
    assert code == 0
    assert out.splitlines()[0].endswith("max storage binding lowered to 65536 bytes (64 KiB) by --max-binding")
    assert "of max_storage_binding_size 64 KiB (lowered by --max-binding; device: " in out


# ---- whirgpu devices --------------------------------------------------------------------------------------------

def _raw_adapter_bindings() -> dict[tuple[str, str, str], int]:
    """(runtime, name, api) -> the raw binding limit, for every adapter each implementation enumerates."""
    from whirgpu.runtime.wgpu_rt import enumerate_adapters

    raw = {}
    for impl in ("wgpu", "dawn"):
        try:
            adapters = enumerate_adapters(impl)
        except BackendUnavailable:
            continue
        for a in adapters:
            raw[(impl, a.summary, a.info.get("backend_type"))] = int(a.limits["max-storage-buffer-binding-size"])
    return raw


def test_devices_json_reports_the_lowered_limit(monkeypatch, capsys):
    raw = _raw_adapter_bindings()
    monkeypatch.setenv(ENV, "64K")
    code, out, _ = run(["devices", "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["max_binding_bytes"] == {"bytes": 64 * KIB, "source": ENV}
    assert doc["adapters"] or not (_required("wgpu") or _required("dawn"))
    for entry in doc["adapters"]:
        own = raw[(entry["runtime"], entry["name"], entry["api"])]
        lowered = entry["used"] and own > 64 * KIB
        assert entry["limits"]["max_storage_binding_size"] == (64 * KIB if lowered else own), entry["name"]
        assert entry["lowered"] == ({"max_storage_binding_size": {"by": ENV, "device": own}} if lowered else {})
    assert doc["cpu"]["lowered"] == {}
    if doc["msl_cpu"]["available"]:
        assert doc["msl_cpu"]["max_storage_binding_size"] == 64 * KIB
        assert doc["msl_cpu"]["lowered"]["max_storage_binding_size"]["by"] == ENV
    # the option beats the environment, for this command only
    code, out, _ = run(["devices", "--json", "--max-binding", "32K"], capsys)
    doc = json.loads(out)
    assert doc["max_binding_bytes"] == {"bytes": 32 * KIB, "source": "--max-binding"}
    assert all(e["limits"]["max_storage_binding_size"] == 32 * KIB for e in doc["adapters"] if e["used"])
    assert binding_override() == (64 * KIB, ENV)


def test_devices_text_reports_the_lowered_limit(monkeypatch, capsys):
    raw = _raw_adapter_bindings()
    used = {key: own for key, own in raw.items() if key[2] in ("Vulkan", "Metal", "D3D12")}
    if not used and (_required("wgpu") or _required("dawn")):
        pytest.fail("no native adapter")
    monkeypatch.setenv(ENV, "64K")
    code, out, _ = run(["devices"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"max storage binding lowered to 65536 (64 KiB) by {ENV}")
    binding_rows = [line for line in lines if line.strip().startswith("max storage binding ")]
    for own in used.values():
        if own > 64 * KIB:
            note = f"65536 (64 KiB) (lowered by {ENV}; device: {own} ("
            assert any(note in row for row in binding_rows), (note, binding_rows)
    if not _required("msl-cpu") and "[msl-cpu] unavailable" in out:
        return
    assert f"max storage binding  65536 (64 KiB) (lowered by {ENV}; device: " in out
    monkeypatch.delenv(ENV)
    code, out, _ = run(["devices"], capsys)
    assert "lowered" not in out


# ---- the command line -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["devices"], ["devices", "--plan", "10:3:1"], ["prove", *SMALL, "--backend",
                                                                                        "msl-cpu"]])
@pytest.mark.parametrize("value", ["lots", "4092", "1K"])
def test_a_bad_value_is_a_one_line_error(command, value, monkeypatch, capsys):
    code, out, err = run([*command, "--max-binding", value], capsys)
    assert code == 1 and err.count("\n") == 1 and err.startswith(f"error: --max-binding={value!r}"), err
    monkeypatch.setenv(ENV, value)
    code, out, err = run(command, capsys)
    assert code == 1 and err.count("\n") == 1 and err.startswith(f"error: {ENV}={value!r}"), err


def test_prove_option_beats_the_env(monkeypatch, capsys):
    """2^10 values, fold 1, rate 2: its largest whole binding (the transcript scratch) is 15.19 KiB, so 64 KiB from
    the environment lets it run and 8 KiB on the command line refuses it: the option won."""
    argv = ["prove", "-n", "10", "-k", "1", "-r", "2", "--seed", "0", "--backend", "msl-cpu"]
    monkeypatch.setenv(ENV, "64K")
    code, out, err = run(argv, capsys)
    if code and "unavailable" in err:
        _unavailable("msl-cpu", RuntimeError(err))
    assert code == 0, err
    assert f"(lowered by {ENV}; device: " in out.splitlines()[0]
    code, out, err = run([*argv, "--max-binding", "8K"], capsys)
    assert code == 1 and "error: " in err and "(lowered by --max-binding; device: " in err, err


def test_help_documents_the_option(capsys):
    for command in ("prove", "devices", "bench"):
        code, out, _ = run([command, "--help"], capsys)
        assert code == 0 and "--max-binding SIZE" in out and ENV in out.replace("\n", " ").replace("  ", " ")
