"""The hiding proof's mask draws made on the device (``DeviceDraws``), and where each draw lies in its fork's
sample stream (``opening_layout``).

The prover forks its generator twice (``device_inputs.DeviceInputs.draw``): the commitment fork gives the
interleaved encoding's randomness (``oracle_randomness[0] << k0`` base samples), the opening fork every other
mask, in the order ``draws.draw_opening`` makes them (docs/ZK-PROTOCOL.md §4). A fork is a ChaCha12 key at word 0
and a draw of n EF elements is the next 4 n accepted samples, so the opening fork's draws are the first
``4 * layout.total`` samples of its stream cut at fixed places: ``opening_layout(config)`` says where, in EF
entries from the stream's start, every piece lies. The host keeps only the two keys; the device draws both streams
(``kernels/mask_rng.py``), builds each mask oracle's coefficient matrix from them (``kernels/mask_matrix.py``)
and computes each batch's round templates and mu tilde (``EfAlgebra`` ops), so a recorded proof replays with a
new proof's keys alone.

Contracts (``DeviceDraws``, recorded into a ``ProofSession`` with its ``DeviceAlgebra``):
- Each key is a named proof input (("key", "commitment"), ("key", "opening"): 8 words, ``StdRng.key``) written to
  a 16-word proof slot whose word 8 the sampler sets to the keystream words used, or ``NOT_FOUND`` when its
  default margin ran short (odds below 2^-40; ``short(words)`` then says so and the caller leaves the proof to the
  step-by-step prover, whose host draws give the same values).
- ``randomness`` (n0,) base words and ``stream`` (total, 4) EF entries are arena values of the algebra, written
  by launches recorded before anything reads them; the named pieces (``mask``, ``fresh``, ...) are slices of
  ``stream``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....backends.device_transcript import NOT_FOUND
from ....backends.device_values import DeviceValue
from ....kernels import mask_rng
from ....kernels.mask_matrix import record_mask_matrix
from ....runtime.base import RtView
from .config import ZkWhirConfig

EF_BYTES = 16
KEY_SLOT = 16  # proof words per key: 8 key words, the sampler's status at word 8
STATUS_AT = 8


@dataclass(frozen=True)
class BatchSlot:
    """Sumcheck batch b's draws: k masks of ell entries from ``masks``, then their k randomness rows of t."""

    masks: int
    k: int
    ell: int
    randomness: int
    t: int


@dataclass(frozen=True)
class SwitchSlot:
    """Code switch r's draws: fresh rows, OOD pad, the switch mask's randomness (entry, count each)."""

    fresh: int
    fresh_len: int
    pad: int
    pad_len: int
    randomness: int
    randomness_len: int


@dataclass(frozen=True)
class GroupSlot:
    """A base-case mask group's draws from ``at``: per mask i its message (m) then randomness (t)."""

    at: int
    width: int
    m: int
    t: int

    def message(self, i: int) -> int:
        return self.at + i * (self.m + self.t)

    def randomness(self, i: int) -> int:
        return self.message(i) + self.m


@dataclass(frozen=True)
class OpeningLayout:
    batches: tuple
    switches: tuple
    base_message: int
    base_message_len: int
    base_randomness: int
    base_randomness_len: int
    groups: tuple
    total: int


def opening_layout(config: ZkWhirConfig) -> OpeningLayout:
    """Where each of the opening fork's draws lies in its stream (EF entries; ``draws.draw_opening``'s order)."""
    shape = config.sumcheck_mask
    at = 0

    def take(n: int) -> int:
        nonlocal at
        start, at = at, at + int(n)
        return start

    def batch(k: int) -> BatchSlot:
        masks = take(k * shape.message_len)
        return BatchSlot(masks, k, shape.message_len, take(k * shape.randomness_len), shape.randomness_len)

    batches, switches = [batch(config.fold(0))], []
    for r, params in enumerate(config.inner.round_parameters):
        fresh_len = config.oracle_randomness[r + 1] << config.fold(r + 1)
        fresh, pad = take(fresh_len), take(params.ood_samples)
        randomness_len = config.switch_masks[r].randomness_len
        switches.append(SwitchSlot(fresh, fresh_len, pad, params.ood_samples, take(randomness_len), randomness_len))
        batches.append(batch(config.fold(r + 1)))
    message_len, randomness_len, _ = config.source_code()
    base_message, base_randomness = take(message_len), take(randomness_len)
    groups = []
    for group in config.mask_groups():
        g = group.shape
        groups.append(GroupSlot(take(group.width * (g.message_len + g.randomness_len)), group.width, g.message_len,
                                g.randomness_len))
    return OpeningLayout(tuple(batches), tuple(switches), base_message, message_len, base_randomness,
                         randomness_len, tuple(groups), at)


