"""``mask_matrix`` (a hiding-PCS mask oracle's coefficient matrix built on the device from mask draws in a buffer,
``kernels/mask_matrix``) against its numpy twin (``mask_matrix_reference``) and against the host form
(``zk.oracles.coefficient_matrix``: the coefficients ``oracles.mask_matrix`` evaluates, padded and bit-reversed),
word for word, on every runtime: the batch layout (messages,
then randomness rows, each contiguous) and the group layout (each column's message then its randomness), one
column, 2^log_cols columns and a non-power-of-two count, no randomness, a full column (msg_len + rnd_len =
2^log_rows), a single row (log_rows 0), rows bit-reversed and natural, draws at a nonzero entry of the binding,
buffers and views, and outputs past the fixture's 7 workgroups per grid dimension (the 2-D grid). Every output
word is written over garbage; the words past the matrix keep theirs."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.bench.kernel_models import BYTES, launch_work
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.kernels.mask_matrix import mask_matrix_reference, record_mask_matrix
from whirgpu.profiles.p3_whir.zk.oracles import coefficient_matrix
from whirgpu.ref.ntt import bit_reverse_permutation
from whirgpu.runtime.base import RtView

from .field_inputs import random_monty

GARBAGE = 0xDEADBEEF
TAIL = 16  # garbage words past the matrix


def _words(rng, n: int) -> np.ndarray:
    return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)


def _binding(rt, words: np.ndarray, view: bool):
    """(binding, buffer) holding ``words``: the buffer itself, or a view of it past an aligned run of junk."""
    lead = max(4, int(rt.offset_alignment)) // 4 if view else 0
    data = np.concatenate([np.full(lead, 0x0BADF00D, np.uint32), words])
    buffer = rt.alloc(max(4, data.nbytes))
    rt.write(buffer, data)
    return (RtView(buffer, 4 * lead, words.nbytes) if view else buffer), buffer


def _device(rt, src_entries: np.ndarray, view: bool = False, **kw) -> np.ndarray:
    """The kernel's matrix (2^log_rows, 2^log_cols, 4) written over garbage; the garbage past it checked."""
    shape = (1 << kw["log_rows"], 1 << kw["log_cols"], 4)
    n = int(np.prod(shape))
    src, src_buffer = _binding(rt, np.ascontiguousarray(src_entries, np.uint32).reshape(-1), view)
    out, out_buffer = _binding(rt, np.full(n + TAIL, GARBAGE, np.uint32), view)
    batch = rt.batch()
    assert record_mask_matrix(rt, batch, src, out, **kw) == n
    batch.submit()
    lead = out.offset // 4 if view else 0
    got = rt.read(out_buffer)[lead:lead + n + TAIL]
    assert (got[n:] == GARBAGE).all()
    for buffer in (src_buffer, out_buffer):
        rt.free(buffer)
    return got[:n].reshape(shape)


def _layout(rng, field, w: int, m: int, t: int, lead: int, layout: str):
    """(src entries, messages (w, m, 4), randomness (w, t, 4), the kernel's offsets and strides) for w columns
    of m message and t randomness entries at entry ``lead`` (junk around them)."""
    messages, randomness = random_monty(rng, field, (w, m, 4)), random_monty(rng, field, (w, t, 4))
    if layout == "batch":
        body = np.concatenate([messages.reshape(-1, 4), randomness.reshape(-1, 4)])
        geometry = {"msg_at": lead, "msg_stride": m, "rnd_at": lead + w * m, "rnd_stride": t}
    else:
        body = np.concatenate([messages, randomness], axis=1).reshape(-1, 4)
        geometry = {"msg_at": lead, "msg_stride": m + t, "rnd_at": lead + m, "rnd_stride": m + t}
    junk = random_monty(rng, field, (lead + 3, 4))
    src = np.concatenate([junk[:lead], body, junk[lead:]])
    return src, messages, randomness, dict(geometry, msg_len=m, rnd_len=t, columns=w)


# (w columns, m message rows, t randomness rows, log_rows): one column; 2^log_cols columns; w not a power of two;
# no randomness; msg_len + rnd_len = 2^log_rows; one row; outputs of 8,192 and 262,144 words (the 2-D grid)
SHAPES = [(1, 4, 3, 3), (4, 5, 3, 4), (5, 2, 9, 4), (3, 7, 0, 3), (3, 5, 11, 4), (1, 1, 0, 0), (2, 1, 0, 1),
          (5, 41, 101, 8), (37, 100, 300, 10)]


@pytest.mark.parametrize("layout", ["batch", "group"])
@pytest.mark.parametrize("w,m,t,log_rows", SHAPES)
@pytest.mark.parametrize("reversed_rows", [True, False], ids=["reversed", "natural"])
@pytest.mark.parametrize("lead", [0, 3])
def test_is_the_host_coefficient_matrix(gpu_runtime, layout, w, m, t, log_rows, reversed_rows, lead):
    field = BABYBEAR if (w + m) % 2 else KOALABEAR
    rng = np.random.default_rng(w * 1000 + m * 10 + t + lead)
    src, messages, randomness, geometry = _layout(rng, field, w, m, t, lead, layout)
    kw = dict(geometry, log_rows=log_rows, log_cols=(w - 1).bit_length(), reversed=reversed_rows)
    want = coefficient_matrix(messages, randomness, 1 << log_rows)
    if not reversed_rows:
        want = want[bit_reverse_permutation(log_rows)]
    np.testing.assert_array_equal(mask_matrix_reference(src, **kw), want)
    np.testing.assert_array_equal(_device(gpu_runtime, src, **kw), want)


