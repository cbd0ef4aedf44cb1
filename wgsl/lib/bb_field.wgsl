// requires: bb_mul
// BabyBear arithmetic on Montgomery words (R = 2^32); bb_mul comes from the chosen multiply variant.
// in: [0, P) unless stated; out: [0, P).

fn bb_add(a: u32, b: u32) -> u32 {
    let s = a + b;  // < 2P < 2^32
    return min(s, s - BB_P);  // s - P wraps past 2^32 exactly when s < P
}

fn bb_sub(a: u32, b: u32) -> u32 {
    let d = a - b;
    return min(d, d + BB_P);  // d + P wraps below P exactly when a < b
}

fn bb_neg(a: u32) -> u32 {
    return bb_sub(0u, a);
}

fn bb_square(a: u32) -> u32 {
    return bb_mul(a, a);
}

// base^e by square-and-multiply over the bits of e. in: [0, P); out: [0, P).
fn bb_pow(base: u32, e: u32) -> u32 {
    var acc = BB_R;
    var sq = base;
    var rest = e;
    while (rest != 0u) {
        if ((rest & 1u) != 0u) {
            acc = bb_mul(acc, sq);
        }
        sq = bb_mul(sq, sq);
        rest >>= 1u;
    }
    return acc;
}
