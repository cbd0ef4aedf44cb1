// requires: poseidon2
// Cooperative Poseidon2 for launches too small to fill the GPU: 4 threads per state, thread q (= lane mod 4)
// holds chunk q (lanes 4q..4q+3). The 4 chunks of a state sit in adjacent lanes of one simd-group, so they
// meet through simd_shuffle_xor: no threadgroup memory and no barrier (the WGSL twin goes through workgroup
// memory). Workgroups are P2C_WG threads, and every thread must call p2c_permute (its shuffles need all lanes):
// threads without a state permute a copy and drop it. The internal diagonal is a product by V (Montgomery
// words in p2_rc), the same for every chunk.

constant constexpr uint P2C_WG = 64u;

// The sum of the 4 values held by the 4 lanes of this thread's state. in/out: [0, P).
uint4 p2c_sum4(uint4 y) {
    uint4 pair = bb_add4(y, simd_shuffle_xor(y, ushort(1)));
    return bb_add4(pair, simd_shuffle_xor(pair, ushort(2)));
}

uint p2c_sum4_word(uint y) {
    uint pair = bb_add(y, simd_shuffle_xor(y, ushort(1)));
    return bb_add(pair, simd_shuffle_xor(pair, ushort(2)));
}

// mds_light on chunk x: M4 locally, then the 4 chunks of its state are summed across lanes.
uint4 p2c_mds_light(uint4 x) {
    uint4 y = p2_mat4(x);
    return bb_add4(y, p2c_sum4(y));
}

// The permutation of the state whose chunk q = lid & 3 this thread holds. in/out: Montgomery words in [0, P).
uint4 p2c_permute(uint4 chunk, uint lid, constant uint4* p2_rc) {
    uint q = lid & 3u;
    uint4 diag = p2_rc[P2_RC_DIAG_AT + q];
    uint4 x = p2c_mds_light(chunk);
    for (uint r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = p2c_mds_light(p2_sbox4(x, p2_rc[4u * r + q]));
    }
    for (uint r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        // every thread computes the s-box of its lane 0; only chunk 0 keeps it
        uint s0 = p2_sbox(bb_add(x.x, p2_rc[P2_RC_INTERNAL_AT + r].x));
        x.x = select(x.x, s0, q == 0u);
        uint full = p2c_sum4_word(bb_add(bb_add(x.x, x.y), bb_add(x.z, x.w)));
        x = bb_add4(uint4(full), uint4(bb_mul(x.x, diag.x), bb_mul(x.y, diag.y),
                                       bb_mul(x.z, diag.z), bb_mul(x.w, diag.w)));
    }
    for (uint r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = p2c_mds_light(p2_sbox4(x, p2_rc[4u * r + q]));
    }
    return x;
}
