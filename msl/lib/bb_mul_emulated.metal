// Montgomery product (BabyBear or KoalaBear: P = H 2^16 + 1, H < 2^15) from 16-bit halves (the portable WGSL variant's twin, for comparison).
// Because inputs are < 2^31 the middle sum cannot carry, and the high word of t*P needs no general product
// since P = BB_P_HI16 * 2^16 + 1 (0x7800 for BabyBear, 0x7f00 for KoalaBear).
// in: a, b in [0, 2^31) Montgomery words; out: a * b * 2^-32 mod P in [0, P).
uint bb_mul(uint a, uint b) {
    uint a_lo = a & 0xffffu;
    uint a_hi = a >> 16u;
    uint b_lo = b & 0xffffu;
    uint b_hi = b >> 16u;
    uint lo_lo = a_lo * b_lo;
    uint cross = a_lo * b_hi + a_hi * b_lo;
    uint lo = a * b;
    uint hi = a_hi * b_hi + (cross >> 16u) + select(0u, 1u, lo < lo_lo);
    uint t = lo * BB_MU;
    // lo(t * P) == lo, so the carry out of the low word is (lo < t).
    uint u = (t >> 16u) * BB_P_HI16 + (((t & 0xffffu) * BB_P_HI16) >> 16u) + select(0u, 1u, lo < t);
    uint r = hi - u;
    return min(r, r + BB_P);  // r + P wraps below P exactly when hi < u
}

// bb_mul's reduced product: the emulated high word needs operands below 2^31, so nothing is left unreduced.
// in: [0, P); out: [0, P).
uint bb_mul_partial(uint a, uint b) {
    return bb_mul(a, b);
}
