"""The Rust reference's pseudo-random generators and its field-element sampler, bit for bit.

- ``splitmix64(state)``: one SplitMix64 step, the seeding expansion both generators use.
- ``Xoshiro256PlusPlus``: rand's ``SmallRng`` on 64-bit targets (rand 0.9/0.10). ``Xoshiro256PlusPlus(seed)``
  equals ``SmallRng::seed_from_u64(seed)``: four SplitMix64 outputs fill s0..s3.
- ``Xoroshiro128Plus``: rand_xoshiro's ``Xoroshiro128Plus::seed_from_u64(seed)`` (SplitMix64 fills s0, s1;
  rotations 24/16/37). Plonky3's Poseidon2 test vectors derive their constants from it.

Both have ``next_u64()`` and ``next_u32()`` (the upper 32 bits of ``next_u64()``, as rand does for these cores),
plus ``next_u32_array(n)`` for ``n`` consecutive ``next_u32()`` values at once. Xoshiro256++ makes long runs
(``n >= LANES_MIN_DRAWS``) in numpy lanes: its state update is linear over GF(2), so the states 0, L, 2L, ... of
the run come from powers of the 256x256 one-step matrix, and every lane then steps L times side by side; the
outputs, concatenated lane after lane, are the run in order, and the generator ends in the state the scalar loop
would leave (tested against it).

Samplers (Plonky3's ``StandardUniform`` for ``MontyField31``): draw ``u = next_u32() >> 1`` until ``u < P``; the
accepted ``u`` **is the Montgomery word** of the sample (canonical value ``u * R^-1 mod P``).
``random_base(rng, n)`` returns ``n`` such words (uint32, shape (n,)); ``random_ef(rng, n)`` returns (n, 4)
extension elements, each four consecutive base samples c0..c3. The rng advances exactly as the reference's does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..field import BABYBEAR, Field

_M64 = (1 << 64) - 1
_PHI = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


def splitmix64(state: int) -> tuple[int, int]:
    """One SplitMix64 step: returns (new_state, output)."""
    state = (state + _PHI) & _M64
    z = state
    z = ((z ^ (z >> 30)) * _MIX1) & _M64
    z = ((z ^ (z >> 27)) * _MIX2) & _M64
    return state, z ^ (z >> 31)


def _seed_words(seed: int, n_words: int) -> list[int]:
    state = seed & _M64
    words = []
    for _ in range(n_words):
        state, z = splitmix64(state)
        words.append(z)
    return words


class _WordRng(ABC):
    """Shared face of the 64-bit generators: subclasses hold their state words in ``s`` and define
    ``next_u64_list``; ``next_u32`` is the upper half of ``next_u64``, as in rand."""

    __slots__ = ("s",)

    def __init__(self, seed: int = 0):
        self.s = _seed_words(seed, self.N_WORDS)

    def clone(self):
        other = object.__new__(type(self))
        other.s = list(self.s)
        return other

    def next_u64(self) -> int:
        return self.next_u64_list(1)[0]

    def next_u32(self) -> int:
        return self.next_u64_list(1)[0] >> 32

    @abstractmethod
    def next_u64_list(self, n: int) -> list[int]:
        """The next ``n`` 64-bit outputs, advancing the state."""

    def next_u64_array(self, n: int) -> np.ndarray:
        """``n`` consecutive ``next_u64()`` outputs as a uint64 array."""
        return np.array(self.next_u64_list(n), dtype=np.uint64)

    def next_u32_array(self, n: int) -> np.ndarray:
        """``n`` consecutive ``next_u32()`` outputs as a uint32 array."""
        return (self.next_u64_array(n) >> np.uint64(32)).astype(np.uint32)


class Xoshiro256PlusPlus(_WordRng):
    """rand's ``SmallRng`` (Xoshiro256++), seeded like ``SeedableRng::seed_from_u64``."""

    __slots__ = ()
    N_WORDS = 4

    def next_u64_list(self, n: int) -> list[int]:
        """``n`` consecutive ``next_u64()`` outputs as Python ints."""
        s = self.s
        m = _M64
        out = [0] * n
        for i in range(n):
            x = (s[0] + s[3]) & m
            out[i] = ((((x << 23) | (x >> 41)) & m) + s[0]) & m
            s = _xoshiro_step_ints(s)
        self.s = s
        return out

    def next_u64_array(self, n: int) -> np.ndarray:
        if n < LANES_MIN_DRAWS:
            return super().next_u64_array(n)
        n_lanes = 1 << ((n.bit_length() + 1) // 2)  # about 2 sqrt(n) lanes of about sqrt(n) / 2 steps
        steps = n // n_lanes
        s0, s1, s2, s3 = _lane_states(self.s, n_lanes, steps)
        out = np.empty((n_lanes, steps), np.uint64)  # lane after lane: the run in order
        x, t = np.empty(n_lanes, np.uint64), np.empty(n_lanes, np.uint64)
        for i in range(steps):  # next_u64_list's output and _xoshiro_step_ints, on every lane at once, in place
            np.add(s0, s3, out=x)
            np.left_shift(x, _U23, out=t)
            np.right_shift(x, _U41, out=x)
            x |= t
            np.add(x, s0, out=out[:, i])
            np.left_shift(s1, _U17, out=t)
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            np.left_shift(s3, _U45, out=t)
            s3 >>= _U19
            s3 |= t
        self.s = [int(s0[-1]), int(s1[-1]), int(s2[-1]), int(s3[-1])]  # the last lane ends where the run ends
        rest = np.array(self.next_u64_list(n - steps * n_lanes), dtype=np.uint64)
        return np.concatenate([out.reshape(-1), rest])


LANES_MIN_DRAWS = 1 << 14  # shorter runs: the scalar loop
_U17, _U19, _U23, _U41, _U45 = (np.uint64(k) for k in (17, 19, 23, 41, 45))


def _xoshiro_step_ints(s: list[int]) -> list[int]:
    """One Xoshiro256++ state update of the words s0..s3 (Python ints)."""
    s0, s1, s2, s3 = s
    t = (s1 << 17) & _M64
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = ((s3 << 45) | (s3 >> 19)) & _M64
    return [s0, s1, s2, s3]


def _bits(states: np.ndarray) -> np.ndarray:
    """(m, 4) uint64 states -> (m, 256) bools, word w's bit b at 64 w + b."""
    as_bytes = np.ascontiguousarray(states, dtype="<u8").view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little").astype(bool)


def _apply(images: np.ndarray, states: np.ndarray) -> np.ndarray:
    """The GF(2)-linear map with basis images ``images`` ((256, 4) uint64) applied to (m, 4) ``states``; the
    composition A after B is ``_apply(A, B)`` (B's images are states)."""
    return np.bitwise_xor.reduce(np.where(_bits(states)[:, :, None], images[None], np.uint64(0)), axis=1)


_STEP_IMAGES: np.ndarray | None = None


def _lane_states(state: list[int], n_lanes: int, steps: int) -> tuple[np.ndarray, ...]:
    """The four state words (uint64 arrays, one entry per lane) of states 0, steps, 2 steps, ... ahead of
    ``state``: lane j starts ``j * steps`` updates ahead."""
    global _STEP_IMAGES
    if _STEP_IMAGES is None:  # the image of each basis state under one update
        basis = [[(1 << (i & 63)) if w == i >> 6 else 0 for w in range(4)] for i in range(256)]
        _STEP_IMAGES = np.array([_xoshiro_step_ints(b) for b in basis], dtype=np.uint64)
    jump = np.array([[(1 << (i & 63)) if w == i >> 6 else 0 for w in range(4)] for i in range(256)],
                    dtype=np.uint64)  # identity, then the map of `steps` updates, by squaring
    power, k = _STEP_IMAGES, steps
    while k:
        if k & 1:
            jump = _apply(power, jump)
        power, k = _apply(power, power), k >> 1
    lanes = np.array([state], dtype=np.uint64)
    while len(lanes) < n_lanes:  # doubling: lanes k..2k-1 are lanes 0..k-1 moved k * steps ahead
        lanes = np.concatenate([lanes, _apply(jump, lanes)])
        jump = _apply(jump, jump)
    return tuple(np.ascontiguousarray(lanes[:, w]) for w in range(4))


class Xoroshiro128Plus(_WordRng):
    """rand_xoshiro's ``Xoroshiro128Plus``, seeded like ``SeedableRng::seed_from_u64`` (SplitMix64)."""

    __slots__ = ()
    N_WORDS = 2

    def next_u64_list(self, n: int) -> list[int]:
        s0, s1 = self.s
        m = _M64
        out = [0] * n
        for i in range(n):
            out[i] = (s0 + s1) & m
            s1 ^= s0
            s0 = ((((s0 << 24) | (s0 >> 40)) & m) ^ s1 ^ ((s1 << 16) & m))
            s1 = ((s1 << 37) | (s1 >> 27)) & m
        self.s = [s0, s1]
        return out


def random_base(rng, n: int, field: Field = BABYBEAR) -> np.ndarray:
    """``n`` samples of Plonky3's ``StandardUniform`` for ``field`` (``MontyField31``, BabyBear by default): uint32
    Montgomery words in [0, P), shape (n,).

    Each sample rejects ``next_u32() >> 1 >= P``. Draws are requested in rounds of exactly the number of samples
    still missing, so the generator never runs past the last accepted draw.
    """
    if n < 0:
        raise ValueError(f"random_base: n = {n} must be >= 0")
    parts = []
    missing = n
    p = np.uint32(field.P)
    while missing:
        u = rng.next_u32_array(missing) >> np.uint32(1)
        kept = u[u < p]
        parts.append(kept)
        missing -= kept.size
    if not parts:
        return np.zeros(0, dtype=np.uint32)
    return np.concatenate(parts).astype(np.uint32, copy=False)


def random_ef(rng, n: int, field: Field = BABYBEAR) -> np.ndarray:
    """``n`` extension elements (n, 4): each is four consecutive base samples, c0..c3."""
    return random_base(rng, 4 * n, field).reshape(n, 4)
