"""Poseidon2 over BabyBear, width 16, as Plonky3's ``Poseidon2BabyBear<16>``; and the sponge/compression on top.

Permutation (spec §2): S-box x^7, 4 initial external rounds, 13 internal rounds, 4 terminal external rounds.
- ``mds_light``: M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on each 4-chunk, then s[i] += Σ_c s[4c + i mod 4].
- external round r: s[i] = (s[i] + rc[r][i])^7 for all i, then ``mds_light``; one ``mds_light`` precedes round 0.
- internal round r: s0 = (s0 + rc_int[r])^7; then s = (1 + diag(V)) s, i.e. s[i] = Σ_j s[j] + V[i] s[i], with
  V = [-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/2^8, 1/4, 1/8, 1/2^27, -1/2^8, -1/16, -1/2^27].

Contracts:
- States are ``uint32`` Montgomery words in [0, P), shape (N, 16); ``permute`` returns a fresh (N, 16) array and never
  modifies its input. ``constants=None`` means ``Poseidon2Constants.smallrng(1)``, the constants of every whir-p3
  proof. Inside, both paths compute on canonical values (``permute_ints`` on Python ints for a few states, else
  lane-major (16, B) uint64 arrays); only the interface is Montgomery.
- ``permute_ints(state)``: one state as 16 canonical Python ints -> 16 canonical ints (the transcript's path).
- ``hash_rows(rows)``: ``PaddingFreeSponge<Perm, 16, 8, 8>`` on each row of (N, width) -> (N, 8) digests.
- ``compress(left, right)``: ``TruncatedPermutation<Perm, 2, 8, 16>``: perm(left ‖ right)[0..8], (N, 8) each.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..field import P
from . import field_np as fnp
from . import poseidon2_grain_constants as grain
from .rng import Xoshiro256PlusPlus, random_base

WIDTH = 16
RATE = 8
DIGEST = 8
N_EXTERNAL_HALF = 4
N_INTERNAL = 13

_INV2 = pow(2, P - 2, P)
# Diagonal V of the internal matrix 1 + diag(V) (canonical ints).
INTERNAL_DIAGONAL = [
    (-2) % P, 1, 2, _INV2, 3, 4, (-_INV2) % P, (-3) % P, (-4) % P,
    pow(_INV2, 8, P), pow(_INV2, 2, P), pow(_INV2, 3, P), pow(_INV2, 27, P),
    (-pow(_INV2, 8, P)) % P, (-pow(_INV2, 4, P)) % P, (-pow(_INV2, 27, P)) % P,
]

_U64 = np.uint64
_P64 = _U64(P)
# Up to this many states go through the Python-int path (faster than numpy's per-call overhead).
_SCALAR_MAX = 4


@dataclass(frozen=True, eq=False)
class Poseidon2Constants:
    """Round constants (uint32 Montgomery words): external_initial (4, 16), external_terminal (4, 16),
    internal (13,)."""

    external_initial: np.ndarray
    external_terminal: np.ndarray
    internal: np.ndarray

    def __post_init__(self):
        for name, shape in (("external_initial", (4, 16)), ("external_terminal", (4, 16)), ("internal", (13,))):
            a = np.ascontiguousarray(getattr(self, name), dtype=np.uint32)
            if a.shape != shape:
                raise ValueError(f"Poseidon2Constants.{name}: shape {a.shape}, expected {shape}")
            if (a >= np.uint32(P)).any():
                raise ValueError(f"Poseidon2Constants.{name}: word >= P = {P}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @classmethod
    def from_rng(cls, rng) -> "Poseidon2Constants":
        """``new_from_rng_128``: 4x16 initial, 4x16 terminal, then 13 internal, each Plonky3's Montgomery sampler."""
        initial = random_base(rng, 4 * WIDTH).reshape(4, WIDTH)
        terminal = random_base(rng, 4 * WIDTH).reshape(4, WIDTH)
        internal = random_base(rng, N_INTERNAL)
        return cls(initial, terminal, internal)

    @classmethod
    def from_canonical(cls, initial, terminal, internal) -> "Poseidon2Constants":
        return cls(fnp.to_monty(np.asarray(initial, dtype=np.uint64)),
                   fnp.to_monty(np.asarray(terminal, dtype=np.uint64)),
                   fnp.to_monty(np.asarray(internal, dtype=np.uint64)))

    @staticmethod
    def smallrng(seed: int = 1) -> "Poseidon2Constants":
        """``Poseidon2BabyBear::<16>::new_from_rng_128(&mut SmallRng::seed_from_u64(seed))``; seed 1 is whir-p3's.
        Cached: the same seed always gives the same object."""
        return _smallrng_cached(int(seed))

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def plonky3_default() -> "Poseidon2Constants":
        """``default_babybear_poseidon2_16()``: Plonky3's fixed Grain-LFSR constants (not used by whir-p3)."""
        return Poseidon2Constants.from_canonical(grain.EXTERNAL_INITIAL, grain.EXTERNAL_FINAL, grain.INTERNAL)

    @functools.cached_property
    def _canonical(self):
        """Canonical Python ints (initial 4x16, terminal 4x16, internal 13)."""
        return (fnp.from_monty(self.external_initial).tolist(), fnp.from_monty(self.external_terminal).tolist(),
                fnp.from_monty(self.internal).tolist())

    @functools.cached_property
    def _one(self):
        """For ``permute_ints``: (16,) uint64 rows of the external constants, Python ints for the internal ones."""
        initial, terminal, internal = self._canonical
        return list(np.asarray(initial, dtype=_U64)), list(np.asarray(terminal, dtype=_U64)), internal

    @functools.cached_property
    def _lanes(self):
        """Canonical uint64 column vectors for the (16, B) lane-major layout ``permute`` works in."""
        initial, terminal, internal = self._canonical
        return (np.asarray(initial, dtype=_U64)[:, :, None], np.asarray(terminal, dtype=_U64)[:, :, None],
                [_U64(x) for x in internal])


