"""Poseidon2 permutations (BabyBear and KoalaBear, widths 16 and 24) and the sponge/compression on top.

Permutation (spec §2), for an instance ``Poseidon2Params`` (``poseidon2_params``): S-box x^d (BabyBear x^7,
KoalaBear x^3), 4 initial external rounds, ``rounds_partial`` internal rounds, 4 terminal external rounds.
- ``mds_light``: M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on each 4-chunk, then s[i] += Σ_c s[4c + i mod 4].
- external round r: s[i] = (s[i] + rc[r][i])^d for all i, then ``mds_light``; one ``mds_light`` precedes round 0.
- internal round r: s0 = (s0 + rc_int[r])^d; then s = (1 + diag(V)) s, i.e. s[i] = Σ_j s[j] + V[i] s[i], with the
  instance's V; BabyBear width 16 (the default) has
  V = [-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/2^8, 1/4, 1/8, 1/2^27, -1/2^8, -1/16, -1/2^27].

Contracts:
- The instance is the constants' (``constants.params``); ``constants=None`` means ``Poseidon2Constants.smallrng(1)``,
  BabyBear width 16 with the constants of every whir-p3 proof.
- States are ``uint32`` Montgomery words in [0, P), shape (N, width); ``permute`` returns a fresh (N, width) array
  and never modifies its input. Inside, both paths compute on canonical values (``permute_ints`` on Python ints
  for a few states, else lane-major (width, B) uint64 arrays); only the interface is Montgomery.
- ``permute_ints(state)``: one state as ``width`` canonical Python ints -> canonical ints (the transcript's path).
- ``hash_rows(rows)``: ``PaddingFreeSponge<Perm, 16, 8, 8>`` on each row of (N, width) -> (N, 8) digests.
- ``hash_rows_24(rows, constants)``: ``PaddingFreeSponge<Perm24, 24, 16, 8>`` (p3-whir's leaf hash), same shapes.
- ``compress(left, right)``: ``TruncatedPermutation<Perm, 2, 8, 16>``: perm(left ‖ right)[0..8], (N, 8) each.
"""

from __future__ import annotations

import numpy as np

from ..field import P
from .field_np import field_ops
from .poseidon2_constants import Poseidon2Constants
from .poseidon2_params import BABYBEAR_16, Poseidon2Params

__all__ = ["Poseidon2Constants", "Poseidon2Params", "permute", "permute_ints", "permute_lanes", "hash_rows",
           "hash_rows_24", "compress", "WIDTH", "RATE", "DIGEST", "N_EXTERNAL_HALF", "N_INTERNAL",
           "INTERNAL_DIAGONAL", "MDS_MATRIX"]

# BabyBear width 16, the whir-p3 instance: the shaders render their constants from these names.
WIDTH = 16
RATE = 8
DIGEST = 8
N_EXTERNAL_HALF = BABYBEAR_16.half_full
N_INTERNAL = BABYBEAR_16.rounds_partial
# Diagonal V of the internal matrix 1 + diag(V) (canonical ints).
INTERNAL_DIAGONAL = list(BABYBEAR_16.diagonal)
# The external linear layer as one integer matrix: circ(2 M4, M4, M4, M4) = (I4 + J4) ⊗ M4 (J4: all ones).
MDS_MATRIX = BABYBEAR_16.external_matrix

WIDE_WIDTH = 24
WIDE_RATE = 16

_U64 = np.uint64
_P64 = _U64(P)
# Up to this many states go through the Python-int path (faster than numpy's per-call overhead).
_SCALAR_MAX = 4
# States per block at width 16: (16, 1024) keeps OpenBLAS's product single-threaded (its threshold is m*n*k <= 2^18)
# and the temporaries small; measured no slower than larger blocks on x86. Wider states take proportionally fewer.
_BLOCK = 1 << 10


class PermutationLayers:
    """What the permutation needs of an instance, in the forms its two paths use (built once per instance)."""

    def __init__(self, params: Poseidon2Params):
        self.params = params
        self.p = params.field.P
        self.p64 = _U64(params.field.P)
        self.degree = params.sbox_degree
        self.diagonal = list(params.diagonal)
        self.diag_column = np.asarray(params.diagonal, dtype=_U64)[:, None]
        # float64 so that the product runs in BLAS: entries <= 6 with row sums <= 49, so for inputs < P every
        # partial sum is an integer < 49 P < 2^37, exact in a double whatever the summation order.
        self.mds_f64 = params.external_matrix.astype(np.float64)
        self.mds_u64 = params.external_matrix.astype(_U64)


# By id: hashing a params object hashes its field's tables on every call. A PermutationLayers keeps its params
# alive, so an id here is never reused by another object.
_LAYERS: dict[int, PermutationLayers] = {}


