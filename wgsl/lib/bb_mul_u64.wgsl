// BabyBear Montgomery product with the `shader-int64` feature: native 64-bit products.
// in: a * b < P * 2^32, so that hi - u lies in (-P, P): a, b in [0, 2^31), or a in [0, P) and b a bb_mul_partial
// result ([0, 2P) here); out: a * b * 2^-32 mod P in [0, P).
fn bb_mul(a: u32, b: u32) -> u32 {
    let x = u64(a) * u64(b);
    let lo = u32(x & 0xfffffffflu);
    let hi = u32(x >> 32u);
    let t = lo * BB_MU;
    let u = u32((u64(t) * u64(BB_P)) >> 32u);
    let r = hi - u;
    return min(r, r + BB_P);  // r + P wraps below P exactly when hi < u
}

// The same product left unreduced, for use only as bb_mul's b. in: [0, P); out: congruent, in (0, 2P).
fn bb_mul_partial(a: u32, b: u32) -> u32 {
    let x = u64(a) * u64(b);
    let t = u32(x & 0xfffffffflu) * BB_MU;
    return u32(x >> 32u) - u32((u64(t) * u64(BB_P)) >> 32u) + BB_P;
}
