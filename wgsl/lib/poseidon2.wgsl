// requires: poseidon2_core
// Poseidon2 of width 16 over the composed field (BabyBear: Plonky3 Poseidon2BabyBear<16> with whir-p3's SmallRng(1)
// constants, S-box x^7, 13 internal rounds; KoalaBear: Poseidon2KoalaBear<16> with p3-whir's, x^3, 20), rolled:
// loops over rounds, lanes written out. The state is a P2State value (lanes 0-3, 4-7, 8-11, 12-15) and every
// lane index is a compile-time constant, so it lives in registers. Round constants are read from `p2_rc`, a
// read-only storage binding that each kernel declares (layout: constants.P2_RC_LAYOUT, uniform across threads).
// BabyBear's internal diagonal V = [-2, 1, 2, 1/2, 3, 4, -1/2, -3, -4, 1/2^8, 1/4, 1/8, 1/2^27, -1/2^8, -1/16,
// -1/2^27] is applied with adds and exact halvings (no products); another field's by products with the table's
// diagonal. The counts come from the generated poseidon2_constants. All words in and out are Montgomery words in
// [0, P).
// The lane-wise add and product, the S-box and M4 are poseidon2_core's (shared with the width-24 poseidon2_24).

struct P2State {
    a: vec4<u32>,
    b: vec4<u32>,
    c: vec4<u32>,
    d: vec4<u32>,
}

// x / 2^k mod P for 1 <= k <= 27; linear, so it holds on Montgomery words. in: [0, P); out: [0, P).
// With x = q 2^k + r and 2^-k = -15 * 2^(27-k) (mod P): x / 2^k = q - r * 15 * 2^(27-k), which lies in (-P, P).
fn bb_div_pow2(x: u32, k: u32) -> u32 {
    let d = (x >> k) - (x & ((1u << k) - 1u)) * (15u << (27u - k));
    return min(d, d + BB_P);
}

// circ(2 M4, M4, M4, M4): M4 on each chunk, then s[i] += sum_c s[4c + i mod 4].
fn p2_mds_light(s: P2State) -> P2State {
    let a = p2_mat4(s.a);
    let b = p2_mat4(s.b);
    let c = p2_mat4(s.c);
    let d = p2_mat4(s.d);
    let sum = bb_add4(bb_add4(a, b), bb_add4(c, d));
    return P2State(bb_add4(a, sum), bb_add4(b, sum), bb_add4(c, sum), bb_add4(d, sum));
}

// s[i] = (s[i] + rc[i])^7 for all i, then mds_light; round r's constants are p2_rc[4r .. 4r + 4].
fn p2_external_round(s: P2State, r: u32) -> P2State {
    let k = 4u * r;
    return p2_mds_light(P2State(p2_sbox4(s.a, p2_rc[k]), p2_sbox4(s.b, p2_rc[k + 1u]),
                                p2_sbox4(s.c, p2_rc[k + 2u]), p2_sbox4(s.d, p2_rc[k + 3u])));
}

// s0 = (s0 + rc)^d; s = (1 + diag(V)) s with V the table's diagonal (p2_rc rows P2_RC_DIAG_AT ..): any field.
fn p2_internal_round_diag(s: P2State, rc: u32) -> P2State {
    let a = vec4<u32>(p2_sbox(bb_add(s.a.x, rc)), s.a.y, s.a.z, s.a.w);
    let t = bb_add4(bb_add4(a, s.b), bb_add4(s.c, s.d));
    let full = vec4<u32>(bb_add(bb_add(t.x, t.y), bb_add(t.z, t.w)));
    return P2State(bb_add4(full, p2_mul4(a, p2_rc[P2_RC_DIAG_AT])),
                   bb_add4(full, p2_mul4(s.b, p2_rc[P2_RC_DIAG_AT + 1u])),
                   bb_add4(full, p2_mul4(s.c, p2_rc[P2_RC_DIAG_AT + 2u])),
                   bb_add4(full, p2_mul4(s.d, p2_rc[P2_RC_DIAG_AT + 3u])));
}

// s0 = (s0 + rc)^d; s = (1 + diag(V)) s: BabyBear's V as adds and exact halvings (P2_HALVING_DIAGONAL), else
// p2_internal_round_diag.
fn p2_internal_round(s: P2State, rc: u32) -> P2State {
    if (P2_HALVING_DIAGONAL == 0u) {
        return p2_internal_round_diag(s, rc);
    }
    let s0 = p2_sbox(bb_add(s.a.x, rc));
    let bcd = bb_add4(bb_add4(s.b, s.c), s.d);
    let part = bb_add(bb_add(bb_add(bcd.x, bcd.y), bb_add(bcd.z, bcd.w)),
                      bb_add(bb_add(s.a.y, s.a.z), s.a.w));     // s1 + ... + s15
    let full = bb_add(part, s0);
    let b2 = bb_add4(s.b, s.b);
    let c2 = bb_add(s.c.x, s.c.x);
    return P2State(
        vec4<u32>(bb_sub(part, s0),                             // full - 2 s0
                  bb_add(full, s.a.y),                          // 1
                  bb_add(full, bb_add(s.a.z, s.a.z)),           // 2
                  bb_add(full, bb_div_pow2(s.a.w, 1u))),        // 1/2
        vec4<u32>(bb_add(full, bb_add(b2.x, s.b.x)),            // 3
                  bb_add(full, bb_add(b2.y, b2.y)),             // 4
                  bb_sub(full, bb_div_pow2(s.b.z, 1u)),         // -1/2
                  bb_sub(full, bb_add(b2.w, s.b.w))),           // -3
        vec4<u32>(bb_sub(full, bb_add(c2, c2)),                 // -4
                  bb_add(full, bb_div_pow2(s.c.y, 8u)),         // 1/2^8
                  bb_add(full, bb_div_pow2(s.c.z, 2u)),         // 1/4
                  bb_add(full, bb_div_pow2(s.c.w, 3u))),        // 1/8
        vec4<u32>(bb_add(full, bb_div_pow2(s.d.x, 27u)),        // 1/2^27
                  bb_sub(full, bb_div_pow2(s.d.y, 8u)),         // -1/2^8
                  bb_sub(full, bb_div_pow2(s.d.z, 4u)),         // -1/16
                  bb_sub(full, bb_div_pow2(s.d.w, 27u))));      // -1/2^27
}

// The permutation. in/out: 16 Montgomery words in [0, P).
fn poseidon2_permute(state: P2State) -> P2State {
    var s = p2_mds_light(state);
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        s = p2_external_round(s, r);
    }
    for (var r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        s = p2_internal_round(s, p2_rc[P2_RC_INTERNAL_AT + r].x);
    }
    for (var r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        s = p2_external_round(s, r);
    }
    return s;
}
