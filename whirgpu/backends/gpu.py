"""The GPU backend: every ``Backend`` primitive as launches of the shared kernel set on a ``Runtime``.

A proof runs as one command stream (DESIGN.md §5). ``begin_proof`` uploads the polynomial's companions once (the
challenger after the domain separator, the statement's points); from then on every primitive only records
launches into the session's batch, and the transcript itself is a kernel (``DeviceTranscript``): values such
as roots, OOD answers, sumcheck values, challenges, query indices and PoW witnesses are ``DeviceValue``s in the
session's proof / scratch / points regions (``device_values``). The batch is submitted after each commitment
(so the device starts while the host encodes the next round), all but the tree's last ``merkle_top`` launch,
which is recorded after the submission as a transcript tail (it copies the root into the proof region and runs
the transcript steps that follow: ``_root_launch``); ``end_proof`` reads the proof region back once and turns the
proof's values into host arrays.

Called outside a proof (tests, benchmarks, calibration), each primitive takes and returns host arrays: it runs
in a session of its own, uploading its inputs into that session's regions and reading its outputs back.

Arrays larger than the device's storage-binding limit are bound as windows (``RtView``) and their work is split
into one launch per window. Reductions (sumcheck sums, multilinear evaluations) finish in their own launches: each
workgroup writes a partial, and the last workgroup of the reduction (over all its windows' launches, counted by a
ticket word that it resets) sums them into the output slot. In a proof, a fold followed by another sumcheck round of
the same table (``ProofShape.sumcheck_phases``) is one fused launch that also sums that round (``fold_and_sum``),
whose ``sumcheck_round`` then records nothing. Codewords and Merkle
levels are ``SplitArray``s (``kernels/split.py``): several buffers when one would pass ``max_buffer_size``, bound
in windows of whole rows when one binding would pass ``max_storage_binding_size``; the commitment kernels and the
openings launch once per window (once in all when everything fits, as the unsplit layout). A tree's top levels
share one buffer (``merkle.alloc_tree``), so a round's openings bind them once: one launch per round whenever the
codeword fits a binding and no level is split (``level_jobs``). Tables (the
polynomial, folded tables, weights: every ``DeviceBuffer`` this backend makes) are ``SplitArray``s of entries x
element bytes too: exactly one buffer when they fit ``buffer_limit``, else buffers of a power-of-two number of
whole entries (``_new_table``). A table's windows (``_window_len``: power-of-two entry counts within both limits)
divide its buffers, so every window, and each lo/hi half window of ``_pairs``, lies inside one buffer.
``binding_limit`` and ``buffer_limit`` are the limits the backend lays these out for (the device's; tests lower
them).

Storage: each allocation's ``StorageMode`` follows the backend's policy (``STORAGE_POLICIES``) and the buffer's
role. Under ``hybrid`` (the default) buffers the host writes or reads are SHARED: uploaded tables, the three
regions (the host writes the challenger and points, reads the proof), the constant tables (twiddles, round
constants); intermediates are PRIVATE: codewords, Merkle levels, folded tables, weights, factor tables, partials.
``shared`` / ``private`` put every buffer in that mode. The pool keys on (bytes, mode), so a recycled buffer
keeps its mode. Every upload, readback and device-side copy (including the runtime's staging copies) is counted
in ``stats``, in one place (``_BackendRuntime``).

Query-sized work covers a fixed number of slots per round (the round's query count capped by the folded
domain), whatever number of distinct indices the transcript draws: the kernels gather every slot (slots past
the drawn count hold index 0) and give them zero constraint coefficients, so one configuration always needs
the same buffers and the host never waits for a count.

Eq and select weights are factored as w(b) = hi(b >> L) * lo(b mod 2^L) (L = ceil(nv / 2)); the factor tables
are built on the device from the points, domain points and coefficients the transcript left there.
"""

from __future__ import annotations

import numpy as np

import threading
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from ..errors import ConfigError, ProverBusy
from ..kernels import merkle, ntt, split
from ..kernels.split import SplitArray
from ..ref import field_np as F
from ..ref.merkle_pruned import prune_paths
from ..runtime.base import RtBuffer, Runtime, RtView
from .base import (Backend, Commitment, DeviceBuffer, DeviceLimits, PowRangeExceeded, ProofShape, StorageMode,
                   non_canonical, policy_mode, resolve_storage)
from .device_transcript import (MAX_OPS, NOT_FOUND, OP_OBSERVE, OP_SAMPLE, PROOF_WINDOW, DeviceTranscript,
                                TailLaunch, TranscriptVariant)
from .device_values import (POW_MAX_COUNTERS, STATE_WORDS, DeviceOpenings, DeviceQueries, DeviceValue,
                            ProofRegions, Region, concat_points, region_bytes)

WG = 256  # workgroup size of the sumcheck, fold, weights, MLE and gather kernels
MAX_REDUCE_GROUPS = 1024  # workgroups of a reduction's first stage (grid-stride loops cover the rest)
SUMCHECK_TAIL_MAX = 1 << 12  # most entries of a table whose pow-free rounds run in one sumcheck_tail launch
EF_BYTES = 16


def _log2(n: int) -> int:
    return int(n).bit_length() - 1