def commitment_samples(config: ZkWhirConfig) -> int:
    """Base samples the commitment fork gives (the interleaved encoding's randomness rows)."""
    return config.oracle_randomness[0] << config.fold(0)


class DeviceDraws:
    """Both forks' draws recorded into ``session`` (module contract); ``alg`` its ``DeviceAlgebra``."""

    def __init__(self, state, session, alg, config: ZkWhirConfig, field):
        self.state, self.session, self.alg, self.config, self.field = state, session, alg, config, field
        self.layout = opening_layout(config)
        self.slots = {}
        self.randomness = alg.reserve((commitment_samples(config),))
        self.stream = alg.reserve((self.layout.total, 4))

    def record(self, keys) -> None:
        """The keys written (``keys(name)``: its 8 words) and both streams drawn."""
        for name, out in (("commitment", self.randomness), ("opening", self.stream)):
            slot = self.session.regions.proof.take((KEY_SLOT,))
            self.state.drivers.write(slot.buffer, np.ascontiguousarray(keys(name), np.uint32), slot.offset,
                                     source=("key", name))
            self.slots[name] = slot
            n = out.words
            counts = self.state.pool.alloc(4 * max(1, mask_rng.groups_for(mask_rng.words_for(n, self.field.name))),
                                           False)
            self.session.after_submit.append(counts)
            mask_rng.record_samples(self.state.drivers, self.state.batch(), 0, n, out.buffer, out.word, slot.view(),
                                    STATUS_AT, field=self.field.name, scratch=counts)

    def short(self, words: np.ndarray) -> bool:
        """Whether a stream ran short of accepted samples (the proof region's ``words`` read back)."""
        return any(int(slot.read(words)[STATUS_AT]) == NOT_FOUND for slot in self.slots.values())

    # -- the pieces -----------------------------------------------------------------------------------------------
    def piece(self, at: int, n: int) -> DeviceValue:
        return self.stream[at:at + n]

    def masks(self, b: int) -> DeviceValue:
        """Batch b's masks, (k ell, 4): mask j is entries j ell .. (j + 1) ell - 1."""
        slot = self.layout.batches[b]
        return self.piece(slot.masks, slot.k * slot.ell)

    def mask(self, b: int, j: int) -> DeviceValue:
        slot = self.layout.batches[b]
        return self.piece(slot.masks + j * slot.ell, slot.ell)

    def mask_randomness(self, b: int, j: int) -> DeviceValue:
        slot = self.layout.batches[b]
        return self.piece(slot.randomness + j * slot.t, slot.t)

    def fresh(self, r: int) -> DeviceValue:
        slot = self.layout.switches[r]
        return self.piece(slot.fresh, slot.fresh_len)

    def pad(self, r: int) -> DeviceValue:
        slot = self.layout.switches[r]
        return self.piece(slot.pad, slot.pad_len)

    def switch_randomness(self, r: int) -> DeviceValue:
        slot = self.layout.switches[r]
        return self.piece(slot.randomness, slot.randomness_len)

    def base_coefficients(self) -> DeviceValue:
        """The base case's fresh message then its randomness (adjacent in the stream)."""
        layout = self.layout
        return self.piece(layout.base_message, layout.base_message_len + layout.base_randomness_len)

    def base_message(self) -> DeviceValue:
        return self.piece(self.layout.base_message, self.layout.base_message_len)

    def base_randomness(self) -> DeviceValue:
        return self.piece(self.layout.base_randomness, self.layout.base_randomness_len)

    def group_message(self, g: int, i: int) -> DeviceValue:
        slot = self.layout.groups[g]
        return self.piece(slot.message(i), slot.m)

    def group_randomness(self, g: int, i: int) -> DeviceValue:
        slot = self.layout.groups[g]
        return self.piece(slot.randomness(i), slot.t)

    # -- the mask oracles' coefficients ---------------------------------------------------------------------------
    def _window(self, first: int, end: int) -> tuple[RtView, int]:
        """A binding over stream entries [first, end) and the entry of ``first`` in it."""
        start = self.stream.offset + EF_BYTES * first
        lo = start // self.state.alignment() * self.state.alignment()
        size = max(EF_BYTES, self.stream.offset + EF_BYTES * end - lo)
        return RtView(self.stream.buffer, lo, size), (start - lo) // EF_BYTES

    def batch_matrix(self, b: int, matrix, log_rows: int) -> None:
        """Record batch b's mask oracle coefficients (``coefficient_matrix``'s layout) into ``matrix``."""
        slot = self.layout.batches[b]
        src, at = self._window(slot.masks, slot.randomness + slot.k * slot.t)
        record_mask_matrix(self.state.drivers, self.state.batch(), src, matrix, log_rows=log_rows,
                           log_cols=(slot.k - 1).bit_length(), columns=slot.k, msg_at=at, msg_stride=slot.ell,
                           msg_len=slot.ell, rnd_at=at + slot.randomness - slot.masks, rnd_stride=slot.t,
                           rnd_len=slot.t)

    def group_matrix(self, g: int, matrix, log_rows: int) -> None:
        """Record base-case group g's mask oracle coefficients into ``matrix``."""
        slot = self.layout.groups[g]
        src, at = self._window(slot.at, slot.at + slot.width * (slot.m + slot.t))
        record_mask_matrix(self.state.drivers, self.state.batch(), src, matrix, log_rows=log_rows,
                           log_cols=(slot.width - 1).bit_length(), columns=slot.width, msg_at=at,
                           msg_stride=slot.m + slot.t, msg_len=slot.m, rnd_at=at + slot.m, rnd_stride=slot.m + slot.t,
                           rnd_len=slot.t)

    # -- each batch's host-fixed round parts ----------------------------------------------------------------------
    def batch_parts(self, b: int) -> tuple[DeviceValue, list, list]:
        """(mu tilde, template heads, template tails) of batch b: ``sumcheck.round_plan``'s templates without
        their eps * aux terms (the caller adds those) and ``prove_batch``'s mu tilde, from the masks on the
        device. Head j: 2^(k-j-1) s_j[0] + 2^(k-j-2) sum_{i>j} e_i (the sum for j < k - 1 only), e_i = s_i(0) +
        s_i(1); tail j: 2^(k-j-1) s_j[2:] then zeros to the wire's length."""
        alg, ops = self.alg, self.alg.ops
        slot = self.layout.batches[b]
        k, ell = slot.k, slot.ell
        size = max(ell, 3)
        two = lambda e: alg.const(ops.ef_from_base(ops.constant(pow(2, e, ops.P))))  # noqa: E731
        weights = np.tile(ops.ef_from_base(ops.ONE), (ell, 1))
        weights[0] = ops.ef_from_base(ops.constant(2))
        ends = alg.matvec(self.masks(b), k, alg.const(weights))  # e_j = s_j(0) + s_j(1) = 2 s_j[0] + sum_{i>0} s_j[i]
        suffix = np.zeros((k, k, 4), np.uint32)
        for j in range(k):
            suffix[j, j:] = ops.ef_from_base(ops.ONE)
        futures = alg.matvec(alg.const(suffix.reshape(-1, 4)), k, ends)  # futures[j] = sum_{i>=j} e_i
        mu = alg.mul(futures[0], two(k - 1))
        heads, tails = [], []
        for j in range(k):
            mask, live = self.mask(b, j), two(k - j - 1)
            future = alg.mul(futures[j + 1], two(k - j - 2)) if j < k - 1 else None
            heads.append(alg.linear(live, mask[0:1], future))
            tail = [alg.scale(mask[2:], live)] if ell > 2 else []
            if size > max(ell, 2):
                tail.append(alg.const(np.zeros((size - max(ell, 2), 4), np.uint32)))
            tails.append(tail)
        return mu, heads, tails
