"""``GpuBackend.masked_rounds`` (the hiding PCS's masked sumcheck batch in one session: ``zk_wire`` makes each
round message on the device, the transcript runs there) against the numpy reference loop
``zk.sumcheck.host_rounds`` over ``ResidualSumcheck``, word for word: every round's sums, message, witness and
challenge, the folded tables (also as read back with the batch, ``read_tables``) and the challenger's state after
the batch. Both fields, base and EF tables, masks shorter and longer than a message (ell 1, 4, 6), with and
without proof of work, on random and edge values (``field_inputs.random_monty``), from a challenger with pending
input or with outputs left, on every runtime fixture, with tables bound whole and in windows (lowered binding
limit)."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.device_transcript import TranscriptVariant
from whirgpu.backends.gpu import GpuBackend
from whirgpu.backends.masked_rounds import MaskedRoundsPlan
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.zk.sumcheck import ResidualSumcheck, host_rounds
from whirgpu.ref.field_np import field_ops

from .field_inputs import random_monty


@pytest.fixture(scope="module", params=["whole", "windows"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param == "windows":
        backend.binding_limit = 4096  # 256 EF entries per binding: the 2^9 tables are bound in windows
    yield backend
    backend.layout = CpuBackend.layout


def _challenger(field, rng, state: str):
    challenger = TranscriptVariant.p3(field).challenger()
    challenger.observe_many(random_monty(rng, field, (11,)))
    if state == "outputs-left":
        challenger.sample()
    return challenger


CASES = [  # (field, log_n, base table, rounds, ell, pow bits, challenger state)
    (KOALABEAR, 5, True, 3, 4, 0, "input-pending"),
    (KOALABEAR, 9, False, 5, 4, 3, "outputs-left"),
    (BABYBEAR, 4, True, 4, 1, 2, "outputs-left"),
    (BABYBEAR, 9, True, 2, 6, 0, "input-pending"),
    (KOALABEAR, 2, False, 1, 6, 1, "input-pending"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}-n{c[1]}-{'base' if c[2] else 'ef'}-k{c[3]}"
                                                       f"-ell{c[4]}-pow{c[5]}-{c[6]}")
@pytest.mark.parametrize("read_tables", [False, True], ids=["device-tables", "tables-read-back"])
def test_a_batch_is_the_reference_loop(gpu, case, read_tables):
    field, log_n, base, k, ell, pow_bits, state = case
    ops = field_ops(field)
    rng = np.random.default_rng(log_n * 100 + k * 10 + ell)
    table = random_monty(rng, field, (1 << log_n,) if base else (1 << log_n, 4))
    weights = random_monty(rng, field, (1 << log_n, 4))
    w = max(ell, 3) - 1
    plan = MaskedRoundsPlan(random_monty(rng, field, (k, w, 4)), random_monty(rng, field, (k, 4)), random_monty(rng, field, (4,)),
                            random_monty(rng, field, (k, ell, 4)), pow_bits, read_tables)
    challenger, reference = _challenger(field, np.random.default_rng(7), state), \
        _challenger(field, np.random.default_rng(7), state)

    residual = ResidualSumcheck(table.copy(), weights.copy(), ops.ef_from_base(ops.ZERO), field)
    want = host_rounds(residual, plan, reference)

    gpu.layout = P3_WHIR_LAYOUT(field, "prefix")
    t, wt = gpu.upload(table), gpu.upload(weights)
    out = gpu.masked_rounds(t, wt, challenger, plan)
    assert out is not None
    folded, folded_weights, got = out
    for name in ("sums", "wires", "witnesses", "gammas"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    np.testing.assert_array_equal(gpu.download(folded), residual.evals)
    np.testing.assert_array_equal(gpu.download(folded_weights), residual.weights)
    if read_tables:  # read back with the batch, the same words
        np.testing.assert_array_equal(got.tables[0], residual.evals)
        np.testing.assert_array_equal(got.tables[1], residual.weights)
    else:
        assert got.tables is None
    assert challenger.same_state(reference)
    assert challenger.sample_ef().tolist() == reference.sample_ef().tolist()
    np.testing.assert_array_equal(gpu.download(t), table)  # the inputs are the caller's, untouched
    gpu.release(t, wt, folded, folded_weights)


def test_a_batch_that_does_not_fit_is_left_to_the_loop(gpu):
    """More rounds than the table has variables: None (the caller's loop then raises its own error)."""
    field = KOALABEAR
    rng = np.random.default_rng(3)
    gpu.layout = P3_WHIR_LAYOUT(field, "prefix")
    plan = MaskedRoundsPlan(*(random_monty(rng, field, s) for s in ((3, 2, 4), (3, 4), (4,), (3, 4, 4))), 0)
    table = gpu.upload(random_monty(rng, field, (4, 4)))
    assert gpu.masked_rounds(table, table, TranscriptVariant.p3(field).challenger(), plan) is None
    assert CpuBackend().masked_rounds(None, None, None, plan) is None
