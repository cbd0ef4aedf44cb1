"""``GpuBackend.code_switch`` (a code-switching round's device part in one session: the interleaved commitment
observed as its tree ends, the OOD answers from the residual's univariate evaluation and ``zk_ood``, the proof of
work, the distinct query draw, the openings, the combination challenge, all with the transcript on the device)
against ``zk.backend_prover.code_switch_steps`` on ``CpuBackend`` (the numpy reference's steps and the host
transcript), word for word: the new root, every sample, evaluation and answer, the witness, the indices, the rows
and pruned multiproof, the combination and the challenger's state after. Both fields, 0 to 2 OOD samples, with
and without proof of work, masks of 1 and 9 coefficients, from a challenger with pending input or with outputs
left, on every runtime fixture, with tables bound whole and in windows."""

from __future__ import annotations

import numpy as np
import pytest

from whirgpu.backends.base import P3_WHIR_LAYOUT
from whirgpu.backends.code_switch import CodeSwitchPlan
from whirgpu.backends.cpu import CpuBackend
from whirgpu.backends.device_transcript import TranscriptVariant
from whirgpu.backends.gpu import GpuBackend
from whirgpu.field import BABYBEAR, KOALABEAR
from whirgpu.profiles.p3_whir.zk.backend_prover import code_switch_steps, commit_interleaved
from whirgpu.profiles.p3_whir.zk.device_residual import DeviceResidual
from whirgpu.ref.field_np import field_ops

from .field_inputs import random_monty


@pytest.fixture(scope="module", params=["whole", "windows"])
def gpu(request, gpu_runtime):
    backend = GpuBackend(gpu_runtime)
    if request.param == "windows":
        backend.binding_limit = 4096  # 256 EF entries per binding: the 2^10 residual is bound in windows
    yield backend
    backend.layout = CpuBackend.layout


def _challenger(field, state: str):
    challenger = TranscriptVariant.p3(field).challenger()
    challenger.observe_many(random_monty(np.random.default_rng(11), field, (13,)))
    if state == "outputs-left":
        challenger.sample()
    return challenger


CASES = [  # (field, log2 residual entries, k_next, OOD samples, pow bits, mask message length, challenger state)
    (KOALABEAR, 8, 3, 2, 3, 9, "input-pending"),
    (BABYBEAR, 10, 4, 1, 0, 1, "outputs-left"),
    (KOALABEAR, 6, 2, 0, 2, 5, "outputs-left"),
    (BABYBEAR, 7, 3, 2, 0, 9, "input-pending"),
]


def _plan_and_source(backend, field, log_n, k_next, samples, pow_bits, message_len, rng_seed):
    """The plan and, on ``backend``, the residual and the source oracle (an interleaved commitment of another
    table, as a round's source is), from one seed."""
    rng = np.random.default_rng(rng_seed)
    residual = random_monty(rng, field, (1 << log_n, 4))
    source_table = random_monty(rng, field, (1 << (log_n + 2),))
    source_randomness = random_monty(rng, field, (3 << 3,))
    fresh = random_monty(rng, field, (5 << k_next, 4))
    mask_root = random_monty(rng, field, (8,))
    mask_message = random_monty(rng, field, (message_len, 4))
    rows = 1 << (((1 << log_n >> k_next) + 5) - 1).bit_length()
    # the source: 2^(log_n + 2) base entries as 2^3 columns, at twice the interleaved height
    source_rows = 1 << (((1 << (log_n + 2) >> 3) + 3) - 1).bit_length()
    source = commit_interleaved(backend, backend.upload(source_table), source_randomness, 3, 2 * source_rows)
    log_height = ((1 << log_n >> k_next) * 4).bit_length() - 1
    plan = CodeSwitchPlan(fresh, k_next, rows, log_height, mask_root, mask_message, samples, pow_bits,
                          source.commitment.height << 3, 3, 7)
    ops = field_ops(field)
    weights = backend.upload(np.zeros((1 << log_n, 4), np.uint32))
    return plan, DeviceResidual(backend, backend.upload(residual), weights, ops.ef_from_base(ops.ZERO), field), \
        source


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0].name}-n{c[1]}-k{c[2]}-ood{c[3]}-pow{c[4]}-m{c[5]}"
                                                       f"-{c[6]}")