def _groups(n_threads: int, size: int = WG) -> int:
    return max(1, -(-n_threads // size))


def initial_work_pairs(binding_limit: int) -> int:
    """Partial pairs the work buffer holds from the start: two full reductions' worth, within one binding."""
    return max(1, min(2 * MAX_REDUCE_GROUPS, (binding_limit - EF_BYTES) // (2 * EF_BYTES)))


def work_bytes(pairs: int) -> int:
    """Bytes of the reductions' work buffer for ``pairs`` partial pairs (reduction.wgsl: ticket, then 32 B a pair)."""
    return EF_BYTES + 2 * EF_BYTES * pairs


def factor_sizes(n_eq: int, n_sel: int, nv: int, log_lo: int) -> list[int]:
    """Bytes of the eq lo, eq hi, select lo and select hi factor tables of a weights call."""
    hi = nv - log_lo
    return [(n_eq << log_lo) * EF_BYTES, (n_eq << hi) * EF_BYTES, (n_sel << log_lo) * 4, (n_sel << hi) * EF_BYTES]


def factor_layout(n_eq: int, n_sel: int, nv: int, log_lo: int, alignment: int) -> tuple[list[int], int]:
    """(byte offset of each table of ``factor_sizes``, total bytes) in the one buffer ``factor_tables`` writes:
    back to back, each at a multiple of ``alignment`` so that it can be bound as a window of its own."""
    offsets, end = split.pack(factor_sizes(n_eq, n_sel, nv, log_lo), alignment)
    return offsets, max(-(-end // alignment) * alignment, EF_BYTES)


def factor_threads(n_eq: int, n_sel: int, nv: int, log_lo: int) -> int:
    """Threads of a factor_tables launch: one per table entry."""
    return (n_eq + n_sel) * ((1 << log_lo) + (1 << (nv - log_lo)))


def factor_parts(n_eq: int, n_sel: int, nv: int, log_lo: int, alignment: int, binding_limit: int):
    """The factor_tables launches of a weights call: (out binding as (byte offset, bytes), None for the whole
    buffer; the tables' byte offsets in that binding; first and end thread). One launch when the buffer fits one
    binding, else one per non-empty table, each bound as a window of its own."""
    offsets, total = factor_layout(n_eq, n_sel, nv, log_lo, alignment)
    if total <= binding_limit:
        return [(None, offsets, 0, factor_threads(n_eq, n_sel, nv, log_lo))]
    hi = nv - log_lo
    counts = [n_eq << log_lo, n_eq << hi, n_sel << log_lo, n_sel << hi]
    parts, first = [], 0
    for at, size, count in zip(offsets, factor_sizes(n_eq, n_sel, nv, log_lo), counts):
        if count:
            parts.append(((at, size), [0, 0, 0, 0], first, first + count))  # its table at the binding's start
        first += count
    return parts


OPEN_SLOTS = 5  # level bindings of one openings launch: with the codeword, indices and out, WebGPU's default of 8
OPEN_TABLE = 32  # storage buffers per stage; entries of its word-offset table: the most levels one launch reads
ALL_NODES = 0xFFFFFFFF  # the node window of levels bound whole


def level_jobs(level_windows: list[int], packed_from: int | None = None) -> list[tuple[int, int, int, int]]:
    """The tree-level parts of a round's openings launches, (first level, levels, own, window) each, for opened
    levels of ``level_windows[d]`` windows each, those from ``packed_from`` on (None: none) packed in one buffer
    (``merkle.packed_run``). Whole levels go in runs of consecutive levels (window -1) of at most OPEN_SLOTS
    bindings and OPEN_TABLE levels: the first ``own`` levels of a run each in a binding of its own, the others
    (packed) together in one. A split level (more than one window) takes one part (d, 1, 1, w) per window w. So
    a tree without split levels, at most OPEN_SLOTS - 1 whole levels below its packed ones and a depth of at
    most OPEN_TABLE is one part: one launch, with a codeword of one window."""
    packed_from = len(level_windows) if packed_from is None else packed_from
    jobs: list[tuple[int, int, int, int]] = []
    first, count, own = 0, 0, 0  # the run being gathered: levels [first, first + count), own of them own-bound

    def close() -> None:
        if count:
            jobs.append((first, count, own, -1))

    for d, windows in enumerate(level_windows):
        if windows > 1:
            close()
            jobs += [(d, 1, 1, w) for w in range(windows)]
            first, count, own = d + 1, 0, 0
            continue
        new_binding = d < packed_from or count == own  # a packed level shares the run's packed binding if any
        slots = own + (count > own)
        if count == OPEN_TABLE or (new_binding and slots == OPEN_SLOTS):
            close()
            first, count, own = d, 0, 0
        count += 1
        own += d < packed_from
    close()
    return jobs


def opening_launches(codeword_windows: int, level_windows: list[int], packed_from: int | None = None) -> int:
    """Launches of a round's openings: each carries one codeword window and one part of ``level_jobs``."""
    return max(codeword_windows, len(level_jobs(level_windows, packed_from)), 1)


class _CountingBatch:
    """A runtime batch whose device-side copies are counted in the backend's ``stats.copied``."""

    def __init__(self, batch, backend: "GpuBackend"):
        self._batch = batch
        self._backend = backend

    def dispatch(self, kernel, buffers, params, n_groups) -> None:
        self._batch.dispatch(kernel, buffers, params, n_groups)

    def copy(self, src: RtBuffer, src_offset: int, dst: RtBuffer, dst_offset: int, nbytes: int) -> None:
        self._backend.stats.copied += int(nbytes)
        self._batch.copy(src, src_offset, dst, dst_offset, nbytes)

    def submit(self) -> None:
        self._batch.submit()


class _BackendRuntime:
    """The runtime as the backend and the shared kernel drivers (ntt, merkle) see it: ``alloc`` is served from
    the backend's pool in the mode its storage policy gives the buffer (a driver's ``mode`` says what the buffer
    is: SHARED = the host writes or reads it, PRIVATE = an intermediate), so codewords and trees are recycled
    across commitments and proofs; ``write``, ``read`` and batch copies are counted in the backend's ``stats``
    (staging copies included, as the runtime reports them); all else is forwarded."""

    def __init__(self, runtime: Runtime, backend: "GpuBackend"):
        self._runtime = runtime
        self._backend = backend
        self._limits: DeviceLimits | None = None
        self._limits_key: tuple[int, int] | None = None

    def alloc(self, nbytes: int, mode: StorageMode = StorageMode.PRIVATE) -> RtBuffer:
        return self._backend._alloc(nbytes, host_facing=mode is StorageMode.SHARED)

    def write(self, buffer: RtBuffer, data: np.ndarray, offset: int = 0) -> None:
        data = np.ascontiguousarray(data, dtype=np.uint32)
        self._runtime.write(buffer, data, offset)
        stats = self._backend.stats
        stats.uploaded += data.nbytes
        if data.nbytes and self._runtime.write_staged(buffer):
            stats.copied += data.nbytes

    def read(self, buffer: RtBuffer, nbytes: int | None = None, offset: int = 0) -> np.ndarray:
        out = self._runtime.read(buffer, nbytes, offset)
        stats = self._backend.stats
        stats.downloaded += out.nbytes
        if out.nbytes and self._runtime.read_staged(buffer):
            stats.copied += out.nbytes
        return out

    def batch(self) -> _CountingBatch:
        return _CountingBatch(self._runtime.batch(), self._backend)

    def kernel(self, stem: str, entry: str | None = None, constants: dict[str, int] | None = None,
               field: str | None = None):
        """Composed for the backend's running layout: its field (unless ``field`` is given) and, for a stem that
        runs transcript programs, its challenger variant's constants."""
        variant = self._backend.transcript_variant
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
        backend = self._backend
        key = (backend.binding_limit, backend.buffer_limit)
        if self._limits_key != key:  # a proof asks ~40 times; tests lower the backend's limits between proofs
            self._limits = replace(backend._limits, max_storage_binding_size=key[0], max_buffer_size=key[1])
            self._limits_key = key
        return self._limits

    def __getattr__(self, name):
        return getattr(self._runtime, name)


def challenger_words(sponge, input_buffer, output_len: int) -> np.ndarray:
    """The device challenger's 26 words (device_values layout) for a host challenger's state."""
    words = np.zeros(STATE_WORDS, np.uint32)
    words[:16] = sponge
    words[16] = len(input_buffer)
    words[17] = output_len
    words[18:18 + len(input_buffer)] = input_buffer
    return words


@dataclass(frozen=True)
class DeviceTable:
    """A caller's table of ``n_words`` canonical u32 words in ``buffer`` on this backend's device (``device_table``):
    read by the conversion kernel, never written."""

    buffer: RtBuffer
    n_words: int


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


class GpuBackend(Backend):
    """WHIR primitives on a GPU ``Runtime`` (wgpu, Metal, msl-cpu). ``profile=True`` waits at each sub-phase
    boundary (ntt / merkle, and each primitive of a proof) so host timers attribute time correctly, at the cost
    of one round trip each. ``storage``: the storage policy (hybrid, shared, private; None: ``WHIRGPU_STORAGE``,
    else hybrid). ``pow_full_range``: proof-of-work searches encode launches over every nonce (the retry after a
    ``PowRangeExceeded``)."""

    def __init__(self, runtime: Runtime | None = None, profile: bool = False, storage: str | None = None):
        super().__init__()
        if runtime is None:
            from ..runtime.wgpu_rt import WgpuRuntime  # noqa: PLC0415 - wgpu is an optional dependency

            runtime = WgpuRuntime()
        self.rt = runtime
        self.name = runtime.name
        self.profile = profile
        self.storage = resolve_storage(storage)
        self.pow_full_range = False
        self._pool: dict[tuple[int, StorageMode], list[RtBuffer]] = {}
        self._serial: dict[int, int] = {}  # id(buffer) -> creation order, to put the pool in one canonical order
        self._limits = runtime.limits()
        # The limits the backend lays its windows and split arrays out for (tests lower them to cross every seam
        # at small sizes; the runtime still enforces the device's own).
        self.binding_limit = self._limits.max_storage_binding_size
        self.buffer_limit = self._limits.max_buffer_size
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

    def _upload_words(self, array: np.ndarray, host_facing: bool = True, nbytes: int = 0) -> RtBuffer:
        """``array`` in a new buffer of at least ``nbytes`` (its own size by default), written from the start."""
        array = np.ascontiguousarray(array, dtype=np.uint32)
        buffer = self._alloc(max(array.nbytes, nbytes), host_facing)
        self._drivers.write(buffer, array)
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
                self._drivers.write(buffer, source[i * per:(i + 1) * per])
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
                               _groups(length))
            else:
                batch.dispatch(rt.kernel("to_monty", "to_monty_inplace"), [check.view(), out], params, _groups(length))
        return DeviceBuffer(table, (n,), table.mode)

    def device_table(self, buffer, n_words: int) -> DeviceTable:
        """``buffer`` (made by the caller on ``self.device``, STORAGE usage, at least 4 ``n_words`` bytes) as a
        source for ``upload_canonical``; ConfigError naming the problem otherwise."""
        try:
            return DeviceTable(self.rt.adopt(buffer, 4 * int(n_words)), int(n_words))
        except ConfigError as exc:
            raise ConfigError(f"evaluations: {exc}") from None

    @property
    def device(self):
        """The WebGPU device tables for ``device_table`` must be created on (wgpu and dawn runtimes), else None."""
        return self.rt.device if self.rt.lang == "wgsl" else None

    def _check_canonical(self, session: _Session) -> None:
        """Raise ``non_canonical`` for the first table of ``session`` whose range check found a word >= p."""
        for check, source in session.canonical:
            index = int(self._get(session.words, check)[0])
            if index != NOT_FOUND:
                raise non_canonical(index, self._source_word(source, index), prime=self.layout.field.P)

    def _source_word(self, source: np.ndarray | DeviceTable, index: int) -> int:
        """Word ``index`` of a canonical source (from the device for a ``DeviceTable``: one gather)."""
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

    def close(self) -> None:
        """Free the pooled buffers, then close the runtime (its device goes with it); idempotent."""
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

    def _round_constants(self) -> RtBuffer:
        return merkle.round_constants(self._drivers, self.layout.field.name)

    @property
    def transcript_variant(self) -> TranscriptVariant:
        """The device challenger the running layout speaks (made once per layout: every kernel lookup asks)."""
        layout = self.layout
        cached = self._variant
        if cached is None or cached[0] is not layout:
            cached = self._variant = (layout, TranscriptVariant(layout.field, layout.length_tagged,
                                                                layout.distinct_queries))
        return cached[1]

    def _tree_options(self) -> dict:
        """How ``merkle.record_tree`` hashes the layout's leaves (nothing to say for the default layout)."""
        layout = self.layout
        if layout.leaf_width == 16 and layout.field.name == "babybear":
            return {}
        return {"field": layout.field.name, "leaf_width": layout.leaf_width}

    def _order_constants(self) -> dict[str, int] | None:
        """The specialisation of the sumcheck and fold kernels for the layout's variable order."""
        return {"SUFFIX": 1} if self.layout.suffix else None

    def _pair_window(self, n: int) -> int:
        """Pairs per window of a round over a table of ``n`` entries: prefix pairs (i, i + n/2) bind two windows
        of this many entries, suffix pairs (2i, 2i + 1) one window of twice as many."""
        if self.layout.suffix:
            return max(1, self._window_len(n, EF_BYTES) // 2)
        return self._window_len(n // 2, EF_BYTES)

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

    def _tail_io(self, points: bool = False) -> list:
        """The buffers a transcript tail binds after its data (registry ``_TAIL_IO`` less the work words): scratch,
        the proof window (filled in when the program is known), the points region where the kernel binds it
        (``points``: it may EXPAND), the round constants."""
        regions = self._session.regions
        return [regions.scratch.buffer, PROOF_WINDOW] + [regions.points.buffer] * points + [self._round_constants()]

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
        return 1 << _log2(self._window_limit // elem_bytes)

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

    def _finish_session(self, session: _Session, read: bool = True) -> np.ndarray | None:
        """Read a submitted session's proof region back (one readback) and free its regions."""
        regions = session.regions
        words = self._drivers.read(regions.proof.buffer, regions.proof.top) if read else None
        self._free(regions.proof.buffer, regions.scratch.buffer, regions.points.buffer)
        # Every proof of one configuration then makes the same requests of the same pool, gets the same buffers
        # and so the same bind groups, which the runtime has cached (creating one costs ~0.2 ms of host time).
        for free in self._pool.values():
            free.sort(key=lambda b: -self._serial.get(id(b), -1))
        return words

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

    # -- a whole proof -----------------------------------------------------------------------------------------
    def begin_proof(self, shape: ProofShape, transcript, statement_points: np.ndarray,
                    variant: TranscriptVariant | None = None):
        """Start a device proof: the regions ``shape`` needs, the host transcript's challenger (after the domain
        separator) and the statement's points uploaded once. Returns the device transcript (of ``variant``, by
        default whir-p3's challenger) and the points (m, n, 4) as a ``DeviceValue``."""
        challenger = transcript.challenger
        if not self._building.acquire(blocking=False):  # checked and taken at once: two threads cannot both pass
            raise ProverBusy(f"begin_proof: a proof is already being built on this {self.name} backend (share a "
                             "backend between threads through Prover, which queues proofs on backend.proof_lock)")
        try:
            return self._begin_proof(shape, challenger, statement_points, variant)
        except BaseException:
            self._building.release()
            raise

    def _begin_proof(self, shape: ProofShape, challenger, statement_points: np.ndarray, variant):
        self.layout = shape.layout
        align = max(EF_BYTES, int(self.rt.offset_alignment))
        session = self._open_session(*region_bytes(shape, align),
                                     variant=self.transcript_variant if variant is None else variant)
        session.fold_fuses = [k < rounds for rounds in shape.sumcheck_phases for k in range(1, rounds + 1)]
        regions = session.regions
        state = challenger_words(challenger.sponge_state, challenger.input_buffer, len(challenger.output_buffer))
        self._drivers.write(regions.scratch.buffer, state, regions.state.offset)
        points = np.asarray(statement_points, np.uint32).reshape(-1, shape.num_variables, 4)
        statement = regions.points.take(points.shape)
        if points.size:
            self._drivers.write(regions.points.buffer, points.reshape(-1), statement.offset)
        self._session = session
        return session.transcript, statement

    def end_proof(self, resolve):
        """Submit the rest, read the proof region back once, and return ``resolve(read)`` where ``read`` maps a
        device value (or openings) to host arrays. Raises ``PowRangeExceeded`` when a grind needs a wider search."""
        session, self._session = self._session, None
        try:
            session.words = self._close_session(session)
        finally:
            self._building.release()
        self._check_canonical(session)
        words = session.words
        if any(self._get(words, w).reshape(-1)[0] == NOT_FOUND for w in session.transcript.witnesses):
            raise PowRangeExceeded("a proof-of-work search found no nonce in its encoded range")
        return resolve(lambda value: self._resolve(words, value))

    @property
    def overlaps_proofs(self) -> bool:
        """Whether a proof may be recorded while the one before it runs: the runtime orders the host's writes
        after the work submitted before them (WebGPU's queue; msl-cpu runs a submission at once), so buffers the
        earlier proof released can serve the next one."""
        return bool(getattr(self.rt, "queue_ordered_writes", False))

    def end_proof_deferred(self, resolve):
        """Submit what is left of the proof and detach it: the backend may begin the next proof at once while the
        device runs this one. The returned ``collect()`` reads the proof region back (the proof's regions stay
        out of the pool until then) and returns ``resolve(read)``, raising what ``end_proof`` raises."""
        session, self._session = self._session, None
        try:
            session.transcript.flush()
            session.batch.submit()
        except BaseException:
            self._building.release()
            self._finish_session(session, read=False)
            raise
        self._building.release()

        def collect():
            session.words = self._finish_session(session)
            self._check_canonical(session)
            words = session.words
            if any(self._get(words, w).reshape(-1)[0] == NOT_FOUND for w in session.transcript.witnesses):
                raise PowRangeExceeded("a proof-of-work search found no nonce in its encoded range")
            return resolve(lambda value: self._resolve(words, value))

        return collect

    def abort_proof(self) -> None:
        """Drop a proof that failed while being encoded (its regions return to the pool)."""
        session, self._session = self._session, None
        if session is not None:
            try:
                self._close_session(session, read=False)
                self.rt.wait()
            finally:
                self._building.release()

    def _resolve(self, words: np.ndarray, value):
        if isinstance(value, DeviceOpenings):
            count = int(self._get(words, value.count)[0])
            rows, paths = self._get(words, value.rows)[:count], self._get(words, value.siblings)[:count]
            if value.indices is not None:  # one pruned multiproof, from the paths gathered on the device
                return rows, prune_paths(self._get(words, value.indices)[:count], paths)
            return rows, paths
        if isinstance(value, DeviceValue):
            return self._get(words, value)
        return value

    # -- transcript-dependent scalars --------------------------------------------------------------------------
    def expand_point(self, z: DeviceValue, num_variables: int) -> DeviceValue:
        """The point (z^(2^(nv-1)), ..., z^2, z) in the points region (a transcript op: it rides on the launch
        that sampled z)."""
        out = self._session.regions.points.take((num_variables, 4))
        if num_variables:
            self._session.transcript.expand(z, out, num_variables)
        return out

    def concat_points(self, points: list[DeviceValue]) -> DeviceValue:
        return concat_points(points)

    def challenge_powers(self, x: DeviceValue, n: int, queries: DeviceQueries | None = None) -> DeviceValue:
        """(n + slots, 4): x^0 .. x^(n-1), then x^n .. for each query slot (0 past the drawn count); a transcript
        op, like ``expand_point``."""
        slots = queries.slots if queries is not None else 0
        out = self._session.regions.scratch.take((n + slots, 4))
        if n + slots:
            self._session.transcript.powers(x, out, n, slots, queries.count if queries is not None else None)
        return out

    def domain_points(self, queries: DeviceQueries, log_folded_domain: int) -> DeviceValue:
        return queries.domain_points

    def final_poly(self, table: DeviceBuffer) -> DeviceValue:
        """The final table (EF) copied into the proof region."""
        if not table.is_ext:
            raise ValueError("the final polynomial is an EF table (at least one sumcheck round precedes it)")
        out = self._session.regions.proof.take(table.shape)
        batch = self._batch()
        per = min(out.nbytes, table.handle.buffer_rows * table.handle.row_bytes)
        for i, buffer in enumerate(table.handle.buffers):
            batch.copy(buffer, 0, out.buffer, out.offset + i * per, per)
        return out

    # -- commitment --------------------------------------------------------------------------------------------
    def commit(self, table: DeviceBuffer, log_folding: int, log_height: int) -> Commitment:
        if self._session is None:
            with self._host_call(proof_words=8) as session:
                commitment = self.commit(table, log_folding, log_height)
            commitment.root = self._get(session.words, commitment.root)
            return commitment
        rt = self._drivers
        n_entries = table.shape[0]
        nv = _log2(n_entries)
        if n_entries != 1 << nv or nv < log_folding or nv - log_folding > log_height:
            raise ValueError(f"cannot commit {n_entries} entries as 2^{log_folding} columns of height 2^{log_height}")
        width = (1 << log_folding) * (4 if table.is_ext else 1)
        height = 1 << log_height
        batch = self._batch()
        with self.phase("ntt"):
            # One buffer goes in as today (ntt windows it); a split table is already a SplitArray.
            source = table.handle.buffers[0] if len(table.handle.buffers) == 1 else table.handle
            codeword = ntt.encode_codeword(rt, batch, source, nv, table.is_ext, log_folding, log_height,
                                           row_major=self.layout.suffix, field=self.layout.field.name)
        with self.phase("merkle"):
            levels, last = merkle.record_tree(rt, batch, codeword, height, width, **self._tree_options())
            root = self._session.regions.proof.take((merkle.DIGEST,))
            if last is None:  # no merkle_top level (a lone root, or merkle_top off): the root is copied
                batch.copy(*levels[-1].locate(0), root.buffer, root.offset, root.nbytes)
            self._submit()
            if last is not None:
                self._session.transcript.defer(self._root_launch(last, root))
        return Commitment(root, height, width, table.is_ext, handle=(codeword, levels))

    def _root_launch(self, last: merkle.TopLaunch, root: DeviceValue) -> TailLaunch:
        """A tree's last merkle_top launch (one workgroup) as a transcript tail: it copies the root into ``root``
        (proof words) and runs the ops recorded next (the root observed, the first OOD point sampled and expanded),
        so a commitment needs no transcript launch. Recorded after the rest of the commitment is submitted."""
        dispatch = (last.buffers(self._tail_io(points=True)), list(last.head), last.groups)
        return TailLaunch(last.kernel, [dispatch], (root.word, root.word + merkle.DIGEST), merkle.ROOT_AT)

    def open_rows(self, commitment: Commitment, indices, capacity: int | None = None):
        """Rows and sibling paths of the queried indices, gathered on the device into the proof region. In a
        proof ``indices`` is a ``DeviceQueries`` and the result a ``DeviceOpenings``; called with host indices it
        returns (rows, siblings) as host arrays (``capacity`` is then ignored)."""
        if self._session is None:
            idx = np.asarray(indices, dtype=np.int64).reshape(-1)
            if idx.size and (idx.min() < 0 or idx.max() >= commitment.height):
                raise ValueError(f"open_rows: an index lies outside [0, {commitment.height})")
            depth = len(commitment.handle[1]) - 1
            with self._host_call(proof_words=1 + idx.size * (commitment.width + depth * merkle.DIGEST),
                                 scratch_words=2 * idx.size + 1) as session:
                regions = session.regions
                queries = DeviceQueries(self._put(regions.scratch, idx.astype(np.uint32)), None,
                                        self._put(regions.proof, np.array([idx.size], np.uint32)), None, idx.size)
                openings = self.open_rows(commitment, queries)
            return self._resolve(session.words, openings)
        codeword, levels = commitment.handle
        width, depth, slots = commitment.width, len(levels) - 1, indices.slots
        rt = self._drivers
        out = self._session.regions.proof.take((slots * (width + depth * merkle.DIGEST),))
        row_words = slots * width
        rows = DeviceValue(out.buffer, out.offset, (slots, width // 4, 4) if commitment.is_ext else (slots, width))
        siblings = DeviceValue(out.buffer, out.offset + 4 * row_words, (slots, depth, merkle.DIGEST))
        openings = DeviceOpenings("extension" if commitment.is_ext else "base", rows, siblings, indices.proof_count)
        if slots == 0:
            return openings
        batch = self._batch()
        if self.layout.openings == "pruned":
            openings.indices = self._session.regions.proof.take((slots,))
            batch.copy(indices.indices.buffer, indices.indices.offset, openings.indices.buffer,
                       openings.indices.offset, 4 * slots)
        index_view = indices.indices.view()
        # Each launch writes the rows of one codeword window and the siblings of one part of ``level_jobs``: the
        # whole levels of a run (the packed ones bound once, their word offsets in the params' table), or one
        # window of a split level; one launch in all for a packed tree whose codeword fits a binding. Slots whose
        # row or sibling lies in another window are written by that window's launch.
        row_parts = list(codeword.windows())
        packed_from, packed = merkle.packed_run(levels)
        jobs = level_jobs([level.rows // level.window_rows for level in levels[:-1]], packed_from)
        kernel = rt.kernel("openings")
        for k in range(max(len(row_parts), len(jobs), 1)):
            window, first, count = row_parts[k] if k < len(row_parts) else (row_parts[0][0], 0, 0)
            level, n_levels, own, part = jobs[k] if k < len(jobs) else (0, 0, 0, -1)
            offsets = np.zeros(OPEN_TABLE, np.uint32)
            node_first, node_count = 0, ALL_NODES
            if part >= 0:
                binding, node_first, node_count = list(levels[level].windows())[part]
                bound = [binding]
            else:
                bound = [levels[d].binding(0, levels[d].rows)[0] for d in range(level, level + own)]
                if n_levels > own:
                    bound.append(packed)
                    offsets[own:n_levels] = [levels[d].offset // 4 for d in range(level + own, level + n_levels)]
            bound += [bound[0] if bound else window] * (OPEN_SLOTS - len(bound))
            head = [slots, _log2(width), depth, row_words, first, count, level, n_levels, node_first, node_count,
                    own, 0]
            per = (width if count else 0) + merkle.DIGEST * n_levels
            batch.dispatch(kernel, [window, index_view, out.view()] + bound,
                           np.concatenate([np.array(head, np.uint32), offsets]), _groups(slots * per))
        return openings

    # -- reductions --------------------------------------------------------------------------------------------
    def evaluate(self, table: DeviceBuffer, point):
        """The table's multilinear extension at ``point`` (nv, 4): in a proof a ``DeviceValue`` of the points
        region, giving an EF ``DeviceValue`` in the proof region; called with a host point, a host (4,) array."""
        if self._session is None:
            point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
            with self._host_call(proof_words=4, points_words=point.size) as session:
                answer = self.evaluate(table, self._put(session.regions.points, point))
            return self._get(session.words, answer)
        n = table.shape[0]
        nv = point.shape[0]
        if n != 1 << nv:
            raise ValueError(f"table of {n} entries does not match a point of {nv} coordinates")
        rt = self._drivers
        elem = EF_BYTES if table.is_ext else 4
        window = self._window_len(n, elem)
        groups = min(_groups(window), MAX_REDUCE_GROUPS)
        log_s = min(_log2(groups * WG), _log2(window))  # the low bits a thread keeps (mle_eval.wgsl)
        n_windows = -(-n // window)
        total = n_windows * groups
        work = self._workspace(total)
        answer = self._session.regions.proof.take((4,))
        kernel = rt.kernel("mle_eval", "mle_eval_ext" if table.is_ext else "mle_eval_base")
        io = [work] + self._tail_io(points=True)
        dispatches = []
        for w, start in enumerate(range(0, n, window)):
            length = min(window, n - start)
            view = self._view(table.handle, start, length, n_windows == 1)
            dispatches.append(([view] + io, [length, start, log_s, w * groups, groups, total, 0,
                                             point.offset // EF_BYTES, nv, 0, 0, 0], groups))
        self._session.transcript.defer(TailLaunch(kernel, dispatches, (answer.word, answer.word + 4), 6))
        return answer

    def sumcheck_round(self, table: DeviceBuffer, weights: DeviceBuffer):
        """[h(0), h(2)]: in a proof a (2, 4) ``DeviceValue`` of the proof region, else a (2, 4) host array. In a
        proof, the sums of a table the last fold summed as it folded (``fold_and_sum``) are returned as they are."""
        if self._session is None:
            with self._host_call(proof_words=8) as session:
                h = self.sumcheck_round(table, weights)
            return self._get(session.words, h)
        pending, self._session.pending_sums = self._session.pending_sums, None
        if pending is not None and pending[0] is table and pending[1] is weights:
            return pending[2]
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"sumcheck_round: table of {n} entries with weights of shape {weights.shape}")
        rt = self._drivers
        half = n // 2
        window = self._pair_window(n)
        groups = min(_groups(window), MAX_REDUCE_GROUPS)
        n_windows = -(-half // window)
        total = n_windows * groups
        work = self._workspace(total)
        h = self._session.regions.proof.take((2, 4))
        kernel = rt.kernel("sumcheck", "sumcheck_ext" if table.is_ext else "sumcheck_base",
                           constants=self._order_constants())
        io = [work] + self._tail_io()
        pairs = zip(self._pairs(table.handle, half, window), self._pairs(weights.handle, half, window))
        dispatches = []
        for w, (t, wt) in enumerate(pairs):
            t_lo, t_hi, lo_off, hi_off, _, length = t
            dispatches.append(([t_lo, t_hi, wt[0], wt[1]] + io, [length, lo_off, hi_off, w * groups, groups, total, 0, 0],
                               groups))
        self._session.transcript.defer(TailLaunch(kernel, dispatches, (h.word, h.word + 8), 6, points=False))
        return h

    def sumcheck_rounds(self, table: DeviceBuffer, weights: DeviceBuffer, transcript, rounds: int):
        """In a proof, a phase's rounds without proof of work on an EF table of at most ``SUMCHECK_TAIL_MAX``
        entries run in one ``sumcheck_tail`` launch (sums, observation, challenge and fold of every round, by one
        workgroup); else None (the prover's loop)."""
        session = self._session
        n = table.shape[0]
        if (session is None or not table.is_ext or n > SUMCHECK_TAIL_MAX or not 1 <= rounds <= _log2(n)
                or 2 * rounds > MAX_OPS or weights.shape != (n, 4) or n * EF_BYTES > self._window_limit
                or session.pending_sums is not None):
            return None
        del session.fold_fuses[:rounds]  # the folds this launch makes
        half, left = n // 2, n >> rounds
        outs = [self._new_table(half, EF_BYTES) for _ in range(2)]
        h = session.regions.proof.take((rounds, 2, 4))
        challenges = session.regions.scratch.take((rounds, 4))
        # each round's program: observe its sums, sample its challenge (what the prover's loop records)
        ops = sum((((OP_OBSERVE, h.word + 8 * r, 8, 0), (OP_SAMPLE, challenges.word + 4 * r, 4, 0))
                   for r in range(rounds)), ())
        buffers = [table.handle.buffers[0], weights.handle.buffers[0], outs[0].buffers[0], outs[1].buffers[0]]
        scratch, proof_window, rc = self._tail_io()
        launch = TailLaunch(self._drivers.kernel("sumcheck_tail", constants=self._order_constants()),
                            [(buffers + [scratch, proof_window, rc], [n, rounds, 0, challenges.word], 1)],
                            (h.word, h.word + 8 * rounds), 2, points=False, ops=ops)
        session.transcript.defer(launch)
        self.release(table, weights)
        evaluations = [DeviceValue(h.buffer, h.offset + 32 * r, (2, 4)) for r in range(rounds)]
        folded = [DeviceBuffer(SplitArray(out.buffers, left, EF_BYTES, left, left), (left, 4), out.mode)
                  for out in outs]
        return evaluations, folded[0], folded[1]

    # -- fold ----------------------------------------------------------------------------------------------------
    def fold(self, table: DeviceBuffer, weights: DeviceBuffer, r) -> tuple[DeviceBuffer, DeviceBuffer]:
        """Bind x_0 := r; ``r`` a scratch ``DeviceValue`` in a proof (where the transcript drew it), else host.
        In a proof, when a sumcheck round of the folded table comes next (the proof's ``sumcheck_phases``), the
        fold also sums that round (``fold_and_sum``) and the next ``sumcheck_round`` returns those sums."""
        if self._session is None:
            with self._host_call(scratch_words=4) as session:
                out = self.fold(table, weights, self._put(session.regions.scratch, np.asarray(r).reshape(4)))
            return out
        fuses = self._session.fold_fuses
        if fuses and fuses.pop(0) and self._fusable(table, weights):
            new_table, new_weights, h = self._fold_and_sum(table, weights, r)
            self._session.pending_sums = (new_table, new_weights, h)
            return new_table, new_weights
        return self._fold(table, weights, r)

    def fold_and_sum(self, table: DeviceBuffer, weights: DeviceBuffer, r):
        """``fold(table, weights, r)`` and the ``sumcheck_round`` of the folded tables: (table', weights', [h(0),
        h(2)]), the sums a (2, 4) ``DeviceValue`` of the proof region in a proof (``r`` a scratch value), else a
        (2, 4) host array. One launch when the tables fit one binding and the folded table has 2 entries or more;
        else the two primitives' launches."""
        if self._session is None:
            with self._host_call(proof_words=8, scratch_words=4) as session:
                out = self.fold_and_sum(table, weights, self._put(session.regions.scratch, np.asarray(r).reshape(4)))
            return out[0], out[1], self._get(session.words, out[2])
        if self._fusable(table, weights):
            return self._fold_and_sum(table, weights, r)
        new_table, new_weights = self._fold(table, weights, r)
        return new_table, new_weights, self.sumcheck_round(new_table, new_weights)

    def _fusable(self, table: DeviceBuffer, weights: DeviceBuffer) -> bool:
        """The fused kernel binds the input tables whole and needs a next round (4 entries or more)."""
        n = table.shape[0]
        return n >= 4 and weights.shape == (n, 4) and n * EF_BYTES <= self._window_limit

    def _fold_and_sum(self, table: DeviceBuffer, weights: DeviceBuffer, r: DeviceValue):
        """Record the fused launch (``sumcheck_fold``); the tables must be ``_fusable``."""
        half = table.shape[0] // 2
        quarter = half // 2
        new_table = self._new_table(half, EF_BYTES)
        new_weights = self._new_table(half, EF_BYTES)
        groups = min(_groups(quarter), MAX_REDUCE_GROUPS)
        work = self._workspace(groups)
        h = self._session.regions.proof.take((2, 4))
        kernel = self._drivers.kernel("sumcheck_fold", "sumcheck_fold_ext" if table.is_ext else "sumcheck_fold_base",
                                      constants=self._order_constants())
        buffers = [table.handle.buffers[0], weights.handle.buffers[0], new_table.buffers[0], new_weights.buffers[0],
                   work] + self._tail_io()
        head = [quarter, half, groups, groups, r.word, 0, 0, 0]
        self._session.transcript.defer(TailLaunch(kernel, [(buffers, head, groups)], (h.word, h.word + 8), 5,
                                                  points=False))
        return (DeviceBuffer(new_table, (half, 4), new_table.mode), DeviceBuffer(new_weights, (half, 4),
                                                                                 new_weights.mode), h)

    def _fold(self, table: DeviceBuffer, weights: DeviceBuffer, r: DeviceValue) -> tuple[DeviceBuffer, DeviceBuffer]:
        """Record the plain fold, one launch per window."""
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"fold: table of {n} entries with weights of shape {weights.shape}")
        rt = self._drivers
        half = n // 2
        window = self._pair_window(n)
        new_table = self._new_table(half, EF_BYTES)
        new_weights = self._new_table(half, EF_BYTES)
        kernel = rt.kernel("fold", "fold_ext" if table.is_ext else "fold_base", constants=self._order_constants())
        whole_out = window == half
        batch = self._batch()
        challenge = r.view()
        pairs = zip(self._pairs(table.handle, half, window), self._pairs(weights.handle, half, window))
        for t, wt in pairs:
            t_lo, t_hi, lo_off, hi_off, start, length = t
            out_t = self._view(new_table, start, length, whole_out)
            out_w = self._view(new_weights, start, length, whole_out)
            batch.dispatch(kernel, [t_lo, t_hi, wt[0], wt[1], out_t, out_w, challenge],
                           np.array([length, lo_off, hi_off, 0], np.uint32), _groups(length))
        return (DeviceBuffer(new_table, (half, 4), new_table.mode),
                DeviceBuffer(new_weights, (half, 4), new_weights.mode))

    # -- weights -------------------------------------------------------------------------------------------------
    def _record_factors(self, batch, nv: int, log_lo: int, eq_points: DeviceValue | None,
                        eq_coefficients: DeviceValue | None, select_vars: DeviceValue | None = None,
                        select_coefficients: DeviceValue | None = None):
        """Record every factor table of a weights call in one launch (``factor_tables``) into one new buffer:
        eq lo (n_eq, 2^log_lo) unscaled and hi (n_eq, 2^(nv - log_lo)) scaled by ``eq_coefficients`` (or not), of
        the points (n_eq, nv, 4) of the points region; select lo[m][j] = v_m^j (base) and hi[m][j] =
        c_m v_m^(j 2^log_lo) (EF). Returns (buffer, [eq_lo, eq_hi, sel_lo, sel_hi] bindings; the placeholder for
        an empty table)."""
        n_eq = eq_points.shape[0] if eq_points is not None else 0
        n_sel = select_vars.shape[0] if select_vars is not None else 0
        offsets, total = factor_layout(n_eq, n_sel, nv, log_lo, self._alignment())
        sizes = factor_sizes(n_eq, n_sel, nv, log_lo)
        out = self._alloc(total)
        off = lambda value, elem: value.offset // elem if value is not None else 0  # noqa: E731
        buffer = lambda value: value.buffer if value is not None else self._dummy  # noqa: E731
        inputs = [buffer(eq_points), buffer(eq_coefficients), buffer(select_vars), buffer(select_coefficients)]
        head = [n_eq, n_sel, nv, log_lo, int(eq_coefficients is not None), off(eq_points, EF_BYTES),
                off(eq_coefficients, EF_BYTES), off(select_vars, 4), off(select_coefficients, EF_BYTES)]
        kernel = self._drivers.kernel("factor_tables")
        for binding, ats, first, end in factor_parts(n_eq, n_sel, nv, log_lo, self._alignment(), self._window_limit):
            params = np.array(head + [at // 4 for at in ats] + [first, end], np.uint32)
            target = out if binding is None else RtView(out, *binding)
            batch.dispatch(kernel, inputs + [target], params, _groups(end - first))
        views = [RtView(out, at, size) if size else self._dummy for at, size in zip(offsets, sizes)]
        return out, views

    def _accumulate(self, weights: SplitArray, nv: int, accumulate: bool, eq_points, eq_coefficients, select_vars,
                    select_coefficients) -> None:
        rt = self._drivers
        n_eq = eq_points.shape[0] if eq_points is not None else 0
        n_sel = select_vars.shape[0] if select_vars is not None else 0
        log_lo = (nv + 1) // 2
        hi_len = 1 << (nv - log_lo)
        batch = self._batch()
        tables, factors = self._record_factors(batch, nv, log_lo, eq_points if n_eq else None,
                                               eq_coefficients if n_eq else None, select_vars if n_sel else None,
                                               select_coefficients if n_sel else None)
        n = 1 << nv
        window = self._window_len(n, EF_BYTES)
        for start in range(0, n, window):
            length = min(window, n - start)
            view = self._view(weights, start, length, window == n)
            params = np.array([length, start, log_lo, int(accumulate), n_eq, n_sel, hi_len, 0], np.uint32)
            batch.dispatch(rt.kernel("weights"), [view] + factors, params, _groups(length))
        self._free(tables)

    def eq_weights(self, points, coefficients) -> DeviceBuffer:
        """W[b] = Σ_i coefficients[i] eq(b, points[i]); device values in a proof (points of the points region,
        coefficients of scratch), host arrays outside one."""
        if self._session is None:
            points = np.asarray(points, np.uint32)
            coefficients = np.asarray(coefficients, np.uint32).reshape(-1, 4)
            with self._host_call(scratch_words=coefficients.size, points_words=points.size) as session:
                regions = session.regions
                weights = self.eq_weights(self._put(regions.points, points), self._put(regions.scratch, coefficients))
            return weights
        nv = points.shape[1]
        weights = self._new_table(1 << nv, EF_BYTES)
        self._accumulate(weights, nv, False, points, coefficients, None, None)
        return DeviceBuffer(weights, (1 << nv, 4), weights.mode)

    def add_constraint_weights(self, weights, eq_points, eq_coefficients, select_vars, select_coefficients,
                               select_capacity=None):
        """In place; device values in a proof (``select_vars`` the query slots' domain points, their
        coefficients 0 past the drawn count), host arrays outside one (``select_capacity`` then ignored)."""
        if self._session is None:
            eq_coefficients = np.asarray(eq_coefficients, np.uint32).reshape(-1, 4)
            eq_points = np.asarray(eq_points, np.uint32).reshape(len(eq_coefficients), _log2(weights.shape[0]), 4)
            select_vars = np.asarray(select_vars, np.uint32).reshape(-1)
            select_coefficients = np.asarray(select_coefficients, np.uint32).reshape(-1, 4)
            if len(select_vars) != len(select_coefficients):
                raise ValueError("each select constraint needs exactly one coefficient")
            words = eq_coefficients.size + select_vars.size + select_coefficients.size
            with self._host_call(scratch_words=words, points_words=eq_points.size) as session:
                regions = session.regions
                self.add_constraint_weights(weights, self._put(regions.points, eq_points),
                                            self._put(regions.scratch, eq_coefficients),
                                            self._put(regions.scratch, select_vars),
                                            self._put(regions.scratch, select_coefficients))
            return weights
        nv = _log2(weights.shape[0])
        self._accumulate(weights.handle, nv, True, eq_points, eq_coefficients, select_vars, select_coefficients)
        return weights

    # -- proof of work -------------------------------------------------------------------------------------------
    def grind(self, challenger, bits: int) -> np.uint32:
        """The smallest valid nonce for a host challenger, searched on the device (as in a proof); then absorbed
        by ``challenger``."""
        bits = int(bits)
        if bits == 0:
            return np.uint32(0)
        if not 0 < bits <= 30:
            raise ConfigError(f"proof-of-work bits = {bits} outside [0, 30]")
        for full_range in (False, True):
            with self._host_call(proof_words=1, scratch_words=1 + POW_MAX_COUNTERS) as session:
                self._drivers.write(session.regions.scratch.buffer,
                                    challenger_words(challenger.sponge_state, challenger.input_buffer,
                                                     len(challenger.output_buffer)), session.regions.state.offset)
                session.transcript.full_range = full_range
                witness = session.transcript.grind(bits)
            if self._get(session.words, witness).reshape(-1)[0] != NOT_FOUND:
                break
        witness = np.uint32(self._get(session.words, witness))
        if not challenger.check_witness(bits, witness):
            raise AssertionError(f"GPU proof of work returned {int(F.from_monty(witness))}, which the transcript "
                                 f"rejects")
        return witness

    # -- information ---------------------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._limits

