// requires: bb_field
// The degree-4 extension F[X]/(X^4 - 11): vec4<u32> = (c0, c1, c2, c3) Montgomery words, each in [0, P).

fn ef_add(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(bb_add(a.x, b.x), bb_add(a.y, b.y), bb_add(a.z, b.z), bb_add(a.w, b.w));
}

// 2 hi - lo: a sumcheck round's value at 2 of the line through lo (at 0) and hi (at 1).
fn ef_twice_minus(hi: vec4<u32>, lo: vec4<u32>) -> vec4<u32> {
    return ef_add(hi, ef_sub(hi, lo));
}

fn ef_sub(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    return vec4<u32>(bb_sub(a.x, b.x), bb_sub(a.y, b.y), bb_sub(a.z, b.z), bb_sub(a.w, b.w));
}

fn ef_mul_base(a: vec4<u32>, s: u32) -> vec4<u32> {
    return vec4<u32>(bb_mul(a.x, s), bb_mul(a.y, s), bb_mul(a.z, s), bb_mul(a.w, s));
}

fn ef_mul(a: vec4<u32>, b: vec4<u32>) -> vec4<u32> {
    let c0 = bb_add(bb_mul(a.x, b.x),
                    bb_mul(BB_W_MONTY, bb_add(bb_add(bb_mul(a.y, b.w), bb_mul(a.z, b.z)), bb_mul(a.w, b.y))));
    let c1 = bb_add(bb_add(bb_mul(a.x, b.y), bb_mul(a.y, b.x)),
                    bb_mul(BB_W_MONTY, bb_add(bb_mul(a.z, b.w), bb_mul(a.w, b.z))));
    let c2 = bb_add(bb_add(bb_add(bb_mul(a.x, b.z), bb_mul(a.y, b.y)), bb_mul(a.z, b.x)),
                    bb_mul(BB_W_MONTY, bb_mul(a.w, b.w)));
    let c3 = bb_add(bb_add(bb_add(bb_mul(a.x, b.w), bb_mul(a.y, b.z)), bb_mul(a.z, b.y)), bb_mul(a.w, b.x));
    return vec4<u32>(c0, c1, c2, c3);
}
