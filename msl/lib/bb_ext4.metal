// requires: bb_field
// The degree-4 extension F[X]/(X^4 - 11): uint4 = (c0, c1, c2, c3) Montgomery words, each in [0, P).

uint4 ef_add(uint4 a, uint4 b) {
    return uint4(bb_add(a.x, b.x), bb_add(a.y, b.y), bb_add(a.z, b.z), bb_add(a.w, b.w));
}

uint4 ef_sub(uint4 a, uint4 b) {
    return uint4(bb_sub(a.x, b.x), bb_sub(a.y, b.y), bb_sub(a.z, b.z), bb_sub(a.w, b.w));
}

uint4 ef_mul_base(uint4 a, uint s) {
    return uint4(bb_mul(a.x, s), bb_mul(a.y, s), bb_mul(a.z, s), bb_mul(a.w, s));
}

uint4 ef_mul(uint4 a, uint4 b) {
    uint c0 = bb_add(bb_mul(a.x, b.x),
                     bb_mul(BB_W_MONTY, bb_add(bb_add(bb_mul(a.y, b.w), bb_mul(a.z, b.z)), bb_mul(a.w, b.y))));
    uint c1 = bb_add(bb_add(bb_mul(a.x, b.y), bb_mul(a.y, b.x)),
                     bb_mul(BB_W_MONTY, bb_add(bb_mul(a.z, b.w), bb_mul(a.w, b.z))));
    uint c2 = bb_add(bb_add(bb_add(bb_mul(a.x, b.z), bb_mul(a.y, b.y)), bb_mul(a.z, b.x)),
                     bb_mul(BB_W_MONTY, bb_mul(a.w, b.w)));
    uint c3 = bb_add(bb_add(bb_add(bb_mul(a.x, b.w), bb_mul(a.y, b.z)), bb_mul(a.z, b.y)), bb_mul(a.w, b.x));
    return uint4(c0, c1, c2, c3);
}