def permutation_layers(constants: Poseidon2Constants) -> PermutationLayers:
    """The instance's ``PermutationLayers`` (built once per parameter object, then cached)."""
    params = constants.params
    layers = _LAYERS.get(id(params))
    if layers is None:
        layers = _LAYERS[id(params)] = PermutationLayers(params)
    return layers


def _constants(constants: Poseidon2Constants | None) -> Poseidon2Constants:
    return constants if constants is not None else Poseidon2Constants.smallrng(1)


# Up to this many values np.remainder's single call beats floor division's three (measured crossover on x86 near
# 600 values: a row of a verifier's batch takes the remainder, a whole state the division).
_REMAINDER_MAX = 1 << 9


def _mod(x: np.ndarray, p64=_P64) -> np.ndarray:
    """x <- x mod p in place, for uint64 x. On large arrays floor division by a scalar (libdivide) then a multiply
    and a subtract are several times faster than np.remainder on uint64."""
    if x.size <= _REMAINDER_MAX:
        x %= p64
        return x
    q = x // p64
    q *= p64
    x -= q
    return x


def _sbox(x: np.ndarray, layers: PermutationLayers) -> np.ndarray:
    """x^d mod P (d = 7 or 3) for canonical uint64 x (< P, so every product is < P^2 < 2^62); consumes x."""
    p64 = layers.p64
    x2 = _mod(x * x, p64)
    x3 = _mod(x2 * x, p64)
    if layers.degree == 3:
        return x3
    x2 *= x2
    x3 *= _mod(x2, p64)
    return _mod(x3, p64)


def _mds_light(s: np.ndarray, layers: PermutationLayers) -> np.ndarray:
    """The external matrix times a lane-major (width, B) uint64 state with entries < P; result entries < 49 P."""
    return (layers.mds_f64 @ s.astype(np.float64)).astype(_U64)


def _external_round(s: np.ndarray, rc: np.ndarray, layers: PermutationLayers) -> np.ndarray:
    """(s + rc)^d lane by lane, then the external linear layer: lane-major (width, B), entries < 49 P in and out."""
    s += rc
    return _mds_light(_sbox(_mod(s, layers.p64), layers), layers)


