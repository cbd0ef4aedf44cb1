// requires: poseidon2_core poseidon2_24_constants
// Poseidon2 of width 24 over the composed field (Plonky3 Poseidon2BabyBear<24>: x^7, 21 internal rounds;
// Poseidon2KoalaBear<24>: x^3, 23; both with p3-whir's SmallRng(1) constants drawn after the width-16 ones), the
// permutation of p3-whir's Merkle leaf sponge. Rolled like poseidon2 (loops over rounds, lanes written out): the
// state is a P24State value (lanes 0-3, 4-7, ..., 20-23) and every lane index is a compile-time constant, so it lives
// in registers. Round constants are read from `p24_rc`, a read-only storage binding that each kernel declares
// (layout: constants.poseidon2_rc_table(field, 24): 6 vec4 rows per external round, P24_RC_INTERNAL_AT + r for
// internal round r in lane 0, P24_RC_DIAG_AT .. + 6 the internal diagonal V), uniform across threads. The internal
// layer is s = (1 + diag(V)) s by products with V for both fields. The counts come from the generated
// poseidon2_24_constants; the S-box, M4 and the lane-wise helpers are poseidon2_core's. All words in and out are
// Montgomery words in [0, P).

struct P24State {
    a: vec4<u32>,
    b: vec4<u32>,
    c: vec4<u32>,
    d: vec4<u32>,
    e: vec4<u32>,
    f: vec4<u32>,
}

// circ(2 M4, M4, M4, M4, M4, M4): M4 on each of the 6 chunks, then s[i] += sum_c s[4c + i mod 4]. in/out: [0, P).
fn p24_mds_light(s: P24State) -> P24State {
    let a = p2_mat4(s.a);
    let b = p2_mat4(s.b);
    let c = p2_mat4(s.c);
    let d = p2_mat4(s.d);
    let e = p2_mat4(s.e);
    let f = p2_mat4(s.f);
    let sum = bb_add4(bb_add4(bb_add4(a, b), bb_add4(c, d)), bb_add4(e, f));
    return P24State(bb_add4(a, sum), bb_add4(b, sum), bb_add4(c, sum), bb_add4(d, sum), bb_add4(e, sum),
                    bb_add4(f, sum));
}

// s[i] = (s[i] + rc[i])^d for all i, then mds_light; round r's constants are p24_rc[6r .. 6r + 6].
fn p24_external_round(s: P24State, r: u32) -> P24State {
    let k = 6u * r;
    return p24_mds_light(P24State(p2_sbox4(s.a, p24_rc[k]), p2_sbox4(s.b, p24_rc[k + 1u]),
                                  p2_sbox4(s.c, p24_rc[k + 2u]), p2_sbox4(s.d, p24_rc[k + 3u]),
                                  p2_sbox4(s.e, p24_rc[k + 4u]), p2_sbox4(s.f, p24_rc[k + 5u])));
}

// s0 = (s0 + rc)^d; then s[i] = sum_j s[j] + V[i] s[i] with V the table's diagonal. in/out: [0, P).
fn p24_internal_round(s: P24State, rc: u32) -> P24State {
    let a = vec4<u32>(p2_sbox(bb_add(s.a.x, rc)), s.a.y, s.a.z, s.a.w);
    let t = bb_add4(bb_add4(bb_add4(a, s.b), bb_add4(s.c, s.d)), bb_add4(s.e, s.f));
    let full = vec4<u32>(bb_add(bb_add(t.x, t.y), bb_add(t.z, t.w)));
    return P24State(bb_add4(full, p2_mul4(a, p24_rc[P24_RC_DIAG_AT])),
                    bb_add4(full, p2_mul4(s.b, p24_rc[P24_RC_DIAG_AT + 1u])),
                    bb_add4(full, p2_mul4(s.c, p24_rc[P24_RC_DIAG_AT + 2u])),
                    bb_add4(full, p2_mul4(s.d, p24_rc[P24_RC_DIAG_AT + 3u])),
                    bb_add4(full, p2_mul4(s.e, p24_rc[P24_RC_DIAG_AT + 4u])),
                    bb_add4(full, p2_mul4(s.f, p24_rc[P24_RC_DIAG_AT + 5u])));
}

// The permutation. in/out: 24 Montgomery words in [0, P).
fn poseidon2_24_permute(state: P24State) -> P24State {
    var s = p24_mds_light(state);
    for (var r = 0u; r < P24_EXTERNAL_HALF_ROUNDS; r++) {
        s = p24_external_round(s, r);
    }
    for (var r = 0u; r < P24_INTERNAL_ROUNDS; r++) {
        s = p24_internal_round(s, p24_rc[P24_RC_INTERNAL_AT + r].x);
    }
    for (var r = P24_EXTERNAL_HALF_ROUNDS; r < 2u * P24_EXTERNAL_HALF_ROUNDS; r++) {
        s = p24_external_round(s, r);
    }
    return s;
}
