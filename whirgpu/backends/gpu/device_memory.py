"""The GPU backend's device memory: the buffer pool under the storage policy, tables (one buffer or a split array),
uploads (canonical input range-checked on the device), downloads, and the windows that bind a table in parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ConfigError
from ...kernels import split
from ...kernels.split import SplitArray
from ...runtime.base import RtBuffer, RtView
from ..base import Commitment, DeviceBuffer, StorageMode, non_canonical, policy_mode
from ..device_transcript import NOT_FOUND
from .geometry import EF_BYTES, initial_work_pairs, log2, work_bytes, workgroups

if TYPE_CHECKING:
    from .session import _Session


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
    """``GpuBackend``'s memory: allocation from the pool (``_alloc`` / ``_free``), tables and their windows."""

    # -- memory ----------------------------------------------------------------------------------------------
    def mode_for(self, host_facing: bool) -> StorageMode:
        """The mode this backend's policy gives a buffer the host writes or reads (True) or an intermediate."""
        return policy_mode(self.storage, host_facing)

    def _alloc(self, nbytes: int, host_facing: bool = False) -> RtBuffer:
        nbytes = max(EF_BYTES, -(-int(nbytes) // EF_BYTES) * EF_BYTES)
        mode = self.mode_for(host_facing)
        free = self._pool.get((nbytes, mode))
        if free:
            return free.pop()
        buffer = self.rt.alloc(nbytes, mode)
        self._serial[id(buffer)] = len(self._serial)
        self.pool_bytes += buffer.nbytes
        return buffer

    def _free(self, *buffers: RtBuffer) -> None:
        for b in buffers:
            free = self._pool.setdefault((b.nbytes, b.mode), [])
            if not any(b is held for held in free):  # a second release must not hand one buffer out twice
                free.append(b)

    def _alignment(self) -> int:
        return max(4, int(self.rt.offset_alignment))

    def _new_table(self, n: int, elem: int, host_facing: bool = False) -> SplitArray:
        """A table of ``n`` entries of ``elem`` bytes (contents undefined): one buffer when it fits
        ``buffer_limit`` (the unsplit layout: ``window_rows == buffer_rows == n``), else ``split.layout``'s
        buffers of a power-of-two number of whole entries (``n`` must then be a power of two)."""
        if n * elem <= self.buffer_limit:
            return SplitArray([self._alloc(n * elem, host_facing)], n, elem, n, n)
        buffer_rows, window_rows = split.layout(n, elem, self.binding_limit, self.buffer_limit, self._alignment())
        buffers = [self._alloc(buffer_rows * elem, host_facing) for _ in range(n // buffer_rows)]
        return SplitArray(buffers, n, elem, buffer_rows, window_rows)

    def _upload_words(self, array: np.ndarray, host_facing: bool = True, nbytes: int = 0,
                      source: tuple | None = None) -> RtBuffer:
        """``array`` in a new buffer of at least ``nbytes`` (its own size by default), written from the start
        (``source``: the proof input it is, for a recording: ``Drivers.write``)."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        buffer = self._alloc(max(array.nbytes, nbytes), host_facing)
        self._drivers.write(buffer, array, source=source)
        return buffer

    def upload(self, array: np.ndarray, mode: StorageMode = StorageMode.SHARED) -> DeviceBuffer:
        """``mode`` says what the table is to the caller (SHARED: an input; PRIVATE: a starting value the device
        then updates, such as zero weights); the buffer gets the mode the policy gives that role."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        host_facing = mode is StorageMode.SHARED
        entries = array.shape[0] if array.ndim else 1
        elem = array.nbytes // max(entries, 1)
        if array.nbytes <= self.buffer_limit:
            table = SplitArray([self._upload_words(array, host_facing)], entries, elem, entries, entries)
        else:
            table = self._new_table(entries, elem, host_facing)
            words = array.reshape(-1)
            per = table.buffer_rows * elem // 4
            for i, buffer in enumerate(table.buffers):
                self._drivers.write(buffer, words[i * per:(i + 1) * per])
        return DeviceBuffer(table, array.shape, table.mode)

    def upload_canonical(self, source: np.ndarray | DeviceTable) -> DeviceBuffer:
        """The canonical words of ``source`` (a C-contiguous uint32 array, written to a new table and converted
        there; or a ``DeviceTable``, converted into a new table) as Montgomery words, range-checked on the device:
        in a proof the check is read with the proof (``end_proof`` raises ``non_canonical`` before returning any
        value); called outside one, it is read at once."""
        if self._session is None:
            with self._host_call(proof_words=1) as session:
                table = self.upload_canonical(source)
            self._check_canonical(session)
            return table
        if isinstance(source, DeviceTable):
            n = source.n_words
        else:
            if not (isinstance(source, np.ndarray) and source.dtype == np.uint32 and source.ndim == 1
                    and source.flags.c_contiguous):
                raise ValueError("upload_canonical takes a C-contiguous 1-D uint32 array or a DeviceTable")
            n = source.shape[0]
        table = self._new_table(n, 4, host_facing=True)
        if not isinstance(source, DeviceTable):
            per = table.buffer_rows
            for i, buffer in enumerate(table.buffers):
                self._drivers.write(buffer, source[i * per:(i + 1) * per], source=("table", i * per, (i + 1) * per))
        check = self._session.regions.proof.take((1,))
        self._drivers.write(check.buffer, np.array([NOT_FOUND], np.uint32), check.offset)
        self._session.canonical.append((check, source))
        rt, batch = self._drivers, self._batch()
        window = self._window_len(n, 4)
        for start in range(0, n, window):
            length = min(window, n - start)
            params = np.array([length, start, 0, 0], np.uint32)
            out = self._view(table, start, length, window == n)
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
            return DeviceTable(self.rt.adopt(buffer, 4 * int(n_words)), int(n_words), what)
        except ConfigError as exc:
            raise ConfigError(f"{what}: {exc}") from None

    @property
    def device(self):
        """The WebGPU device tables for ``device_table`` must be created on (wgpu and dawn runtimes), else None."""
        return self.rt.device if self.rt.lang == "wgsl" else None

    def _check_canonical(self, session: _Session) -> None:
        """Raise ``non_canonical`` for the first table of ``session`` whose range check found a word >= p."""
        for check, source in session.canonical:
            index = int(self._get(session.words, check)[0])
            if index != NOT_FOUND:
                what = source.what if isinstance(source, (DeviceTable, HostWords)) else "evaluations"
                raise non_canonical(index, self._source_word(source, index), what, prime=self.layout.field.P)

    def _source_word(self, source: np.ndarray | HostWords | DeviceTable, index: int) -> int:
        """Word ``index`` of a canonical source (from the device for a ``DeviceTable``: one gather)."""
        if isinstance(source, HostWords):
            return int(source.words[index])
        if not isinstance(source, DeviceTable):
            return int(source[index])
        window = self._window_len(source.n_words, 4)
        first = index - index % window
        count = min(window, source.n_words - first)
        with self._host_call(proof_words=1, scratch_words=1) as session:
            regions = session.regions
            indices = self._put(regions.scratch, np.array([index], np.uint32))
            out = regions.proof.take((1,))
            self._batch().dispatch(self._drivers.kernel("gather_rows"),
                                   [RtView(source.buffer, 4 * first, 4 * count), indices.view(), out.view()],
                                   np.array([1, 0, 0, first, count], np.uint32), 1)
        return int(self._get(session.words, out)[0])

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        table = buffer.handle
        if len(table.buffers) == 1:
            return self._drivers.read(table.buffers[0], buffer.nbytes).reshape(buffer.shape)
        per = table.buffer_rows * table.row_bytes
        return np.concatenate([self._drivers.read(b, per) for b in table.buffers]).reshape(buffer.shape)

    def release(self, *items) -> None:
        """Return buffers (or a commitment's codeword and tree) to this backend's pool for reuse."""
        for item in items:
            if isinstance(item, DeviceBuffer):
                self._free(*item.handle.buffers)
            elif isinstance(item, Commitment) and item.handle is not None:
                codeword, levels = item.handle
                self._free(*split.release_buffers([codeword, *levels]))
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

    def _workspace(self, pairs: int) -> RtBuffer:
        """The reductions' work buffer, with room for ``pairs`` partial pairs (a larger one, ticket zeroed, when
        needed; the old one stays alive until ``close``: launches already recorded bind it)."""
        if self._work is None or self._work.nbytes < work_bytes(pairs):
            if self._work is not None:
                self._retired.append(self._work)
            else:
                pairs = max(pairs, initial_work_pairs(self._window_limit))
            # host-facing: the host writes its ticket once (SHARED under hybrid, as every buffer the host writes)
            self._work = self._upload_words(np.zeros(EF_BYTES // 4, np.uint32), nbytes=work_bytes(pairs))
        return self._work

    # -- windows -----------------------------------------------------------------------------------------------
    @property
    def _window_limit(self) -> int:
        # A window must fit one binding and lie inside one buffer of a split table (WebGPU's binding limit is at
        # most its buffer limit, so on a device this is the binding limit).
        return min(self.binding_limit, self.buffer_limit)

    def _window_len(self, n: int, elem_bytes: int) -> int:
        """Entries per window: the largest power of two whose bytes fit one binding and one buffer (n itself if
        all fit). A split table's buffers hold a power-of-two multiple of it, so no window crosses a buffer."""
        if n * elem_bytes <= self._window_limit:
            return n
        return 1 << log2(self._window_limit // elem_bytes)

    def _pair_window(self, n: int) -> int:
        """Pairs per window of a round over a table of ``n`` entries: prefix pairs (i, i + n/2) bind two windows
        of this many entries, suffix pairs (2i, 2i + 1) one window of twice as many."""
        if self.layout.suffix:
            return max(1, self._window_len(n, EF_BYTES) // 2)
        return self._window_len(n // 2, EF_BYTES)

    def _pairs(self, table: SplitArray, half: int, window: int):
        """(lo binding, hi binding, lo_off, hi_off, start, len) per window over the halves of ``table``. The
        choice between one whole binding and windows is made for EF entries, so a base table and its EF weights
        always get the same offsets (a table bound whole is one buffer: its EF twin fits one). Under a suffix
        layout pair i is entries (2i, 2i + 1): one binding holds both halves of a window (offsets 0 and 1)."""
        if self.layout.suffix:
            if window == half and 2 * half * EF_BYTES <= self._window_limit:
                yield table.buffers[0], table.buffers[0], 0, 1, 0, half
                return
            for start in range(0, half, window):
                length = min(window, half - start)
                view = self._view(table, 2 * start, 2 * length, False)
                yield view, view, 0, 1, start, length
            return
        if window == half and 2 * half * EF_BYTES <= self._window_limit:
            buffer = table.buffers[0]
            yield buffer, buffer, 0, half, 0, half
            return
        for start in range(0, half, window):
            length = min(window, half - start)
            yield (self._view(table, start, length, False), self._view(table, half + start, length, False),
                   0, 0, start, length)

    @staticmethod
    def _view(table: SplitArray, start: int, length: int, whole: bool):
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
