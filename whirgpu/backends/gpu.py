"""The GPU backend: every ``Backend`` primitive as launches of the shared kernel set on a ``Runtime``.

Tables, weights, codewords and trees stay on the device for the whole proof; the host reads back only what the
transcript needs (roots, round sums, OOD answers, PoW nonces) and the query openings. One batch (one submission)
per primitive call.

Arrays larger than the device's storage-binding limit are bound as windows (``RtView``) and their work is split
into one launch per window; reductions write per-window partials that one final launch sums. The commitment
kernels (NTT, Merkle) need the codeword in one binding and say so with a ``DeviceLimitError``.

Storage: each allocation's ``StorageMode`` follows the backend's policy (``STORAGE_POLICIES``) and the buffer's
role. Under ``hybrid`` (the default) buffers the host writes or reads are SHARED: uploaded tables, points,
coefficients and indices, reduction results, the Merkle root, the gathered openings, the PoW result, the
constant tables (twiddles, round constants); intermediates are PRIVATE: codewords, Merkle levels below the
root, folded tables, weights, factor tables, partial sums, scratch. ``shared`` / ``private`` put every buffer in
that mode. The pool keys on (bytes, mode), so a recycled buffer keeps its mode. Every upload, readback and
device-side copy (including the runtime's staging copies) is counted in ``stats``, in one place
(``_BackendRuntime``).

Query-sized buffers (the index upload and openings of ``open_rows``, the select factor tables and their
inputs) are sized for ``query_slots(q, capacity)`` entries, not for the q distinct indices a proof happens to
draw: for the caller's capacity (the prover passes the round's query count, capped by the folded domain, so one
configuration always asks for the same sizes) or, without one, q rounded up to a power of two (O(log q) sizes).
Otherwise each new count would be a new pool key, and a long-lived backend's pool would grow proof after proof.
The kernels and readbacks still cover exactly q entries; the rest of such a buffer is never touched.

Eq and select weights are factored as w(b) = hi(b >> L) * lo(b mod 2^L) (L = ceil(nv / 2)); the factor tables
are built on the device too, so the host sends only points, selection variables and coefficients.
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError
from ..field import P
from ..kernels import merkle, ntt
from ..ref import field_np as F
from ..runtime.base import RtBuffer, Runtime, RtView
from .base import Backend, Commitment, DeviceBuffer, DeviceLimits, StorageMode, policy_mode, resolve_storage

WG = 256  # workgroup size of the sumcheck, fold, weights, MLE, reduce and gather kernels
MAX_REDUCE_GROUPS = 1024  # workgroups of a reduction's first stage (grid-stride loops cover the rest)
EF_BYTES = 16
POW_WG = 64
POW_LAUNCH = 1 << 22  # most nonces per grinding launch
POW_FIRST_LAUNCH_SLACK = 1  # launches start at 2^(bits + 1) nonces: the first holds a hit with odds 1 - e^-2
POW_LAUNCHES_PER_SUBMIT = 4  # later launches in a submission exit at once when an earlier one found a nonce
NOT_FOUND = 0xFFFFFFFF


def _log2(n: int) -> int:
    return int(n).bit_length() - 1


def query_slots(q: int, capacity: int | None = None) -> int:
    """Entries a query-sized buffer is allocated for, when ``q`` entries are used: ``max(q, capacity)``, or
    without a capacity q rounded up to a power of two (at least 1)."""
    q = int(q)
    if capacity:
        return max(q, int(capacity))
    return 1 << max(0, q - 1).bit_length()


def _groups(n_threads: int, size: int = WG) -> int:
    return max(1, -(-n_threads // size))


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

    def __getattr__(self, name):
        return getattr(self._runtime, name)


class GpuBackend(Backend):
    """WHIR primitives on a GPU ``Runtime`` (wgpu, Metal, msl-cpu). ``profile=True`` waits at each sub-phase
    boundary (ntt / merkle) so host timers attribute time correctly, at the cost of one round trip each.
    ``storage``: the storage policy (hybrid, shared, private; None: ``WHIRGPU_STORAGE``, else hybrid)."""

    def __init__(self, runtime: Runtime | None = None, profile: bool = False, storage: str | None = None):
        super().__init__()
        if runtime is None:
            from ..runtime.wgpu_rt import WgpuRuntime  # noqa: PLC0415 - wgpu is an optional dependency

            runtime = WgpuRuntime()
        self.rt = runtime
        self.name = runtime.name
        self.profile = profile
        self.storage = resolve_storage(storage)
        self._pool: dict[tuple[int, StorageMode], list[RtBuffer]] = {}
        self._limits = runtime.limits()
        self.binding_limit = self._limits.max_storage_binding_size
        self._drivers = _BackendRuntime(runtime, self)  # counts transfers; the backend itself goes through it too
        self._dummy = self._alloc(EF_BYTES, host_facing=False)

    # -- memory ----------------------------------------------------------------------------------------------
    def mode_for(self, host_facing: bool) -> StorageMode:
        """The mode this backend's policy gives a buffer the host writes or reads (True) or an intermediate."""
        return policy_mode(self.storage, host_facing)

    def _alloc(self, nbytes: int, host_facing: bool = False) -> RtBuffer:
        nbytes = max(EF_BYTES, -(-int(nbytes) // EF_BYTES) * EF_BYTES)
        mode = self.mode_for(host_facing)
        free = self._pool.get((nbytes, mode))
        return free.pop() if free else self.rt.alloc(nbytes, mode)

    def _free(self, *buffers: RtBuffer) -> None:
        for b in buffers:
            free = self._pool.setdefault((b.nbytes, b.mode), [])
            if not any(b is held for held in free):  # a second release must not hand one buffer out twice
                free.append(b)

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
        buffer = self._upload_words(array, host_facing=mode is StorageMode.SHARED)
        return DeviceBuffer(buffer, array.shape, buffer.mode)

    def download(self, buffer: DeviceBuffer) -> np.ndarray:
        return self._drivers.read(buffer.handle, buffer.nbytes).reshape(buffer.shape)

    def release(self, *items) -> None:
        """Return buffers (or a commitment's codeword and tree) to this backend's pool for reuse."""
        for item in items:
            if isinstance(item, DeviceBuffer):
                self._free(item.handle)
            elif isinstance(item, Commitment) and item.handle is not None:
                codeword, levels = item.handle
                self._free(codeword, *levels)
                item.handle = None

    def _read(self, buffer: RtBuffer, nbytes: int) -> np.ndarray:
        return self._drivers.read(buffer, nbytes)

    # -- windows -----------------------------------------------------------------------------------------------
    def _window_len(self, n: int, elem_bytes: int) -> int:
        """Entries per window: the largest power of two whose bytes fit one binding (n itself if all fit)."""
        if n * elem_bytes <= self.binding_limit:
            return n
        return 1 << _log2(self.binding_limit // elem_bytes)

    def _pairs(self, buffer: RtBuffer, half: int, elem_bytes: int, window: int):
        """(lo binding, hi binding, lo_off, hi_off, start, len) per window over the halves of ``buffer``. The
        choice between one whole binding and windows is made for EF entries, so a base table and its EF weights
        always get the same offsets."""
        if window == half and 2 * half * EF_BYTES <= self.binding_limit:
            yield buffer, buffer, 0, half, 0, half
            return
        for start in range(0, half, window):
            size = min(window, half - start) * elem_bytes
            yield (RtView(buffer, start * elem_bytes, size), RtView(buffer, (half + start) * elem_bytes, size),
                   0, 0, start, min(window, half - start))

    def _view(self, buffer: RtBuffer, start: int, length: int, elem_bytes: int, whole: bool):
        return buffer if whole else RtView(buffer, start * elem_bytes, length * elem_bytes)

    # -- commitment --------------------------------------------------------------------------------------------
    def commit(self, table: DeviceBuffer, log_folding: int, log_height: int) -> Commitment:
        rt = self._drivers
        n_entries = table.shape[0]
        nv = _log2(n_entries)
        if n_entries != 1 << nv or nv < log_folding or nv - log_folding > log_height:
            raise ValueError(f"cannot commit {n_entries} entries as 2^{log_folding} columns of height 2^{log_height}")
        width = (1 << log_folding) * (4 if table.is_ext else 1)
        height = 1 << log_height
        batch = rt.batch()
        with self.phase("ntt"):
            codeword = ntt.encode_codeword(self._drivers, batch, table.handle, nv, table.is_ext, log_folding, log_height)
            if self.profile:
                batch.submit()
                rt.wait()
                batch = rt.batch()
        with self.phase("merkle"):
            levels = merkle.build_tree(self._drivers, codeword, height, width, batch)
            batch.submit()
            root = merkle.read_root(rt, levels)
        return Commitment(root, height, width, table.is_ext, handle=(codeword, levels))

    def open_rows(self, commitment: Commitment, indices: list[int],
                  capacity: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Rows and sibling paths gathered on the device into one buffer, read back at once. The index and
        output buffers are sized for ``query_slots(q, capacity)`` queries (see the module docstring)."""
        rt = self._drivers
        codeword, levels = commitment.handle
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= commitment.height):
            raise ValueError(f"open_rows: an index lies outside [0, {commitment.height})")
        width, depth, q = commitment.width, len(levels) - 1, idx.size
        row_words, path_words = q * width, q * depth * merkle.DIGEST
        if q == 0:
            return np.zeros((0, width // 4, 4) if commitment.is_ext else (0, width), np.uint32), \
                np.zeros((0, depth, merkle.DIGEST), np.uint32)
        slots = query_slots(q, capacity)
        index_buffer = self._upload_words(idx.astype(np.uint32), nbytes=4 * slots)
        out = self._alloc(4 * slots * (width + depth * merkle.DIGEST), host_facing=True)
        batch = rt.batch()
        batch.dispatch(rt.kernel("gather_rows"), [codeword, index_buffer, out],
                       np.array([row_words, _log2(width), 0, 0], np.uint32), _groups(row_words))
        for level in range(depth):
            batch.dispatch(rt.kernel("merkle_paths"), [levels[level], index_buffer, out],
                           np.array([q, level, depth, row_words], np.uint32), _groups(q * merkle.DIGEST))
        batch.submit()
        words = self._read(out, 4 * (row_words + path_words))
        self._free(index_buffer, out)
        rows = words[:row_words].reshape((q, width // 4, 4) if commitment.is_ext else (q, width))
        return rows, words[row_words:].reshape(q, depth, merkle.DIGEST)

    # -- reductions --------------------------------------------------------------------------------------------
    def _reduce(self, partials: RtBuffer, count: int, stride: int, batch) -> np.ndarray:
        """Record the final stage (sums of ``count`` groups of ``stride`` EF values), submit, read (stride, 4)."""
        out = self._alloc(stride * EF_BYTES, host_facing=True)
        batch.dispatch(self.rt.kernel("ef_reduce"), [partials, out], np.array([count, stride, 0, 0], np.uint32),
                       stride)
        batch.submit()
        values = self._read(out, stride * EF_BYTES).reshape(stride, 4)
        self._free(partials, out)
        return values

    def evaluate(self, table: DeviceBuffer, point: np.ndarray) -> np.ndarray:
        point = np.asarray(point, dtype=np.uint32).reshape(-1, 4)
        n = table.shape[0]
        nv = point.shape[0]
        if n != 1 << nv:
            raise ValueError(f"table of {n} entries does not match a point of {nv} coordinates")
        rt = self._drivers
        elem = EF_BYTES if table.is_ext else 4
        window = self._window_len(n, elem)
        groups = min(_groups(window), MAX_REDUCE_GROUPS)
        log_lo = min((nv + 1) // 2, _log2(groups * WG))
        batch = rt.batch()
        eq_lo, eq_hi, temporaries = self._record_eq_factors(batch, point[None], None, log_lo)
        n_windows = -(-n // window)
        partials = self._alloc(n_windows * groups * EF_BYTES)
        kernel = rt.kernel("mle_eval", "mle_eval_ext" if table.is_ext else "mle_eval_base")
        for w, start in enumerate(range(0, n, window)):
            length = min(window, n - start)
            view = self._view(table.handle, start, length, elem, n_windows == 1)
            batch.dispatch(kernel, [view, eq_hi, eq_lo, partials],
                           np.array([length, start, log_lo, w * groups, groups], np.uint32), groups)
        value = self._reduce(partials, n_windows * groups, 1, batch)[0]
        self._free(eq_hi, eq_lo, *temporaries)
        return value

    def sumcheck_round(self, table: DeviceBuffer, weights: DeviceBuffer) -> tuple[np.ndarray, np.ndarray]:
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"sumcheck_round: table of {n} entries with weights of shape {weights.shape}")
        rt = self._drivers
        half = n // 2
        window = self._window_len(half, EF_BYTES)
        groups = min(_groups(window), MAX_REDUCE_GROUPS)
        n_windows = -(-half // window)
        partials = self._alloc(2 * n_windows * groups * EF_BYTES)
        kernel = rt.kernel("sumcheck", "sumcheck_ext" if table.is_ext else "sumcheck_base")
        elem = EF_BYTES if table.is_ext else 4
        batch = rt.batch()
        pairs = zip(self._pairs(table.handle, half, elem, window), self._pairs(weights.handle, half, EF_BYTES, window))
        for w, (t, wt) in enumerate(pairs):
            t_lo, t_hi, lo_off, hi_off, _, length = t
            batch.dispatch(kernel, [t_lo, t_hi, wt[0], wt[1], partials],
                           np.array([length, lo_off, hi_off, w * groups, groups], np.uint32), groups)
        h = self._reduce(partials, n_windows * groups, 2, batch)
        return h[0], h[1]

    # -- fold ----------------------------------------------------------------------------------------------------
    def fold(self, table: DeviceBuffer, weights: DeviceBuffer, r: np.ndarray) -> tuple[DeviceBuffer, DeviceBuffer]:
        n = table.shape[0]
        if n < 2 or weights.shape != (n, 4):
            raise ValueError(f"fold: table of {n} entries with weights of shape {weights.shape}")
        rt = self._drivers
        half = n // 2
        window = self._window_len(half, EF_BYTES)
        new_table = self._alloc(half * EF_BYTES)
        new_weights = self._alloc(half * EF_BYTES)
        kernel = rt.kernel("fold", "fold_ext" if table.is_ext else "fold_base")
        elem = EF_BYTES if table.is_ext else 4
        whole_out = window == half
        r = np.asarray(r, np.uint32).reshape(4)
        batch = rt.batch()
        pairs = zip(self._pairs(table.handle, half, elem, window), self._pairs(weights.handle, half, EF_BYTES, window))
        for t, wt in pairs:
            t_lo, t_hi, lo_off, hi_off, start, length = t
            out_t = self._view(new_table, start, length, EF_BYTES, whole_out)
            out_w = self._view(new_weights, start, length, EF_BYTES, whole_out)
            params = np.concatenate([r, np.array([length, lo_off, hi_off, 0], np.uint32)])
            batch.dispatch(kernel, [t_lo, t_hi, wt[0], wt[1], out_t, out_w], params, _groups(length))
        batch.submit()
        return (DeviceBuffer(new_table, (half, 4), new_table.mode),
                DeviceBuffer(new_weights, (half, 4), new_weights.mode))

    # -- weights -------------------------------------------------------------------------------------------------
    def _record_eq_factors(self, batch, points: np.ndarray, coefficients: np.ndarray | None, log_lo: int):
        """Record the eq factor tables of m points (m, nv, 4): lo (m, 2^log_lo) unscaled and hi (m, 2^(nv-log_lo))
        scaled by ``coefficients`` (or unscaled). Returns the two buffers and the temporaries to free."""
        rt = self._drivers
        m, nv = points.shape[0], points.shape[1]
        coords = self._upload_words(points.reshape(-1, 4) if points.size else np.zeros((1, 4), np.uint32))
        scales = self._upload_words(coefficients) if coefficients is not None else self._dummy
        kernel = rt.kernel("weight_factors", "eq_factor")
        out = []
        for first, length, scaled in ((nv - log_lo, log_lo, False), (0, nv - log_lo, coefficients is not None)):
            table = self._alloc((m << length) * EF_BYTES)
            batch.dispatch(kernel, [coords, scales, table],
                           np.array([m, nv, first, length, int(scaled), 0], np.uint32), _groups(m << length))
            out.append(table)
        temporaries = [coords] + ([scales] if coefficients is not None else [])
        return out[0], out[1], temporaries

    def _record_select_factors(self, batch, variables: np.ndarray, coefficients: np.ndarray, nv: int, log_lo: int,
                               capacity: int | None = None):
        """Record select factor tables: lo[m][j] = v_m^j (base), hi[m][j] = c_m v_m^(j 2^log_lo) (EF), in
        buffers sized for ``query_slots(q, capacity)`` constraints (the kernels fill the first q)."""
        rt = self._drivers
        q = variables.size
        slots = query_slots(q, capacity)
        bases = self._upload_words(variables, nbytes=4 * slots)
        scales = self._upload_words(coefficients, nbytes=EF_BYTES * slots)
        lo = self._alloc((slots << log_lo) * 4)
        hi = self._alloc((slots << (nv - log_lo)) * EF_BYTES)
        batch.dispatch(rt.kernel("weight_factors", "power_lo"), [bases, lo],
                       np.array([q, nv, 0, log_lo, 0, 0], np.uint32), _groups(q << log_lo))
        batch.dispatch(rt.kernel("weight_factors", "power_hi"), [bases, scales, hi],
                       np.array([q, nv, 0, nv - log_lo, 1, log_lo], np.uint32), _groups(q << (nv - log_lo)))
        return lo, hi, [bases, scales]

    def _accumulate(self, weights: RtBuffer, nv: int, accumulate: bool, eq_points, eq_coefficients, select_vars,
                    select_coefficients, select_capacity: int | None = None) -> None:
        rt = self._drivers
        eq_coefficients = np.asarray(eq_coefficients, np.uint32).reshape(-1, 4)
        eq_points = np.asarray(eq_points, np.uint32).reshape(len(eq_coefficients), nv, 4)
        select_vars = np.asarray(select_vars, np.uint32).reshape(-1)
        select_coefficients = np.asarray(select_coefficients, np.uint32).reshape(-1, 4)
        if len(select_vars) != len(select_coefficients):
            raise ValueError("each select constraint needs exactly one coefficient")
        n_eq, n_sel = len(eq_points), len(select_vars)
        log_lo = (nv + 1) // 2
        hi_len = 1 << (nv - log_lo)
        batch = rt.batch()
        temporaries: list[RtBuffer] = []
        factors = [self._dummy] * 4
        if n_eq:
            eq_lo, eq_hi, tmp = self._record_eq_factors(batch, eq_points, eq_coefficients, log_lo)
            factors[0], factors[1] = eq_lo, eq_hi
            temporaries += tmp + [eq_lo, eq_hi]
        if n_sel:
            sel_lo, sel_hi, tmp = self._record_select_factors(batch, select_vars, select_coefficients, nv, log_lo,
                                                              select_capacity)
            factors[2], factors[3] = sel_lo, sel_hi
            temporaries += tmp + [sel_lo, sel_hi]
        n = 1 << nv
        window = self._window_len(n, EF_BYTES)
        for start in range(0, n, window):
            length = min(window, n - start)
            view = self._view(weights, start, length, EF_BYTES, window == n)
            params = np.array([length, start, log_lo, int(accumulate), n_eq, n_sel, hi_len, 0], np.uint32)
            batch.dispatch(rt.kernel("weights"), [view] + factors, params, _groups(length))
        batch.submit()
        self._free(*temporaries)

    def eq_weights(self, points: np.ndarray, coefficients: np.ndarray) -> DeviceBuffer:
        points = np.asarray(points, np.uint32)
        nv = points.shape[1]
        weights = self._alloc((1 << nv) * EF_BYTES)
        self._accumulate(weights, nv, False, points, coefficients, np.zeros(0, np.uint32), np.zeros((0, 4), np.uint32))
        return DeviceBuffer(weights, (1 << nv, 4), weights.mode)

    def add_constraint_weights(self, weights, eq_points, eq_coefficients, select_vars, select_coefficients,
                               select_capacity=None):
        nv = _log2(weights.shape[0])
        self._accumulate(weights.handle, nv, True, eq_points, eq_coefficients, select_vars, select_coefficients,
                         select_capacity)
        return weights

    # -- proof of work -------------------------------------------------------------------------------------------
    def grind(self, challenger, bits: int) -> np.uint32:
        """The smallest valid nonce, searched in launches of ``POW_LAUNCH`` nonces (several per submission, each
        skipped once an earlier one has found a nonce); then absorbed by the host challenger."""
        bits = int(bits)
        if bits == 0:
            return np.uint32(0)
        if not 0 < bits <= 30:
            raise ConfigError(f"proof-of-work bits = {bits} outside [0, 30]")
        rt = self._drivers
        base, index = challenger.pow_base_state()
        head = np.concatenate([np.asarray(base, np.uint32), np.array([index, (1 << bits) - 1], np.uint32)])
        result = self._upload_words(np.array([NOT_FOUND, 0, 0, 0], np.uint32))
        rc = merkle.round_constants(self._drivers)
        kernel = rt.kernel("pow_grind", constants={"WG": POW_WG})
        start = 0
        launch = min(POW_LAUNCH, 1 << (bits + POW_FIRST_LAUNCH_SLACK))
        found = NOT_FOUND
        while found == NOT_FOUND and start < P:
            batch = rt.batch()
            for _ in range(POW_LAUNCHES_PER_SUBMIT):
                if start >= P:
                    break
                count = min(launch, P - start)
                launch = min(POW_LAUNCH, 2 * launch)
                batch.dispatch(kernel, [result, rc], np.concatenate([head, np.array([start, count], np.uint32)]),
                               _groups(count, POW_WG))
                start += count
            batch.submit()
            found = int(self._read(result, 4)[0])
        self._free(result)
        if found == NOT_FOUND:
            raise ConfigError(f"no proof-of-work witness exists for {bits} bits")
        witness = np.uint32(F.to_monty(np.array([found], np.uint64))[0])
        if not challenger.check_witness(bits, witness):
            raise AssertionError(f"GPU proof of work returned nonce {found}, which the transcript rejects")
        return witness

    # -- information ---------------------------------------------------------------------------------------------
    def limits(self) -> DeviceLimits:
        return self._limits
