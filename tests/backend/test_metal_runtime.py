"""The Metal runtime: on macOS against the real device; everywhere, its bridge's prototype table and the whole
runtime against a fake Objective-C runtime (``fake_objc``: prototypes marshalled through real C function
pointers, ownership and encoder rules checked, kernels executed by msl-cpu)."""

from __future__ import annotations

import gc
import json
import sys

import numpy as np
import pytest
from cffi import FFI

from whirgpu.backends.base import StorageMode
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import BackendUnavailable, DeviceLimitError, ShaderCompileError
from whirgpu.field import P
from whirgpu.kernels.compose import ComposedSource, compose
from whirgpu.profiles.whir_p3_metal.prover import MetalWhirProver
from whirgpu.profiles.whir_p3_metal.serialize import proof_to_json_tree
from whirgpu.profiles.whir_p3_metal.verifier import MetalWhirVerifier
from whirgpu.ref import field_np as F
from whirgpu.runtime import _objc, metal_rt, upload
from whirgpu.runtime.metal_rt import MUL_VARIANTS, MetalRuntime

from ..protocol.test_roundtrip import SUBSET, _instance
from . import fake_objc, test_uploads

ON_MAC = sys.platform == "darwin"
mac_only = pytest.mark.skipif(not ON_MAC, reason="the real Metal runtime needs macOS and an Apple GPU")
PROOF_CASES = [c for c in SUBSET if c.id in ("c2-n5-red2-johnson-pow5-ef", "c4-n11-red3-capacity-pow10-ef+ef")]
assert len(PROOF_CASES) == 2


# ---- shared checks, run on the real device (macOS) and on the fake (everywhere) ----------------------------------

