"""The memory model's walk: ``GpuBackend``'s allocations (through a model of its pool), launches, submissions and
transfers, step by step, laid out for one device's limits (windows, split arrays, runtime-held buffers)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ...errors import DeviceLimitError
from ...kernels import merkle, ntt, split
from ...kernels.constants import poseidon2_rc_table
from ...runtime.upload import UploadPlan
from .. import device_transcript
from ..base import DeviceLimits, StorageMode, policy_mode
from ..device_transcript import MAX_OPS, pow_launches
from ..gpu.geometry import (EF_BYTES, MAX_REDUCE_GROUPS, SUMCHECK_TAIL_MAX, factor_layout, factor_parts, factor_sizes,
                            initial_work_pairs, log2, opening_launches, work_bytes, workgroups)
from .needs import BufferNeed, runtime_kind

BASE_BYTES = 4
DIGEST_BYTES = 4 * merkle.DIGEST
# Runtime-held buffers (mirroring wgpu_rt / metal_rt): wgpu's readback staging and params uniform buffers start
# at these sizes and grow to the largest request; Metal's staging buffer moves at most METAL_STAGING_CHUNK per blit.
UPLOAD_PLAN = UploadPlan()  # how the runtimes stage uploads unless told otherwise (only its sizes matter here)
WGPU_STAGING_MIN = 1 << 16
WGPU_PARAMS_MIN = 1 << 14
WGPU_PARAMS_SLOT = 256
METAL_STAGING_MIN = 1 << 20
METAL_STAGING_CHUNK = 64 << 20
REGION_ALIGN = 256  # slots of the proof and scratch regions: the largest storage-offset alignment WebGPU allows


def _pool_size(nbytes: int) -> int:
    # GpuBackend._alloc's rounding: whole EF elements, at least one
    return max(EF_BYTES, -(-int(nbytes) // EF_BYTES) * EF_BYTES)


@dataclass
class _Buf:
    nbytes: int
    mode: StorageMode


@dataclass
class _Rows:
    """A split array (``kernels/split.py``): its buffers, rows and rows per window."""

    buffers: list[_Buf]
    rows: int
    window_rows: int


@dataclass
class _Tree:
    codeword: _Rows
    levels: list[_Rows]
    width: int  # words per row
    packed_from: int  # the first level of the shared buffer (merkle.packed_levels; len(levels): none)

    def buffers(self) -> list[_Buf]:
        """Every buffer of the commitment, each once (the packed levels share one)."""
        return list({id(b): b for rows in (self.codeword, *self.levels) for b in rows.buffers}.values())


class _Walk:
    """The allocations of one proof, step by step, as GpuBackend makes them (see the module docstring)."""

    def __init__(self, policy: str, limits: DeviceLimits | None, layout=None):
        self.policy = policy
        self.layout = layout
        self.binding_limit = limits.max_storage_binding_size if limits is not None else None
        self.buffer_limit = limits.max_buffer_size if limits is not None else None
        self.alignment = max(4, int(limits.offset_alignment)) if limits is not None else REGION_ALIGN
        self.kind = runtime_kind(limits)
        self.zero_copy = bool(limits.zero_copy_shared) if limits is not None else True
        self.free: Counter = Counter()
        self.groups: dict[str, BufferNeed] = {}
        self.problems: list[str] = []
        self.twiddle_log: int | None = None
        self.constants = False
        self.placeholder = False  # merkle.tail_placeholder made (by the first merkle_top launch without a program)
        self.staged = 0  # largest transfer through a runtime's staging buffer
        self.upload_chunk = 0  # the runtime's upload ring's chunk (0: no write goes through the ring)
        self.dispatches = 0  # in the batch being recorded
        self.most_dispatches = 0
        self.commands: list[int] = []  # per submission
        # DeviceTranscript: the open tail launch (None; else whether it binds the points region) and the ops
        # recorded since, which ride on it or become one transcript launch
        self.tail: bool | None = None
        self.pending_ops = 0
        self.work_bytes = 0  # GpuBackend._work: the reductions' work buffer so far

    # -- the pool ----------------------------------------------------------------------------------------------
    def alloc(self, name: str, nbytes: int, host_facing: bool, elem: int | None = None,
              binding: int | None = None) -> _Buf:
        """A request for ``nbytes``; ``elem``: the buffer is windowed by elements of ``elem`` bytes; ``binding``:
        the largest part of it bound whole (default: all of it)."""
        size = _pool_size(nbytes)
        mode = policy_mode(self.policy, host_facing)
        need = self.groups.get(name)
        if need is None:
            need = self.groups[name] = BufferNeed(name, 0, 0, host_facing, mode, whole=elem is None)
        need.buffer_bytes = max(need.buffer_bytes, size)
        bound = size if binding is None else binding
        need.binding_bytes = max(need.binding_bytes, bound if elem is None else self._window_bytes(size, elem))
        if self.free[(size, mode)]:
            self.free[(size, mode)] -= 1
        else:
            need.nbytes += size
            need.count += 1
        return _Buf(size, mode)

    def release(self, *buffers: _Buf) -> None:
        for b in buffers:
            self.free[(b.nbytes, b.mode)] += 1

    def _window_bytes(self, nbytes: int, elem: int) -> int:
        if self.binding_limit is None or nbytes <= self.binding_limit:
            return nbytes
        return (1 << log2(self.binding_limit // elem)) * elem

    @property
    def _bind_limit(self) -> int:
        """The most bytes one whole binding may hold under the layout limits (min of binding and buffer)."""
        return min(self.binding_limit or 1 << 62, self.buffer_limit or 1 << 62)

    def window_len(self, n: int, elem: int) -> int:
        """GpuBackend._window_len (windows fit one binding and one buffer of a split table)."""
        limit = min(self.binding_limit or 1 << 62, self.buffer_limit or 1 << 62)
        if n * elem <= limit:
            return n
        return 1 << log2(limit // elem)

    # -- the runtime -------------------------------------------------------------------------------------------
    def transfer(self, nbytes: int, mode: StorageMode, read: bool) -> None:
        """A write or read of ``nbytes`` of a buffer in ``mode``: note what it needs of a staging buffer (reads)
        or of the upload ring (``upload.UploadPlan``: wgpu writes from its threshold, Metal writes to Private
        memory)."""
        if self.kind == "wgpu" and read and not (self.zero_copy and mode is StorageMode.SHARED):
            self.staged = max(self.staged, WGPU_STAGING_MIN, nbytes)
        elif self.kind == "wgpu" and not read and nbytes >= UPLOAD_PLAN.threshold:
            self.upload_chunk = max(self.upload_chunk, UPLOAD_PLAN.chunk_for(nbytes))
        elif self.kind == "metal" and mode is StorageMode.PRIVATE and nbytes:
            if read:
                self.staged = max(self.staged, METAL_STAGING_MIN, min(nbytes, METAL_STAGING_CHUNK))
            else:
                self.upload_chunk = max(self.upload_chunk, UPLOAD_PLAN.chunk_for(nbytes))

    def launch(self, n: int = 1) -> None:
        """``n`` dispatches of kernels that run no transcript program (after what is pending)."""
        self.flush_ops()
        self.dispatches += n

    def defer(self, n: int = 1, points: bool = True, ops: int = 0) -> None:
        """A ``TailLaunch`` of ``n`` dispatches with ``ops`` program slots of its own: the ops recorded next ride
        on it (``points``: it may EXPAND)."""
        self.flush_ops()
        self.dispatches += n
        self.tail = points
        self.pending_ops = ops

    def op(self, slots: int = 1, points: bool = False) -> None:
        """A transcript op of ``slots`` program slots (DeviceTranscript._op)."""
        if points and self.tail is False:
            self.flush_ops()
        if self.pending_ops + slots > MAX_OPS:
            self.flush_ops()
        self.pending_ops += slots

    def work(self, pairs: int) -> None:
        """GpuBackend._workspace: the reductions' work buffer, made by the first reduction (``initial_work_pairs``
        or more) and replaced by a larger one when a reduction needs more (the old one is kept)."""
        if work_bytes(pairs) > self.work_bytes:
            first = initial_work_pairs(self._bind_limit) if not self.work_bytes else 0
            self.work_bytes = work_bytes(max(pairs, first))
            self.upload("reduction work words", self.work_bytes, True, written=EF_BYTES)

    def flush_ops(self) -> None:
        if self.tail is None and self.pending_ops:
            self.dispatches += 1  # a transcript launch of its own
        self.tail, self.pending_ops = None, 0

    def submit(self) -> None:
        self.flush_ops()
        self.commands.append(self.dispatches)
        self.most_dispatches = max(self.most_dispatches, self.dispatches)
        self.dispatches = 0

    def upload(self, name: str, nbytes: int, host_facing: bool = True, elem: int | None = None,
               written: int | None = None) -> _Buf:
        """A buffer of ``nbytes`` with ``written`` bytes of it uploaded (all by default)."""
        buf = self.alloc(name, nbytes, host_facing, elem)
        self.transfer(nbytes if written is None else written, buf.mode, read=False)
        return buf

    def read(self, buf: _Buf, nbytes: int) -> None:
        self.transfer(nbytes, buf.mode, read=True)

    # -- commitment (GpuBackend.commit: ntt.encode_codeword + merkle.build_tree in one batch) ---------------------
    def rows(self, name: str, rows: int, row_bytes: int, host_facing: bool = False) -> _Rows:
        """A ``split.alloc_rows`` of ``rows`` x ``row_bytes``: its buffers from the pool, its layout from the limits."""
        try:
            buffer_rows, window_rows = split.layout(rows, row_bytes, self.binding_limit or 1 << 62,
                                                    self.buffer_limit or 1 << 62, self.alignment)
        except DeviceLimitError as exc:
            self.problems.append(f"{name}: {exc}")
            buffer_rows = window_rows = rows
        buffers = [self.alloc(name, buffer_rows * row_bytes, host_facing, row_bytes)
                   for _ in range(rows // buffer_rows)]
        return _Rows(buffers, rows, window_rows)

    def table(self, name: str, n: int, elem: int, host_facing: bool = False, upload: bool = False) -> _Rows:
        """GpuBackend._new_table (``upload``: and written from the host, buffer by buffer): one buffer when it
        fits the buffer limit, windowed as ``split.wrap`` would for the commitment; else a split array."""
        if self.buffer_limit is None or n * elem <= self.buffer_limit:
            buffers = [self.alloc(name, n * elem, host_facing, elem)]
            rows = _Rows(buffers, n, n // self._windows(n, elem))
        else:
            rows = self.rows(name, n, elem, host_facing)
        if upload:
            for b in rows.buffers:
                self.transfer(b.nbytes, b.mode, read=False)
        return rows

    def _windows(self, rows: int, row_bytes: int) -> int:
        """Windows of a single buffer of ``rows`` x ``row_bytes`` (``split.wrap``)."""
        if self.binding_limit is None or rows * row_bytes <= self.binding_limit:
            return 1
        return rows // min(rows, 1 << log2(self.binding_limit // row_bytes))

    def commit(self, stage: str, table: _Rows, nv: int, is_ext: bool, log_folding: int, log_height: int) -> _Tree:
        log_elem = 2 if is_ext else 0
        log_w = log_folding + log_elem
        height = 1 << log_height
        codeword = self.rows(f"{stage} codeword", height, BASE_BYTES << log_w)
        n_windows = height // codeword.window_rows
        self.launch(n_windows * (table.rows // table.window_rows))  # transpose_pad (bit-reversed rows)
        if log_height > 0:
            if self.twiddle_log is None or self.twiddle_log < log_height:
                # a bigger table replaces the runtime's old one, which is dropped (counted here all the same)
                self.twiddle_log = max(log_height, ntt.MIN_TABLE_LOG)
                self.upload("twiddles", BASE_BYTES << self.twiddle_log, elem=BASE_BYTES)  # bound in windows
            log_r = log2(codeword.window_rows)
            log_cw = min(log_w, ntt.LOG_TILE_COLS)
            log_local = min(log_r, ntt.LOG_TILE_WORDS - log_cw)
            rest = log_r - log_local
            in_window = (log_local > 0) + rest % 2 + rest // 2
            cross = (log_height - log_r) * (n_windows // 2)  # ntt_cross: one launch per window pair per stage
            self.launch(in_window * n_windows + cross)
        levels, packed_from = self._tree(stage, height)
        if not self.constants:
            self.constants = True
            field = self.layout.field.name
            self.upload("round constants", poseidon2_rc_table(field).nbytes)
            if self.layout.leaf_width == 24:  # merkle.round_constants(rt, field, 24): the leaves' own table
                self.upload("round constants", poseidon2_rc_table(field, 24).nbytes)
        block = min(codeword.window_rows, levels[0].window_rows)
        self.launch(height // block)  # leaves
        top = merkle.top_level(height, self._bind_limit)
        for d in range(top - 1):
            n = height >> (d + 1)
            self.launch(n // min(levels[d + 1].window_rows, levels[d].window_rows // 2))
        if top > log_height:  # no merkle_top level: the root's copy into the proof region (a command)
            self.launch()
            self.submit()
        else:
            self.top(height >> top)
        return _Tree(codeword, levels, (1 << log_w), packed_from)

    def top(self, n0: int) -> None:
        """merkle_top from ``n0`` parents (merkle.record_tree, GpuBackend.commit): every launch but the last, then
        the submission, then the last as a tail (the root's copy, and the transcript ops recorded next)."""
        launches = len(merkle.top_launches(n0))
        if launches > 1 and not self.placeholder:  # merkle.tail_placeholder, made by the first launch without ops
            self.placeholder = True
            self.alloc("merkle top placeholder", merkle.placeholder_bytes(self.alignment), False, binding=DIGEST_BYTES)
        self.launch(launches - 1)
        self.submit()
        self.defer()

    def _tree(self, stage: str, height: int) -> tuple[list[_Rows], int]:
        """merkle.alloc_tree: the levels below ``merkle.packed_levels`` each in buffers of their own, the rest in
        one shared buffer (named as the tree's; a root on its own is the tree's root); (levels, first packed)."""
        depth = log2(height)
        first, packed_bytes = merkle.packed_levels(height, self.binding_limit or 1 << 62,
                                                   self.buffer_limit or 1 << 62, self.alignment)
        levels = [self.rows(f"{stage} merkle {'tree' if d < depth else 'root'}", height >> d, DIGEST_BYTES)
                  for d in range(first)]
        if first <= depth:
            shared = self.alloc(f"{stage} merkle tree", packed_bytes, False, DIGEST_BYTES)
            levels += [_Rows([shared], height >> d, height >> d) for d in range(first, depth + 1)]
        return levels, first

    def open_rows(self, stage: str, tree: _Tree, q: int, combine: bool) -> None:
        """``q``: the round's query slots; the openings go to the proof region (no buffer of their own). The
        launches of ``gpu.opening_launches``: one per codeword window or part of ``gpu.level_jobs`` (runs of whole
        levels, the packed ones in one binding; split levels per window). ``combine``: a round's (not the final)
        step: the checkpoint sample first, then gamma and its powers."""
        self.op(2 if combine else 1)  # the checkpoint, the draw
        self.op(3)  # the sort
        if combine:
            self.op(3)  # gamma, its powers
        if q and self.layout.openings == "pruned":
            self.launch()  # the indices' copy into the proof (the multiproof is pruned on the host)
        if q:
            self.launch(opening_launches(tree.codeword.rows // tree.codeword.window_rows,
                                         [level.rows // level.window_rows for level in tree.levels[:-1]],
                                         tree.packed_from))

    # -- multilinear algebra (reductions finish in their own launches: no second stage) --------------------------
    def evaluate(self, stage: str, nv: int, is_ext: bool, sampled: bool = True) -> None:
        """``sampled``: at an OOD point the transcript samples and expands first and observes the answer after (a
        statement's point is given, its answer not observed)."""
        n = 1 << nv
        window = self.window_len(n, EF_BYTES if is_ext else BASE_BYTES)
        groups = min(workgroups(window), MAX_REDUCE_GROUPS)
        if sampled:
            self.op()
            self.op(points=True)
        self.work(-(-n // window) * groups)
        self.defer(-(-n // window))  # eq computed in the kernel: no factor tables
        if sampled:
            self.op()

    def factor_tables(self, stage: str, n_eq: int, n_sel: int, nv: int, log_lo: int) -> _Buf:
        """GpuBackend._record_factors: one buffer, its launches (``gpu.factor_parts``)."""
        parts = factor_parts(n_eq, n_sel, nv, log_lo, self.alignment, self._bind_limit)
        total = factor_layout(n_eq, n_sel, nv, log_lo, self.alignment)[1]
        self.launch(len(parts))
        # bound whole when the buffer fits a binding, else table by table: only the largest table must fit
        return self.alloc(f"{stage} factor tables", total, False,
                          binding=max(factor_sizes(n_eq, n_sel, nv, log_lo) + [EF_BYTES]))

    def accumulate(self, stage: str, nv: int, n_eq: int, n_sel: int, challenge: bool = False) -> None:
        """``challenge``: the combination challenge and its powers are drawn first (else with the queries)."""
        if challenge:
            self.op(3)
        log_lo = (nv + 1) // 2
        # every factor table in one buffer and one launch; one select constraint per query slot
        tables = self.factor_tables(stage, n_eq, n_sel, nv, log_lo)
        n = 1 << nv
        self.launch(-(-n // self.window_len(n, EF_BYTES)))
        self.release(tables)

    def sumcheck_round(self, stage: str, n: int, summed: bool = False) -> None:
        """``summed``: the fold before summed this round (GpuBackend.fold_and_sum), nothing is launched for it.
        Then the sums are observed."""
        if not summed:
            half = n // 2
            window = self.window_len(half, EF_BYTES)
            n_windows = -(-half // window)
            self.work(n_windows * min(workgroups(window), MAX_REDUCE_GROUPS))
            self.defer(n_windows, points=False)
        self.op()

    def tail_fusable(self, state, rounds: int) -> bool:
        """GpuBackend.sumcheck_rounds's test: a small EF table bound whole, a short phase."""
        return (state.is_ext and 1 <= rounds <= log2(state.n) and state.n <= SUMCHECK_TAIL_MAX
                and 2 * rounds <= MAX_OPS and state.n * EF_BYTES <= self._bind_limit)

    def fusable(self, n: int) -> bool:
        """GpuBackend._fusable: the fused fold binds its input tables whole and needs 4 entries or more."""
        limit = min(self.binding_limit or 1 << 62, self.buffer_limit or 1 << 62)
        return n >= 4 and n * EF_BYTES <= limit

    def fold(self, stage: str, n: int, fuse: bool = False) -> tuple[_Rows, _Rows]:
        """``fuse``: a sumcheck round of the folded table follows and the fold sums it in the same launch. The
        challenge is sampled first."""
        self.op()
        half = n // 2
        name = f"{stage} folded table and weights"
        out = (self.table(name, half, EF_BYTES), self.table(name, half, EF_BYTES))
        if fuse:
            self.work(min(workgroups(half // 2), MAX_REDUCE_GROUPS))
            self.defer(points=False)
        else:
            self.launch(-(-half // self.window_len(half, EF_BYTES)))
        return out

    def grind(self, stage: str, bits: int) -> None:
        if bits:
            self.op()  # the counters' reset
            for _ in pow_launches(bits):
                if device_transcript.POW_TAIL:
                    self.defer()
                else:
                    self.launch()
            self.op()  # the witness

    # -- the runtime's own buffers -----------------------------------------------------------------------------
    def runtime_needs(self) -> list[BufferNeed]:
        # Neither is a storage binding (a copy target; a uniform buffer bound one slot at a time), so neither
        # meets max_storage_binding_size.
        shared = StorageMode.SHARED
        needs = []
        if self.staged:
            needs.append(BufferNeed(f"{self.kind} staging buffer", self.staged, 0, True, shared, 1, self.staged,
                                    runtime=True))
        if self.upload_chunk:
            ring = UPLOAD_PLAN.slots * self.upload_chunk
            needs.append(BufferNeed(f"{self.kind} upload staging ring", ring, 0, True, shared, UPLOAD_PLAN.slots,
                                    self.upload_chunk, runtime=True))
        if self.kind == "wgpu":
            params = max(WGPU_PARAMS_MIN, self.most_dispatches * WGPU_PARAMS_SLOT)
            needs.append(BufferNeed("wgpu launch parameters", params, WGPU_PARAMS_SLOT, True, shared, 1, params,
                                    runtime=True))
        return needs
