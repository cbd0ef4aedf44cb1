// requires: bb_mul
// BabyBear arithmetic on Montgomery words (R = 2^32); bb_mul comes from the chosen multiply variant.
// in: [0, P) unless stated; out: [0, P).

uint bb_add(uint a, uint b) {
    uint s = a + b;  // < 2P < 2^32
    return min(s, s - BB_P);  // s - P wraps past 2^32 exactly when s < P
}

uint bb_sub(uint a, uint b) {
    uint d = a - b;
    return min(d, d + BB_P);  // d + P wraps below P exactly when a < b
}

uint bb_neg(uint a) {
    return bb_sub(0u, a);
}

uint bb_square(uint a) {
    return bb_mul(a, a);
}

// base^e by square-and-multiply over the bits of e. in: [0, P); out: [0, P).
uint bb_pow(uint base, uint e) {
    uint acc = BB_R;
    uint sq = base;
    for (uint rest = e; rest != 0u; rest >>= 1u) {
        if ((rest & 1u) != 0u) {
            acc = bb_mul(acc, sq);
        }
        sq = bb_mul(sq, sq);
    }
    return acc;
}