def _selftest(rt, op: int, n: int) -> None:
    rng = np.random.default_rng(n + op)
    words = n * (4 if op >= 3 else 1)
    a = rng.integers(0, P, words, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, P, words, dtype=np.uint64).astype(np.uint32)
    a[:4], b[:4] = [0, 1, P - 1, P - 2], [P - 1, P - 1, P - 1, 1]
    bufs = [rt.alloc(a.nbytes), rt.alloc(b.nbytes, StorageMode.SHARED), rt.alloc(a.nbytes)]
    rt.write(bufs[0], a)
    rt.write(bufs[1], b)
    batch = rt.batch()
    batch.dispatch(rt.kernel("field_selftest"), bufs, np.array([n, op], np.uint32), -(-n // 64))
    batch.submit()
    got = rt.read(bufs[2])
    if op >= 3:
        ref = {3: F.ef_mul, 4: F.ef_add}[op](a.reshape(-1, 4), b.reshape(-1, 4)).reshape(-1)
    else:
        ref = {0: F.add, 1: F.sub, 2: F.mul}[op](a, b)
    assert np.array_equal(got, ref), f"field_selftest op {op}, n {n}, {rt.mul}"


def _round_trips(rt) -> None:
    data = (np.arange(1000, dtype=np.uint64) * 2654435761 % (1 << 32)).astype(np.uint32)
    shared, private = rt.alloc(data.nbytes, StorageMode.SHARED), rt.alloc(data.nbytes, StorageMode.PRIVATE)
    for buffer in (shared, private):
        rt.write(buffer, data)
        assert np.array_equal(rt.read(buffer), data)
        rt.write(buffer, data[:10] + 1, offset=40)
        assert np.array_equal(rt.read(buffer, 40, offset=40), data[:10] + 1)
    target = rt.alloc(data.nbytes, StorageMode.PRIVATE)
    rt.write(target, np.zeros_like(data))
    batch = rt.batch()
    batch.copy(shared, 400, target, 0, 1200)  # Shared -> Private
    batch.copy(private, 0, target, 2000, 400)  # Private -> Private
    batch.submit()
    expected = np.zeros_like(data)
    expected[:300] = rt.read(shared)[100:400]
    expected[500:600] = rt.read(private)[:100]
    assert np.array_equal(rt.read(target), expected)
    times = rt.gpu_times()
    assert times and all(seconds >= 0 for _, seconds in times)
    assert rt.gpu_times() == []


def _compile_error_names_file_line(rt, monkeypatch) -> None:
    source = compose("msl", "field_selftest", (("bb_mul", rt.mul),))
    bad_line = next(i for i, (name, _) in enumerate(source.line_map) if name.endswith("field_selftest.metal")) + 3
    lines = source.text.splitlines()
    lines[bad_line] = "#error deliberately broken " + lines[bad_line]
    broken = ComposedSource("\n".join(lines) + "\n", source.line_map)
    monkeypatch.setattr(metal_rt, "compose", lambda *args: broken)
    rt._libraries.clear()
    rt._kernels.clear()
    with pytest.raises(ShaderCompileError) as info:
        rt.kernel("field_selftest")
    name, line = source.line_map[bad_line]
    assert f"{name}:{line}" in str(info.value) and "field_selftest" in str(info.value)


def _proof_text(proof) -> str:
    return json.dumps(proof_to_json_tree(proof), sort_keys=True, separators=(",", ":"))


def _proof_matches_cpu(backend, case) -> None:
    poly, statement = _instance(case)
    config = case.config()
    proof = MetalWhirProver(config, backend).prove(poly, statement)
    assert _proof_text(proof) == _proof_text(MetalWhirProver(config, CpuBackend()).prove(poly, statement))
    MetalWhirVerifier(config).verify(proof, statement)


# ---- everywhere: the bridge ----------------------------------------------------------------------------------------

def test_imports_everywhere():
    assert MetalRuntime.name == "metal" and MetalRuntime.lang == "msl"
    assert callable(_objc.send) and callable(metal_rt.metal_device_summary)


@pytest.mark.skipif(ON_MAC, reason="checks the refusal off macOS")
def test_unavailable_off_macos_names_macos():
    with pytest.raises(BackendUnavailable, match="Metal needs macOS"):
        MetalRuntime()
    summary, why = metal_rt.metal_device_summary()
    assert summary is None and "macOS" in why


def _table_ffi() -> FFI:
    ffi = FFI()
    ffi.cdef(_objc.TYPEDEFS)
    return ffi


@pytest.mark.parametrize("selector", sorted(_objc.SELECTORS))
def test_prototype_parses_and_counts_arguments(selector):
    proto, declaration = _objc.SELECTORS[selector]
    ctype = _table_ffi().typeof(proto)
    assert ctype.kind == "function" or ctype.kind == "pointer"
    function = ctype.item if ctype.kind == "pointer" else ctype
    assert not function.ellipsis, "objc_msgSend must never be called as variadic"
    args = [a.cname for a in function.args]
    assert args[:2] == ["void *", "void *"]  # id self, SEL _cmd
    assert len(args) == 2 + selector.count(":"), f"{selector}: {proto}"
    assert declaration.strip()


def test_send_refuses_a_selector_without_a_prototype():
    with pytest.raises(KeyError, match="no prototype"):
        _objc.send(None, "notInTheTable:")


def test_the_fake_implements_every_selector():
    assert fake_objc.check_selector_methods() == []


# ---- everywhere: the runtime against the fake Objective-C runtime ----------------------------------------------

@pytest.fixture
def fake(monkeypatch):
    """A FakeBridge installed as the process's bridge; after the test every +1 object must be released."""
    bridge = fake_objc.FakeBridge()
    monkeypatch.setattr(_objc, "bridge", lambda: bridge)
    yield bridge
    gc.collect()
    assert bridge.errors == []
    assert bridge.pools == []


def _fake_runtime(fake, mul="mulhi", **kw):
    fake.cpu.mul = mul  # kernels run as the multiply variant the runtime compiles
    return MetalRuntime(mul=mul, **kw)


def _closed(fake, rt) -> None:
    rt.close()
    del rt
    gc.collect()
    assert fake.leaks() == []


def test_fake_limits(fake):
    rt = _fake_runtime(fake)
    limits = rt.limits()
    assert (limits.name, limits.api, limits.device_type) == ("Fake Apple M9", "Metal (MSL)", "IntegratedGPU")
    assert limits.max_buffer_size == limits.max_storage_binding_size == 1 << 30
    assert limits.max_invocations_per_workgroup == 1024 and limits.max_workgroup_storage == 32768
    assert limits.recommended_working_set == 3 << 30 and limits.unified_memory and limits.has_timestamps
    assert limits.features == ("apple8", "mac2", "metal3", "mul-mulhi")
    assert limits.max_workgroups_per_dimension == (1 << 32) - 1
    _closed(fake, rt)


@pytest.mark.parametrize("mul", MUL_VARIANTS)
def test_fake_field_selftest(fake, mul):
    rt = _fake_runtime(fake, mul, max_groups_per_dim=3)  # 2-D grids from 4 threadgroups on
    for op, n in ((0, 70), (1, 300), (2, 1000), (3, 129), (4, 64)):
        _selftest(rt, op, n)
    _closed(fake, rt)


def test_fake_round_trips_and_blits(fake):
    rt = _fake_runtime(fake)
    _round_trips(rt)
    _closed(fake, rt)


def test_fake_uploads(fake, monkeypatch):
    """``test_uploads``' checks with its tiny plan: bit-exact writes in either mode, the last write wins, order with
    batches. PRIVATE writes are blits committed and not waited for, through a ring of staging buffers made once."""
    monkeypatch.setattr(upload, "MIN_SHARE_BYTES", 16)
    rt = _fake_runtime(fake, upload=test_uploads.PLAN)
    for mode in (StorageMode.SHARED, StorageMode.PRIVATE):
        test_uploads.check_writes(rt, mode)
        test_uploads.check_back_to_back(rt, mode)
        test_uploads.check_writes_and_batches(rt, mode)
    ring = list(rt._uploads)
    assert len(ring) == test_uploads.PLAN.slots and all(b.mode is StorageMode.SHARED for b in ring)
    live_buffers = sum(o.kind == "buffer" and not o.dead for o in fake.owned)
    target = rt.alloc(4 * test_uploads.BUFFER_WORDS)
    rt.wait()
    rt.write(target, np.arange(test_uploads.BUFFER_WORDS, dtype=np.uint32))
    assert [label for _, label in rt.inflight] == ["write"] * 16  # 16 chunks, committed and not waited for
    assert sum(o.kind == "buffer" and not o.dead for o in fake.owned) == live_buffers + 1  # the target alone
    assert rt._uploads == ring
    assert np.array_equal(rt.read(target), np.arange(test_uploads.BUFFER_WORDS, dtype=np.uint32))
    del target
    _closed(fake, rt)


def test_fake_free_releases_at_once(fake):
    rt = _fake_runtime(fake)
    buffer = rt.alloc(64)
    rt.free(buffer)
    assert buffer.handle is None and sum(o.kind == "buffer" and not o.dead for o in fake.owned) == 0
    _closed(fake, rt)


def test_fake_compile_error_names_file_line(fake, monkeypatch):
    rt = _fake_runtime(fake)
    _compile_error_names_file_line(rt, monkeypatch)
    _closed(fake, rt)


def test_fake_limits_are_enforced(fake):
    fake.max_pipeline_threads = 32
    rt = _fake_runtime(fake, max_binding_bytes=256)
    with pytest.raises(DeviceLimitError, match="64 threads per threadgroup.*maxTotalThreadsPerThreadgroup 32"):
        rt.kernel("field_selftest")
    with pytest.raises(DeviceLimitError, match=f"exceeds maxBufferLength {1 << 30}"):
        rt.alloc((1 << 30) + 4)
    fake.max_pipeline_threads = 1024
    big = rt.alloc(1024)
    with pytest.raises(DeviceLimitError, match="binding 0 of 1024 bytes exceeds max_storage_binding_size 256"):
        rt.batch().dispatch(rt.kernel("field_selftest"), [big, big, big], None, 1)
    del big
    _closed(fake, rt)


def test_fake_max_binding_from_the_environment(fake, monkeypatch):
    """WHIRGPU_MAX_BINDING_BYTES lowers Metal's binding limit (its own: maxBufferLength), says so, and is enforced;
    a constructor argument wins; a value above maxBufferLength keeps the device's."""
    device = _fake_runtime(fake).limits()
    monkeypatch.setenv("WHIRGPU_MAX_BINDING_BYTES", "4K")
    rt = _fake_runtime(fake)
    limits = rt.limits()
    assert (limits.max_storage_binding_size, limits.binding_lowered_by, limits.device_storage_binding_size) == \
        (4096, "WHIRGPU_MAX_BINDING_BYTES", device.max_buffer_size)
    big = rt.alloc(8192)
    with pytest.raises(DeviceLimitError, match="binding 0 of 8192 bytes exceeds max_storage_binding_size 4096"):
        rt.batch().dispatch(rt.kernel("field_selftest"), [big, big, big], None, 1)
    del big
    assert _fake_runtime(fake, max_binding_bytes=256).limits().binding_lowered_by == "max_binding_bytes"
    monkeypatch.setenv("WHIRGPU_MAX_BINDING_BYTES", str(device.max_buffer_size + 4))
    assert _fake_runtime(fake).limits() == device
    _closed(fake, rt)


@pytest.mark.parametrize("case", PROOF_CASES, ids=lambda c: c.id)
def test_fake_proof_identical_to_cpu(fake, case):
    rt = _fake_runtime(fake, max_groups_per_dim=7)
    backend = GpuBackend(rt)
    _proof_matches_cpu(backend, case)
    assert fake.dispatches > 0 and rt.gpu_times()
    del backend
    _closed(fake, rt)


# ---- macOS: the real device ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def metal():
    rt = MetalRuntime()
    yield rt
    rt.close()


@mac_only
def test_device_opens_with_sane_limits(metal):
    limits = metal.limits()
    assert limits.api == "Metal (MSL)" and limits.name
    assert limits.max_buffer_size >= 1 << 28 and limits.max_storage_binding_size == limits.max_buffer_size
    assert limits.max_workgroup_storage >= 16384 and limits.max_invocations_per_workgroup >= 256
    assert limits.has_native_mulhi and limits.has_u64 and limits.subgroup_size == 32
    assert any(f.startswith(("apple", "mac")) for f in limits.features)
    summary, why = metal_rt.metal_device_summary()
    assert why is None and summary["name"] == limits.name


@mac_only
@pytest.mark.parametrize("mul", MUL_VARIANTS)
def test_field_selftest_bit_exact(mul):
    rt = MetalRuntime(mul=mul, max_groups_per_dim=3)
    try:
        for op, n in ((0, 70), (1, 300), (2, 5000), (3, 1300), (4, 64)):
            _selftest(rt, op, n)
    finally:
        rt.close()


@mac_only
def test_shared_and_private_round_trips_and_blit(metal):
    _round_trips(metal)


@mac_only
def test_compile_error_names_file_line(monkeypatch):
    rt = MetalRuntime()
    try:
        _compile_error_names_file_line(rt, monkeypatch)
    finally:
        rt.close()


@mac_only
@pytest.mark.parametrize("case", PROOF_CASES, ids=lambda c: c.id)
def test_proof_identical_to_cpu(metal, case):
    _proof_matches_cpu(GpuBackend(metal), case)
