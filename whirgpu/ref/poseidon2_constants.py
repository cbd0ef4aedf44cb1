"""Poseidon2 round constants: validated Montgomery words, derived from Rust's generators as Plonky3 draws them.

``Poseidon2Constants`` holds one permutation's constants and its ``Poseidon2Params`` (field, width, rounds; the
default is ``BABYBEAR_16``). Every array is ``uint32`` Montgomery words in [0, P) of that field, read-only:
external_initial (half_full, width), external_terminal (half_full, width), internal (rounds_partial,).

Derivation (``from_rng``) is Plonky3's ``Poseidon2::new_from_rng_128``: the initial external rows, then the
terminal ones, then the internal constants, every element one ``StandardUniform`` draw (``rng.random_base``).
Named sets:
- ``smallrng(seed)``: BabyBear width 16 from ``SmallRng::seed_from_u64(seed)``; seed 1 is every whir-p3 proof's.
- ``smallrng_16_24(field, seed)``: p3-whir's pair: width 16 from ``SmallRng::seed_from_u64(seed)``, then width 24
  drawn from the same stream right after it.
- ``plonky3_default()``: Plonky3's fixed Grain-LFSR BabyBear width-16 set (not used by whir-p3).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..field import Field
from . import poseidon2_grain_constants as grain
from .field_np import field_ops
from .poseidon2_params import BABYBEAR_16, Poseidon2Params, poseidon2_params
from .rng import Xoshiro256PlusPlus, random_base

_U64 = np.uint64


@dataclass(frozen=True, eq=False)
class Poseidon2Constants:
    """Round constants (uint32 Montgomery words of ``params.field``) and the instance they belong to."""

    external_initial: np.ndarray
    external_terminal: np.ndarray
    internal: np.ndarray
    params: Poseidon2Params = BABYBEAR_16

    def __post_init__(self):
        prm = self.params
        shapes = {"external_initial": (prm.half_full, prm.width), "external_terminal": (prm.half_full, prm.width),
                  "internal": (prm.rounds_partial,)}
        for name, shape in shapes.items():
            a = np.ascontiguousarray(getattr(self, name), dtype=np.uint32)
            if a.shape != shape:
                raise ValueError(f"Poseidon2Constants.{name}: shape {a.shape}, expected {shape} ({prm.name})")
            if (a >= np.uint32(prm.field.P)).any():
                raise ValueError(f"Poseidon2Constants.{name}: word >= P = {prm.field.P}")
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @classmethod
    def from_rng(cls, rng, params: Poseidon2Params = BABYBEAR_16) -> "Poseidon2Constants":
        """``new_from_rng_128``: initial rows, terminal rows, then the internal constants; advances ``rng``."""
        field, half, width = params.field, params.half_full, params.width
        initial = random_base(rng, half * width, field).reshape(half, width)
        terminal = random_base(rng, half * width, field).reshape(half, width)
        internal = random_base(rng, params.rounds_partial, field)
        return cls(initial, terminal, internal, params)

    @classmethod
    def from_canonical(cls, initial, terminal, internal, params: Poseidon2Params = BABYBEAR_16
                       ) -> "Poseidon2Constants":
        """Constants given as canonical ints (nested lists or arrays of the shapes above)."""
        to_monty = field_ops(params.field).to_monty
        return cls(to_monty(np.asarray(initial, dtype=np.uint64)), to_monty(np.asarray(terminal, dtype=np.uint64)),
                   to_monty(np.asarray(internal, dtype=np.uint64)), params)

    @staticmethod
    def smallrng(seed: int = 1) -> "Poseidon2Constants":
        """``Poseidon2BabyBear::<16>::new_from_rng_128(&mut SmallRng::seed_from_u64(seed))``; seed 1 is whir-p3's.
        Cached: the same seed always gives the same object."""
        return _smallrng_cached(int(seed))

    @staticmethod
    def smallrng_16_24(field: Field, seed: int = 1) -> tuple["Poseidon2Constants", "Poseidon2Constants"]:
        """(width 16, width 24) of ``field`` from one ``SmallRng::seed_from_u64(seed)`` stream, 16 first (p3-whir's
        Merkle compression and leaf hash). Cached per (field, seed)."""
        return _smallrng_pair_cached(field.name, int(seed))

    @staticmethod
    @functools.lru_cache(maxsize=1)
    def plonky3_default() -> "Poseidon2Constants":
        """``default_babybear_poseidon2_16()``: Plonky3's fixed Grain-LFSR constants (not used by whir-p3)."""
        return Poseidon2Constants.from_canonical(grain.EXTERNAL_INITIAL, grain.EXTERNAL_FINAL, grain.INTERNAL)

    @functools.cached_property
    def canonical(self) -> tuple[list, list, list]:
        """Canonical Python ints: (initial rows, terminal rows, internal)."""
        from_monty = field_ops(self.params.field).from_monty
        return (from_monty(self.external_initial).tolist(), from_monty(self.external_terminal).tolist(),
                from_monty(self.internal).tolist())

    @functools.cached_property
    def int_rows(self):
        """For ``permute_ints``: (width,) uint64 rows of the external constants, Python ints for the internal ones."""
        initial, terminal, internal = self.canonical
        return list(np.asarray(initial, dtype=_U64)), list(np.asarray(terminal, dtype=_U64)), internal

    @functools.cached_property
    def lane_columns(self):
        """Canonical uint64 column vectors for the (width, B) lane-major layout ``permute`` works in."""
        initial, terminal, internal = self.canonical
        return (np.asarray(initial, dtype=_U64)[:, :, None], np.asarray(terminal, dtype=_U64)[:, :, None],
                [_U64(x) for x in internal])


@functools.lru_cache(maxsize=8)
def _smallrng_cached(seed: int) -> Poseidon2Constants:
    return Poseidon2Constants.from_rng(Xoshiro256PlusPlus(seed))


@functools.lru_cache(maxsize=8)
def _smallrng_pair_cached(field_name: str, seed: int) -> tuple[Poseidon2Constants, Poseidon2Constants]:
    rng = Xoshiro256PlusPlus(seed)
    first = Poseidon2Constants.from_rng(rng, poseidon2_params(field_name, 16))
    return first, Poseidon2Constants.from_rng(rng, poseidon2_params(field_name, 24))
