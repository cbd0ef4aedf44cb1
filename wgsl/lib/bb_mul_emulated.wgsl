// Montgomery product (BabyBear or KoalaBear: P = H 2^16 + 1, H < 2^15) for devices without 64-bit integers.
// The 32x32 high word is assembled from 16-bit halves; because inputs are < 2^31 the middle sum cannot carry,
// and the high word of t*P needs no general product since P = BB_P_HI16 * 2^16 + 1 (0x7800 for BabyBear, 0x7f00 for KoalaBear).
// in: a, b in [0, 2^31) Montgomery words (so [0, P), or a bb_mul_partial result); out: a * b * 2^-32 mod P
// in [0, P).
fn bb_mul(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let lo_lo = a_lo * b_lo;
    let cross = a_lo * b_hi + a_hi * b_lo;
    let lo = a * b;
    let hi = a_hi * b_hi + (cross >> 16u) + select(0u, 1u, lo < lo_lo);
    let t = lo * BB_MU;
    // lo(t * P) == lo, so the carry out of the low word is (lo < t).
    let u = (t >> 16u) * BB_P_HI16 + (((t & 0xffffu) * BB_P_HI16) >> 16u) + select(0u, 1u, lo < t);
    let r = hi - u;
    return min(r, r + BB_P);  // r + P wraps below P exactly when hi < u
}

// bb_mul's reduced product: the emulated high word needs operands below 2^31, so nothing is left unreduced.
// in: [0, P); out: [0, P).
fn bb_mul_partial(a: u32, b: u32) -> u32 {
    return bb_mul(a, b);
}
