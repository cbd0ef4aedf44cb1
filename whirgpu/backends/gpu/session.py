"""``ProofSession``: one proof's (or one host-valued call's) device state from opening to closing: its three
regions (from the backend's pool), its open batch, its device transcript, its recording (the launch program being
built), the range checks and the buffers it holds until it closes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..device_transcript import DeviceTranscript
from ..device_values import DeviceValue, ProofRegions


@dataclass
class ProofSession:
    """Owned by ``DeviceState.session`` while it runs (``DeviceState.open_session`` .. ``finish_session``).
    ``canonical``: the range checks of the tables converted from canonical words (check slot, source), read at
    the end."""

    regions: ProofRegions
    runtime_batch: object
    transcript: DeviceTranscript | None = None
    canonical: list = field(default_factory=list)
    words: np.ndarray | None = None  # the proof region as read back when the session closed
    # Per fold of the proof, in order: whether a sumcheck round of the folded table follows (the fold then sums it)
    fold_fuses: list = field(default_factory=list)
    # (table, weights, sums) of the last fused fold: the next sumcheck_round of that table returns the sums
    pending_sums: tuple | None = None
    # buffers the host wrote for this proof that its launches read (the stacking's sources): back to the pool once
    # the proof's last batch is submitted (``DeviceState.free_submitted``), never before: a pooled buffer may be
    # written by the host again, and a write reaches the queue before a batch not yet submitted
    after_submit: list = field(default_factory=list)
    # eq tables ``evaluate_columns`` built, by (id(point buffer), point offset, m), kept for ``column_weights``
    eq_tables: dict = field(default_factory=dict)
    # the recording of this proof's launches as a program (``replay.Recorder``), when ``record_proof`` asked
    recorder: object = None
    # the ``algebra.DeviceAlgebra`` over this session, if one was made: its pending ops go before any other launch
    algebra: object = None

    def batch(self):
        """The open batch, after recording the algebra's and the transcript's pending ops (they precede what
        follows; at most one of them has any)."""
        self._flush_pending()
        return self.runtime_batch

    def submit(self) -> None:
        """Send what the session recorded so far (the device starts on it), after the algebra's staged constants."""
        self._flush_pending()
        if self.algebra is not None:
            self.algebra.write_staged()
        self.runtime_batch.submit()

    def _flush_pending(self) -> None:
        if self.algebra is not None:
            self.algebra.flush()
        self.transcript.flush()

    def read(self, value: DeviceValue) -> np.ndarray:
        """A proof-region value from the words read back at the end (``words``)."""
        return value.read(self.words)
