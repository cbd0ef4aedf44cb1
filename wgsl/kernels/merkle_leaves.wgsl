// requires: poseidon2
// Merkle leaf hashing: digest[i] = PaddingFreeSponge<16, 8, 8>(row i) of a row-major (height, width) matrix.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) hashes row row_off + i of the matrix binding into
// digest digest_off + i of the digests binding (windows of split arrays); threads with i >= height return.
// Bindings: 0 matrix (height * width Montgomery words), 1 digests (height * 8 words), 2 Poseidon2 round
// constants (constants.poseidon2_rc_table), 3 params.
// Sponge: state = 0^16; each chunk of <= 8 words overwrites state[0..len] (the rest keeps its value), then
// permute; no padding, width 0 gives 0^8.

struct Params { height: u32, width: u32, row_off: u32, digest_off: u32 }

@id(0) override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(1) var<storage, read_write> digests: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(3) var<uniform> params: Params;

fn load4(at: u32) -> vec4<u32> {
    return vec4<u32>(matrix[at], matrix[at + 1u], matrix[at + 2u], matrix[at + 3u]);
}

@compute @workgroup_size(WG)
fn merkle_leaves(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.height) {
        return;
    }
    let width = params.width;
    let row = (params.row_off + i) * width;
    var s = P2State(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    let n_chunks = (width + P2_RATE - 1u) / P2_RATE;
    for (var c = 0u; c < n_chunks; c++) {       // one permutation call site: it is inlined once
        let at = row + c * P2_RATE;
        let len = width - c * P2_RATE;          // the same in every thread, so the branches are uniform
        if (len >= P2_RATE) {
            s.a = load4(at);
            s.b = load4(at + 4u);
        } else {                                // the last, partial chunk overwrites lanes 0..len only
            s.a.x = matrix[at];
            if (len > 1u) { s.a.y = matrix[at + 1u]; }
            if (len > 2u) { s.a.z = matrix[at + 2u]; }
            if (len > 3u) { s.a.w = matrix[at + 3u]; }
            if (len > 4u) { s.b.x = matrix[at + 4u]; }
            if (len > 5u) { s.b.y = matrix[at + 5u]; }
            if (len > 6u) { s.b.z = matrix[at + 6u]; }
        }
        s = poseidon2_permute(s);
    }
    let d = 2u * (params.digest_off + i);
    digests[d] = s.a;
    digests[d + 1u] = s.b;
}
