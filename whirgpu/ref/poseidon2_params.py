"""Poseidon2 instances: field, width, S-box, round counts and the internal diagonal, as Plonky3 defines them.

``Poseidon2Params`` fixes everything about a Poseidon2 permutation except its round constants:
- S-box x^d (``sbox_degree``), ``rounds_full`` = 8 external rounds (half before, half after the partial ones),
  ``rounds_partial`` internal rounds (Plonky3's ``poseidon2_round_numbers_128`` for 31-bit fields);
- external layer (``external_matrix``): M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on each 4-chunk, then each
  value plus the sum of the values at its position mod 4 in every chunk: (I + J) ⊗ M4 (J all ones);
- internal layer: s[i] <- Σ_j s[j] + V[i] s[i] with ``diagonal`` V (canonical ints) from Plonky3's
  ``{baby,koala}-bear/src/poseidon2.rs`` (small signed values and signed inverse powers of two).

``poseidon2_params(field, width)`` looks an instance up; ``BABYBEAR_16`` is the width-16 BabyBear permutation of
every whir-p3 proof.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..field import BABYBEAR, KOALABEAR, Field

_M4 = np.array([[2, 3, 1, 1], [1, 2, 3, 1], [1, 1, 2, 3], [3, 1, 1, 2]], dtype=np.int64)

# Plonky3's diagonals as written in its sources: an int is itself, "±1/2^k" or "±1/n" the signed inverse.
_DIAGONALS = {
    ("babybear", 16): [-2, 1, 2, "1/2", 3, 4, "-1/2", -3, -4, "1/2^8", "1/4", "1/8", "1/2^27", "-1/2^8", "-1/16",
                       "-1/2^27"],
    ("babybear", 24): [-2, 1, 2, "1/2", 3, 4, "-1/2", -3, -4, "1/2^8", "1/4", "1/8", "1/16", "1/2^7", "1/2^9",
                       "1/2^27", "-1/2^8", "-1/4", "-1/8", "-1/16", "-1/32", "-1/64", "-1/2^7", "-1/2^27"],
    ("koalabear", 16): [-2, 1, 2, "1/2", 3, 4, "-1/2", -3, -4, "1/2^8", "1/8", "1/2^24", "-1/2^8", "-1/8", "-1/16",
                        "-1/2^24"],
    ("koalabear", 24): [-2, 1, 2, "1/2", 3, 4, "-1/2", -3, -4, "1/2^8", "1/4", "1/8", "1/16", "1/32", "1/64",
                        "1/2^24", "-1/2^8", "-1/8", "-1/16", "-1/32", "-1/64", "-1/2^7", "-1/2^9", "-1/2^24"],
}
# (field, width) -> (S-box degree, partial rounds); 8 full rounds everywhere.
_ROUNDS = {("babybear", 16): (7, 13), ("babybear", 24): (7, 21), ("koalabear", 16): (3, 20),
           ("koalabear", 24): (3, 23)}


def _diagonal_value(entry, p: int) -> int:
    """One diagonal entry as written above -> canonical int mod p."""
    if isinstance(entry, int):
        return entry % p
    sign = -1 if entry.startswith("-") else 1
    numerator, denominator = entry.lstrip("-").split("/")
    if numerator != "1":
        raise ValueError(f"diagonal entry {entry!r}: only inverses (1/n) are written as fractions")
    n = 1 << int(denominator[2:]) if denominator.startswith("2^") else int(denominator)
    return sign * pow(n, -1, p) % p


@dataclass(frozen=True)
class Poseidon2Params:
    """One Poseidon2 instance minus its constants (see the module docstring). ``diagonal`` holds canonical ints."""

    field: Field
    width: int
    sbox_degree: int
    rounds_partial: int
    diagonal: tuple
    rounds_full: int = 8

    @property
    def half_full(self) -> int:
        """External rounds on each side of the internal ones."""
        return self.rounds_full // 2

    @property
    def name(self) -> str:
        return f"{self.field.name}-{self.width}"

    @functools.cached_property
    def external_matrix(self) -> np.ndarray:
        """The external linear layer as a (width, width) int64 matrix: (I + J) ⊗ M4, entries <= 6."""
        chunks = self.width // 4
        return np.kron(np.eye(chunks, dtype=np.int64) + 1, _M4)


def _build(field: Field, width: int) -> Poseidon2Params:
    degree, partial = _ROUNDS[field.name, width]
    diagonal = tuple(_diagonal_value(v, field.P) for v in _DIAGONALS[field.name, width])
    return Poseidon2Params(field, width, degree, partial, diagonal)


PARAMS = {(f.name, w): _build(f, w) for f in (BABYBEAR, KOALABEAR) for w in (16, 24)}
BABYBEAR_16 = PARAMS["babybear", 16]


def poseidon2_params(field: Field | str, width: int) -> Poseidon2Params:
    """The instance of ``field`` (a ``Field`` or its name) at ``width`` (16 or 24)."""
    name = field if isinstance(field, str) else field.name
    try:
        return PARAMS[name, width]
    except KeyError:
        raise KeyError(f"no Poseidon2 instance for {name!r} at width {width}; known: {sorted(PARAMS)}") from None
