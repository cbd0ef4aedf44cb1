"""The GPU backend's launch arithmetic: workgroup sizes, the
reductions' work buffer, the factor tables' layout and the openings' launches, as functions of sizes alone."""

from __future__ import annotations

from ...kernels import split

WG = 256  # workgroup size of the sumcheck, fold, weights, MLE and gather kernels
MAX_REDUCE_GROUPS = 1024  # workgroups of a reduction's first stage (grid-stride loops cover the rest)
SUMCHECK_TAIL_MAX = 1 << 12  # most entries of a table whose pow-free rounds run in one sumcheck_tail launch
EF_BYTES = 16


def log2(n: int) -> int:
    """floor(log2(n)) for n >= 1."""
    return int(n).bit_length() - 1


def workgroups(n_threads: int, size: int = WG) -> int:
    """Workgroups of ``size`` threads that cover ``n_threads`` (at least one)."""
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
