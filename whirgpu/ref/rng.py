"""The Rust reference's pseudo-random generators and its field-element sampler, bit for bit.

- ``splitmix64(state)``: one SplitMix64 step, the seeding expansion both generators use.
- ``Xoshiro256PlusPlus``: rand's ``SmallRng`` on 64-bit targets (rand 0.9/0.10). ``Xoshiro256PlusPlus(seed)``
  equals ``SmallRng::seed_from_u64(seed)``: four SplitMix64 outputs fill s0..s3.
- ``Xoroshiro128Plus``: rand_xoshiro's ``Xoroshiro128Plus::seed_from_u64(seed)`` (SplitMix64 fills s0, s1;
  rotations 24/16/37). Plonky3's Poseidon2 test vectors derive their constants from it.

Both have ``next_u64()`` and ``next_u32()`` (the upper 32 bits of ``next_u64()``, as rand does for these cores),
plus ``next_u32_array(n)`` for ``n`` consecutive ``next_u32()`` values at once.

Samplers (Plonky3's ``StandardUniform`` for ``MontyField31``): draw ``u = next_u32() >> 1`` until ``u < P``; the
accepted ``u`` **is the Montgomery word** of the sample (canonical value ``u * R^-1 mod P``).
``random_base(rng, n)`` returns ``n`` such words (uint32, shape (n,)); ``random_ef(rng, n)`` returns (n, 4)
extension elements, each four consecutive base samples c0..c3. The rng advances exactly as the reference's does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..field import P

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

    def next_u32_array(self, n: int) -> np.ndarray:
        """``n`` consecutive ``next_u32()`` outputs as a uint32 array."""
        return (np.array(self.next_u64_list(n), dtype=np.uint64) >> np.uint64(32)).astype(np.uint32)


class Xoshiro256PlusPlus(_WordRng):
    """rand's ``SmallRng`` (Xoshiro256++), seeded like ``SeedableRng::seed_from_u64``."""

    __slots__ = ()
    N_WORDS = 4

    def next_u64_list(self, n: int) -> list[int]:
        """``n`` consecutive ``next_u64()`` outputs as Python ints."""
        s0, s1, s2, s3 = self.s
        m = _M64
        out = [0] * n
        for i in range(n):
            x = (s0 + s3) & m
            out[i] = ((((x << 23) | (x >> 41)) & m) + s0) & m
            t = (s1 << 17) & m
            s2 ^= s0
            s3 ^= s1
            s1 ^= s2
            s0 ^= s3
            s2 ^= t
            s3 = ((s3 << 45) | (s3 >> 19)) & m
        self.s = [s0, s1, s2, s3]
        return out



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


def random_base(rng, n: int) -> np.ndarray:
    """``n`` samples of Plonky3's ``StandardUniform`` for BabyBear: uint32 Montgomery words in [0, P), shape (n,).

    Each sample rejects ``next_u32() >> 1 >= P``. Draws are requested in rounds of exactly the number of samples
    still missing, so the generator never runs past the last accepted draw.
    """
    if n < 0:
        raise ValueError(f"random_base: n = {n} must be >= 0")
    parts = []
    missing = n
    while missing:
        u = rng.next_u32_array(missing) >> np.uint32(1)
        kept = u[u < np.uint32(P)]
        parts.append(kept)
        missing -= kept.size
    if not parts:
        return np.zeros(0, dtype=np.uint32)
    return np.concatenate(parts).astype(np.uint32, copy=False)


def random_ef(rng, n: int) -> np.ndarray:
    """``n`` extension elements (n, 4): each is four consecutive base samples, c0..c3."""
    return random_base(rng, 4 * n).reshape(n, 4)
