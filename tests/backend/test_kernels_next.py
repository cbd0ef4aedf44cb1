"""Next-row weights (``Backend.add_next_weights``, the ``next_weights`` kernel) on every runtime against the numpy
reference (``CpuBackend``, ``ref.shift``), bit for bit: random and edge words, points not boolean, runs of equal
windows and lone ones, windows at either end and of 0 variables, tables of one entry up to several workgroups,
bound whole, in windows (the shift reading the window below, or one far below) and split over buffers."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR
from .field_inputs import random_monty


@pytest.fixture(scope="module", params=["whole", "windows", "buffers"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param in ("windows", "buffers"):
        backend.binding_limit = 256  # 16 EF entries per binding
    if request.param == "buffers":
        backend.buffer_limit = 1024  # 64 EF entries per buffer
    yield backend
    backend.layout = CpuBackend.layout


# (num_variables, windows (start, m)): one entry; a whole-table window; runs and lone windows; windows of 0
# variables, at the top (start 0) and the bottom (start + m = nv), the shift step below, at and above a 16-entry
# binding window; 2^9 entries = two workgroups
CASES = [
    (0, [(0, 0)]),
    (1, [(0, 1), (0, 1), (1, 0)]),
    (3, [(1, 2), (1, 2), (0, 3), (0, 0), (2, 1)]),
    (6, [(0, 2), (0, 2), (0, 2), (4, 2), (1, 4), (3, 0)]),
    (9, [(2, 7), (0, 3), (0, 3), (5, 4), (9, 0), (0, 9)]),
]


@pytest.mark.parametrize("field", [BABYBEAR, KOALABEAR], ids=lambda f: f.name)
@pytest.mark.parametrize("nv,windows", CASES, ids=[f"nv{c[0]}" for c in CASES])
def test_add_next_weights(gpu, field, nv, windows):
    cpu = CpuBackend()
    gpu.layout = cpu.layout = P3_WHIR_LAYOUT(field)
    rng = np.random.default_rng(nv * 31 + field.P % 97)
    weights = random_monty(rng, field, (1 << nv, 4))
    points = random_monty(rng, field, (len(windows), nv, 4))
    coefficients = random_monty(rng, field, (len(windows), 4))
    expected = cpu.add_next_weights(cpu.upload(weights), points, np.array(windows), coefficients).handle
    got = gpu.add_next_weights(gpu.upload(weights), points, np.array(windows), coefficients)
    assert np.array_equal(gpu.download(got), expected)


def test_a_bad_window_is_refused(gpu):
    with pytest.raises(ValueError, match="does not fit"):
        gpu.add_next_weights(gpu.upload(np.zeros((4, 4), np.uint32)), np.zeros((1, 2, 4), np.uint32),
                             np.array([(1, 2)]), np.zeros((1, 4), np.uint32))
