"""``DeviceState``: everything the GPU backend's parts share, owned in one object: the runtime and its counting
wrapper (``Drivers``), the buffer pool, the limits the backend lays tables out for, the running layout, the
running ``ProofSession``, the recording in progress, and the few buffers kept for the backend's life."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from ...kernels import merkle, split
from ...kernels.split import SplitArray
from ...runtime.base import RtBuffer, Runtime
from ..base import DEFAULT_LAYOUT, StorageMode, TableLayout, TransferStats
from ..device_transcript import PROOF_WINDOW, DeviceTranscript, TranscriptVariant
from ..device_values import STATE_WORDS, DeviceValue, ProofRegions, Region
from .drivers import Drivers
from .geometry import EF_BYTES, initial_work_pairs, log2, work_bytes
from .pool import DevicePool
from .session import ProofSession


class DeviceState:
    """The GPU backend's shared state for the backend's life (module docstring). ``session`` is the running
    proof's (or host-valued call's) ``ProofSession``, None between them: the proof's own state (regions, batch,
    transcript, recording) lives there, for the proof's life; ``building`` is held from ``begin_proof`` to
    ``end_proof`` (or a replay's encoding)."""

    def __init__(self, runtime: Runtime, profile: bool, storage: str):
        self.rt = runtime
        self.profile = profile
        self.storage = storage
        self.stats = TransferStats()
        self.pool = DevicePool(runtime, storage)
        self.limits = runtime.limits()
        # The limits the backend lays its windows and split arrays out for (tests lower them to cross every seam
        # at small sizes; the runtime still enforces the device's own).
        self.binding_limit = self.limits.max_storage_binding_size
        self.buffer_limit = self.limits.max_buffer_size
        self.pow_full_range = False
        self.layout: TableLayout = DEFAULT_LAYOUT
        self.session: ProofSession | None = None
        self.building = threading.Lock()
        self._variant: tuple | None = None  # (layout, its TranscriptVariant)
        self.drivers = Drivers(runtime, self)
        # One small buffer, bound read-only where a factor table is unused (never read there).
        self.dummy = self.upload_words(np.zeros(EF_BYTES // 4, np.uint32))
        # The reductions' work words (reduction.wgsl): the ticket (0 between reductions: the last workgroup of each
        # resets it) and the partial pairs; one buffer for every reduction (launches run in order), grown on demand.
        self._work: RtBuffer | None = None  # made by the first reduction (the layout limits are final by then)
        self._retired: list[RtBuffer] = []
        self._descriptors: dict[bytes, RtBuffer] = {}

    def close(self) -> None:
        """Free the pool and the backend's own buffers (the runtime stays open: its owner closes it)."""
        for buffer in [b for b in (self._work, *self._retired, *self._descriptors.values()) if b is not None]:
            self.rt.free(buffer)
        self._retired.clear()
        self._descriptors.clear()
        self._work = None
        self.pool.close()
        self.session = None

    # -- the running layout ----------------------------------------------------------------------------------
    @property
    def transcript_variant(self) -> TranscriptVariant:
        """The device challenger the running layout speaks (made once per layout: every kernel lookup asks)."""
        layout = self.layout
        cached = self._variant
        if cached is None or cached[0] is not layout:
            cached = self._variant = (layout, TranscriptVariant(layout.field, layout.length_tagged,
                                                                layout.distinct_queries))
        return cached[1]

    @property
    def recording(self):
        """The running proof's recorder (``replay.Recorder``), or None."""
        return self.session.recorder if self.session is not None else None

    def round_constants(self) -> RtBuffer:
        return merkle.round_constants(self.drivers, self.layout.field.name)

    # -- tables and windows ----------------------------------------------------------------------------------
    def alignment(self) -> int:
        return max(4, int(self.rt.offset_alignment))

    @property
    def window_limit(self) -> int:
        """The most bytes one window binds: it must fit one binding and lie inside one buffer of a split table
        (WebGPU's binding limit is at most its buffer limit, so on a device this is the binding limit)."""
        return min(self.binding_limit, self.buffer_limit)

    def window_len(self, n: int, elem_bytes: int) -> int:
        """Entries per window: the largest power of two whose bytes fit one binding and one buffer (n itself if
        all fit). A split table's buffers hold a power-of-two multiple of it, so no window crosses a buffer."""
        if n * elem_bytes <= self.window_limit:
            return n
        return 1 << log2(self.window_limit // elem_bytes)

    def new_table(self, n: int, elem: int, host_facing: bool = False) -> SplitArray:
        """A table of ``n`` entries of ``elem`` bytes (contents undefined): one buffer when it fits
        ``buffer_limit`` (the unsplit layout: ``window_rows == buffer_rows == n``), else ``split.layout``'s
        buffers of a power-of-two number of whole entries (``n`` must then be a power of two)."""
        if n * elem <= self.buffer_limit:
            return SplitArray([self.pool.alloc(n * elem, host_facing)], n, elem, n, n)
        buffer_rows, window_rows = split.layout(n, elem, self.binding_limit, self.buffer_limit, self.alignment())
        buffers = [self.pool.alloc(buffer_rows * elem, host_facing) for _ in range(n // buffer_rows)]
        return SplitArray(buffers, n, elem, buffer_rows, window_rows)

    def upload_words(self, array: np.ndarray, host_facing: bool = True, nbytes: int = 0,
                     source: tuple | None = None) -> RtBuffer:
        """``array`` in a new pooled buffer of at least ``nbytes`` (its own size by default), written from the
        start (``source``: the proof input it is, for a recording: ``Drivers.write``)."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        buffer = self.pool.alloc(max(array.nbytes, nbytes), host_facing)
        self.drivers.write(buffer, array, source=source)
        return buffer

    def workspace(self, pairs: int) -> RtBuffer:
        """The reductions' work buffer, with room for ``pairs`` partial pairs (a larger one, ticket zeroed, when
        needed; the old one stays alive until ``close``: launches already recorded bind it)."""
        if self._work is None or self._work.nbytes < work_bytes(pairs):
            if self._work is not None:
                self._retired.append(self._work)
            else:
                pairs = max(pairs, initial_work_pairs(self.window_limit))
            # host-facing: the host writes its ticket once (SHARED under hybrid, as every buffer the host writes)
            self._work = self.upload_words(np.zeros(EF_BYTES // 4, np.uint32), nbytes=work_bytes(pairs))
        return self._work

    def claim_descriptors(self, desc: np.ndarray) -> RtBuffer:
        """A buffer holding ``desc``, one per distinct content for the backend's life: written once, never
        pooled, so no launch still recorded can see it rewritten."""
        key = desc.tobytes()
        if key not in self._descriptors:
            buffer = self.rt.alloc(max(EF_BYTES, desc.nbytes), StorageMode.SHARED)
            self.drivers.write(buffer, desc.reshape(-1))
            self._descriptors[key] = buffer
        return self._descriptors[key]

    # -- the running session ---------------------------------------------------------------------------------
    def tail_io(self, points: bool = False) -> list:
        """The buffers a transcript tail binds after its data (registry ``_TAIL_IO`` less the work words): scratch,
        the proof window (filled in when the program is known), the points region where the kernel binds it
        (``points``: it may EXPAND), the round constants."""
        regions = self.session.regions
        return [regions.scratch.buffer, PROOF_WINDOW] + [regions.points.buffer] * points + [self.round_constants()]

    def batch(self):
        """The running session's batch (its transcript's pending ops recorded first)."""
        return self.session.batch()

    def submit(self) -> None:
        """Send what the running session recorded so far; waits only when profiling."""
        self.session.submit()
        if self.profile:
            self.rt.wait()

    def sync(self) -> None:
        """Inside a proof: submit what was recorded and wait for it (profiling); otherwise nothing."""
        if self.session is not None:
            self.submit()
            self.rt.wait()

    def open_session(self, proof_bytes: int, scratch_bytes: int, points_bytes: int,
                     variant: TranscriptVariant | None = None) -> ProofSession:
        align = max(EF_BYTES, int(self.rt.offset_alignment))
        # All three host-facing: the host writes the challenger and the statement's points, reads the proof.
        proof = self.pool.alloc(proof_bytes, host_facing=True)
        scratch = self.pool.alloc(scratch_bytes, host_facing=True)
        points = self.pool.alloc(points_bytes, host_facing=True)
        scratch_region = Region(scratch, align)
        state = scratch_region.take((STATE_WORDS,))
        discard = scratch_region.take((1,))
        regions = ProofRegions(Region(proof, align), scratch_region, Region(points, EF_BYTES), state, discard)
        session = ProofSession(regions, None)
        session.runtime_batch = self.drivers.batch(session)
        session.transcript = DeviceTranscript(self, session, variant)
        session.transcript.full_range = self.pow_full_range
        return session

    def close_session(self, session: ProofSession, read: bool = True) -> np.ndarray | None:
        """Submit what is left and read the proof region back (one readback); free the regions."""
        session.submit()
        return self.finish_session(session, read)

    def finish_session(self, session: ProofSession, read: bool = True, keep_regions: bool = False,
                       pending=None) -> np.ndarray | None:
        """Read a submitted session's proof region back (one readback; ``pending``: a ``read_later`` of it) and
        free its regions (``keep_regions``: a recording's program keeps them)."""
        regions = session.regions
        self.free_submitted(session)
        if pending is not None:
            words = pending()
        else:
            words = self.drivers.read(regions.proof.buffer, regions.proof.top) if read else None
        if not keep_regions:
            self.pool.free(regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)
        # Every proof of one configuration then makes the same requests of the same pool, gets the same buffers
        # and so the same bind groups, which the runtime has cached (creating one costs ~0.2 ms of host time).
        self.pool.canonical_order()
        return words

    def free_submitted(self, session: ProofSession) -> None:
        """The session's ``after_submit`` buffers and the eq tables it kept and never used back to the pool (its
        batches are all submitted)."""
        self.pool.free(*session.after_submit, *(b for eq in session.eq_tables.values() for b in eq.buffers))
        session.after_submit, session.eq_tables = [], {}

    @contextmanager
    def host_call(self, proof_words: int = 0, scratch_words: int = 0, points_words: int = 0):
        """A session for one primitive called with host arrays; yields it and leaves the proof words read back
        in ``session.words``. A call of no proof words reads nothing back: its work is submitted and the host goes
        on without waiting (every runtime orders later host writes after submitted work)."""
        if self.session is not None:
            raise RuntimeError("a primitive was called with host arrays inside a device proof")
        align = max(EF_BYTES, int(self.rt.offset_alignment))
        size = lambda words, slots: 4 * words + slots * align  # noqa: E731
        # the running layout's challenger (a host-valued grind searches with the caller's transcript's permutation)
        session = self.open_session(size(proof_words, 4), size(STATE_WORDS + scratch_words + 1, 8),
                                    max(EF_BYTES, 4 * points_words), self.transcript_variant)
        self.session = session
        try:
            yield session
            self.session = None
            session.words = self.close_session(session, read=proof_words > 0)
        finally:
            self.session = None

    def copy_table_to_proof(self, table) -> DeviceValue:
        """A device copy of a table (a ``DeviceBuffer``, its buffers in order) into the running session's proof
        region: the value read back with it."""
        out = self.session.regions.proof.take(table.shape)
        batch = self.batch()
        per = table.handle.buffer_rows * table.handle.row_bytes
        for i, buffer in enumerate(table.handle.buffers):
            batch.copy(buffer, 0, out.buffer, out.offset + i * per, min(per, out.nbytes - i * per))
        return out

    def put(self, region: Region, array: np.ndarray) -> DeviceValue:
        """Host array -> a new slot of ``region`` (host-valued calls only, before anything is recorded)."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        value = region.take(array.shape)
        if array.size:
            self.drivers.write(region.buffer, array.reshape(-1), value.offset)
        return value
