"""Merkle tree over the rows of a matrix, as Plonky3's ``MerkleTreeMmcs`` in whir-p3's BabyBear setup (spec §3).

- Leaf i = ``hash_rows`` (PaddingFreeSponge<16, 8, 8>) of row i, rows in natural order (no bit reversal).
- Parent j of a level d = ``compress(d[2j], d[2j + 1])``; the height must be a power of two (no padding).
- The commitment is the root digest (cap height 0): 8 uint32 Montgomery words.
- An opening of index i is ``depth = log2(height)`` sibling digests, leaf level first; at each level the node is
  the left child when its index there is even.

Arrays are uint32 Montgomery words; digests have a trailing axis of 8. ``constants=None`` means the whir-p3
Poseidon2 constants (``Poseidon2Constants.smallrng(1)``).
"""

from __future__ import annotations

import numpy as np

from . import field_np as fnp
from .poseidon2 import DIGEST, RATE, WIDTH, Poseidon2Constants, compress, hash_rows, permute_lanes


class MerkleTree:
    """All levels of the tree: ``levels[0]`` are the (H, 8) leaf digests, ``levels[depth]`` the (1, 8) root."""

    def __init__(self, levels: list[np.ndarray], rows: np.ndarray | None = None,
                 constants: Poseidon2Constants | None = None):
        self.levels = levels
        self.rows = rows  # the committed matrix (not copied), kept so a prover can open values
        self.constants = constants

    @classmethod
    def build(cls, rows, constants: Poseidon2Constants | None = None) -> "MerkleTree":
        """Commit to ``rows`` (H, width) Montgomery words; H must be a power of two (>= 1)."""
        rows = np.asarray(rows, dtype=np.uint32)
        if rows.ndim != 2:
            raise ValueError(f"MerkleTree.build: rows must be 2-D (height, width), got shape {rows.shape}")
        height = rows.shape[0]
        if height < 1 or height & (height - 1):
            raise ValueError(f"MerkleTree.build: height {height} is not a power of two")
        level = hash_rows(rows, constants)
        level.setflags(write=False)
        levels = [level]
        while level.shape[0] > 1:
            level = compress(level[0::2], level[1::2], constants)
            level.setflags(write=False)
            levels.append(level)
        return cls(levels, rows, constants)

    @property
    def root(self) -> np.ndarray:
        """The commitment: (8,) uint32 Montgomery words."""
        return self.levels[-1][0]

    @property
    def depth(self) -> int:
        """log2(height): the number of siblings in an opening."""
        return len(self.levels) - 1

    @property
    def height(self) -> int:
        return self.levels[0].shape[0]

    def open(self, indices) -> np.ndarray:
        """Sibling digests for each leaf index: (len(indices), depth, 8), leaf level first."""
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.height):
            bad = int(idx[(idx < 0) | (idx >= self.height)][0])
            raise ValueError(f"MerkleTree.open: index {bad} outside [0, height = {self.height})")
        out = np.empty((idx.size, self.depth, DIGEST), dtype=np.uint32)
        for d in range(self.depth):
            out[:, d] = self.levels[d][(idx >> d) ^ 1]
        return out