# (log_rows, log_cols, columns, msg_at, msg_stride, msg_len, rnd_at, rnd_stride, rnd_len): strides past the
# lengths, reads shared between columns, no message rows, fewer columns than the width, zero columns, a stride of 0
ODD = [(4, 3, 5, 7, 13, 6, 2, 4, 9), (3, 2, 4, 0, 2, 5, 1, 1, 3), (5, 1, 2, 40, 30, 0, 0, 19, 30),
       (2, 4, 9, 1, 1, 2, 11, 3, 1), (3, 3, 0, 0, 0, 4, 0, 0, 4), (4, 2, 3, 5, 0, 16, 0, 0, 0),
       (9, 3, 6, 10, 200, 180, 0, 7, 300)]


@pytest.mark.parametrize("params", ODD)
@pytest.mark.parametrize("reversed_rows", [True, False], ids=["reversed", "natural"])
@pytest.mark.parametrize("view", [False, True], ids=["buffers", "views"])
def test_is_the_reference(gpu_runtime, params, reversed_rows, view):
    names = ("log_rows", "log_cols", "columns", "msg_at", "msg_stride", "msg_len", "rnd_at", "rnd_stride", "rnd_len")
    kw = dict(zip(names, params), reversed=reversed_rows)
    ends = [kw["msg_at"] + max(kw["columns"] - 1, 0) * kw["msg_stride"] + kw["msg_len"],
            kw["rnd_at"] + max(kw["columns"] - 1, 0) * kw["rnd_stride"] + kw["rnd_len"]]
    rng = np.random.default_rng(sum(params))
    src = _words(rng, 4 * (max(ends) + 2)).reshape(-1, 4)
    want = mask_matrix_reference(src, **kw)
    np.testing.assert_array_equal(_device(gpu_runtime, src, view=view, **kw), want)
    # the reference by its definition, entry by entry
    for g in range(1 << kw["log_rows"]):
        r = int(bit_reverse_permutation(kw["log_rows"])[g]) if reversed_rows else g
        for c in range(1 << kw["log_cols"]):
            if c < kw["columns"] and r < kw["msg_len"]:
                expected = src[kw["msg_at"] + c * kw["msg_stride"] + r]
            elif c < kw["columns"] and r < kw["msg_len"] + kw["rnd_len"]:
                expected = src[kw["rnd_at"] + c * kw["rnd_stride"] + r - kw["msg_len"]]
            else:
                expected = np.zeros(4, np.uint32)
            np.testing.assert_array_equal(want[g, c], expected)


def test_bad_shapes_are_refused(gpu_runtime):
    rt = gpu_runtime
    src, out = rt.alloc(16 * 20), rt.alloc(16 * 32)
    ok = {"log_rows": 3, "log_cols": 2, "columns": 4, "msg_at": 0, "msg_stride": 5, "msg_len": 3, "rnd_at": 0,
          "rnd_stride": 5, "rnd_len": 2}
    record_mask_matrix(rt, rt.batch(), src, out, **ok)  # reads entries up to 17 of 20; 32 output entries
    for change, match in [({"columns": 5}, "5 columns do not fit 2\\^2"),
                          ({"msg_len": 5, "rnd_len": 4}, "5 message \\+ 4 randomness rows do not fit 2\\^3"),
                          ({"msg_at": 3}, "message entries up to 20 .* overrun the 20-entry src binding"),
                          ({"rnd_stride": 7}, "randomness entries up to 22 .* overrun"),
                          ({"rnd_at": -1}, "negative offset or stride"),
                          ({"log_rows": 20, "log_cols": 10}, "below 2\\^32"),
                          ({"log_rows": 4}, "holds 128")]:
        with pytest.raises(ValueError, match=match):
            record_mask_matrix(rt, rt.batch(), src, out, **{**ok, **change})
    with pytest.raises(ValueError, match="overrun the 4-entry src binding"):
        record_mask_matrix(rt, rt.batch(), RtView(src, 0, 64), out, **ok)
    with pytest.raises(ValueError, match="rows do not fit"):
        mask_matrix_reference(np.zeros((20, 4), np.uint32), **{**ok, "msg_len": 9})


def test_work_model_counts_the_bytes_moved():
    params = [4 << 10, 8, 2, 3, 0, 7, 5, 21, 9, 2, 1, 0]  # 256 x 4 entries; 3 columns of 5 + 2 entries read
    assert launch_work("mask_matrix", params).unit == BYTES
    assert launch_work("mask_matrix", params).amount == 4 * (4 << 10) + 16 * 3 * 7
