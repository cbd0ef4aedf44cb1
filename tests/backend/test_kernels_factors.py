"""factor_tables (every eq and select factor table of a weights call in one launch) against the numpy reference,
word for word, on every runtime: random and edge inputs (0, 1, p - 1), inputs at offsets inside bigger buffers,
tables of one entry up to ones past one workgroup, the fixture's lowered group limit putting the larger launches
on the 2-D grid. Words between and after the tables must keep their garbage."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.gpu import factor_layout, factor_parts, factor_sizes
from whirgpu.field import P
from whirgpu.ref import field_np as F
from whirgpu.ref.multilinear import eq_table
from whirgpu.runtime.base import RtView

WG = 256
GARBAGE = 0xDEADBEEF
ALIGN = 256


def _random(rng, shape) -> np.ndarray:
    x = rng.integers(0, P, shape, dtype=np.uint64).astype(np.uint32)
    flat = x.reshape(-1)
    flat[: min(3, flat.size)] = [0, F.ONE, P - 1][: min(3, flat.size)]  # edges: 0, 1 and -1 (Montgomery words)
    return x


def _upload(rt, array: np.ndarray, pad_words: int = 0):
    """``array`` after ``pad_words`` garbage words (inputs at an offset of a bigger buffer)."""
    words = np.concatenate([np.full(pad_words, GARBAGE, np.uint32), np.ascontiguousarray(array, np.uint32).ravel()])
    buffer = rt.alloc(max(words.nbytes, 16))
    rt.write(buffer, words)
    return buffer


def _expected(points, eq_scales, bases, sel_scales, nv, log_lo):
    """The four tables as flat word arrays (eq lo, eq hi, sel lo, sel hi)."""
    hi = nv - log_lo
    eq_lo = [eq_table(p[hi:]) for p in points]
    eq_hi = [eq_table(p[:hi], s) for p, s in zip(points, eq_scales)] if eq_scales is not None else \
        [eq_table(p[:hi]) for p in points]
    sel_lo = [F.powers(v, 1 << log_lo) for v in bases]
    sel_hi = [F.ef_mul_base(s.reshape(1, 4), F.powers(F.power(v, 1 << log_lo), 1 << hi)) for v, s in
              zip(bases, sel_scales)]
    flat = lambda tables: np.concatenate([t.reshape(-1) for t in tables]) if tables else np.zeros(0, np.uint32)  # noqa: E731
    return [flat(eq_lo), flat(eq_hi), flat(sel_lo), flat(sel_hi)]


@pytest.mark.parametrize("binding", [1 << 30, 1024], ids=["one-launch", "per-table"])
@pytest.mark.parametrize("n_eq,n_sel,nv,log_lo,scaled", [
    (1, 0, 0, 0, False), (1, 0, 1, 1, False), (1, 0, 5, 3, False), (3, 0, 8, 4, True), (0, 5, 7, 4, False),
    (2, 7, 9, 5, True), (4, 33, 13, 7, True), (0, 0, 4, 2, False), (1, 1, 12, 6, True)])
def test_factor_tables(gpu_runtime, n_eq, n_sel, nv, log_lo, scaled, binding):
    """All tables in one launch, or (past a binding of 1 KiB) one launch per table bound as its own window."""
    rt = gpu_runtime
    rng = np.random.default_rng(1000 * nv + 10 * n_eq + n_sel)
    points = _random(rng, (n_eq, nv, 4))
    eq_scales = _random(rng, (n_eq, 4)) if scaled else None
    bases, sel_scales = _random(rng, (n_sel,)), _random(rng, (n_sel, 4))
    offsets, total = factor_layout(n_eq, n_sel, nv, log_lo, ALIGN)
    out = _upload(rt, np.full(total // 4 + 7, GARBAGE, np.uint32))
    coord_off, scale_off, base_off, sel_off = 3, 2, 5, 1  # in EF elements, EF, words, EF
    head = [n_eq, n_sel, nv, log_lo, int(scaled), coord_off, scale_off, base_off, sel_off]
    inputs = [_upload(rt, points, 4 * coord_off), _upload(rt, eq_scales if scaled else np.zeros(4), 4 * scale_off),
              _upload(rt, bases, base_off), _upload(rt, sel_scales, 4 * sel_off)]
    batch = rt.batch()
    for window, ats, first, end in factor_parts(n_eq, n_sel, nv, log_lo, ALIGN, binding):
        target = out if window is None else RtView(out, *window)
        batch.dispatch(rt.kernel("factor_tables"), inputs + [target],
                       np.array(head + [at // 4 for at in ats] + [first, end], np.uint32),
                       max(1, -(-(end - first) // WG)))
    batch.submit()
    got = rt.read(out)
    written = np.zeros(got.size, bool)
    for at, size, want, name in zip(offsets, factor_sizes(n_eq, n_sel, nv, log_lo),
                                    _expected(points, eq_scales, bases, sel_scales, nv, log_lo),
                                    ["eq lo", "eq hi", "sel lo", "sel hi"]):
        np.testing.assert_array_equal(got[at // 4:(at + size) // 4], want, err_msg=name)
        written[at // 4:(at + size) // 4] = True
    assert (got[~written] == GARBAGE).all()
