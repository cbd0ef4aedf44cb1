"""Pruned Merkle multiproofs of binary trees, as upstream Plonky3's ``PrunedMerklePaths`` (the p3-whir profile's
openings: one multiproof per round instead of a full path per query).

The queried leaves form a frontier that is walked level by level from the leaves; at each level the frontier is
grouped by parent (ascending), and a group's child that holds no queried leaf below it is a *boundary* digest:
the proof is exactly the boundary digests in that order (level 0 first; within a level by ascending parent, a
parent having at most one missing child in a binary tree). Every other node is recomputed by the verifier.

- ``boundary_nodes(indices, depth)``: the (level, node index) of every boundary digest, in proof order;
  ``boundary_arrays`` the same as two arrays, vectorised (what ``prune`` uses).
- ``prune(levels, indices)``: the proof from a tree's levels (``levels[0]`` leaf digests ... ``levels[depth]``
  the root; (n, 8) uint32 words each).
- ``prune_paths(indices, paths)``: the same proof from the queried leaves' full paths (q, depth, 8), leaf level
  first (every boundary digest is a sibling on some queried leaf's path), for a prover that gathered paths.
- ``prune_many(jobs)``: ``prune_paths`` of several (indices, paths) jobs at once.
- ``root_from_pruned(indices, leaf_digests, siblings, depth, compress)``: the root the verifier recomputes, or
  ``ValueError`` naming the problem when the sibling count is not the one the indices call for.

``indices`` are leaf indices below 2^depth; duplicates count once and order does not matter (sorted here, as the
verifier derives them from its transcript). Digests are opaque words: ``compress(left, right)`` maps (n, 8)
arrays to (n, 8).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

Compress = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _frontier(indices, depth: int) -> list[int]:
    nodes = sorted({int(i) for i in indices})
    if nodes and not 0 <= nodes[0] <= nodes[-1] < 1 << depth:
        raise ValueError(f"leaf indices {nodes[0]}..{nodes[-1]} outside a tree of 2^{depth} leaves")
    return nodes


def boundary_nodes(indices, depth: int) -> list[tuple[int, int]]:
    nodes = _frontier(indices, depth)
    out: list[tuple[int, int]] = []
    for level in range(depth):
        parents: list[int] = []
        i = 0
        while i < len(nodes):
            parent = nodes[i] >> 1
            present = {nodes[i]}
            if i + 1 < len(nodes) and nodes[i + 1] >> 1 == parent:
                present.add(nodes[i + 1])
            for child in (2 * parent, 2 * parent + 1):
                if child not in present:
                    out.append((level, child))
            parents.append(parent)
            i += len(present)
        nodes = parents
    return out


def boundary_arrays(indices, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """``boundary_nodes`` as two int64 arrays (levels, node indices) in proof order, vectorised over all levels
    (the provers' path: ``boundary_nodes`` is the readable reference the tests hold it to)."""
    nodes = np.asarray(_frontier(indices, depth), np.int64)
    level, row = _boundary_rows(nodes, depth)
    return level, (nodes[row] >> level) ^ 1


def _boundary_rows(indices: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(level, row) of every boundary digest in proof order, for ``indices`` ascending (repeats allowed): the
    boundary digest is the sibling of row's level-``level`` ancestor."""
    _, level, row = _boundary_rows_batch(indices[None, :], depth)
    return level, row


def _boundary_rows_batch(indices: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(item, level, row) of every boundary digest of each row of ``indices`` (B, q), each ascending (repeats
    allowed), item by item, each in proof order: ``_boundary_rows`` of B index sets of one size at once."""
    count, q = indices.shape
    if count == 0 or q == 0 or depth == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    # nodes[b, j, l]: the level-l ancestor of item b's j-th smallest index; each column ascends, so equal nodes and
    # equal parents form runs of rows.
    nodes = indices[:, :, None] >> np.arange(depth + 1, dtype=np.int64)[None, None, :]
    rows = np.arange(q)[None, :, None]
    first = np.ones((count, q, depth), bool)
    first[:, 1:] = nodes[:, 1:, :depth] != nodes[:, :-1, :depth]
    starts = np.ones((count, q, depth), bool)
    starts[:, 1:] = nodes[:, 1:, 1:] != nodes[:, :-1, 1:]
    ends = np.ones((count, q, depth), bool)
    ends[:, :-1] = nodes[:, :-1, 1:] != nodes[:, 1:, 1:]
    # the first and last row of each row's parent run: both children are queried iff their nodes differ
    run_first = np.maximum.accumulate(np.where(starts, rows, 0), axis=1)
    run_last = np.minimum.accumulate(np.where(ends, rows, q)[:, ::-1], axis=1)[:, ::-1]
    level = nodes[:, :, :depth]
    both = np.take_along_axis(level, run_first, 1) != np.take_along_axis(level, run_last, 1)
    # item-major, then level-major, then ascending rows = ascending parents (at most one missing child each)
    item, lv, row = np.nonzero((first & ~both).transpose(0, 2, 1))
    return item.astype(np.int64), lv.astype(np.int64), row.astype(np.int64)


def prune(levels: list[np.ndarray], indices) -> np.ndarray:
    """The boundary digests, (m, 8) uint32 words in proof order."""
    level, node = boundary_arrays(indices, len(levels) - 1)
    out = np.zeros((level.size, levels[0].shape[-1]), np.uint32)
    if level.size:
        cuts = np.searchsorted(level, np.arange(len(levels)))  # proof order is level-major
        for d in range(len(levels) - 1):
            if cuts[d + 1] > cuts[d]:
                out[cuts[d]:cuts[d + 1]] = levels[d][node[cuts[d]:cuts[d + 1]]]
    return out


def prune_paths(indices, paths) -> np.ndarray:
    """The boundary digests, (m, 8) uint32 words in proof order, from ``paths[j]`` = the sibling path of
    ``indices[j]`` (leaf level first). Vectorised over all levels at once (a prover calls it once per round, on the
    host after the readback, where a per-level loop of set operations cost milliseconds)."""
    paths = np.asarray(paths, np.uint32)
    indices = np.asarray(indices, np.int64).reshape(-1)
    if paths.ndim != 3 or paths.shape[0] != indices.size:
        raise ValueError(f"prune_paths: {indices.size} indices with paths of shape {paths.shape}")
    if paths.shape[0] == 0 or paths.shape[1] == 0:
        return np.zeros((0, paths.shape[-1]), np.uint32)
    order = np.argsort(indices, kind="stable")
    lv, row = _boundary_rows(indices[order], paths.shape[1])
    return paths[order][row, lv].astype(np.uint32, copy=False)


def prune_many(jobs) -> list[np.ndarray]:
    """``prune_paths(indices, paths)`` of each (indices, paths) job, in order: jobs with the same indices and depth
    share one walk, and the walks of one (query count, depth) run together (a prover's last round prunes several
    trees, pairs of them at the same positions)."""
    out: list = [None] * len(jobs)
    walks: dict = {}  # (q, depth) -> {sorted indices' bytes: (sorted indices, [(job, order, paths)])}
    for job, (indices, paths) in enumerate(jobs):
        paths = np.asarray(paths, np.uint32)
        indices = np.asarray(indices, np.int64).reshape(-1)
        if paths.ndim != 3 or paths.shape[0] != indices.size:
            raise ValueError(f"prune_paths: {indices.size} indices with paths of shape {paths.shape}")
        if paths.shape[0] == 0 or paths.shape[1] == 0:
            out[job] = np.zeros((0, paths.shape[-1]), np.uint32)
            continue
        order = np.argsort(indices, kind="stable")
        ordered = indices[order]
        same = walks.setdefault((indices.size, paths.shape[1]), {})
        same.setdefault(ordered.tobytes(), (ordered, []))[1].append((job, order, paths))
    for (_, depth), sets in walks.items():
        item, lv, row = _boundary_rows_batch(np.stack([ordered for ordered, _ in sets.values()]), depth)
        cuts = np.searchsorted(item, np.arange(len(sets) + 1))
        for k, (_, users) in enumerate(sets.values()):
            at = slice(cuts[k], cuts[k + 1])
            for job, order, paths in users:
                out[job] = paths[order][row[at], lv[at]].astype(np.uint32, copy=False)
    return out


def root_from_pruned(indices, leaf_digests, siblings, depth: int, compress: Compress) -> np.ndarray:
    """The root over the queried leaves' digests (``leaf_digests[j]`` belongs to the j-th smallest distinct index)
    and the proof's boundary digests."""
    nodes = _frontier(indices, depth)
    digests = np.asarray(leaf_digests, np.uint32)
    siblings = np.asarray(siblings, np.uint32).reshape(-1, digests.shape[-1] if digests.ndim == 2 else 8)
    if digests.shape[0] != len(nodes):
        raise ValueError(f"{digests.shape[0]} leaf digests for {len(nodes)} distinct queried leaves")
    expected = boundary_arrays(nodes, depth)[0].size
    if siblings.shape[0] != expected:
        raise ValueError(f"the multiproof has {siblings.shape[0]} sibling digests; {len(nodes)} queried leaves of a "
                         f"depth-{depth} tree need {expected}")
    known = dict(zip(nodes, digests))
    taken = 0
    for _ in range(depth):
        lefts, rights, parents = [], [], []
        for parent in sorted({n >> 1 for n in known}):
            pair = []
            for child in (2 * parent, 2 * parent + 1):
                if child in known:
                    pair.append(known[child])
                else:
                    pair.append(siblings[taken])
                    taken += 1
            lefts.append(pair[0])
            rights.append(pair[1])
            parents.append(parent)
        if not parents:
            break
        hashed = compress(np.stack(lefts), np.stack(rights))
        known = dict(zip(parents, hashed))
    if len(known) != 1:
        raise ValueError("no queried leaves: a multiproof needs at least one")
    return next(iter(known.values()))
