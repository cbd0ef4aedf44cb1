// requires: bb_field poseidon2_constants
// Poseidon2 over BabyBear, width 16 (Plonky3 Poseidon2BabyBear<16>, whir-p3's SmallRng(1) constants), rolled:
// loops over rounds, lanes written out. State: 16 Montgomery words in [0, P), updated in place.
// Internal diagonal V = [-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/2^8, 1/4, 1/8, 1/2^27, -1/2^8, -1/16, -1/2^27]
// is applied with adds and exact halvings (no products).

// x / 2^k mod P for 1 <= k <= 27; linear, so it holds on Montgomery words. in: [0, P); out: [0, P).
fn bb_div_pow2(x: u32, k: u32) -> u32 {
    let m = (0u - x) & ((1u << k) - 1u);                 // x + m == 0 (mod 2^k)
    let r = ((x + m) >> k) + m * (15u << (27u - k));     // (x + m * P) / 2^k, as P = 15 * 2^27 + 1; < 2P
    return select(r, r - BB_P, r >= BB_P);
}

// in: [0, P); out: x^7 in [0, P).
fn p2_sbox(x: u32) -> u32 {
    let x2 = bb_mul(x, x);
    let x3 = bb_mul(x2, x);
    let x4 = bb_mul(x2, x2);
    return bb_mul(x3, x4);
}

// M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on s[c..c+4].
fn p2_mat4(s: ptr<function, array<u32, 16>>, c: u32) {
    let x0 = (*s)[c];
    let x1 = (*s)[c + 1u];
    let x2 = (*s)[c + 2u];
    let x3 = (*s)[c + 3u];
    let t01 = bb_add(x0, x1);
    let t23 = bb_add(x2, x3);
    let t0123 = bb_add(t01, t23);
    let t01123 = bb_add(t0123, x1);
    let t01233 = bb_add(t0123, x3);
    (*s)[c] = bb_add(t01123, t01);                       // 2a + 3b + c + d
    (*s)[c + 1u] = bb_add(t01123, bb_add(x2, x2));       // a + 2b + 3c + d
    (*s)[c + 2u] = bb_add(t01233, t23);                  // a + b + 2c + 3d
    (*s)[c + 3u] = bb_add(t01233, bb_add(x0, x0));       // 3a + b + c + 2d
}

// circ(2 M4, M4, M4, M4): M4 on each chunk, then s[i] += sum_c s[4c + i mod 4].
fn p2_mds_light(s: ptr<function, array<u32, 16>>) {
    p2_mat4(s, 0u);
    p2_mat4(s, 4u);
    p2_mat4(s, 8u);
    p2_mat4(s, 12u);
    for (var k = 0u; k < 4u; k++) {
        let sum = bb_add(bb_add((*s)[k], (*s)[k + 4u]), bb_add((*s)[k + 8u], (*s)[k + 12u]));
        (*s)[k] = bb_add((*s)[k], sum);
        (*s)[k + 4u] = bb_add((*s)[k + 4u], sum);
        (*s)[k + 8u] = bb_add((*s)[k + 8u], sum);
        (*s)[k + 12u] = bb_add((*s)[k + 12u], sum);
    }
}

// s[i] = (s[i] + rc[16 r + i])^7 for all i, then mds_light; terminal selects the table.
fn p2_external_round(s: ptr<function, array<u32, 16>>, r: u32, terminal: bool) {
    for (var i = 0u; i < 16u; i++) {
        var rc: u32;
        if (terminal) { rc = P2_RC_EXTERNAL_TERMINAL[16u * r + i]; } else { rc = P2_RC_EXTERNAL_INITIAL[16u * r + i]; }
        (*s)[i] = p2_sbox(bb_add((*s)[i], rc));
    }
    p2_mds_light(s);
}

// s0 = (s0 + rc_int[r])^7; s = (1 + diag(V)) s.
fn p2_internal_round(s: ptr<function, array<u32, 16>>, r: u32) {
    let s0 = p2_sbox(bb_add((*s)[0], P2_RC_INTERNAL[r]));
    var part = (*s)[1];
    for (var i = 2u; i < 16u; i++) {
        part = bb_add(part, (*s)[i]);
    }
    let full = bb_add(part, s0);
    (*s)[0] = bb_sub(part, s0);                                             // full - 2 s0
    (*s)[1] = bb_add(full, (*s)[1]);                                        // 1
    (*s)[2] = bb_add(full, bb_add((*s)[2], (*s)[2]));                       // 2
    (*s)[3] = bb_add(full, bb_div_pow2((*s)[3], 1u));                       // 1/2
    let s4 = (*s)[4];
    (*s)[4] = bb_add(full, bb_add(bb_add(s4, s4), s4));                    // 3
    let s5 = bb_add((*s)[5], (*s)[5]);
    (*s)[5] = bb_add(full, bb_add(s5, s5));                                 // 4
    (*s)[6] = bb_sub(full, bb_div_pow2((*s)[6], 1u));                       // -1/2
    let s7 = (*s)[7];
    (*s)[7] = bb_sub(full, bb_add(bb_add(s7, s7), s7));                    // -3
    let s8 = bb_add((*s)[8], (*s)[8]);
    (*s)[8] = bb_sub(full, bb_add(s8, s8));                                 // -4
    (*s)[9] = bb_add(full, bb_div_pow2((*s)[9], 8u));                       // 1/2^8
    (*s)[10] = bb_add(full, bb_div_pow2((*s)[10], 2u));                     // 1/4
    (*s)[11] = bb_add(full, bb_div_pow2((*s)[11], 3u));                     // 1/8
    (*s)[12] = bb_add(full, bb_div_pow2((*s)[12], 27u));                    // 1/2^27
    (*s)[13] = bb_sub(full, bb_div_pow2((*s)[13], 8u));                     // -1/2^8
    (*s)[14] = bb_sub(full, bb_div_pow2((*s)[14], 4u));                     // -1/16
    (*s)[15] = bb_sub(full, bb_div_pow2((*s)[15], 27u));                    // -1/2^27
}

// The permutation. in/out: 16 Montgomery words in [0, P).
fn poseidon2_permute(s: ptr<function, array<u32, 16>>) {
    p2_mds_light(s);
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        p2_external_round(s, r, false);
    }
    for (var r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        p2_internal_round(s, r);
    }
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        p2_external_round(s, r, true);
    }
}
