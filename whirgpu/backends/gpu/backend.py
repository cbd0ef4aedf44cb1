"""``GpuBackend``: the GPU backend's state and lifetime (its runtime, pool, limits, session slot), composed of one
mixin per job (device memory, sessions, proofs and transcript, commitments, sumcheck)."""

from __future__ import annotations

import threading

import numpy as np

from ...runtime.base import RtBuffer, Runtime
from ..base import Backend, DeviceLimits, StorageMode, resolve_storage
from .commit import Commitments
from .device_memory import DeviceMemory
from .drivers import _BackendRuntime
from .geometry import EF_BYTES
from .replay import Replays
from .session import Sessions, _Session
from .sumcheck import Reductions
from .tables import TableClaims
from .transcript import ProofTranscript


class GpuBackend(Commitments, Reductions, TableClaims, ProofTranscript, Replays, Sessions, DeviceMemory, Backend):
    """WHIR primitives on a GPU ``Runtime`` (wgpu, Metal, msl-cpu). ``profile=True`` waits at each sub-phase
    boundary (ntt / merkle, and each primitive of a proof) so host timers attribute time correctly, at the cost
    of one round trip each. ``storage``: the storage policy (hybrid, shared, private; None: ``WHIRGPU_STORAGE``,
    else hybrid). ``pow_full_range``: proof-of-work searches encode launches over every nonce (the retry after a
    ``PowRangeExceeded``). From the second proof of a shape on, proofs are recorded once and replayed
    (``replay``; ``replay_enabled = False`` turns that off)."""

    proves_tables = True  # stacked tables' claims and weights on the device (``tables``, ``add_next_weights``)

    def __init__(self, runtime: Runtime | None = None, profile: bool = False, storage: str | None = None):
        super().__init__()
        if runtime is None:
            from ...runtime.wgpu_rt import WgpuRuntime  # noqa: PLC0415 - wgpu is an optional dependency

            runtime = WgpuRuntime()
        self.rt = runtime
        self.name = runtime.name
        self.profile = profile
        self.storage = resolve_storage(storage)
        self.pow_full_range = False
        self._pool: dict[tuple[int, StorageMode], list[RtBuffer]] = {}
        self._serial: dict[int, int] = {}  # id(buffer) -> creation order, to put the pool in one canonical order
        # Bytes of every buffer the pool created: it frees none before close, so this is its high-water mark (what
        # the device planner's MemoryPlan.pool_bytes plans)
        self.pool_bytes = 0
        self._limits = runtime.limits()
        # The limits the backend lays its windows and split arrays out for (tests lower them to cross every seam
        # at small sizes; the runtime still enforces the device's own).
        self.binding_limit = self._limits.max_storage_binding_size
        self.buffer_limit = self._limits.max_buffer_size
        self._recorder = None
        self._drivers = _BackendRuntime(runtime, self)  # counts transfers; the backend itself goes through it too
        # One small buffer, bound read-only where a factor table is unused (never read there).
        self._dummy = self._upload_words(np.zeros(EF_BYTES // 4, np.uint32))
        # The reductions' work words (reduction.wgsl): the ticket (0 between reductions: the last workgroup of each
        # resets it) and the partial pairs; one buffer for every reduction (launches run in order), grown on demand.
        self._work: RtBuffer | None = None  # made by the first reduction (the layout limits are final by then)
        self._retired: list[RtBuffer] = []
        self._session: _Session | None = None
        self._building = threading.Lock()  # held from begin_proof to end_proof / abort_proof
        self._variant: tuple | None = None  # (layout, its TranscriptVariant)
        self._init_replays()  # before the first write: the runtime wrapper asks whether a recording is on

    def close(self) -> None:
        """Free the pooled buffers, then close the runtime (its device goes with it); idempotent."""
        self._drop_programs()  # their region sets return to the pool first
        self._free_claim_descriptors()
        pool, self._pool = self._pool, {}
        for buffer in [b for b in (self._work, *self._retired) if b is not None]:
            self.rt.free(buffer)
        self._retired.clear()
        self._work = None
        for buffer in [b for free in pool.values() for b in free]:
            self.rt.free(buffer)
        self._serial.clear()
        self._session = None
        self.rt.close()

    # -- information ---------------------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._limits
