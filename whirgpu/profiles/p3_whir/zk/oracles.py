"""The hiding PCS's committed oracles: the interleaved zero-knowledge Reed–Solomon encodings (upstream
``committer.rs`` ``zk_padded_matrix``, ``p3_zk_codes::ReedSolomonZkEncoding``) and their Merkle trees.

- ``zk_padded_matrix(message, randomness, folding, height)``: the (height, 2^folding[, 4]) coefficient matrix of
  an interleaved oracle. With m = len(message) >> folding and t = len(randomness) >> folding, column b holds
  message[b m .. b m + m - 1] in rows 0..m-1 (the first ``folding`` variables, the index's high bits, pick the
  column: prefix order), then randomness[b t .. b t + t - 1] in rows m..m+t-1, zeros below. Each column is read
  as univariate coefficients and evaluated on the subgroup of order ``height`` (``ntt.dft_batch``).
- ``mask_matrix(messages, randomness, domain_size)``: a batch of mask codewords: column c = the coefficients
  messages[c] ‖ randomness[c] ‖ zeros (EF), evaluated on the subgroup of order ``domain_size``.
- ``Committed``: a codeword matrix committed by the profile's MMCS (leaf = width-24 sponge of the row flattened to
  base words, nodes the width-16 compression, cap height 0); ``open(indices)`` gives the rows and the pruned
  multiproof, as ``SharedProofOpening::open``.
- ``padded_ood(point, message, randomness)``: sum_i message[i] point^i + point^len(message) sum_j randomness[j]
  point^j (upstream ``padded_ood_t1``), point EF or base.
"""

from __future__ import annotations

import functools

import numpy as np

from ....field import Field
from ....ref.field_np import field_ops
from ....ref.merkle_pruned import prune
from ....ref.ntt import bit_reverse_permutation, dft_batch, dft_ext_batch
from ....ref.p3_codeword import merkle_levels
from ....ref.poseidon2_constants import Poseidon2Constants
from ....native.permute import native_permute_lanes
from ..proof import MerkleCap, QueryOpenings


def zk_padded_matrix(message: np.ndarray, randomness: np.ndarray, folding: int, height: int) -> np.ndarray:
    message, randomness = np.asarray(message, np.uint32), np.asarray(randomness, np.uint32)
    width = 1 << folding
    msg_rows, rand_rows = message.shape[0] >> folding, randomness.shape[0] >> folding
    if rand_rows << folding != randomness.shape[0] or msg_rows + rand_rows > height:
        raise ValueError("zk_padded_matrix: randomness is not a whole number of rows, or does not fit")
    tail = message.shape[1:]
    out = np.zeros((height, width) + tail, np.uint32)
    out[:msg_rows] = np.swapaxes(message.reshape((width, msg_rows) + tail), 0, 1)
    out[msg_rows:msg_rows + rand_rows] = np.swapaxes(randomness.reshape((width, rand_rows) + tail), 0, 1)
    return out


def encode(matrix: np.ndarray, field: Field) -> np.ndarray:
    """Column-wise evaluation on the subgroup of order height: base (H, w) or EF (H, w, 4)."""
    return dft_batch(matrix, field) if matrix.ndim == 2 else dft_ext_batch(matrix, field)


def mask_coefficients(messages: np.ndarray, randomness: np.ndarray, domain_size: int) -> np.ndarray:
    """(domain_size, w, 4): column c = messages[c] (m, 4) ‖ randomness[c] (t, 4) ‖ zeros, the rows in natural
    order (the coefficients ``mask_matrix`` evaluates)."""
    messages, randomness = np.asarray(messages, np.uint32), np.asarray(randomness, np.uint32)
    width, m = messages.shape[:2]
    t = randomness.shape[1]
    coeffs = np.zeros((domain_size, width, 4), np.uint32)
    coeffs[:m] = np.swapaxes(messages, 0, 1)
    coeffs[m:m + t] = np.swapaxes(randomness, 0, 1)
    return coeffs


def coefficient_matrix(messages: np.ndarray, randomness: np.ndarray, domain_size: int) -> np.ndarray:
    """(domain, next_pow2(w), 4): ``mask_coefficients`` with the columns past w zero and the rows in bit-reversed
    order: what ``Commitments.commit_matrix`` takes and ``kernels/mask_matrix.py`` makes on the device."""
    coeffs = mask_coefficients(messages, randomness, domain_size)
    width = coeffs.shape[1]
    padded = np.zeros((domain_size, 1 << (width - 1).bit_length() if width > 1 else 1, 4), np.uint32)
    padded[:, :width] = coeffs
    return padded[bit_reverse_permutation(domain_size.bit_length() - 1)]


def mask_matrix(messages: np.ndarray, randomness: np.ndarray, domain_size: int, field: Field) -> np.ndarray:
    """(domain_size, w, 4): column c encodes messages[c] (m, 4) with randomness[c] (t, 4)."""
    return dft_ext_batch(mask_coefficients(messages, randomness, domain_size), field)


@functools.lru_cache(maxsize=None)
def merkle_permutations(field: Field):
    """The compiled (width-16, width-24) lane permutations of the field's p3-whir Merkle tree, or None where there
    is no compiler (the numpy paths then); the same digests either way."""
    lanes = tuple(native_permute_lanes(c) for c in Poseidon2Constants.smallrng_16_24(field))
    return None if None in lanes else lanes


class Committed:
    """A committed codeword matrix (H, w) base or (H, w, 4) EF and its Merkle tree."""

    def __init__(self, codeword: np.ndarray, field: Field):
        self.codeword = np.asarray(codeword, np.uint32)
        self.levels = merkle_levels(self.codeword, field, merkle_permutations(field))

    @property
    def root(self) -> np.ndarray:
        return self.levels[-1][0]

    @property
    def cap(self) -> MerkleCap:
        return MerkleCap(self.levels[-1][:1])

    @property
    def kind(self) -> str:
        return "base" if self.codeword.ndim == 2 else "extension"

    def open(self, indices) -> QueryOpenings:
        indices = [int(i) for i in indices]
        return QueryOpenings(self.kind, self.codeword[indices], prune(self.levels, indices))


def padded_ood(point: np.ndarray, message: np.ndarray, randomness: np.ndarray, field: Field) -> np.ndarray:
    """EF (4,): message and randomness (EF rows) as one coefficient vector, evaluated at ``point`` (EF (4,))."""
    ops = field_ops(field)
    message, randomness = np.asarray(message, np.uint32), np.asarray(randomness, np.uint32)
    powers = ops.ef_powers(point, message.shape[0] + randomness.shape[0])
    coeffs = np.concatenate([message, randomness]) if randomness.size else message
    return ops.ef_sum(ops.ef_mul(coeffs, powers))
