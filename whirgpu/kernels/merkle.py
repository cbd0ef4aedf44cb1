"""Poseidon2 Merkle trees on a GPU runtime (any ``Runtime``: WGSL through wgpu, MSL through Metal or its CPU twin).

Contracts (the same tree as ``whirgpu.ref.merkle.MerkleTree``, spec §3):
- The committed matrix is a buffer of ``height * width`` Montgomery words, row-major; leaf i hashes row i with
  ``PaddingFreeSponge<16, 8, 8>`` (``leaf_width=16``, the default: ``merkle_leaves``) or, with ``leaf_width=24``,
  p3-whir's ``PaddingFreeSponge<Perm24, 24, 16, 8>`` (``merkle_leaves24``, ``ref.poseidon2.hash_rows_24``; an EF
  row of 2^k elements is its 4 * 2^k base words). ``height`` is a power of two >= 1; ``width`` >= 0.
- Every tree function takes ``field`` ("babybear", the default, or "koalabear"): the kernels are composed for it
  and bind its round-constant tables (``round_constants(rt, field, width)``: width 16 for the nodes, 24 for wide
  leaves; p3-whir's ``Poseidon2Constants.smallrng_16_24(field)``, whose BabyBear width-16 set is whir-p3's). The
  nodes are always the width-16 compression ``TruncatedPermutation<2, 8, 16>``. The defaults (16, "babybear")
  record exactly the launches they always did.
- A tree is a list of levels, one ``SplitArray`` (``kernels/split.py``) per level: ``levels[0]`` holds the
  ``height`` leaf digests and ``levels[d]`` the ``height >> d`` digests of level d, 8 words each, node-major;
  ``levels[-1]`` holds the root. A level larger than a buffer or a binding is several buffers bound in windows of
  whole subtrees; leaves and compressions launch once per window (once per level when it fits), and
  ``merkle_top`` takes over where the children fit one window. The matrix may be one buffer or a ``SplitArray``.
- Packed levels (``alloc_tree``): the top levels, from ``packed_levels`` up to the root, share ONE buffer
  (``split.alloc_packed``): level d at byte ``levels[d].offset``, levels in order, the lowest packed level at 0,
  the whole run within one binding (``min(binding limit, buffer limit)``), so a reader binds them all at once
  (``packed_run``, word offsets per level). The levels merkle_top makes (from ``top_level`` up) are one glued
  block, back to back as its launches write them in place (a launch's levels of n, n / 2, ... parents one after
  the other, right after the previous launch's; ``top_dispatches``); every level below it lies at a multiple of
  the runtime's offset alignment, so each kernel binds it as an ``RtView`` of its own. On most trees the run is
  every level, or every level but the one or two largest; the levels below the run (split ones, and whole ones
  too large to share a binding with the rest) own their buffers as before. Kernels bind disjoint ranges of the
  packed buffer together (a compression's two levels, merkle_top's children and block), so ``merkle_compress``
  and ``merkle_top`` declare them read_write (WebGPU refuses a buffer bound read-only and writable in one
  dispatch, and overlapping writable ranges).
- ``record_tree`` records every launch (leaves, one compression per wide level, then the levels of at most
  ``top_parents`` parents in a few ``merkle_top`` launches) but the last merkle_top launch, a single workgroup
  that it returns (``TopLaunch``): that launch also copies the root to a proof binding and runs a transcript
  program (``GpuBackend.commit`` records it as a transcript tail, after submitting the rest). ``build_tree``
  records that launch too, running no program. With ``batch=None`` it makes and submits its own batch; given a
  caller's batch it only records, so a commitment can ride in the submission of the step around it.
- ``read_root`` and ``open_paths`` read back only the root, or only the sibling digests asked for (gathered on the
  device, then one readback); ``levels[-1].locate(0)`` is where the root lies (buffer, byte offset) for a copy.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..devices.limits import StorageMode
from ..runtime.base import Batch, RtBuffer, Runtime, RtView
from . import split
from .constants import poseidon2_rc_table
from .split import SplitArray

DIGEST = 8  # words per digest
WORKGROUP = 64  # threads per workgroup (the kernels' `override WG`)
COOP_WORKGROUP = 64  # threads per workgroup of the *_coop kernels (P2C_WG), 4 per state
COOP_MAX_STATES = 1 << 14  # launches of at most this many permutations use the cooperative kernels
# The small top levels: a level of at most TOP_MAX_PARENTS parents and every level above it are made by merkle_top
# launches, each workgroup building a subtree of TOP_SUBTREE parents up to its root (4 + 2 + 1 + 1 + 1 + 1 + 1
# rounds of 16 cooperative permutations), so one launch covers log2(TOP_SUBTREE) + 1 levels and the next takes the
# subtree roots. 8192 parents are 128 workgroups, about one per SM of an H100 (132 SMs), where a per-level launch
# costs ~15 us of host encoding plus ~16 us of GPU latency, against ~8 us per round of a workgroup; on lavapipe (a
# CPU) launches are what costs (~30 us each) and a workgroup's rounds are as cheap as a launch's threads. A tree of
# 2^17 leaves makes its top 14 levels in 2 launches (8192 -> 64, 64 -> 1) instead of 14.
TOP_MAX_PARENTS = 8192  # 0: never (every level a launch of its own)
TOP_SUBTREE = 64  # parents per workgroup at the base of a merkle_top launch (a power of two)
ROOT_AT = 4  # merkle_top's params word: the proof word (of its proof binding) the last launch copies the root to
_DIGEST_BYTES = 4 * DIGEST

_rc_tables: "weakref.WeakKeyDictionary[Runtime, dict[tuple[str, int], RtBuffer]]" = weakref.WeakKeyDictionary()
LEAF_WIDTHS = (16, 24)  # permutation widths of the leaf sponge: whir-p3's (rate 8) and p3-whir's (rate 16)
_placeholders: "weakref.WeakKeyDictionary[Runtime, RtBuffer]" = weakref.WeakKeyDictionary()



def _level_mode(n_nodes: int) -> StorageMode:
    """A tree level of ``n_nodes`` digests: an intermediate (the root reaches the host inside the proof buffer, or
    through ``read_root``'s readback of a private buffer)."""
    return StorageMode.PRIVATE

def round_constants(rt: Runtime, field: str = "babybear", width: int = 16) -> RtBuffer:
    """The runtime's round-constant table of ``field``'s width-``width`` Poseidon2 (``constants.poseidon2_rc_table``),
    uploaded once; every Poseidon2 kernel binds it at the slot after its data buffers."""
    tables = _rc_tables.setdefault(rt, {})
    table = tables.get((field, width))
    if table is None:
        words = poseidon2_rc_table(field, width)
        table = rt.alloc(words.nbytes, StorageMode.SHARED)  # host-written (an input in the storage policy's terms)
        rt.write(table, words)
        tables[field, width] = table
    return table


def _check_leaf_width(leaf_width: int) -> int:
    if leaf_width not in LEAF_WIDTHS:
        raise ValueError(f"leaf width {leaf_width}: the leaf sponge's permutation is one of {LEAF_WIDTHS}")
    return int(leaf_width)


def _groups(n_threads: int) -> int:
    return max(1, -(-n_threads // WORKGROUP))


def hash_leaves(rt: Runtime, batch: Batch, matrix: "RtBuffer | SplitArray", digests: "RtBuffer | SplitArray",
                height: int, width: int, leaf_width: int = 16, field: str = "babybear") -> None:
    """Record: digests[i] = sponge(row i) for the (height, width) matrix; digests holds height * 8 words. Either
    may be a ``SplitArray`` (``height`` then a power of two): one launch per block of rows that lies in one window
    of both. ``leaf_width`` 16: ``PaddingFreeSponge<16, 8, 8>`` (``merkle_leaves``); 24: p3-whir's
    ``PaddingFreeSponge<Perm24, 24, 16, 8>`` (``merkle_leaves24``); both of ``field``'s permutation."""
    leaf_width = _check_leaf_width(leaf_width)
    if leaf_width == 16:
        kernel = rt.kernel("merkle_leaves", constants={"WG": WORKGROUP}, field=field)
    else:
        kernel = rt.kernel("merkle_leaves24", constants={"WG": WORKGROUP}, field=field)
    table = round_constants(rt, field, leaf_width)
    if not isinstance(matrix, SplitArray) and not isinstance(digests, SplitArray):
        batch.dispatch(kernel, [matrix, digests, table], np.array([height, width, 0, 0], np.uint32),
                       _groups(height))
        return
    matrix = split.wrap(rt, matrix, height, 4 * width)
    digests = split.wrap(rt, digests, height, _DIGEST_BYTES)
    block = min(matrix.window_rows, digests.window_rows)
    for first in range(0, height, block):
        rows, row_off = matrix.binding(first, block)
        out, digest_off = digests.binding(first, block)
        batch.dispatch(kernel, [rows, out, table], np.array([block, width, row_off, digest_off], np.uint32),
                       _groups(block))


def _permutations(rt: Runtime, batch: Batch, entry: str, src, dst, n: int, coop: bool | None,
                  src_off: int = 0, dst_off: int = 0, field: str = "babybear") -> None:
    """One launch over n states; ``src_off`` / ``dst_off``: the first vec4 of each binding."""
    if coop is None:
        coop = n <= COOP_MAX_STATES
    if coop:
        kernel = rt.kernel("merkle_compress", f"{entry}_coop", field=field)
        groups = max(1, -(-4 * n // COOP_WORKGROUP))
    else:
        kernel, groups = rt.kernel("merkle_compress", entry, constants={"WG": WORKGROUP}, field=field), _groups(n)
    batch.dispatch(kernel, [src, dst, round_constants(rt, field)], np.array([n, src_off, dst_off, 0], np.uint32),
                   groups)


def compress_level(rt: Runtime, batch: Batch, children: "RtBuffer | SplitArray", parents: "RtBuffer | SplitArray",
                   n_parents: int, coop: bool | None = None, field: str = "babybear") -> None:
    """Record: parents[j] = perm(children[2j] || children[2j + 1])[0..8] for j < n_parents (a power of two when
    either level is a ``SplitArray``: one launch per block of parents whose children lie in one window), perm
    ``field``'s width-16 permutation. ``coop`` picks the cooperative kernel (4 threads per permutation; lower
    latency); None picks it for launches of at most COOP_MAX_STATES parents."""
    if not isinstance(children, SplitArray) and not isinstance(parents, SplitArray):
        _permutations(rt, batch, "merkle_compress", children, parents, n_parents, coop, field=field)
        return
    children = split.wrap(rt, children, 2 * n_parents, _DIGEST_BYTES)
    parents = split.wrap(rt, parents, n_parents, _DIGEST_BYTES)
    block = min(parents.window_rows, children.window_rows // 2)
    for first in range(0, n_parents, block):
        src, src_off = children.binding(2 * first, 2 * block)
        dst, dst_off = parents.binding(first, block)
        _permutations(rt, batch, "merkle_compress", src, dst, block, coop, 2 * src_off, 2 * dst_off, field)


def permute_states(rt: Runtime, batch: Batch, states: RtBuffer, out: RtBuffer, n: int,
                   coop: bool | None = None, field: str = "babybear", width: int = 16) -> None:
    """Record: out[j] = Poseidon2(states[j]) for n states of ``width`` words, ``field``'s width-``width``
    permutation. Width 16: ``coop`` as in ``compress_level``; width 24 (``merkle_leaves24``'s
    ``merkle_permute24``) has one thread per state only (``coop`` None or False)."""
    if width == 24:
        if coop:
            raise ValueError("permute_states: the width-24 permutation has no cooperative kernel")
        kernel = rt.kernel("merkle_leaves24", "merkle_permute24", constants={"WG": WORKGROUP}, field=field)
        batch.dispatch(kernel, [states, out, round_constants(rt, field, 24)], np.array([n, 24, 0, 0], np.uint32),
                       _groups(n))
        return
    if width != 16:
        raise ValueError(f"permute_states: width {width}; the permutations are of width 16 or 24")
    _permutations(rt, batch, "merkle_permute", states, out, n, coop, field=field)


def top_parents(binding_limit: int) -> int:
    """The most parents of the first level ``build_tree`` hands to ``merkle_top``: TOP_MAX_PARENTS, lowered to a
    power of two whose children (2 n0 digests) fit one binding of ``binding_limit`` bytes, and so do the levels the
    launches make (2 n0 - 1 digests, back to back)."""
    fit = binding_limit // (2 * _DIGEST_BYTES)
    return min(TOP_MAX_PARENTS, 1 << (fit.bit_length() - 1)) if fit else 0


def top_level(height: int, binding_limit: int) -> int:
    """The first level of a tree over ``height`` leaves that ``merkle_top`` makes (the lowest of at most
    ``top_parents(binding_limit)`` nodes, never the leaves; ``binding_limit``: the min of the binding and buffer
    limits), or log2(height) + 1 when none is (TOP_MAX_PARENTS 0, a tiny limit, a lone root)."""
    depth = height.bit_length() - 1
    cap = top_parents(binding_limit)
    return next((t for t in range(1, depth + 1) if height >> t <= cap), depth + 1)


def top_launches(n0: int) -> list[tuple[int, int]]:
    """(parents of the first level, parents per workgroup) of each merkle_top launch from ``n0`` parents to the
    root: subtrees of TOP_SUBTREE parents while a level is larger, then one workgroup."""
    launches, n = [], n0
    while True:
        per = n if n <= max(1, TOP_SUBTREE) else TOP_SUBTREE
        launches.append((n, per))
        if per == n:
            return launches
        n //= 2 * per


def placeholder_bytes(alignment: int) -> int:
    """Bytes of ``tail_placeholder``'s buffer: three 32-byte windows at multiples of ``alignment``."""
    return 2 * -(-_DIGEST_BYTES // alignment) * alignment + _DIGEST_BYTES


def tail_placeholder(rt: Runtime) -> list[RtView]:
    """The scratch, proof and points bindings of a merkle_top launch that runs no transcript program: three
    disjoint windows of one small buffer per runtime (WebGPU refuses overlapping writable bindings in a dispatch).
    Nothing reads them; the root copy of a tree's last launch lands in the second."""
    alignment = split.runtime_limits(rt)[2]
    buffer = _placeholders.get(rt)
    if buffer is None:
        buffer = _placeholders[rt] = rt.alloc(placeholder_bytes(alignment))
    stride = -(-_DIGEST_BYTES // alignment) * alignment
    return [RtView(buffer, k * stride, _DIGEST_BYTES) for k in range(3)]


@dataclass(frozen=True)
class TopLaunch:
    """One merkle_top launch (merkle_top.wgsl): ``src`` (the children's binding) and ``dst`` (the levels it makes,
    one binding), the params' head (``n src_off dst_off per root_at from_dst``, padded to 8 words; the transcript
    program follows it) and its workgroups. The last launch of a tree (one workgroup) copies the root to proof word
    ``head[ROOT_AT]`` of the proof binding and runs the program (n_ops 0: none)."""

    kernel: object
    src: object
    dst: object
    head: tuple[int, ...]
    groups: int
    field: str = "babybear"  # the field merkle_top is composed for; its round constants are this field's

    def buffers(self, io: list) -> list:
        """Its bindings, ``io`` being the tail's (scratch, proof, points, round constants)."""
        return [self.src, self.dst, *io]

    def record(self, rt: Runtime, batch: Batch) -> None:
        """Record it running no program, its tail bindings the runtime's ``tail_placeholder`` (a last launch
        copies the root there; the tree's own root level holds it all the same)."""
        io = tail_placeholder(rt) + [round_constants(rt, self.field)]
        batch.dispatch(self.kernel, self.buffers(io), np.array(self.head, np.uint32), self.groups)


def _top_run(levels: list[SplitArray], top: int) -> RtView:
    """The binding of levels ``top`` .. root: one block of one buffer, back to back (``alloc_tree``)."""
    buffer, start = levels[top].locate(0)
    return RtView(buffer, start, levels[-1].locate(0)[1] + _DIGEST_BYTES - start)


def top_dispatches(rt: Runtime, levels: list[SplitArray], top: int, field: str = "babybear") -> list[TopLaunch]:
    """The launches of ``top_launches`` making levels ``top`` .. root of ``levels`` in place (``alloc_tree``'s
    block, each launch's levels right after the one before's), the children being ``levels[top - 1]`` (one window):
    the first launch reads them, each later one the subtree roots the one before wrote (from dst). ``field``: the
    permutation's (a caller recording the last launch binds ``round_constants(rt, field)``)."""
    kernel = rt.kernel("merkle_top", field=field)
    children = levels[top - 1].binding(0, levels[top - 1].rows)[0]
    run = _top_run(levels, top)
    launches, at, src_off, from_dst = [], 0, 0, 0  # at: the launch's first digest in the block
    for n, per in top_launches(levels[top].rows):
        end = at + 2 * n - n // per  # n + n / 2 + ... + n / per digests
        launches.append(TopLaunch(kernel, children, run, (n, src_off, 2 * at, per, 0, from_dst, 0, 0), n // per,
                                  field))
        at, src_off, from_dst = end, 2 * (end - n // per), 1
    return launches


def _glued(depth: int, first: int, top: int) -> int:
    """Packed levels from ``first`` in the glued block of merkle_top's levels (``top`` .. ``depth``)."""
    return depth + 1 - max(top, first)


def packed_levels(height: int, binding_limit: int, buffer_limit: int, alignment: int) -> tuple[int, int]:
    """(first packed level, bytes of the packed buffer) of a tree over ``height`` leaves (see the module contract):
    the lowest d such that levels d .. log2(height), packed by ``split.pack`` (merkle_top's levels one glued block),
    end within ``min(binding_limit, buffer_limit)``. At least two levels share the buffer, else none does:
    (log2(height) + 1, 0), every level owning its buffers."""
    depth = height.bit_length() - 1
    limit = min(binding_limit, buffer_limit)
    top = top_level(height, limit)

    def end(first: int) -> int:
        sizes = [(height >> d) * _DIGEST_BYTES for d in range(first, depth + 1)]
        return split.pack(sizes, alignment, _glued(depth, first, top))[1]

    first = top  # merkle_top's levels fit one binding (top_parents)
    while first > 0 and end(first - 1) <= limit:
        first -= 1
    return (first, end(first)) if first < depth else (depth + 1, 0)


def alloc_tree(rt: Runtime, height: int) -> list[SplitArray]:
    """Every level of a tree over ``height`` leaves (contents undefined), laid out for ``rt``'s limits: the levels
    from ``packed_levels`` up in one buffer, those below it each in its own (``split.alloc_rows``)."""
    binding_limit, buffer_limit, alignment = split.runtime_limits(rt)
    depth = height.bit_length() - 1
    first = packed_levels(height, binding_limit, buffer_limit, alignment)[0]
    top = top_level(height, min(binding_limit, buffer_limit))
    levels = [split.alloc_rows(rt, height >> d, _DIGEST_BYTES, _level_mode(height >> d)) for d in range(first)]
    if first <= depth:
        levels += split.alloc_packed(rt, [height >> d for d in range(first, depth + 1)], _DIGEST_BYTES,
                                     _level_mode(height >> first), _glued(depth, first, top))
    return levels


def packed_run(levels: list[SplitArray]) -> tuple[int, RtView | None]:
    """(first packed level, one binding of every packed level: its buffer from 0 to the end of the root), or
    (len(levels), None) for a tree without packed levels. Level d >= first lies at word ``levels[d].offset // 4``
    of that binding."""
    first = next((d for d, level in enumerate(levels) if level.offset is not None), len(levels))
    if first == len(levels):
        return first, None
    root = levels[-1]
    return first, RtView(root.buffers[0], 0, root.offset + root.nbytes)


def record_tree(rt: Runtime, batch: Batch, matrix: "RtBuffer | SplitArray", height: int, width: int, *,
                leaf_width: int = 16, field: str = "babybear") -> tuple[list[SplitArray], TopLaunch | None]:
    """Record into ``batch`` every launch of the Merkle tree over the rows of ``matrix`` (see the module contract)
    but its last merkle_top launch, which is returned for the caller to record (``TopLaunch.record``, or as a
    transcript tail, binding ``round_constants(rt, field)``); None when merkle_top makes no level (the root is then
    recorded). Returns the levels, laid out by ``alloc_tree`` for ``rt``'s limits, too. ``leaf_width`` (16 or 24)
    picks the leaf sponge, ``field`` the field of every permutation (module contract)."""
    leaf_width = _check_leaf_width(leaf_width)
    height, width = int(height), int(width)
    if height < 1 or height & (height - 1):
        raise ValueError(f"build_tree: height {height} is not a power of two >= 1")
    if width < 0:
        raise ValueError(f"build_tree: width {width} is negative")
    need = 4 * height * width
    if matrix.nbytes < need:
        raise ValueError(f"build_tree: a ({height}, {width}) matrix needs {need} bytes; the buffer has "
                         f"{matrix.nbytes}")
    matrix = split.wrap(rt, matrix, height, 4 * width)
    levels = alloc_tree(rt, height)
    hash_leaves(rt, batch, matrix, levels[0], height, width, leaf_width, field)
    return levels, record_levels(rt, batch, levels, field)


def record_levels(rt: Runtime, batch: Batch, levels: list[SplitArray], field: str = "babybear") -> TopLaunch | None:
    """Record every level above the leaves of ``levels`` (``alloc_tree``'s, level 0 written by the launches
    recorded before) but the last merkle_top launch, which is returned as ``record_tree`` returns it."""
    height = levels[0].rows
    top = top_level(height, min(split.runtime_limits(rt)[:2]))
    for d in range(top - 1):
        compress_level(rt, batch, levels[d], levels[d + 1], height >> (d + 1), field=field)
    if top == len(levels):
        return None
    *launches, last = top_dispatches(rt, levels, top, field)
    for launch in launches:
        launch.record(rt, batch)
    return last


def build_tree(rt: Runtime, matrix: "RtBuffer | SplitArray", height: int, width: int,
               batch: Batch | None = None, *, leaf_width: int = 16, field: str = "babybear") -> list[SplitArray]:
    """All levels of the Merkle tree over the rows of ``matrix`` (``record_tree``, its last launch recorded too,
    running no transcript program); ``leaf_width`` and ``field`` as in ``record_tree``."""
    own = batch is None
    batch = rt.batch() if own else batch
    levels, last = record_tree(rt, batch, matrix, height, width, leaf_width=leaf_width, field=field)
    if last is not None:
        last.record(rt, batch)
    if own:
        batch.submit()
    return levels


def read_root(rt: Runtime, levels: list[SplitArray]) -> np.ndarray:
    """The root: (8,) uint32 Montgomery words (waits for the tree's submission)."""
    buffer, offset = levels[-1].locate(0)
    return rt.read(buffer, _DIGEST_BYTES, offset)


def open_paths(rt: Runtime, levels: list[SplitArray], indices) -> np.ndarray:
    """Sibling digests of each leaf index: (len(indices), depth, 8) uint32, leaf level first (as
    ``MerkleTree.open``)."""
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    depth = len(levels) - 1
    height = levels[0].rows
    if idx.size and (idx.min() < 0 or idx.max() >= height):
        bad = int(idx[(idx < 0) | (idx >= height)][0])
        raise ValueError(f"open_paths: index {bad} outside [0, height = {height})")
    if idx.size == 0 or depth == 0:
        return np.zeros((idx.size, depth, DIGEST), np.uint32)
    gather = rt.alloc(idx.size * depth * _DIGEST_BYTES, StorageMode.SHARED)  # read by the host
    batch = rt.batch()
    for q, leaf in enumerate(idx.tolist()):
        for d in range(depth):
            buffer, offset = levels[d].locate((leaf >> d) ^ 1)
            batch.copy(buffer, offset, gather, (q * depth + d) * _DIGEST_BYTES, _DIGEST_BYTES)
    batch.submit()
    return rt.read(gather).reshape(idx.size, depth, DIGEST)