def permute_lanes(s: np.ndarray, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """The permutation of a lane-major (width, B) uint64 state of canonical values (< P) -> canonical values, same
    layout; consumes ``s``. This is what ``permute`` runs per block, minus the Montgomery conversions.
    Sums are reduced lazily: every product below is of two values < P, so < 2^62."""
    consts = _constants(constants)
    layers = permutation_layers(consts)
    p64, diag = layers.p64, layers.diag_column
    rc_init, rc_term, rc_int = consts.lane_columns
    s = _mds_light(s, layers)
    for rc in rc_init:
        s = _external_round(s, rc, layers)
    _mod(s, p64)
    for k in rc_int:
        s[0] = _sbox(_mod(s[0] + k, p64), layers)
        full = s.sum(axis=0)  # width values < P
        s *= diag  # diagonal < P: < P^2
        s += full  # < P^2 + 24 P < 2^64
        _mod(s, p64)
    for rc in rc_term:
        s = _external_round(s, rc, layers)
    return _mod(s, p64)


def _external_round_one(s: np.ndarray, rc: np.ndarray, p64, mds: np.ndarray, degree: int) -> np.ndarray:
    """``_external_round`` for one state (width,), written out: at this size numpy's per-call cost is everything,
    so the integer product (no conversions) and in-place remainders are the fastest form."""
    s += rc
    s %= p64
    x2 = s * s
    x2 %= p64
    x3 = x2 * s
    x3 %= p64
    if degree == 7:
        x2 *= x2
        x2 %= p64
        x3 *= x2
        x3 %= p64
    return mds @ x3


def permute_ints(state: list, constants: Poseidon2Constants | None = None) -> list:
    """The permutation of ONE state of ``width`` canonical Python ints -> canonical ints (what the challenger asks
    for). The external rounds run on a (width,) array, one numpy call for all S-boxes; the internal rounds, whose
    S-box touches one value, on Python ints: the fastest split measured for a single state."""
    consts = _constants(constants)
    layers = permutation_layers(consts)
    p, p64, degree, diagonal, mds = layers.p, layers.p64, layers.degree, layers.diagonal, layers.mds_u64
    rc_init, rc_term, rc_int = consts.int_rows
    s = mds @ np.array(state, dtype=_U64)
    for rc in rc_init:
        s = _external_round_one(s, rc, p64, mds, degree)
    s %= p64
    s = s.tolist()
    for k in rc_int:
        s[0] = pow(s[0] + k, degree, p)
        full = sum(s)
        s = [(full + v * x) % p for v, x in zip(diagonal, s)]
    s = np.array(s, dtype=_U64)
    for rc in rc_term:
        s = _external_round_one(s, rc, p64, mds, degree)
    s %= p64
    return s.tolist()


def permute(state, constants: Poseidon2Constants | None = None, lanes=None) -> np.ndarray:
    """Poseidon2 on each row of ``state`` (N, width) uint32 Montgomery words -> fresh (N, width) uint32 array.
    ``lanes``: a function equal to ``permute_lanes`` for these constants (e.g. a compiled one, which must not
    consume its input), used for every block; None runs this module's own paths."""
    consts = _constants(constants)
    width = consts.params.width
    ops = field_ops(consts.params.field)
    state = np.asarray(state, dtype=np.uint32)
    if state.ndim != 2 or state.shape[1] != width:
        raise ValueError(f"permute: state shape {state.shape}, expected (N, {width})")
    n = state.shape[0]
    canonical = ops.from_monty(state)
    if lanes is not None:
        return ops.to_monty(lanes(canonical.T.astype(_U64), consts).T)
    if n <= _SCALAR_MAX:
        rows = [permute_ints(row, consts) for row in canonical.tolist()]
        return ops.to_monty(np.asarray(rows, dtype=np.uint64).reshape(n, width))
    out = np.empty((n, width), dtype=np.uint32)
    block = max(1, _BLOCK * WIDTH * WIDTH // (width * width))
    for start in range(0, n, block):
        lanes = canonical[start:start + block].T.astype(_U64)
        out[start:start + block] = permute_lanes(lanes, consts).T
    return ops.to_monty(out)


def _sponge(rows, constants: Poseidon2Constants, rate: int, digest: int, caller: str, lanes=None) -> np.ndarray:
    """``PaddingFreeSponge<Perm, width, rate, digest>`` over each row of ``rows`` (N, length) -> (N, digest).

    State starts at 0^width; each chunk of up to ``rate`` inputs overwrites state[0..len] (the rest keeps its
    value) and is followed by one permutation; no padding, and length 0 permutes nothing (digest 0^digest).
    """
    rows = np.asarray(rows, dtype=np.uint32)
    if rows.ndim != 2:
        raise ValueError(f"{caller}: rows must be 2-D (N, width), got shape {rows.shape}")
    n, length = rows.shape
    state = np.zeros((n, constants.params.width), dtype=np.uint32)
    for start in range(0, length, rate):
        chunk = rows[:, start:start + rate]
        state[:, :chunk.shape[1]] = chunk
        state = permute(state, constants, lanes)
    return state[:, :digest].copy()


def hash_rows(rows, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """``PaddingFreeSponge<16, 8, 8>`` over each row of ``rows`` (N, width) Montgomery words -> (N, 8).

    State starts at 0^16; each chunk of up to 8 inputs overwrites state[0..len] (the rest keeps its value) and is
    followed by one permutation; no padding, and width 0 permutes nothing (digest 0^8).
    """
    consts = _constants(constants)
    if consts.params.width != WIDTH:
        raise ValueError(f"hash_rows: a width-{WIDTH} permutation is needed, got {consts.params.name}")
    return _sponge(rows, consts, RATE, DIGEST, "hash_rows")


def hash_rows_24(rows, constants: Poseidon2Constants, lanes=None) -> np.ndarray:
    """``PaddingFreeSponge<Perm24, 24, 16, 8>`` (p3-whir's Merkle leaf hash) over each row of ``rows`` (N, length)
    Montgomery words -> (N, 8) digests; ``constants`` must be a width-24 permutation's (e.g. the second of
    ``Poseidon2Constants.smallrng_16_24``).

    State starts at 0^24; each chunk of up to 16 inputs overwrites state[0..len] (lanes len..24 keep their value)
    and is followed by one permutation; no padding, and length 0 permutes nothing (digest 0^8). ``lanes`` as
    ``permute`` takes it.
    """
    if constants.params.width != WIDE_WIDTH:
        raise ValueError(f"hash_rows_24: a width-{WIDE_WIDTH} permutation is needed, got {constants.params.name}")
    return _sponge(rows, constants, WIDE_RATE, DIGEST, "hash_rows_24", lanes)


def compress(left, right, constants: Poseidon2Constants | None = None, lanes=None) -> np.ndarray:
    """Two-to-one compression of digests: perm(left ‖ right)[0..8] for (N, 8) and (N, 8) -> (N, 8); a width-16
    permutation of either field. ``lanes`` as ``permute`` takes it."""
    left = np.asarray(left, dtype=np.uint32)
    right = np.asarray(right, dtype=np.uint32)
    if left.shape != right.shape or left.ndim != 2 or left.shape[1] != DIGEST:
        raise ValueError(f"compress: shapes {left.shape} and {right.shape}, expected (N, {DIGEST}) each")
    return permute(np.concatenate([left, right], axis=1), constants, lanes)[:, :DIGEST].copy()
