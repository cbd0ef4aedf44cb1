"""Values a GPU proof keeps on the device, and the three regions they live in.

A proof's transcript-dependent values never visit the host until the proof is done. They are ``DeviceValue``s:
``shape`` uint32 words at byte ``offset`` of one of three per-proof buffers (``ProofRegions``):

- ``proof``: everything the proof contains (roots, OOD answers, sumcheck values, PoW witnesses, the final
  polynomial, openings with their distinct counts), at offsets fixed by the configuration; read back once, at
  the end.
- ``scratch``: the device challenger (words [0, 26), transcript.wgsl's layout) and every sampled or derived
  value the proof does not contain (challenges, coefficient powers, query indices, domain points, PoW counters).
- ``points``: evaluation points, packed (m, nv, 4) one after another, so that the points of one constraint batch
  (the statement's and the OOD ones that follow) form one contiguous array without a copy.

``proof`` and ``scratch`` slots start at the runtime's storage-offset alignment, so any slot can also be bound
alone as a window (``RtView``) by kernels that index from zero.

The region sizes are upper bounds derived from the proof's shape (``ProofShape``) by ``region_bytes``, so every
proof of one configuration needs the same buffers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..native.prune import prune_many
from ..runtime.base import RtBuffer, RtView

STATE_WORDS = 26  # sponge 16, input length, output length, input buffer 8
POW_MAX_COUNTERS = 8  # batch counters a grind may use (one a launch; the full range takes ceil(P / 2^28) = 8)


@dataclass(frozen=True)
class DeviceValue:
    """``shape`` words (uint32) at byte ``offset`` of ``buffer``; EF values have a trailing axis of 4."""

    buffer: RtBuffer
    offset: int
    shape: tuple[int, ...]

    @property
    def words(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return 4 * self.words

    @property
    def word(self) -> int:
        """The offset in words."""
        return self.offset // 4

    def read(self, words: np.ndarray) -> np.ndarray:
        """This value's words out of its buffer's words as read back (``words`` from word 0 of ``buffer``)."""
        return words[self.word:self.word + self.words].reshape(self.shape)

    def view(self) -> RtView:
        """This value alone as a binding window (its offset must be aligned: proof and scratch slots are)."""
        return RtView(self.buffer, self.offset, max(16, -(-self.nbytes // 16) * 16))

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, index: slice | int) -> "DeviceValue":
        """A contiguous run of the leading axis (``value[a:b]``), or one entry of it (``value[i]``)."""
        if isinstance(index, (int, np.integer)):
            if not 0 <= index < self.shape[0]:
                raise IndexError(f"index {index} outside a device value of {self.shape[0]} entries")
            row = self[int(index):int(index) + 1]
            return DeviceValue(row.buffer, row.offset, self.shape[1:])
        start, stop, step = index.indices(self.shape[0])
        if step != 1:
            raise ValueError("device values slice contiguously")
        row = math.prod(self.shape[1:]) * 4
        return DeviceValue(self.buffer, self.offset + start * row, (max(0, stop - start),) + self.shape[1:])


@dataclass
class DeviceQueries:
    """Query indices drawn on the device: ``indices`` (slots,) ascending and distinct in their first ``count``
    entries, 0 after; ``count`` the number drawn (a scratch word); ``proof_count`` the same in the proof;
    ``domain_points`` (slots,) generator^index of the folded domain (1 after ``count``). ``on_host``: the indices
    are the host's own (it wrote them): an opening copies none into the proof (the host prunes its multiproof from
    its own positions)."""

    indices: DeviceValue
    count: DeviceValue
    proof_count: DeviceValue
    domain_points: DeviceValue
    slots: int
    on_host: bool = False


@dataclass
class DeviceOpenings:
    """Opened rows (slots, width) or (slots, width / 4, 4) and paths (slots, depth, 8) in the proof buffer; the
    first ``count`` (a proof word) are the proof's openings. ``indices`` (slots,): the queried indices copied into
    the proof, where the layout's openings are one pruned multiproof (made from the paths when they are read); for
    indices the host wrote (``DeviceQueries.on_host``) their own slot, not copied, not in the proof words."""

    kind: str
    rows: DeviceValue
    siblings: DeviceValue
    count: DeviceValue
    indices: DeviceValue | None = None


class Region:
    """A bump allocator over one buffer; ``align`` bytes between slots (1: packed)."""

    def __init__(self, buffer: RtBuffer, align: int, start: int = 0):
        self.buffer = buffer
        self.align = align
        self.top = start

    def take(self, shape: tuple[int, ...]) -> DeviceValue:
        offset = -(-self.top // self.align) * self.align
        value = DeviceValue(self.buffer, offset, tuple(int(s) for s in shape))
        if offset + value.nbytes > self.buffer.nbytes:
            raise RuntimeError(f"device region overflow: {offset + value.nbytes} bytes needed, "
                               f"{self.buffer.nbytes} planned (a bug in region_bytes)")
        self.top = offset + value.nbytes
        return value


@dataclass
class ProofRegions:
    proof: Region
    scratch: Region
    points: Region
    state: DeviceValue  # the challenger, scratch words [0, 26)
    discard: DeviceValue  # a scratch word for samples the protocol drops (the checkpoint)


def concat_points(values: list[Any]) -> DeviceValue:
    """Points (nv, 4) or point arrays (m, nv, 4) that follow one another in the points region, as one
    (Σ m, nv, 4) array (empty arrays allowed anywhere)."""
    tail = tuple(values[0].shape[-2:])
    offset, count = values[0].offset, 0
    for v in values:
        if v.words == 0:
            continue
        if v.buffer is not values[0].buffer or v.offset != offset or tuple(v.shape[-2:]) != tail:
            raise RuntimeError("points of one constraint batch must be allocated one after another")
        offset += v.nbytes
        count += v.words // (tail[0] * tail[1])
    return DeviceValue(values[0].buffer, values[0].offset, (count,) + tail)


def region_bytes(shape, align: int) -> tuple[int, int, int]:
    """Upper bounds of the (proof, scratch, points) bytes of one proof of ``shape`` (a ``ProofShape``), slots
    aligned to ``align`` bytes (points packed)."""
    slot = lambda words: -(-4 * words // align) * align  # noqa: E731 - slots start aligned
    # + the statement's claimed values and the range check of a table converted from canonical words
    proof = shape.grinds * slot(1) + shape.sumcheck_rounds * slot(8) + slot(4 << shape.final_variables) \
        + shape.n_points * slot(4) + slot(1)
    scratch = slot(STATE_WORDS) + slot(1) + shape.grinds * slot(1 + POW_MAX_COUNTERS) + shape.sumcheck_rounds * slot(4)
    points = 16 * shape.n_points * shape.num_variables
    most_slots = max((step.slots for step in shape.queries), default=0)
    for num_variables, ood in shape.commitments:
        proof += slot(8) + ood * slot(4)
        scratch += ood * slot(4) + slot(4) + slot(4 * (shape.n_points + ood + most_slots))
        points += 16 * ood * num_variables
    for step in shape.queries:
        q, slots = step.num_queries, step.slots
        scratch += 2 * slot(q) + 2 * slot(slots) + slot(1)
        proof += slot(1) + slot(slots * (step.row_words + step.depth * 8))
    layout = getattr(shape, "layout", None)
    if layout is not None and layout.openings == "pruned":  # each opening's indices, pruned when read
        proof += sum(slot(step.slots) for step in shape.queries)
    if layout is not None and layout.draws_points:  # the statement's points may be drawn: one sampled z each
        scratch += shape.n_points * slot(4)
    return proof, scratch, max(points, 16)


def resolve_value(words: np.ndarray, value):
    """``value`` out of the proof region's words as read back: a ``DeviceValue``'s words; a ``DeviceOpenings``'
    (rows, sibling paths) of the drawn count (one pruned multiproof, from the paths, for pruned openings);
    anything else as it is."""
    if isinstance(value, DeviceOpenings):
        return resolve_openings(words, [value])[0]
    if isinstance(value, DeviceValue):
        return value.read(words)
    return value


def resolve_openings(words: np.ndarray, openings: list) -> list:
    """``resolve_value`` of each ``DeviceOpenings`` in ``openings``: (rows, sibling paths), the pruned ones' paths
    pruned together (``native.prune.prune_many``, compiled once built: a round's trees opened at the same positions
    share one walk)."""
    out, jobs, pruned = [], [], []
    for value in openings:
        count = int(value.count.read(words)[0])
        rows, paths = value.rows.read(words)[:count], value.siblings.read(words)[:count]
        out.append([rows, paths])
        if value.indices is not None:
            jobs.append((value.indices.read(words)[:count], paths))
            pruned.append(len(out) - 1)
    for k, siblings in zip(pruned, prune_many(jobs)):
        out[k][1] = siblings
    return [tuple(pair) for pair in out]
