"""Poseidon2 over BabyBear, width 16, as Plonky3's ``Poseidon2BabyBear<16>``; and the sponge/compression on top.

Permutation (spec §2): S-box x^7, 4 initial external rounds, 13 internal rounds, 4 terminal external rounds.
- ``mds_light``: M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on each 4-chunk, then s[i] += Σ_c s[4c + i mod 4].
- external round r: s[i] = (s[i] + rc[r][i])^7 for all i, then ``mds_light``; one ``mds_light`` precedes round 0.
- internal round r: s0 = (s0 + rc_int[r])^7; then s = (1 + diag(V)) s, i.e. s[i] = Σ_j s[j] + V[i] s[i], with
  V = [-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/2^8, 1/4, 1/8, 1/2^27, -1/2^8, -1/16, -1/2^27].

Contracts:
- States are ``uint32`` Montgomery words in [0, P), shape (N, 16); ``permute`` returns a fresh (N, 16) array and never
  modifies its input. ``constants=None`` means ``Poseidon2Constants.smallrng(1)``, the constants of every whir-p3
  proof.
- ``hash_rows(rows)``: ``PaddingFreeSponge<Perm, 16, 8, 8>`` on each row of (N, width) -> (N, 8) digests.
- ``compress(left, right)``: ``TruncatedPermutation<Perm, 2, 8, 16>``: perm(left ‖ right)[0..8], (N, 8) each.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..field import MU, P
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
_MU64 = _U64(MU)
_M32 = _U64(0xFFFFFFFF)
_S32 = _U64(32)
# States per block: keeps each (16, block) uint64 temporary near 2 MiB, inside the cache; measured best on x86.
_BLOCK = 1 << 13
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
        """Canonical Python ints (initial 4x16, terminal 4x16, internal 13) for the small-N scalar path."""
        return (fnp.from_monty(self.external_initial).tolist(), fnp.from_monty(self.external_terminal).tolist(),
                fnp.from_monty(self.internal).tolist())

    @functools.cached_property
    def _columns(self):
        """uint64 column vectors for the (16, B) lane-major layout ``permute`` works in."""
        return (self.external_initial.astype(_U64)[:, :, None],
                self.external_terminal.astype(_U64)[:, :, None],
                [_U64(x) for x in self.internal])


@functools.lru_cache(maxsize=8)
def _smallrng_cached(seed: int) -> Poseidon2Constants:
    return Poseidon2Constants.from_rng(Xoshiro256PlusPlus(seed))


_DIAG_MONTY = fnp.to_monty(np.asarray(INTERNAL_DIAGONAL, dtype=np.uint64)).astype(_U64)[:, None]


class _Workspace:
    """Preallocated (16, B) uint64 buffers for one ``permute`` call. Every numpy temporary of this size would
    otherwise be a fresh mmap (glibc's threshold) whose page faults cost more than the arithmetic."""

    def __init__(self, b: int):
        self.s = np.empty((WIDTH, b), dtype=_U64)  # state
        self.o = np.empty((WIDTH, b), dtype=_U64)  # mds output, swapped with s
        self.x2 = np.empty((WIDTH, b), dtype=_U64)
        self.x3 = np.empty((WIDTH, b), dtype=_U64)
        self.t = np.empty((WIDTH, b), dtype=_U64)  # Montgomery reduction scratch
        self.w = np.empty((3, 4, b), dtype=_U64)  # mds partial sums
        self.row = np.empty(b, dtype=_U64)
        self.row_t = np.empty(b, dtype=_U64)
        self.row_x2 = np.empty(b, dtype=_U64)
        self.row_x3 = np.empty(b, dtype=_U64)

    def view(self, b: int) -> "_Workspace":
        """The same buffers restricted to the first b states (for the last, shorter block)."""
        v = _Workspace.__new__(_Workspace)
        for name, arr in self.__dict__.items():
            v.__dict__[name] = arr[..., :b]
        return v


def _monty_mul_into(a, b, out: np.ndarray, t: np.ndarray) -> np.ndarray:
    """out = Montgomery product of uint64 a, b with a * b < P * 2^32 (e.g. both < P, or a < 2^32 and b < P),
    in [0, P). ``out`` may be ``a`` or ``b``; ``t`` is scratch of out's shape, distinct from everything else."""
    np.multiply(a, b, out=out)
    np.multiply(out, _MU64, out=t)  # wraps mod 2^64; only the low 32 bits matter
    t &= _M32
    t *= _P64
    t >>= _S32
    out >>= _S32
    out += _P64
    out -= t  # in (0, 2P)
    np.subtract(out, _P64, out=t)  # wraps to a huge value when out < P
    np.minimum(out, t, out=out)
    return out


def _sbox_into(x: np.ndarray, x2: np.ndarray, x3: np.ndarray, t: np.ndarray) -> None:
    """x <- x^7 in place, for x in [0, P)."""
    _monty_mul_into(x, x, x2, t)
    _monty_mul_into(x2, x, x3, t)
    _monty_mul_into(x2, x2, x2, t)  # x^4
    _monty_mul_into(x3, x2, x, t)


def _mds_light_into(s: np.ndarray, out: np.ndarray, w: np.ndarray) -> None:
    """out = circ(2 M4, M4, M4, M4) s for a lane-major (16, B) state with entries < P; out lazily reduced, < 35 P."""
    y = s.reshape(4, 4, -1)  # [chunk c, position k, state]
    o = out.reshape(4, 4, -1)
    a, b, c, d = y[:, 0], y[:, 1], y[:, 2], y[:, 3]
    t01, t23, t = w[0], w[1], w[2]
    np.add(a, b, out=t01)
    np.add(c, d, out=t23)
    np.add(t01, t23, out=t)
    np.add(t, t01, out=o[:, 0])
    o[:, 0] += b  # 2a + 3b + c + d
    np.add(t, b, out=o[:, 1])
    o[:, 1] += c
    o[:, 1] += c  # a + 2b + 3c + d
    np.add(t, t23, out=o[:, 2])
    o[:, 2] += d  # a + b + 2c + 3d
    np.add(t, d, out=o[:, 3])
    o[:, 3] += a
    o[:, 3] += a  # 3a + b + c + 2d
    np.sum(o, axis=0, out=t01)
    o += t01  # s[4c + k] += Σ_c' s[4c' + k]


def _permute_block(ws: _Workspace, consts: Poseidon2Constants) -> np.ndarray:
    """Permutation of the lane-major (16, B) state in ``ws.s`` (entries in [0, P)); returns the buffer holding the
    result, in [0, P) (``ws.s`` or ``ws.o``)."""
    rc_init, rc_term, rc_int = consts._columns
    s, o = ws.s, ws.o
    _mds_light_into(s, o, ws.w)
    s, o = o, s
    for rc in rc_init:
        s += rc
        s %= _P64
        _sbox_into(s, ws.x2, ws.x3, ws.t)
        _mds_light_into(s, o, ws.w)
        s, o = o, s
    s %= _P64
    s0, full = ws.row, ws.row_t
    for k in rc_int:
        np.add(s[0], k, out=s0)  # s[0] < 2P here (lazy from the previous round) or < P after the external rounds
        s0 %= _P64
        _sbox_into(s0, ws.row_x2, ws.row_x3, full)
        s[0] = s0
        np.sum(s, axis=0, out=full)  # < 32 P
        full %= _P64
        _monty_mul_into(s, _DIAG_MONTY, s, ws.t)  # entries < 2P < 2^32 and diagonal < P: product < P * 2^32
        s += full  # < 2P
    for rc in rc_term:
        s += rc
        s %= _P64
        _sbox_into(s, ws.x2, ws.x3, ws.t)
        _mds_light_into(s, o, ws.w)
        s, o = o, s
    s %= _P64
    return s


def _mds_light_ints(s: list) -> list:
    out = []
    for c in range(0, WIDTH, 4):
        a, b, c2, d = s[c:c + 4]
        t = a + b + c2 + d
        out += [t + a + 2 * b, t + b + 2 * c2, t + c2 + 2 * d, t + d + 2 * a]
    sums = [out[k] + out[k + 4] + out[k + 8] + out[k + 12] for k in range(4)]
    return [(out[i] + sums[i & 3]) % P for i in range(WIDTH)]


def _permute_ints(s: list, consts: Poseidon2Constants) -> list:
    """The same permutation on one state of canonical Python ints: numpy's per-call overhead dominates at N = 1,
    which is what the challenger asks for."""
    rc_init, rc_term, rc_int = consts._canonical
    s = _mds_light_ints(s)
    for rc in rc_init:
        s = _mds_light_ints([pow(x + k, 7, P) for x, k in zip(s, rc)])
    for k in rc_int:
        s[0] = pow(s[0] + k, 7, P)
        full = sum(s)
        s = [(full + v * x) % P for v, x in zip(INTERNAL_DIAGONAL, s)]
    for rc in rc_term:
        s = _mds_light_ints([pow(x + k, 7, P) for x, k in zip(s, rc)])
    return s


def permute(state, constants: Poseidon2Constants | None = None) -> np.ndarray:
    """Poseidon2 on each row of ``state`` (N, 16) uint32 Montgomery words -> fresh (N, 16) uint32 array."""
    consts = constants if constants is not None else Poseidon2Constants.smallrng(1)
    state = np.asarray(state, dtype=np.uint32)
    if state.ndim != 2 or state.shape[1] != WIDTH:
        raise ValueError(f"permute: state shape {state.shape}, expected (N, {WIDTH})")
    n = state.shape[0]
    if n <= _SCALAR_MAX:
        rows = [_permute_ints(row, consts) for row in fnp.from_monty(state).tolist()]
        return fnp.to_monty(np.asarray(rows, dtype=np.uint64).reshape(n, WIDTH))
    out = np.empty((n, WIDTH), dtype=np.uint32)
    workspace = _Workspace(min(n, _BLOCK))
    for start in range(0, n, _BLOCK):
        block = state[start:start + _BLOCK]
        ws = workspace if block.shape[0] == workspace.s.shape[1] else workspace.view(block.shape[0])
        ws.s[...] = block.T
        out[start:start + _BLOCK] = _permute_block(ws, consts).T
    return out


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