def compute_root(index, leaf_digest, siblings, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """Roots implied by openings, batched: index (N,), leaf_digest (N, 8), siblings (N, depth, 8) -> (N, 8).

    Indices are taken modulo 2^depth bit by bit (callers check the range)."""
    idx = np.asarray(index, dtype=np.int64).reshape(-1)
    node = np.asarray(leaf_digest, dtype=np.uint32).reshape(idx.size, DIGEST)
    sib = np.asarray(siblings, dtype=np.uint32)
    if sib.ndim != 3 or sib.shape[0] != idx.size or sib.shape[2] != DIGEST:
        raise ValueError(f"compute_root: siblings shape {sib.shape}, expected ({idx.size}, depth, {DIGEST})")
    for d in range(sib.shape[1]):
        is_right = ((idx >> d) & 1).astype(bool)[:, None]
        left = np.where(is_right, sib[:, d], node)
        right = np.where(is_right, node, sib[:, d])
        node = compress(left, right, constants)
    return node


def compute_roots_batched(openings, constants: Poseidon2Constants | None = None, permute=None) -> list[np.ndarray]:
    """Roots implied by the openings of several trees at once.

    ``openings``: a list of (rows (N, width), index (N,), siblings (N, depth, 8)), one entry per tree; widths and
    depths may differ between entries. Returns one (N, 8) array per entry, equal to
    ``compute_root(index, hash_rows(rows), siblings)``.

    Each opening is a chain of permutations: ceil(width / 8) sponge absorptions of its row, then one compression
    per level. The chains of every entry advance together, aligned at their ends, so a step is one permutation of
    all the openings it touches (the longest chain's length in calls, not the sum over entries), identical inputs
    permuted once. States stay canonical and lane-major from the first step to the last (``permute_lanes``).
    Sorted indices make the most of the sharing (openings of one node are then neighbours); any order is correct.
    ``permute``: a drop-in for ``permute_lanes`` (the verifier passes a compiled one where it has it).
    """
    permute = permute or permute_lanes
    chains = [_Chain(*opening) for opening in openings]
    length = max((c.length for c in chains), default=0)
    for step in range(length):
        active = [c for c in chains if c.size and step >= length - c.length]
        if not active:
            continue
        lanes = np.empty((WIDTH, sum(c.size for c in active)), dtype=np.uint64)
        start = 0
        for c in active:
            c.fill(lanes[:, start:start + c.size], step - (length - c.length))
            start += c.size
        # Openings that share a node above some level bring identical inputs there, side by side (indices are
        # sorted): each distinct input is permuted once (a quarter of all permutations on a 100-bit proof).
        fresh = np.ones(lanes.shape[1], dtype=bool)
        fresh[1:] = np.any(lanes[:, 1:] != lanes[:, :-1], axis=0)
        lanes = permute(lanes[:, fresh], constants)[:, np.cumsum(fresh) - 1]
        start = 0
        for c in active:
            c.state = lanes[:, start:start + c.size]
            start += c.size
    return [fnp.to_monty(c.state[:DIGEST].T) for c in chains]


class _Chain:
    """The openings of one tree inside ``compute_roots_batched``: rows, siblings and sponge (then node) states as
    canonical lane-major uint64 arrays."""

    def __init__(self, rows, index, siblings):
        rows = np.asarray(rows, dtype=np.uint32)
        siblings = np.asarray(siblings, dtype=np.uint32)
        index = np.asarray(index, dtype=np.int64).reshape(-1)
        self.size = index.size
        if rows.ndim != 2 or rows.shape[0] != self.size:
            raise ValueError(f"compute_roots_batched: rows shape {rows.shape}, expected ({self.size}, width)")
        if siblings.ndim != 3 or siblings.shape[0] != self.size or siblings.shape[2] != DIGEST:
            raise ValueError(f"compute_roots_batched: siblings shape {siblings.shape}, "
                             f"expected ({self.size}, depth, {DIGEST})")
        depth = siblings.shape[1]
        self.rows = fnp.from_monty(rows).T.astype(np.uint64)  # (width, N)
        self.siblings = fnp.from_monty(siblings).transpose(1, 2, 0).astype(np.uint64)  # (depth, 8, N)
        self.is_right = ((index[None, :] >> np.arange(depth)[:, None]) & 1).astype(bool)  # (depth, N)
        self.n_chunks = -(-rows.shape[1] // RATE)
        self.length = self.n_chunks + depth
        self.state = np.zeros((WIDTH, self.size), dtype=np.uint64)

    def fill(self, out: np.ndarray, step: int) -> None:
        """Write the (16, N) states to permute at this chain's ``step``: absorb a chunk of the rows (overwrite mode:
        the rest of the state keeps its value), else compress a level (the node is the left child when its
        index there is even)."""
        if step < self.n_chunks:
            chunk = self.rows[step * RATE:(step + 1) * RATE]
            out[:] = self.state
            out[:chunk.shape[0]] = chunk
            return
        level = step - self.n_chunks
        node, sibling, is_right = self.state[:DIGEST], self.siblings[level], self.is_right[level]
        out[:DIGEST] = node
        out[DIGEST:] = sibling
        np.copyto(out[:DIGEST], sibling, where=is_right)
        np.copyto(out[DIGEST:], node, where=is_right)


def verify_path(root, index: int, leaf_digest_or_row, siblings, constants: Poseidon2Constants | None = None,
                *, leaf_is_digest: bool = False) -> bool:
    """Whether ``siblings`` (depth, 8) open leaf ``index`` of the tree with ``root`` (8,).

    The leaf is a row of the committed matrix (hashed here) unless ``leaf_is_digest`` is set, in which case it is
    the leaf's 8-word digest. Malformed openings (wrong shapes, index >= 2^depth) verify False.
    """
    sib = np.asarray(siblings, dtype=np.uint32)
    if sib.ndim != 2 or sib.shape[1] != DIGEST:
        return False
    depth = sib.shape[0]
    if not 0 <= int(index) < (1 << depth):
        return False
    leaf = np.asarray(leaf_digest_or_row, dtype=np.uint32).reshape(1, -1)
    if leaf_is_digest:
        if leaf.shape[1] != DIGEST:
            return False
        digest = leaf
    else:
        digest = hash_rows(leaf, constants)
    got = compute_root([int(index)], digest, sib[None], constants)[0]
    return bool(np.array_equal(got, np.asarray(root, dtype=np.uint32).reshape(-1)))
