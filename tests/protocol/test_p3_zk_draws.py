"""The hiding opening's draws made up front (``profiles.p3_whir.zk.draws``): the same values and oracles whether
the oracles are committed in place or on the worker thread, the fork left where drawing them one step at a time
leaves it (the order the golden proofs fix), and every shape the configuration names."""

from __future__ import annotations

import numpy as np
import pytest

from tests.protocol.zk_backend_cases import SYNTHETIC, case_id, synthetic
from whirgpu.profiles.p3_whir.zk.draws import OracleBuilder, draw_opening
from whirgpu.profiles.p3_whir.zk.oracles import Committed, mask_matrix
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.rng import random_ef


def _step_by_step(config, field, fork):
    """The draws in the order the provers made them inline before they were made up front."""
    shape, out = config.sumcheck_mask, []
    k = config.fold(0)
    out += [random_ef(fork, k * shape.message_len, field), random_ef(fork, k * shape.randomness_len, field)]
    for r, params in enumerate(config.inner.round_parameters):
        out.append(random_ef(fork, config.oracle_randomness[r + 1] << config.fold(r + 1), field))
        out.append(random_ef(fork, params.ood_samples, field))
        out.append(random_ef(fork, config.switch_masks[r].randomness_len, field))
        k = config.fold(r + 1)
        out += [random_ef(fork, k * shape.message_len, field), random_ef(fork, k * shape.randomness_len, field)]
    message_len, randomness_len, _ = config.source_code()
    out += [random_ef(fork, message_len, field), random_ef(fork, randomness_len, field)]
    for group in config.mask_groups():
        for _ in range(group.width):
            out += [random_ef(fork, group.shape.message_len, field), random_ef(fork, group.shape.randomness_len,
                                                                              field)]
    return out


def _flatten(draws):
    out = []
    for i, batch in enumerate(draws.batches):
        if i:
            switch = draws.switches[i - 1]
            out += [switch.fresh, switch.pad, switch.mask_randomness]
        out += [batch.masks.reshape(-1, 4), batch.randomness.reshape(-1, 4)]
    out += [draws.base.message, draws.base.randomness]
    for messages, randomness, _ in draws.base.groups:
        for m, t in zip(messages, randomness):
            out += [m, t]
    return out


@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_draws_in_the_oracles_order_in_place_and_threaded(case):
    config, field, _, _, seed = synthetic(case)
    reference = StdRng.seed_from_u64(seed)
    expected = _step_by_step(config, field, reference)
    for builder in (OracleBuilder.now(field), OracleBuilder.thread(field)):
        fork = StdRng.seed_from_u64(seed)
        draws = draw_opening(config, field, fork, builder)
        got = _flatten(draws)
        assert len(got) == len(expected)
        for a, b in zip(got, expected):
            np.testing.assert_array_equal(a, b)
        assert len(draws.batches) == config.n_rounds + 1 == len(draws.switches) + 1
        assert len(draws.base.groups) == len(config.mask_groups())
        for batch in draws.batches:
            oracle = batch.oracle.get()
            direct = Committed(mask_matrix(batch.masks, batch.randomness, config.sumcheck_mask.domain_size, field),
                               field)
            np.testing.assert_array_equal(oracle.root, direct.root)
        for (messages, randomness, pending), group in zip(draws.base.groups, config.mask_groups()):
            assert messages.shape == (group.width, group.shape.message_len, 4)
            direct = Committed(mask_matrix(messages, randomness, group.shape.domain_size, field), field)
            np.testing.assert_array_equal(pending.get().root, direct.root)


@pytest.mark.parametrize("case", SYNTHETIC[:3], ids=case_id)
def test_the_fork_is_left_where_step_by_step_drawing_leaves_it(case):
    config, field, _, _, seed = synthetic(case)
    reference, fork = StdRng.seed_from_u64(seed), StdRng.seed_from_u64(seed)
    _step_by_step(config, field, reference)
    draw_opening(config, field, fork, OracleBuilder.now(field))
    np.testing.assert_array_equal(random_ef(fork, 5, field), random_ef(reference, 5, field))


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_a_forked_child_builds_on_its_own_worker():
    """The worker is per process: a child forked after the parent used it still gets its oracles (the parent's
    thread does not exist in the child)."""
    import os

    field = SYNTHETIC[0][0]
    rng = np.random.default_rng(5)
    messages = rng.integers(0, field.P, (2, 4, 4), dtype=np.uint64).astype(np.uint32)
    randomness = rng.integers(0, field.P, (2, 5, 4), dtype=np.uint64).astype(np.uint32)
    want = OracleBuilder.thread(field).submit(messages, randomness, 16).get().root
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its own worker built the same oracle (3: none within 30 s)
        import signal

        signal.signal(signal.SIGALRM, lambda *_: os._exit(3))
        signal.alarm(30)
        try:
            got = OracleBuilder.thread(field).submit(messages, randomness, 16).get().root
            os._exit(0 if np.array_equal(got, want) else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