@functools.lru_cache(maxsize=8)
def _smallrng_cached(seed: int) -> Poseidon2Constants:
    return Poseidon2Constants.from_rng(Xoshiro256PlusPlus(seed))


# The external linear layer as one integer matrix: circ(2 M4, M4, M4, M4) = (I4 + J4) ⊗ M4 (J4: all ones).
_M4 = np.array([[2, 3, 1, 1], [1, 2, 3, 1], [1, 1, 2, 3], [3, 1, 1, 2]])
MDS_MATRIX = np.kron(np.eye(4, dtype=np.int64) + 1, _M4)
# float64 so that the product runs in BLAS: entries <= 6 with row sums 35, so for inputs < P every partial sum is
# an integer < 35 P < 2^37, exact in a double whatever the summation order.
_MDS_F64 = MDS_MATRIX.astype(np.float64)
_DIAG = np.asarray(INTERNAL_DIAGONAL, dtype=_U64)[:, None]
# States per block: (16, 1024) keeps OpenBLAS's product single-threaded (its threshold is m*n*k <= 2^18) and the
# temporaries small; measured no slower than larger blocks on x86.
_BLOCK = 1 << 10


# Up to this many values np.remainder's single call beats floor division's three (measured crossover on x86 near
# 600 values: a row of a verifier's batch takes the remainder, a whole state the division).
_REMAINDER_MAX = 1 << 9


def _mod(x: np.ndarray) -> np.ndarray:
    """x <- x mod P in place, for uint64 x. On large arrays floor division by a scalar (libdivide) then a multiply
    and a subtract are several times faster than np.remainder on uint64."""
    if x.size <= _REMAINDER_MAX:
        x %= _P64
        return x
    q = x // _P64
    q *= _P64
    x -= q
    return x


def _sbox(x: np.ndarray) -> np.ndarray:
    """x^7 mod P for canonical uint64 x (< P, so every product is < P^2 < 2^62); consumes x."""
    x2 = _mod(x * x)
    x3 = _mod(x2 * x)
    x2 *= x2
    x3 *= _mod(x2)
    return _mod(x3)


def _mds_light(s: np.ndarray) -> np.ndarray:
    """MDS_MATRIX @ s for a lane-major (16, B) uint64 state with entries < P; entries of the result < 35 P."""
    return (_MDS_F64 @ s.astype(np.float64)).astype(_U64)


def _external_round(s: np.ndarray, rc: np.ndarray) -> np.ndarray:
    """(s + rc)^7 lane by lane, then the external linear layer: lane-major (16, B), entries < 35 P in and out."""
    s += rc
    return _mds_light(_sbox(_mod(s)))


