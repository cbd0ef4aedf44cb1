// BabyBear Montgomery product with Metal's native mulhi: 8 integer operations (the MSL default variant).
// in: a * b < P * 2^32, so that hi - u lies in (-P, P): a, b in [0, 2^31), or a in [0, P) and b a
// bb_mul_partial result ([0, 2P)); out: a * b * 2^-32 mod P in [0, P).
uint bb_mul(uint a, uint b) {
    uint t = (a * b) * BB_MU;  // lo(t * P) == lo(a * b): the low words cancel without a borrow
    uint r = mulhi(a, b) - mulhi(t, BB_P);
    return min(r, r + BB_P);  // r + P wraps below P exactly when hi < u
}

// The same product left unreduced, for use only as bb_mul's b. in: [0, P); out: congruent, in (0, 2P).
uint bb_mul_partial(uint a, uint b) {
    uint t = (a * b) * BB_MU;
    return mulhi(a, b) - mulhi(t, BB_P) + BB_P;
}
