// requires: bb_mul
// BabyBear arithmetic on Montgomery words (R = 2^32); bb_mul comes from the chosen multiply variant.
// in: [0, P) unless stated; out: [0, P).

fn bb_add(a: u32, b: u32) -> u32 {
    let s = a + b;  // < 2P < 2^32
    return select(s, s - BB_P, s >= BB_P);
}

fn bb_sub(a: u32, b: u32) -> u32 {
    let d = a - b;
    return select(d, d + BB_P, a < b);
}

fn bb_neg(a: u32) -> u32 {
    return bb_sub(0u, a);
}

fn bb_square(a: u32) -> u32 {
    return bb_mul(a, a);
}
