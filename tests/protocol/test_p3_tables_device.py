"""Tables already on the GPU (issue 38 item 2): ``P3Tables([buffer, ...], orient=..., shapes=[(log_rows, columns),
...])`` on the wgpu and dawn backends, each a ``GPUBuffer`` made on ``backend.device`` with STORAGE usage, holding
canonical words row- or column-major, read where it lies and never written: the proof is byte for byte that of the
same arrays on the host, in both orientations and both layouts; a buffer of another device, too small, without
STORAGE usage or holding a non-canonical word is a one-line ``ConfigError``."""

from __future__ import annotations

import numpy as np
import pytest

import whirgpu
from whirgpu.errors import ConfigError

from .test_p3_tables import make_backend
from .test_p3_tables_api import PARAMS, SCHEDULE, _traces

DEVICE_BACKENDS = ["wgpu-emulated", "dawn-emulated"]


@pytest.fixture(params=DEVICE_BACKENDS, scope="module")
def backend(request):
    backend = make_backend(request.param)
    if backend.device is None:
        backend.close()
        pytest.skip(f"{backend.name} takes no caller's buffers")
    yield backend
    backend.close()


def _buffer(backend, array, usage_names=("STORAGE", "COPY_SRC")):
    usage = backend.rt.wgpu.BufferUsage
    flags = 0
    for name in usage_names:
        flags |= int(usage[name])
    return backend.device.create_buffer_with_data(data=np.ascontiguousarray(array, np.uint32), usage=flags)


def _held(traces, orient):
    return [t if orient == "rows" else np.ascontiguousarray(t.T) for t in traces]


def _shapes(traces):
    return [(t.shape[0].bit_length() - 1, t.shape[1]) for t in traces]


@pytest.mark.parametrize("orient", ["rows", "columns"])
@pytest.mark.parametrize("layout", ["suffix", "prefix"])
def test_device_tables_prove_the_host_bytes(backend, orient, layout):
    traces = _traces(7)
    held = _held(traces, orient)
    host = whirgpu.P3Tables(held, orient=orient, params=PARAMS, layout=layout, backend=backend)
    want = host.commit().open(SCHEDULE).dumps()
    buffers = [_buffer(backend, a) for a in held]
    device = whirgpu.P3Tables(buffers, orient=orient, shapes=_shapes(traces), params=PARAMS, layout=layout,
                              backend=backend)
    assert device.shapes == host.shapes
    assert device.commit().open(SCHEDULE).dumps() == want
    for buffer, array in zip(buffers, held):  # never written
        assert np.array_equal(np.frombuffer(backend.device.queue.read_buffer(buffer), np.uint32), array.ravel())


def _other_device(backend):
    """A second device of the backend's implementation (Dawn's adapters make one device each: a fresh adapter)."""
    try:
        return backend.rt.adapter.request_device_sync()
    except RuntimeError:
        adapter = backend.rt.wgpu.gpu.request_adapter_sync()
        if adapter is None:
            pytest.skip("no second adapter for a second device")
        return adapter.request_device_sync()


def _refusal(backend, tables, shapes, match):
    with pytest.raises(ConfigError, match=match) as info:
        whirgpu.P3Tables(tables, orient="rows", shapes=shapes, params=PARAMS, backend=backend).commit()
    assert "\n" not in str(info.value)


def test_device_table_refusals(backend):
    traces = _traces(2)
    good = [_buffer(backend, t) for t in traces]
    shapes = _shapes(traces)
    _refusal(backend, good, None, r"table 0: a device buffer carries no shape")
    _refusal(backend, [_buffer(backend, traces[0][:512])] + good[1:], shapes, r"table 0: the buffer holds 6144 bytes")
    _refusal(backend, [good[0], _buffer(backend, traces[1], ("COPY_SRC",))] + good[2:], shapes,
             r"table 1: the buffer needs STORAGE usage")
    other = _other_device(backend)
    usage = backend.rt.wgpu.BufferUsage
    foreign = other.create_buffer_with_data(data=traces[2], usage=usage.STORAGE)
    _refusal(backend, good[:2] + [foreign], shapes, r"table 2: the buffer was not created on this prover's device")
    bad = traces[1].copy()
    bad[5, 1] = 2**31 - 2**24 + 1  # p itself
    _refusal(backend, [good[0], _buffer(backend, bad)] + good[2:], shapes,
             r"table 1\[11\] = 2130706433 is not a canonical field element")
