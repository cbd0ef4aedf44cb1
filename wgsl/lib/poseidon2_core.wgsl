// requires: bb_field poseidon2_constants
// Poseidon2 pieces shared by every width (poseidon2 for 16, poseidon2_24 for 24): the lane-wise add, the S-box
// x^d (d = P2_SBOX_DEGREE, the field's: 7 for BabyBear, 3 for KoalaBear, the same at both widths), the 4x4 block
// M4 of the external layer and the lane-wise product. They read no round constants. All words in and out are
// Montgomery words in [0, P).

// in: [0, P); out: [0, P). min() picks the reduced value: the unreduced one wraps past 2^32 when it is wrong.
fn bb_add4(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    let s = x + y;
    return min(s, s - vec4<u32>(BB_P));
}

// in: [0, P); out: x^d in [0, P), d = P2_SBOX_DEGREE (7 for BabyBear, 3 for KoalaBear: a constant, so the
// branch is resolved at compile time).
fn p2_sbox(x: u32) -> u32 {
    if (P2_SBOX_DEGREE == 3u) {
        return bb_mul(bb_mul(x, x), x);
    }
    let x2 = bb_mul(x, x);
    let x3 = bb_mul_partial(x2, x);
    let x4 = bb_mul(x2, x2);
    return bb_mul(x4, x3);
}

// (x + rc)^d lane-wise. in: [0, P); out: [0, P).
fn p2_sbox4(x: vec4<u32>, rc: vec4<u32>) -> vec4<u32> {
    let y = bb_add4(x, rc);
    return vec4<u32>(p2_sbox(y.x), p2_sbox(y.y), p2_sbox(y.z), p2_sbox(y.w));
}

// M4 = [[2,3,1,1],[1,2,3,1],[1,1,2,3],[3,1,1,2]] on one chunk.
fn p2_mat4(x: vec4<u32>) -> vec4<u32> {
    let t01 = bb_add(x.x, x.y);
    let t23 = bb_add(x.z, x.w);
    let t0123 = bb_add(t01, t23);
    let t01123 = bb_add(t0123, x.y);
    let t01233 = bb_add(t0123, x.w);
    return vec4<u32>(bb_add(t01123, t01),             // 2a + 3b + c + d
                     bb_add(t01123, bb_add(x.z, x.z)), // a + 2b + 3c + d
                     bb_add(t01233, t23),             // a + b + 2c + 3d
                     bb_add(t01233, bb_add(x.x, x.x))); // 3a + b + c + 2d
}

// x * y lane-wise. in: [0, P); out: [0, P).
fn p2_mul4(x: vec4<u32>, y: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(bb_mul(x.x, y.x), bb_mul(x.y, y.y), bb_mul(x.z, y.z), bb_mul(x.w, y.w));
}
