"""The runtime as the GPU backend and the shared kernel drivers (``kernels/ntt.py``, ``kernels/merkle.py``) see
it: allocations from the backend's pool, every transfer and device-side copy counted in the backend's ``stats``
and, while a proof is being recorded (``replay``), handed to its session's recorder."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...runtime.base import RtBuffer, Runtime
from ..base import DeviceLimits, StorageMode


class CountingBatch:
    """A runtime batch whose device-side copies are counted in ``state.stats.copied`` and whose launches go to the
    recorder of ``session`` (the ``ProofSession`` it belongs to, if any) while that proof is recorded."""

    def __init__(self, batch, state, session=None):  # state: the backend's DeviceState
        self._batch = batch
        self._state = state
        self._session = session

    @property
    def _recorder(self):
        return self._session.recorder if self._session is not None else None

    def dispatch(self, kernel, buffers, params, n_groups) -> None:
        self._batch.dispatch(kernel, buffers, params, n_groups)
        if self._recorder is not None:
            self._recorder.dispatch(self, kernel, buffers, params, n_groups)

    def copy(self, src: RtBuffer, src_offset: int, dst: RtBuffer, dst_offset: int, nbytes: int) -> None:
        self._state.stats.copied += int(nbytes)
        self._batch.copy(src, src_offset, dst, dst_offset, nbytes)
        if self._recorder is not None:
            self._recorder.copy(self, src, src_offset, dst, dst_offset, nbytes)

    def submit(self) -> None:
        self._batch.submit()
        if self._recorder is not None:
            self._recorder.submit(self)


class Drivers:
    """The runtime as the backend and the shared kernel drivers (ntt, merkle) see it: ``alloc`` is served from
    the backend's pool in the mode its storage policy gives the buffer (a driver's ``mode`` says what the buffer
    is: SHARED = the host writes or reads it, PRIVATE = an intermediate), so codewords and trees are recycled
    across commitments and proofs; ``write``, ``read`` and batch copies are counted in the backend's ``stats``
    (staging copies included, as the runtime reports them); all else is forwarded."""

    def __init__(self, runtime: Runtime, state):  # state: the backend's DeviceState
        self._runtime = runtime
        self._state = state
        self._limits: DeviceLimits | None = None
        self._limits_key: tuple[int, int] | None = None

    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        return self._state.pool.alloc(nbytes, host_facing=mode is StorageMode.SHARED)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0, source: tuple | None = None) -> None:
        """``source``: where a proof's input came from, for a recording (``replay``): ("points",), ("root",) or
        ("table", start, stop) of the table being proved."""
        data = np.ascontiguousarray(data, dtype=np.uint32)
        self._runtime.write(buffer, data, offset)
        if self._state.recording is not None:
            self._state.recording.write(buffer, data, offset, source)
        stats = self._state.stats
        stats.uploaded += data.nbytes
        if data.nbytes and self._runtime.write_staged(buffer):
            stats.copied += data.nbytes

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        if self._state.recording is not None:
            self._state.recording.drop("a host read inside the proof")
        out = self._runtime.read(buffer, nbytes, offset)
        stats = self._state.stats
        stats.downloaded += out.nbytes
        if out.nbytes and self._runtime.read_staged(buffer):
            stats.copied += out.nbytes
        return out

    def read_later(self, buffer: RtBuffer, nbytes: int, prepared=None):
        """``Runtime.read_later``, counted as ``read`` counts when the words arrive; ``prepared`` (a
        ``PreparedProgram`` just run whose ``read`` is these words): read through it (its staged copy's words where it
        has one; its write stage settled after)."""
        if self._state.recording is not None:
            self._state.recording.drop("a host read inside the proof")
        if prepared is not None:
            pending = prepared.read_later()
        else:
            pending = self._runtime.read_later(buffer, nbytes)

        def words(pick=None) -> np.ndarray:
            out = pending(pick)
            stats = self._state.stats
            stats.downloaded += nbytes
            if nbytes and self._runtime.read_staged(buffer):
                stats.copied += nbytes
            return out

        return words

    def batch(self, session=None) -> CountingBatch:
        """A counted batch; ``session``: the ``ProofSession`` whose recording (if any) sees its launches."""
        return CountingBatch(self._runtime.batch(), self._state, session)

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str | None = None):
        """Composed for the backend's running layout: its field (unless ``field`` is given) and, for a stem that
        runs transcript programs, its challenger variant's constants."""
        variant = self._state.transcript_variant
        if variant.length_tagged or variant.distinct_queries:
            constants, layout_field = variant.kernel_args(stem, constants)
        else:  # the default challenger adds no constants: skip the registry lookup on this hot path
            layout_field = variant.field.name
        # Launches are only recorded until the batch is submitted, so a pipeline may still be compiling: the
        # first proof's pipelines compile side by side while the host encodes.
        return self._runtime.kernel_async(stem, entry, constants or None, field or layout_field)

    def limits(self) -> DeviceLimits:
        """The runtime's limits (as the backend read them when it opened) with the backend's binding and buffer
        limits (which lay out split arrays)."""
        state = self._state
        key = (state.binding_limit, state.buffer_limit)
        if self._limits_key != key:  # a proof asks ~40 times; tests lower the backend's limits between proofs
            self._limits = replace(state.limits, max_storage_binding_size=key[0], max_buffer_size=key[1])
            self._limits_key = key
        return self._limits

    def __getattr__(self, name):
        return getattr(self._runtime, name)
