"""The p3-whir profile's Reed–Solomon codewords and their Merkle trees (upstream Plonky3 ``p3-whir``, commit
5dc50e51: ``commit_base`` / ``commit_extension`` in suffix order, committed by ``MerkleTreeMmcs`` with cap height 0).

Layout, for 2^n evaluations (hypercube order: index i <-> (b_0..b_{n-1}), b_0 the most significant bit), a
folding factor k <= n (the factor of the round that opens this codeword) and a log inverse rate r:
- the evaluations, unchanged, are the leading 2^n entries of a row-major (2^(n + r - k), 2^k) matrix: row t holds
  the contiguous block i = t 2^k .. t 2^k + 2^k - 1 (its low k index bits select the column), rows 2^(n-k) and
  above are zero;
- each column j is read as the coefficients of a univariate polynomial (row t = coefficient of x^t) and replaced
  by its evaluations at omega^s, s = 0..2^(n+r-k) - 1, in natural order, omega = the field's
  ``TWO_ADIC_GENERATORS[n + r - k]``: the plain subgroup, no coset shift, no bit reversal (``ntt.dft_batch``);
- an extension-field table (EF = X^4 - W, coefficients c0..c3) is transformed one base coefficient at a time and
  keeps its trailing axis of 4 (``ntt.dft_ext_batch``, upstream's ``dft_algebra_batch``).

Tree: leaf s = ``hash_rows_24`` of codeword row s (the width-24 sponge, 24/16/8); an EF row of 2^k elements is
hashed as its 4 * 2^k base words, element by element, coefficient 0 first (upstream's ``FlatMatrixView`` under
``ExtensionMmcs``); parent j of a level = ``compress`` (width 16) of children 2j, 2j + 1; the commitment is the
root (cap height 0). The permutations are ``Poseidon2Constants.smallrng_16_24(field)``.

Every array is ``uint32`` Montgomery words of the given ``whirgpu.field.Field``; EF arrays carry a trailing axis
of 4; digests a trailing axis of 8.
"""

from __future__ import annotations

import numpy as np

from ..field import Field
from .ntt import dft_batch, dft_ext_batch, log2_exact
from .field_np import field_ops
from .poseidon2 import compress, hash_rows_24
from .poseidon2_constants import Poseidon2Constants


def _padded(evals: np.ndarray, folding: int, log_inv_rate: int, caller: str) -> np.ndarray:
    """The zero-padded (2^(n + r - k), 2^k, ...) matrix whose leading rows are the evaluations in row-major
    blocks; the trailing axes of ``evals`` beyond the first are kept."""
    n = log2_exact(evals.shape[0])
    if not 0 <= folding <= n:
        raise ValueError(f"{caller}: folding factor {folding} for a polynomial of {n} variables (0 <= k <= n)")
    if log_inv_rate < 0:
        raise ValueError(f"{caller}: log inverse rate {log_inv_rate} is negative")
    width = 1 << folding
    out = np.zeros((1 << (n + log_inv_rate - folding), width) + evals.shape[1:], np.uint32)
    out[: 1 << (n - folding)] = evals.reshape((-1, width) + evals.shape[1:])
    return out


def encode_base(evals, folding: int, log_inv_rate: int, field: Field) -> np.ndarray:
    """Base-field evaluations (2^n,) -> the codeword matrix (2^(n + r - k), 2^k) of the module contract
    (``commit_base``, suffix order). ``folding`` k must be <= n: upstream's witness zero-pads a smaller table to k
    variables before it gets here."""
    evals = np.asarray(evals, np.uint32)
    if evals.ndim != 1:
        raise ValueError(f"encode_base: evaluations must be 1-D (2^n,), got shape {evals.shape}")
    return dft_batch(_padded(evals, folding, log_inv_rate, "encode_base"), field)


def encode_ext(evals, folding: int, log_inv_rate: int, field: Field) -> np.ndarray:
    """EF evaluations (2^n, 4) -> the codeword matrix (2^(n + r - k), 2^k, 4) of the module contract
    (``commit_extension``, suffix order: a round's folded polynomial, with the next round's folding factor and
    this round's rate)."""
    evals = np.asarray(evals, np.uint32)
    if evals.ndim != 2 or evals.shape[1] != field.EF_DEGREE:
        raise ValueError(f"encode_ext: evaluations must be (2^n, {field.EF_DEGREE}), got shape {evals.shape}")
    return dft_ext_batch(_padded(evals, folding, log_inv_rate, "encode_ext"), field)


def leaf_rows(codeword) -> np.ndarray:
    """The rows the leaf hash reads: a base codeword (H, w) as it is, an EF codeword (H, w, 4) as (H, 4w) with
    row s = [e_0.c0..c3, e_1.c0..c3, ...]."""
    codeword = np.asarray(codeword, np.uint32)
    if codeword.ndim == 2:
        return codeword
    if codeword.ndim == 3:
        return codeword.reshape(codeword.shape[0], -1)
    raise ValueError(f"leaf_rows: a codeword is (H, w) or (H, w, 4), got shape {codeword.shape}")


def merkle_levels(codeword, field: Field, lanes=None) -> list[np.ndarray]:
    """The tree over the codeword's rows: ``levels[0]`` the (H, 8) leaf digests ... ``levels[log2 H]`` the (1, 8)
    root, as ``merkle_pruned.prune`` takes them. H must be a power of two (a single row is its own root).
    ``lanes``: None, or (width-16, width-24) functions equal to ``poseidon2.permute_lanes`` for the field's two
    permutations (compiled ones: the same digests, faster)."""
    rows = leaf_rows(codeword)
    log2_exact(rows.shape[0])
    if lanes is not None:
        return _levels_on_lanes(rows, field, *lanes)
    perm16, perm24 = Poseidon2Constants.smallrng_16_24(field)
    levels = [hash_rows_24(rows, perm24)]
    while levels[-1].shape[0] > 1:
        level = levels[-1]
        levels.append(compress(level[0::2], level[1::2], perm16))
    return levels


def _levels_on_lanes(rows: np.ndarray, field: Field, lanes16, lanes24) -> list[np.ndarray]:
    """``merkle_levels`` with lane permutations: the whole tree in canonical lanes (digest word w of node i at
    [w, i]), converted to Montgomery words once at the end rather than around every permutation."""
    ops = field_ops(field)
    height, length = rows.shape
    state = np.zeros((24, height), np.uint64)
    canonical = ops.from_monty(rows).T.astype(np.uint64)
    for start in range(0, length, 16):  # the width-24 sponge: each chunk of 16 overwrites, then one permutation
        chunk = canonical[start:start + 16]
        state[:chunk.shape[0]] = chunk
        state = lanes24(state)
    level = np.ascontiguousarray(state[:8])
    lane_levels = [level]
    while level.shape[1] > 1:
        level = np.ascontiguousarray(lanes16(np.concatenate([level[:, 0::2], level[:, 1::2]]))[:8])
        lane_levels.append(level)
    words = ops.to_monty(np.concatenate(lane_levels, axis=1).T)
    bounds = np.cumsum([0] + [lvl.shape[1] for lvl in lane_levels])
    return [words[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def commitment_root(evals, folding: int, log_inv_rate: int, field: Field) -> np.ndarray:
    """The (8,) root digest committing to base-field evaluations (2^n,) or EF evaluations (2^n, 4): what upstream
    observes and ships as the ``MerkleCap`` of cap height 0."""
    evals = np.asarray(evals, np.uint32)
    encode = encode_base if evals.ndim == 1 else encode_ext
    return merkle_levels(encode(evals, folding, log_inv_rate, field), field)[-1][0]
