// BabyBear Montgomery product through 64-bit products (the WGSL `shader-int64` variant's twin, for comparison).
// in: a * b < P * 2^32, so that hi - u lies in (-P, P): a, b in [0, 2^31), or a in [0, P) and b a
// bb_mul_partial result ([0, 2P)); out: a * b * 2^-32 mod P in [0, P).
uint bb_mul(uint a, uint b) {
    ulong x = ulong(a) * ulong(b);
    uint t = uint(x) * BB_MU;
    uint r = uint(x >> 32) - uint((ulong(t) * ulong(BB_P)) >> 32);
    return min(r, r + BB_P);  // r + P wraps below P exactly when hi < u
}

// The same product left unreduced, for use only as bb_mul's b. in: [0, P); out: congruent, in (0, 2P).
uint bb_mul_partial(uint a, uint b) {
    ulong x = ulong(a) * ulong(b);
    uint t = uint(x) * BB_MU;
    return uint(x >> 32) - uint((ulong(t) * ulong(BB_P)) >> 32) + BB_P;
}
