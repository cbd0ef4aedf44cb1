"""Where each of the hiding opening's draws lies in its fork's sample stream (``device_draws.opening_layout``):
every piece ``draws.draw_opening`` makes is the stream cut at the layout's places, for every synthetic shape, and
the commitment fork's randomness is that fork's first samples. This is what lets the device draw one stream per
fork and slice it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.protocol.zk_backend_cases import SYNTHETIC, case_id, synthetic
from whirgpu.profiles.p3_whir.zk.device_draws import commitment_samples, opening_layout
from whirgpu.profiles.p3_whir.zk.draws import OracleBuilder, draw_opening
from whirgpu.ref.chacha_rng import StdRng
from whirgpu.ref.rng import random_base, random_ef


class _NoOracles(OracleBuilder):
    def __init__(self):
        pass

    def submit(self, messages, randomness, domain_size):
        return None


@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_every_draw_is_the_stream_cut_at_the_layout(case):
    config, field, _, _, seed = synthetic(case)
    layout = opening_layout(config)
    draws = draw_opening(config, field, StdRng.seed_from_u64(seed), _NoOracles())
    stream = random_ef(StdRng.seed_from_u64(seed), layout.total, field)
    piece = lambda at, n: stream[at:at + n]  # noqa: E731
    assert len(layout.batches) == len(draws.batches) and len(layout.switches) == len(draws.switches)
    for slot, batch in zip(layout.batches, draws.batches):
        assert batch.masks.shape[:2] == (slot.k, slot.ell) and batch.randomness.shape[:2] == (slot.k, slot.t)
        np.testing.assert_array_equal(piece(slot.masks, slot.k * slot.ell), batch.masks.reshape(-1, 4))
        np.testing.assert_array_equal(piece(slot.randomness, slot.k * slot.t), batch.randomness.reshape(-1, 4))
    for slot, switch in zip(layout.switches, draws.switches):
        np.testing.assert_array_equal(piece(slot.fresh, slot.fresh_len), switch.fresh)
        np.testing.assert_array_equal(piece(slot.pad, slot.pad_len), switch.pad)
        np.testing.assert_array_equal(piece(slot.randomness, slot.randomness_len), switch.mask_randomness)
    np.testing.assert_array_equal(piece(layout.base_message, layout.base_message_len), draws.base.message)
    np.testing.assert_array_equal(piece(layout.base_randomness, layout.base_randomness_len), draws.base.randomness)
    assert layout.base_randomness == layout.base_message + layout.base_message_len  # one slice: the coefficients
    assert len(layout.groups) == len(draws.base.groups)
    for slot, (messages, randomness, _) in zip(layout.groups, draws.base.groups):
        assert messages.shape[:2] == (slot.width, slot.m) and randomness.shape[:2] == (slot.width, slot.t)
        for i in range(slot.width):
            np.testing.assert_array_equal(piece(slot.message(i), slot.m), messages[i])
            np.testing.assert_array_equal(piece(slot.randomness(i), slot.t), randomness[i])
    ends = [slot.randomness + slot.k * slot.t for slot in layout.batches]
    ends += [slot.randomness + slot.randomness_len for slot in layout.switches]
    ends += [layout.base_randomness + layout.base_randomness_len]
    ends += [slot.at + slot.width * (slot.m + slot.t) for slot in layout.groups]
    assert max(ends) == layout.total


@pytest.mark.parametrize("case", SYNTHETIC, ids=case_id)
def test_the_commitment_randomness_is_its_forks_first_samples_from_word_0(case):
    config, field, _, _, seed = synthetic(case)
    n = commitment_samples(config)
    assert n == config.oracle_randomness[0] << config.fold(0)
    rng = StdRng.seed_from_u64(seed)
    fork = rng.fork()
    np.testing.assert_array_equal(random_base(StdRng(fork.seed()), n, field), random_base(fork, n, field))
