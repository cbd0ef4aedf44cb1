"""BabyBear and its degree-4 extension: the only place field constants live.

Elements are stored in Montgomery form with R = 2^32 (as Plonky3's ``MontyField31``): the canonical value
x in [0, P) is held as x * R mod P. Extension elements are [c0, c1, c2, c3] for c0 + c1 X + c2 X^2 + c3 X^3
with X^4 = W. Shaders and the numpy reference render their constants from this module.
"""

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
