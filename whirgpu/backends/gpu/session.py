"""The GPU backend's sessions: one proof's (or one host-valued call's) regions, open batch and device transcript;
submitting, waiting, and a host-valued primitive's session of its own with its values read back."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..device_transcript import DeviceTranscript, TranscriptVariant
from ..device_values import STATE_WORDS, DeviceValue, ProofRegions, Region
from .geometry import EF_BYTES


@dataclass
class _Session:
    """One proof's (or one host-valued call's) regions, its open batch and its transcript; ``canonical``: the
    range checks of the tables converted from canonical words (check slot, source), read at the end."""

    regions: ProofRegions
    batch: object
    transcript: DeviceTranscript | None = None
    canonical: list = field(default_factory=list)
    words: np.ndarray | None = None  # the proof region as read back when the session closed
    # Per fold of the proof, in order: whether a sumcheck round of the folded table follows (the fold then sums it)
    fold_fuses: list = field(default_factory=list)
    # (table, weights, sums) of the last fused fold: the next sumcheck_round of that table returns the sums
    pending_sums: tuple | None = None
    # buffers the host wrote for this proof that its launches read (the stacking's sources): back to the pool once
    # the proof's last batch is submitted (``_free_submitted``), never before: a pooled buffer may be written by
    # the host again, and a write reaches the queue before a batch not yet submitted
    after_submit: list = field(default_factory=list)
    # eq tables ``evaluate_columns`` built, by (id(point buffer), point offset, m), kept for ``column_weights``
    eq_tables: dict = field(default_factory=dict)


class Sessions:
    """``GpuBackend``'s sessions: a primitive records into ``_session`` (a proof's, or ``_host_call``'s)."""

    # -- sessions ----------------------------------------------------------------------------------------------
    def _open_session(self, proof_bytes: int, scratch_bytes: int, points_bytes: int,
                      variant: TranscriptVariant | None = None) -> _Session:
        align = max(EF_BYTES, int(self.rt.offset_alignment))
        # All three host-facing: the host writes the challenger and the statement's points, reads the proof.
        proof = self._alloc(proof_bytes, host_facing=True)
        scratch = self._alloc(scratch_bytes, host_facing=True)
        points = self._alloc(points_bytes, host_facing=True)
        scratch_region = Region(scratch, align)
        state = scratch_region.take((STATE_WORDS,))
        discard = scratch_region.take((1,))
        proof_region = Region(proof, align)
        regions = ProofRegions(proof_region, scratch_region, Region(points, EF_BYTES), state, discard)
        session = _Session(regions, self._drivers.batch())
        session.transcript = DeviceTranscript(self, session, variant)
        session.transcript.full_range = self.pow_full_range
        return session

    def _close_session(self, session: _Session, read: bool = True) -> np.ndarray | None:
        """Submit what is left and read the proof region back (one readback); free the regions."""
        session.transcript.flush()
        session.batch.submit()
        return self._finish_session(session, read)

    def _finish_session(self, session: _Session, read: bool = True, keep_regions: bool = False,
                        pending=None) -> np.ndarray | None:
        """Read a submitted session's proof region back (one readback; ``pending``: a ``read_later`` of it) and
        free its regions (``keep_regions``: a recording's program keeps them)."""
        regions = session.regions
        self._free_submitted(session)
        if pending is not None:
            words = pending()
        else:
            words = self._drivers.read(regions.proof.buffer, regions.proof.top) if read else None
        if not keep_regions:
            self._free(regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)
        # Every proof of one configuration then makes the same requests of the same pool, gets the same buffers
        # and so the same bind groups, which the runtime has cached (creating one costs ~0.2 ms of host time).
        for free in self._pool.values():
            free.sort(key=lambda b: -self._serial.get(id(b), -1))
        return words

    def _free_submitted(self, session: _Session) -> None:
        """The session's ``after_submit`` buffers and the eq tables it kept and never used back to the pool (its
        batches are all submitted)."""
        self._free(*session.after_submit, *(b for eq in session.eq_tables.values() for b in eq.buffers))
        session.after_submit, session.eq_tables = [], {}

    def sync(self) -> None:
        """Inside a proof: submit what was recorded and wait for it (profiling); otherwise nothing."""
        if self._session is not None:
            self._submit()
            self.rt.wait()

    def _batch(self):
        """The session's batch, after recording the transcript's pending ops (they precede what follows)."""
        self._session.transcript.flush()
        return self._session.batch

    def _submit(self) -> None:
        """Send what the session recorded so far (the device starts on it); waits only when profiling."""
        session = self._session
        session.transcript.flush()
        session.batch.submit()
        if self.profile:
            self.rt.wait()

    @contextmanager
    def _host_call(self, proof_words: int = 0, scratch_words: int = 0, points_words: int = 0):
        """A session for one primitive called with host arrays; yields it and leaves the proof words read back
        in ``session.words``."""
        if self._session is not None:
            raise RuntimeError("a primitive was called with host arrays inside a device proof")
        align = max(EF_BYTES, int(self.rt.offset_alignment))
        size = lambda words, slots: 4 * words + slots * align  # noqa: E731
        session = self._open_session(size(proof_words, 4), size(STATE_WORDS + scratch_words + 1, 8),
                                     max(EF_BYTES, 4 * points_words))
        self._session = session
        try:
            yield session
            self._session = None
            session.words = self._close_session(session)
        finally:
            self._session = None

    def _put(self, region: Region, array: np.ndarray) -> DeviceValue:
        """Host array -> a new slot of ``region`` (host-valued calls only, before anything is recorded)."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        value = region.take(array.shape)
        if array.size:
            self._drivers.write(region.buffer, array.reshape(-1), value.offset)
        return value

    @staticmethod
    def _get(words: np.ndarray, value: DeviceValue) -> np.ndarray:
        return words[value.word:value.word + value.words].reshape(value.shape)
