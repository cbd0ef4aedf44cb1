// requires: poseidon2
// Cooperative Poseidon2 for launches too small to fill the GPU: 4 threads per state, thread q (= local id mod 4)
// holds chunk q (lanes 4q..4q+3). Chunks meet in workgroup memory, double-buffered by exchange parity so each
// exchange costs one barrier; a permutation's latency drops about 4x. Workgroups are P2C_WG threads, and every
// thread must call p2c_permute (it has barriers): threads without a state permute a copy and drop it.
// The internal diagonal is a product by V (Montgomery words in p2_rc), the same for every chunk.

const P2C_WG: u32 = 64u;

var<workgroup> p2c_chunks: array<vec4<u32>, 128>;   // [parity][local id], 2 * P2C_WG
var<workgroup> p2c_sums: array<u32, 128>;

// mds_light on chunk x of thread `lid`: M4 locally, then the 4 chunks of its state are summed through p2c_chunks.
fn p2c_mds_light(x: vec4<u32>, lid: u32, parity: u32) -> vec4<u32> {
    let y = p2_mat4(x);
    let at = parity * P2C_WG;
    p2c_chunks[at + lid] = y;
    workgroupBarrier();
    let first = at + (lid & ~3u);
    let sum = bb_add4(bb_add4(p2c_chunks[first], p2c_chunks[first + 1u]),
                      bb_add4(p2c_chunks[first + 2u], p2c_chunks[first + 3u]));
    return bb_add4(y, sum);
}

// The permutation of the state whose chunk q this thread holds. in/out: Montgomery words in [0, P).
fn p2c_permute(chunk: vec4<u32>, lid: u32) -> vec4<u32> {
    let q = lid & 3u;
    let diag = p2_rc[P2_RC_DIAG_AT + q];
    var x = p2c_mds_light(chunk, lid, 0u);
    var parity = 1u;
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = p2c_mds_light(p2_sbox4(x, p2_rc[4u * r + q]), lid, parity);
        parity ^= 1u;
    }
    for (var r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        // every thread computes the s-box of its lane 0; only chunk 0 keeps it
        let s0 = p2_sbox(bb_add(x.x, p2_rc[P2_RC_INTERNAL_AT + r].x));
        x.x = select(x.x, s0, q == 0u);
        let at = parity * P2C_WG;
        p2c_sums[at + lid] = bb_add(bb_add(x.x, x.y), bb_add(x.z, x.w));
        workgroupBarrier();
        let first = at + (lid & ~3u);
        let full = bb_add(bb_add(p2c_sums[first], p2c_sums[first + 1u]),
                          bb_add(p2c_sums[first + 2u], p2c_sums[first + 3u]));
        x = bb_add4(vec4<u32>(full), vec4<u32>(bb_mul(x.x, diag.x), bb_mul(x.y, diag.y),
                                               bb_mul(x.z, diag.z), bb_mul(x.w, diag.w)));
        parity ^= 1u;
    }
    for (var r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = p2c_mds_light(p2_sbox4(x, p2_rc[4u * r + q]), lid, parity);
        parity ^= 1u;
    }
    return x;
}
