"""Canonical input on the device (``to_monty``): ``upload_canonical`` converts canonical words to Montgomery words
and range-checks them on every runtime, word for word against ``field_np.to_monty``, from host arrays (converted
in place) and from a caller's device buffer (``to_monty_copy``: the buffer is never written). Sizes cross one
workgroup, the 2-D grid (the fixture lowers the per-dimension limit to 7 workgroups), table windows (binding
limit lowered) and tables split over several buffers (buffer limit lowered). A word >= p is refused with the
first such index and its value, whatever window it lies in."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.errors import ConfigError
from whirgpu.field import P
from whirgpu.ref import field_np as F

# (entries, binding bytes, buffer bytes): one workgroup, a 2-D grid, windows of one buffer, several buffers
LAYOUTS = [(64, None, None), (1 << 12, None, None), (1 << 11, 1024, None), (1 << 11, 1024, 4096)]


def _backend(runtime, binding: int | None, buffer: int | None) -> GpuBackend:
    backend = GpuBackend(runtime)
    if binding is not None:
        backend.binding_limit = binding
    if buffer is not None:
        backend.buffer_limit = buffer
    return backend


def _words(n: int, seed: int) -> np.ndarray:
    words = np.random.default_rng(seed).integers(0, P, n, dtype=np.uint64).astype(np.uint32)
    words[:3] = (0, 1, P - 1)  # the edges of the canonical range
    words[-1] = P - 1
    return words


def _device_words(runtime, words: np.ndarray):
    """``words`` in a buffer the caller makes on the runtime's device (wgpu and dawn only)."""
    if runtime.lang != "wgsl":
        pytest.skip(f"{runtime.name} takes no caller's buffers")
    usage = runtime.wgpu.BufferUsage
    return runtime.device.create_buffer_with_data(data=words, usage=usage.STORAGE | usage.COPY_SRC)


@pytest.mark.parametrize("n,binding,buffer", LAYOUTS)
def test_host_words_match_the_reference(gpu_runtime, n, binding, buffer):
    backend = _backend(gpu_runtime, binding, buffer)
    words = _words(n, n)
    table = backend.upload_canonical(words)
    if buffer is not None:
        assert len(table.handle.buffers) == n * 4 // buffer, "the layout does not split the table"
    assert np.array_equal(backend.download(table), F.to_monty(words))
    assert np.array_equal(CpuBackend().download(CpuBackend().upload_canonical(words)), F.to_monty(words))


@pytest.mark.parametrize("n,binding,buffer", LAYOUTS)
def test_device_words_match_the_reference_and_stay_untouched(gpu_runtime, n, binding, buffer):
    backend = _backend(gpu_runtime, binding, buffer)
    words = _words(n, n + 1)
    source = _device_words(gpu_runtime, words)
    table = backend.upload_canonical(backend.device_table(source, n))
    assert np.array_equal(backend.download(table), F.to_monty(words))
    assert np.array_equal(gpu_runtime.read(gpu_runtime.adopt(source, 4 * n)), words), "the caller's buffer changed"


# positions of the words >= p: the first word, the last, two in different windows (the smaller must be named)
BAD = [([0], [P]), ([2047], [0xFFFFFFFF]), ([1500, 300], [P + 1, 1 << 31])]


@pytest.mark.parametrize("positions,values", BAD)
@pytest.mark.parametrize("from_device", [False, True], ids=["host", "device"])
def test_the_first_non_canonical_word_is_named(gpu_runtime, positions, values, from_device):
    backend = _backend(gpu_runtime, 1024, 4096)  # 2^11 words: two buffers of two windows each
    words = _words(1 << 11, 5)
    words[positions] = values
    first = min(positions)
    expected = f"evaluations\\[{first}\\] = {values[positions.index(first)]} is not a canonical field element"
    source = backend.device_table(_device_words(gpu_runtime, words), words.size) if from_device else words
    with pytest.raises(ConfigError, match=expected):
        backend.upload_canonical(source)
    with pytest.raises(ConfigError, match=expected):
        CpuBackend().upload_canonical(words)
    good = _words(1 << 11, 6)  # the backend is usable afterwards
    assert np.array_equal(backend.download(backend.upload_canonical(good)), F.to_monty(good))


def test_device_buffers_are_checked(gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if gpu_runtime.lang != "wgsl":
        with pytest.raises(ConfigError, match="wgpu and dawn"):
            backend.device_table(object(), 16)
        return
    usage = gpu_runtime.wgpu.BufferUsage
    device = backend.device
    with pytest.raises(ConfigError, match="holds 32 bytes; the table needs 64"):
        backend.device_table(device.create_buffer(size=32, usage=usage.STORAGE), 16)
    with pytest.raises(ConfigError, match="needs STORAGE usage.*COPY_DST"):
        backend.device_table(device.create_buffer(size=64, usage=usage.COPY_DST), 16)
    other = type(gpu_runtime)(mul=gpu_runtime.mul)
    with pytest.raises(ConfigError, match="not created on this prover's device"):
        backend.device_table(other.device.create_buffer(size=64, usage=usage.STORAGE), 16)
    with pytest.raises(ConfigError, match="wgpu or dawn backend"):
        CpuBackend().device_table(device.create_buffer(size=64, usage=usage.STORAGE), 16)


def test_a_device_buffer_is_adopted_once(gpu_runtime):
    """Proofs of one caller's buffer bind the same RtBuffer (so the runtime's cached bind groups are reused)."""
    if gpu_runtime.lang != "wgsl":
        pytest.skip(f"{gpu_runtime.name} takes no caller's buffers")
    source = _device_words(gpu_runtime, _words(64, 9))
    first = gpu_runtime.adopt(source, 256)
    assert gpu_runtime.adopt(source, 256) is first
    assert gpu_runtime.adopt(source, 128) is not first


@pytest.mark.parametrize("n,binding,buffer", LAYOUTS)
def test_uploads_into_reserved_storage_are_the_uploads(gpu_runtime, n, binding, buffer):
    """``DeviceMemory.reserve`` takes the storage first; ``upload_canonical`` and ``upload`` into it write those
    buffers (no new ones) and give what they give into new storage; storage of another shape is refused by name."""
    backend = _backend(gpu_runtime, binding, buffer)
    words = _words(n, n + 2)
    reserved = backend.memory.reserve(words.shape)
    table = backend.memory.upload_canonical(words, reserved)
    assert table.handle is reserved
    assert np.array_equal(backend.download(table), F.to_monty(words))
    monty = F.to_monty(_words(n, n + 3))
    again = backend.memory.reserve(monty.shape)
    plain = backend.memory.upload(monty, into=again)
    assert plain.handle is again and np.array_equal(backend.download(plain), monty)
    with pytest.raises(ValueError, match=f"storage of {n} x 4 B: the array is {n // 2} x 4 B"):
        backend.memory.upload(monty[:n // 2], into=backend.memory.reserve(monty.shape))
    with pytest.raises(ValueError, match=f"storage of {n} x 4 B: the source is {2 * n} words"):
        backend.memory.upload_canonical(np.concatenate([words, words]), backend.memory.reserve(words.shape))
