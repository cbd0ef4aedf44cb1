"""The 31-bit prime fields and their degree-4 extensions: the only place field constants live.

Elements are stored in Montgomery form with R = 2^32 (as Plonky3's ``MontyField31``): the canonical value
x in [0, P) is held as x * R mod P. Extension elements are [c0, c1, c2, c3] for c0 + c1 X + c2 X^2 + c3 X^3
with X^4 = W.

- The module-level names (``P``, ``MU``, ..., ``to_monty_int``) are BabyBear's, the field of every proof today;
  shaders and the numpy reference render their constants from them.
- ``Field`` describes any such field; ``BABYBEAR`` and ``KOALABEAR`` are the two Plonky3 ships, ``field_by_name``
  looks one up by its lower-case name.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as _derived

P = 0x78000001  # 2^31 - 2^27 + 1 = 15 * 2^27 + 1
MU = 0x88000001  # P^-1 mod 2^32 (Montgomery reduction multiplies by this)
R = (1 << 32) % P  # 0x0ffffffe: Montgomery form of 1
R2 = (1 << 64) % P  # 0x45dddde3: multiplying by R2 (Montgomery) maps canonical -> Montgomery
R_INV = pow(1 << 32, P - 2, P)  # 943718400: canonical = monty * R_INV mod P
MONTY_GEN = 31  # multiplicative generator of F_P^*
TWO_ADICITY = 27

W = 11  # X^4 = W in the extension
EF_DEGREE = 4
EF_BITS = 124  # bit length of P^4: the field_size_bits the soundness formulas use

# TWO_ADIC_GENERATORS[k] generates the subgroup of order 2^k (canonical), k = 0..27; [27] = 31^15.
TWO_ADIC_GENERATORS = [pow(MONTY_GEN, (P - 1) >> k, P) for k in range(TWO_ADICITY + 1)]


def to_monty_int(x: int) -> int:
    """Canonical int -> Montgomery word."""
    return (x % P) * R % P


def from_monty_int(m: int) -> int:
    """Montgomery word -> canonical int."""
    return m * R_INV % P


@dataclass(frozen=True)
class Field:
    """A prime field P < 2^31 with a Montgomery representation (R = 2^32) and the binomial extension X^4 = W.

    Every value is an int; ``two_adic_generators[k]`` (canonical) generates the subgroup of order 2^k,
    k = 0..two_adicity, and equals ``generator^((P - 1) / 2^k)``, which is Plonky3's ``two_adic_generator(k)``
    for both fields here (checked against their ``TWO_ADIC_GENERATORS`` tables in tests/unit/test_field.py).
    """

    name: str
    P: int
    generator: int  # multiplicative generator of F_P^* (Plonky3's MONTY_GEN)
    W: int  # X^4 = W in the degree-4 extension
    EF_DEGREE: int = 4
    MU: int = _derived(init=False)  # P^-1 mod 2^32
    R: int = _derived(init=False)  # Montgomery form of 1
    R2: int = _derived(init=False)  # Montgomery multiplication by R2 maps canonical -> Montgomery
    R_INV: int = _derived(init=False)  # canonical = monty * R_INV mod P
    TWO_ADICITY: int = _derived(init=False)
    EF_BITS: int = _derived(init=False)  # bit length of P^4: the field_size_bits the soundness formulas use
    TWO_ADIC_GENERATORS: tuple = _derived(init=False, repr=False)

    def __post_init__(self):
        p = self.P
        two_adicity = ((p - 1) & -(p - 1)).bit_length() - 1
        derived = {
            "MU": pow(p, -1, 1 << 32), "R": (1 << 32) % p, "R2": (1 << 64) % p, "R_INV": pow(1 << 32, p - 2, p),
            "TWO_ADICITY": two_adicity, "EF_BITS": (p ** self.EF_DEGREE).bit_length(),
            "TWO_ADIC_GENERATORS": tuple(pow(self.generator, (p - 1) >> k, p) for k in range(two_adicity + 1)),
        }
        for key, value in derived.items():
            object.__setattr__(self, key, value)

    def to_monty_int(self, x: int) -> int:
        """Canonical int (any, reduced mod P) -> Montgomery word."""
        return (x % self.P) * self.R % self.P

    def from_monty_int(self, m: int) -> int:
        """Montgomery word -> canonical int."""
        return m * self.R_INV % self.P


BABYBEAR = Field("babybear", P=P, generator=MONTY_GEN, W=W)
KOALABEAR = Field("koalabear", P=0x7F000001, generator=3, W=3)  # 2^31 - 2^24 + 1 = 127 * 2^24 + 1
FIELDS = {f.name: f for f in (BABYBEAR, KOALABEAR)}


def field_by_name(name: str) -> Field:
    """``"babybear"`` or ``"koalabear"`` -> its ``Field``; KeyError names the known ones otherwise."""
    try:
        return FIELDS[name]
    except KeyError:
        raise KeyError(f"unknown field {name!r}; known: {sorted(FIELDS)}") from None
