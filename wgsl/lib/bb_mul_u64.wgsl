// BabyBear Montgomery product with the `shader-int64` feature: native 64-bit products.
// in: a, b in [0, 2^31) Montgomery words; out: a * b * 2^-32 mod P in [0, P).
fn bb_mul(a: u32, b: u32) -> u32 {
    let x = u64(a) * u64(b);
    let lo = u32(x & 0xfffffffflu);
    let hi = u32(x >> 32u);
    let t = lo * BB_MU;
    let u = u32((u64(t) * u64(BB_P)) >> 32u);
    let r = hi - u;
    return select(r, r + BB_P, hi < u);
}