def permute_lanes(s: np.ndarray, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """The permutation of a lane-major (16, B) uint64 state of canonical values (< P) -> canonical values, same
    layout; consumes ``s``. This is what ``permute`` runs per block, minus the Montgomery conversions.
    Sums are reduced lazily: every product below is of two values < P, so < 2^62."""
    rc_init, rc_term, rc_int = (constants if constants is not None else Poseidon2Constants.smallrng(1))._lanes
    s = _mds_light(s)
    for rc in rc_init:
        s = _external_round(s, rc)
    _mod(s)
    for k in rc_int:
        s[0] = _sbox(_mod(s[0] + k))
        full = s.sum(axis=0)  # 16 values < P
        s *= _DIAG  # diagonal < P: < P^2
        s += full  # < P^2 + 16 P < 2^64
        _mod(s)
    for rc in rc_term:
        s = _external_round(s, rc)
    return _mod(s)


_MDS_U64 = MDS_MATRIX.astype(_U64)


def _external_round_one(s: np.ndarray, rc: np.ndarray) -> np.ndarray:
    """``_external_round`` for one state (16,), written out: at 16 values numpy's per-call cost is everything, so
    the integer product (no conversions) and in-place remainders are the fastest form."""
    s += rc
    s %= _P64
    x2 = s * s
    x2 %= _P64
    x3 = x2 * s
    x3 %= _P64
    x2 *= x2
    x2 %= _P64
    x3 *= x2
    x3 %= _P64
    return _MDS_U64 @ x3


def permute_ints(state: list, constants: Poseidon2Constants | None = None) -> list:
    """The permutation of ONE state of 16 canonical Python ints -> 16 canonical ints (what the challenger asks
    for). The external rounds run on a (16,) array, 16 S-boxes per numpy call; the internal rounds, whose S-box
    touches one value, on Python ints: the fastest split measured for a single state."""
    consts = constants if constants is not None else Poseidon2Constants.smallrng(1)
    rc_init, rc_term, rc_int = consts._one
    s = _MDS_U64 @ np.array(state, dtype=_U64)
    for rc in rc_init:
        s = _external_round_one(s, rc)
    s %= _P64
    s = s.tolist()
    for k in rc_int:
        s[0] = pow(s[0] + k, 7, P)
        full = sum(s)
        s = [(full + v * x) % P for v, x in zip(INTERNAL_DIAGONAL, s)]
    s = np.array(s, dtype=_U64)
    for rc in rc_term:
        s = _external_round_one(s, rc)
    s %= _P64
    return s.tolist()


def permute(state, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """Poseidon2 on each row of ``state`` (N, 16) uint32 Montgomery words -> fresh (N, 16) uint32 array."""
    consts = constants if constants is not None else Poseidon2Constants.smallrng(1)
    state = np.asarray(state, dtype=np.uint32)
    if state.ndim != 2 or state.shape[1] != WIDTH:
        raise ValueError(f"permute: state shape {state.shape}, expected (N, {WIDTH})")
    n = state.shape[0]
    canonical = fnp.from_monty(state)
    if n <= _SCALAR_MAX:
        rows = [permute_ints(row, consts) for row in canonical.tolist()]
        return fnp.to_monty(np.asarray(rows, dtype=np.uint64).reshape(n, WIDTH))
    out = np.empty((n, WIDTH), dtype=np.uint32)
    for start in range(0, n, _BLOCK):
        lanes = canonical[start:start + _BLOCK].T.astype(_U64)
        out[start:start + _BLOCK] = permute_lanes(lanes, consts).T
    return fnp.to_monty(out)


def hash_rows(rows, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """``PaddingFreeSponge<16, 8, 8>`` over each row of ``rows`` (N, width) Montgomery words -> (N, 8).

    State starts at 0^16; each chunk of up to 8 inputs overwrites state[0..len] (the rest keeps its value) and is
    followed by one permutation; no padding, and width 0 permutes nothing (digest 0^8).
    """
    rows = np.asarray(rows, dtype=np.uint32)
    if rows.ndim != 2:
        raise ValueError(f"hash_rows: rows must be 2-D (N, width), got shape {rows.shape}")
    n, width = rows.shape
    state = np.zeros((n, WIDTH), dtype=np.uint32)
    for start in range(0, width, RATE):
        chunk = rows[:, start:start + RATE]
        state[:, :chunk.shape[1]] = chunk
        state = permute(state, constants)
    return state[:, :DIGEST].copy()


def compress(left, right, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """Two-to-one compression of digests: perm(left ‖ right)[0..8] for (N, 8) and (N, 8) -> (N, 8)."""
    left = np.asarray(left, dtype=np.uint32)
    right = np.asarray(right, dtype=np.uint32)
    if left.shape != right.shape or left.ndim != 2 or left.shape[1] != DIGEST:
        raise ValueError(f"compress: shapes {left.shape} and {right.shape}, expected (N, {DIGEST}) each")
    return permute(np.concatenate([left, right], axis=1), constants)[:, :DIGEST].copy()