def test_a_code_switch_is_the_reference_steps(gpu, case):
    field, log_n, k_next, samples, pow_bits, message_len, state = case
    cpu = CpuBackend()
    for backend in (cpu, gpu):
        backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    plan, ref_residual, ref_source = _plan_and_source(cpu, field, log_n, k_next, samples, pow_bits, message_len, 5)
    reference = _challenger(field, state)
    want = code_switch_steps(cpu, ref_residual, ref_source, plan, reference)

    plan_gpu, residual, source = _plan_and_source(gpu, field, log_n, k_next, samples, pow_bits, message_len, 5)
    challenger = _challenger(field, state)
    got = gpu.code_switch(residual.evals, source.commitment, challenger, plan_gpu)
    assert got is not None
    np.testing.assert_array_equal(got.commitment.root, want.commitment.root)
    for name in ("zs", "evaluations", "answers", "indices", "rows", "siblings", "combination"):
        np.testing.assert_array_equal(np.asarray(getattr(got, name)), np.asarray(getattr(want, name)), err_msg=name)
    assert got.witness == want.witness
    assert challenger.same_state(reference)
    assert challenger.sample_ef().tolist() == reference.sample_ef().tolist()
    # the new oracle opens as the reference's does
    rows, siblings = gpu.open_rows(got.commitment, [0, 3], 2)
    ref_rows, ref_siblings = cpu.open_rows(want.commitment, [0, 3], 2)
    np.testing.assert_array_equal(rows, ref_rows)
    np.testing.assert_array_equal(siblings, ref_siblings)
    gpu.release(got.commitment, source.commitment, residual.evals, residual.weights)


QUERY_CASES = [  # (field, log2 source entries, pow bits, queries, challenger state)
    (KOALABEAR, 8, 3, 9, "input-pending"),
    (BABYBEAR, 10, 0, 5, "outputs-left"),
    (BABYBEAR, 6, 2, 40, "input-pending"),  # more queries than rows: every row, once
]


@pytest.mark.parametrize("case", QUERY_CASES, ids=lambda c: f"{c[0].name}-n{c[1]}-pow{c[2]}-q{c[3]}-{c[4]}")
def test_query_openings_is_the_reference_steps(gpu, case):
    """``GpuBackend.query_openings`` (the base case's proof of work, final positions and the openings of two
    commitments in one session) against the host steps on ``CpuBackend``: witness, indices, both openings and
    the challenger after, word for word; the default ``Backend.query_openings`` leaves them to the caller."""
    from whirgpu.protocol.query_indices import distinct_query_indices

    field, log_n, pow_bits, queries, state = case
    cpu = CpuBackend()
    for backend in (cpu, gpu):
        backend.layout = P3_WHIR_LAYOUT(field, "prefix")
    assert cpu.query_openings(_challenger(field, state), pow_bits, 8, 0, queries, []) is None

    def oracles(backend):
        rng = np.random.default_rng(log_n)
        first = commit_interleaved(backend, backend.upload(random_monty(rng, field, (1 << log_n,))),
                                   random_monty(rng, field, (3 << 2,)), 2, 1 << (log_n - 1))
        second = commit_interleaved(backend, backend.upload(random_monty(rng, field, (1 << (log_n - 2), 4))),
                                    random_monty(rng, field, (3, 4)), 0, 1 << (log_n - 1))
        return first, second

    domain = 1 << (log_n - 1)
    reference = _challenger(field, state)
    ref_oracles = oracles(cpu)
    witness = int(reference.grind(pow_bits)) if pow_bits else 0
    indices = distinct_query_indices(reference, domain, 0, queries)
    want = [cpu.open_rows(o.commitment, indices, len(indices)) for o in ref_oracles]

    gpu_oracles = oracles(gpu)
    challenger = _challenger(field, state)
    got = gpu.query_openings(challenger, pow_bits, domain, 0, queries, [o.commitment for o in gpu_oracles])
    assert got is not None
    assert got[0] == witness
    np.testing.assert_array_equal(got[1], np.asarray(indices, np.int64))
    for (rows, siblings), (ref_rows, ref_siblings) in zip(got[2], want):
        np.testing.assert_array_equal(rows, ref_rows)
        np.testing.assert_array_equal(siblings.reshape(-1, 8), np.asarray(ref_siblings).reshape(-1, 8))
    assert challenger.same_state(reference)
    gpu.release(*(o.commitment for o in gpu_oracles))
