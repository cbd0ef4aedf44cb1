"""The GPU backend's tables on the device: uploads (canonical input range-checked on the device), caller-made
device tables, downloads, releases to the pool, and ``table_view``: the binding of a run of a table's entries."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ConfigError
from ...kernels import split
from ...kernels.split import SplitArray
from ...runtime.base import RtBuffer, RtView
from ..base import Commitment, DeviceBuffer, StorageMode, non_canonical
from ..device_transcript import NOT_FOUND
from .geometry import workgroups

if TYPE_CHECKING:
    from .session import ProofSession


@dataclass(frozen=True)
class DeviceTable:
    """A caller's table of ``n_words`` canonical u32 words in ``buffer`` on this backend's device (``device_table``):
    read by the conversion kernel, never written."""

    buffer: RtBuffer
    n_words: int
    what: str = "evaluations"  # what a refusal calls it


@dataclass(frozen=True)
class HostWords:
    """A caller's host words (flat, uint32) range-checked on the device as they are stacked, by the name a refusal
    gives them (``non_canonical``: ``what[index]``)."""

    words: np.ndarray
    what: str
    input: str | None = None  # the replay input these words are (``replay_proof``'s ``inputs``), if any


class DeviceMemory:
    """The GPU backend's tables: uploads (canonical input range-checked on the device), caller-made device tables,
    downloads and releases back to the pool, over the backend's ``DeviceState``."""

    def __init__(self, state):  # state: the backend's DeviceState
        self.state = state


    def reserve(self, shape: tuple) -> SplitArray:
        """Storage for a later ``upload`` (``into``) of a uint32 array of ``shape``, taken now: a caller that
        launches work before writing its input takes the input's storage first, so that no launch of the proof
        has used it when the host writes it (a host-visible buffer is written directly, not in queue order)."""
        entries = shape[0] if shape else 1
        return self.state.new_table(entries, 4 * int(np.prod(shape)) // max(entries, 1), True)

    def upload(self, array: np.ndarray, mode: StorageMode = StorageMode.SHARED,
               source: str | None = None, into: SplitArray | None = None) -> DeviceBuffer:
        """``mode`` says what the table is to the caller (SHARED: an input; PRIVATE: a starting value the device
        then updates, such as zero weights); the buffer gets the mode the policy gives that role. ``source``: the
        proof input the words are, for a recording (each buffer's write named (source, first word, end)).
        ``into``: storage ``reserve`` took for this shape (SHARED only), written instead of new storage."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        host_facing = mode is StorageMode.SHARED
        entries = array.shape[0] if array.ndim else 1
        elem = array.nbytes // max(entries, 1)
        words = array.reshape(-1)
        if into is not None:
            if not host_facing or (into.rows, into.row_bytes) != (entries, elem):
                raise ValueError(f"upload into storage of {into.rows} x {into.row_bytes} B: the array is "
                                 f"{entries} x {elem} B ({mode.name})")
            table = into
        elif array.nbytes <= self.state.buffer_limit:
            table = SplitArray([self.state.upload_words(array, host_facing,
                                                        source=(source, 0, words.size) if source else None)],
                               entries, elem, entries, entries)
            return DeviceBuffer(table, array.shape, table.mode)
        else:
            table = self.state.new_table(entries, elem, host_facing)
        per = table.buffer_rows * elem // 4  # reserved or split storage: written buffer by buffer
        for i, buffer in enumerate(table.buffers):
            self.state.drivers.write(buffer, words[i * per:(i + 1) * per],
                                     source=(source, i * per, (i + 1) * per) if source else None)
        return DeviceBuffer(table, array.shape, table.mode)

    def upload_canonical(self, source: np.ndarray | DeviceTable, into: SplitArray | None = None) -> DeviceBuffer:
        """The canonical words of ``source`` (a C-contiguous uint32 array, written to a new table and converted
        there; or a ``DeviceTable``, converted into a new table) as Montgomery words, range-checked on the device:
        in a proof the check is read with the proof (``end_proof`` raises ``non_canonical`` before returning any
        value); called outside one, it is read at once. ``into``: storage ``reserve`` took for ``source``'s
        words, used instead of a new table."""
        if self.state.session is None:
            with self.state.host_call(proof_words=1) as session:
                table = self.upload_canonical(source, into)
            self.check_canonical(session)
            return table
        if isinstance(source, DeviceTable):
            n = source.n_words
        else:
            if not (isinstance(source, np.ndarray) and source.dtype == np.uint32 and source.ndim == 1
                    and source.flags.c_contiguous):
                raise ValueError("upload_canonical takes a C-contiguous 1-D uint32 array or a DeviceTable")
            n = source.shape[0]
        table = self.state.new_table(n, 4, host_facing=True) if into is None else into
        if (table.rows, table.row_bytes) != (n, 4):
            raise ValueError(f"upload_canonical into storage of {table.rows} x {table.row_bytes} B: the source is "
                             f"{n} words")
        if not isinstance(source, DeviceTable):
            per = table.buffer_rows
            for i, buffer in enumerate(table.buffers):
                self.state.drivers.write(buffer, source[i * per:(i + 1) * per], source=("table", i * per, (i + 1) * per))
        session = self.state.session
        check = session.regions.proof.take((1,))
        self.state.drivers.write(check.buffer, np.array([NOT_FOUND], np.uint32), check.offset)
        session.canonical.append((check, source))
        rt, batch = self.state.drivers, session.batch()
        window = self.state.window_len(n, 4)
        for start in range(0, n, window):
            length = min(window, n - start)
            params = np.array([length, start, 0, 0], np.uint32)
            out = table_view(table, start, length, window == n)
            if isinstance(source, DeviceTable):
                words = RtView(source.buffer, 4 * start, 4 * length)
                batch.dispatch(rt.kernel("to_monty", "to_monty_copy"), [check.view(), out, words], params,
                               workgroups(length))
            else:
                batch.dispatch(rt.kernel("to_monty", "to_monty_inplace"), [check.view(), out], params, workgroups(length))
        return DeviceBuffer(table, (n,), table.mode)

    def device_table(self, buffer, n_words: int, what: str = "evaluations") -> DeviceTable:
        """``buffer`` (made by the caller on ``self.device``, STORAGE usage, at least 4 ``n_words`` bytes) as a
        source for ``upload_canonical``; ConfigError naming the problem otherwise."""
        try:
            return DeviceTable(self.state.rt.adopt(buffer, 4 * int(n_words)), int(n_words), what)
        except ConfigError as exc:
            raise ConfigError(f"{what}: {exc}") from None

    @property
    def device(self):
        """The WebGPU device tables for ``device_table`` must be created on (wgpu and dawn runtimes), else None."""
        rt = self.state.rt
        return rt.device if rt.lang == "wgsl" else None

    def check_canonical(self, session: ProofSession) -> None:
        """Raise ``non_canonical`` for the first table of ``session`` whose range check found a word >= p."""
        for check, source in session.canonical:
            index = int(session.read(check)[0])
            if index != NOT_FOUND:
                what = source.what if isinstance(source, (DeviceTable, HostWords)) else "evaluations"
                raise non_canonical(index, self._source_word(source, index), what, prime=self.state.layout.field.P)

    def _source_word(self, source: np.ndarray | HostWords | DeviceTable, index: int) -> int:
        """Word ``index`` of a canonical source (from the device for a ``DeviceTable``: one gather)."""
        if isinstance(source, HostWords):
            return int(source.words[index])
        if not isinstance(source, DeviceTable):
            return int(source[index])
        window = self.state.window_len(source.n_words, 4)
        first = index - index % window
        count = min(window, source.n_words - first)
        with self.state.host_call(proof_words=1, scratch_words=1) as session:
            regions = session.regions
            indices = self.state.put(regions.scratch, np.array([index], np.uint32))
            out = regions.proof.take((1,))
            session.batch().dispatch(self.state.drivers.kernel("gather_rows"),
                                   [RtView(source.buffer, 4 * first, 4 * count), indices.view(), out.view()],
                                   np.array([1, 0, 0, first, count], np.uint32), 1)
        return int(session.read(out)[0])

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        table = buffer.handle
        if len(table.buffers) == 1:
            return self.state.drivers.read(table.buffers[0], buffer.nbytes).reshape(buffer.shape)
        per = table.buffer_rows * table.row_bytes
        return np.concatenate([self.state.drivers.read(b, per) for b in table.buffers]).reshape(buffer.shape)

    def release(self, *items) -> None:
        """Return buffers (or a commitment's codeword and tree) to this backend's pool for reuse."""
        for item in items:
            if isinstance(item, DeviceBuffer):
                self.state.pool.free(*item.handle.buffers)
            elif isinstance(item, Commitment) and item.handle is not None:
                codeword, levels = item.handle
                self.state.pool.free(*split.release_buffers([codeword, *levels]))
                item.handle = None

    def storage_of(self, item) -> list[RtBuffer]:
        """The buffers behind a ``DeviceBuffer`` or a commitment (its codeword and tree), in order; [] for
        anything else."""
        if isinstance(item, DeviceBuffer):
            return list(item.handle.buffers)
        if isinstance(item, Commitment) and item.handle is not None:
            codeword, levels = item.handle
            return list(split.release_buffers([codeword, *levels]))
        return []

    def residency(self, *items) -> tuple:
        """See ``Backend.residency``: the identities of the buffers behind ``items`` (``DeviceBuffer``s and
        commitments), in order."""
        return tuple(tuple(id(b) for b in self.storage_of(item)) or id(item) for item in items)


def table_view(table: SplitArray, start: int, length: int, whole: bool):
    """The binding of entries [start, start + length) of ``table``: its one buffer when ``whole``, else a
    view inside the buffer holding them."""
    if whole:
        if len(table.buffers) != 1:
            raise ValueError(f"a table of {len(table.buffers)} buffers cannot be bound whole")
        return table.buffers[0]
    buffer, offset = table.locate(start)
    if start % table.buffer_rows + length > table.buffer_rows:
        raise ValueError(f"entries [{start}, {start + length}) cross a buffer of {table.buffer_rows} entries")
    return RtView(buffer, offset, length * table.row_bytes)
