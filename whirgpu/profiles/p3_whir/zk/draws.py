"""Every mask draw of the hiding PCS's opening, made before the opening runs (``draw_opening``), and the mask
oracles that do not depend on the transcript, built where the caller says (``OracleBuilder``).

The opening fork's draws never depend on the transcript, so they can all be made first, in the oracle's order
(``docs/ZK-PROTOCOL.md``): sumcheck batch 0's masks (k0 x message_len EF) then their encoding randomness
(k0 x randomness_len EF); per code-switching round r: the fresh randomness rows (oracle_randomness[r + 1] <<
k_{r+1} EF), the OOD pad (ood_samples EF), the switch mask's randomness (randomness_len EF), then batch r + 1's
masks and randomness; the base case: the fresh source message (2^final_nv EF) and randomness
(oracle_randomness[-1] EF), then per mask group, per mask of the group, a message (message_len EF) and its
randomness (randomness_len EF). ``draw_opening(config, field, fork)`` leaves ``fork`` where drawing them one step
at a time would.

Of the mask oracles, each batch's and each fresh base-case group's are fixed by these draws alone (a switch's
mask holds the carried randomness, a transcript value, and is committed during the proof): ``OracleBuilder``
commits them, in place (``OracleBuilder.now``) or on a worker thread in order of use (``OracleBuilder.thread``),
and ``Pending.get()`` is the ``oracles.Committed``. The worker's numpy and compiled Poseidon2 calls let the GIL go,
so a GPU prover's waits for the device overlap them.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field as dataclass_field

import numpy as np

from ....field import Field
from ....ref.rng import random_ef
from .config import ZkWhirConfig
from .oracles import Committed, mask_matrix


class Pending:
    """A mask oracle being committed: ``get()`` waits for it and returns the ``Committed``."""

    def __init__(self, future: Future):
        self._future = future

    def get(self) -> Committed:
        return self._future.result()


class OracleBuilder:
    """Commits mask oracles (``submit(messages, randomness, domain_size)`` -> ``Pending``): ``now(field)`` in the
    caller's thread, ``thread(field)`` on one shared worker thread, first submitted first built."""

    _worker: tuple | None = None  # (the process id it was started in, the executor)
    _lock = threading.Lock()

    def __init__(self, field: Field, threaded: bool):
        self.field, self.threaded = field, threaded

    @classmethod
    def now(cls, field: Field) -> OracleBuilder:
        return cls(field, False)

    @classmethod
    def thread(cls, field: Field) -> OracleBuilder:
        return cls(field, True)

    def submit(self, messages: np.ndarray, randomness: np.ndarray, domain_size: int) -> Pending:
        def build() -> Committed:
            return Committed(mask_matrix(messages, randomness, domain_size, self.field), self.field)

        if not self.threaded:
            future: Future = Future()
            future.set_result(build())
            return Pending(future)
        return Pending(self._shared_worker().submit(build))

    @classmethod
    def _shared_worker(cls) -> ThreadPoolExecutor:
        with cls._lock:
            # a forked child has the parent's executor but not its thread: it starts its own
            if cls._worker is None or cls._worker[0] != os.getpid():
                cls._worker = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="whirgpu-masks"))
            return cls._worker[1]


@dataclass
class BatchDraw:
    """One sumcheck batch's masks (k, message_len, 4), their randomness (k, randomness_len, 4) and oracle."""

    masks: np.ndarray
    randomness: np.ndarray
    oracle: Pending


@dataclass
class SwitchDraw:
    """One code switch's fresh randomness rows (t << k_next, 4), OOD pad (ood_samples, 4) and its mask's
    encoding randomness (randomness_len, 4)."""

    fresh: np.ndarray
    pad: np.ndarray
    mask_randomness: np.ndarray


@dataclass
class BaseCaseDraw:
    """The base case's fresh source message and randomness, and per mask group its fresh messages (width,
    message_len, 4), randomness (width, randomness_len, 4) and oracle."""

    message: np.ndarray
    randomness: np.ndarray
    groups: list = dataclass_field(default_factory=list)  # [(messages, randomness, Pending)]


@dataclass
class OpeningDraws:
    batches: list  # [BatchDraw], batch 0 first
    switches: list  # [SwitchDraw], round 0 first
    base: BaseCaseDraw


def draw_opening(config: ZkWhirConfig, field: Field, fork, builder: OracleBuilder) -> OpeningDraws:
    """Every draw of the opening fork (module contract), each batch's and base-case group's oracle submitted to
    ``builder`` as soon as its draws are made."""
    inner, shape = config.inner, config.sumcheck_mask

    def batch(k: int) -> BatchDraw:
        masks = random_ef(fork, k * shape.message_len, field).reshape(k, shape.message_len, 4)
        randomness = random_ef(fork, k * shape.randomness_len, field).reshape(k, shape.randomness_len, 4)
        return BatchDraw(masks, randomness, builder.submit(masks, randomness, shape.domain_size))

    batches, switches = [batch(config.fold(0))], []
    for r, params in enumerate(inner.round_parameters):
        fresh = random_ef(fork, config.oracle_randomness[r + 1] << config.fold(r + 1), field)
        pad = random_ef(fork, params.ood_samples, field)
        switches.append(SwitchDraw(fresh, pad, random_ef(fork, config.switch_masks[r].randomness_len, field)))
        batches.append(batch(config.fold(r + 1)))
    message_len, randomness_len, _ = config.source_code()
    base = BaseCaseDraw(random_ef(fork, message_len, field), random_ef(fork, randomness_len, field))
    for group in config.mask_groups():
        g = group.shape
        drawn = [(random_ef(fork, g.message_len, field), random_ef(fork, g.randomness_len, field))
                 for _ in range(group.width)]
        messages = np.stack([m for m, _ in drawn])
        randomness = np.stack([t for _, t in drawn])
        base.groups.append((messages, randomness, builder.submit(messages, randomness, g.domain_size)))
    return OpeningDraws(batches, switches, base)
