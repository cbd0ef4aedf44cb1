// requires: poseidon2
// Merkle leaf hashing: digest[i] = PaddingFreeSponge<16, 8, 8>(row i) of a row-major (height, width) matrix.
// Thread i (2-D grid: i = gid.x + gid.y * threadgroups_per_grid.x * WG) hashes row row_off + i of the matrix
// binding into digest digest_off + i (windows of split arrays); threads with i >= height return. Bindings: 0 matrix (height * width Montgomery words), 1 digests (height * 8 words), 2 p2_rc, 3 params.
// Sponge: state = 0^16; each chunk of <= 8 words overwrites state[0..len] (the rest keeps its value), then
// permute; no padding, width 0 gives 0^8.

struct Params { uint height; uint width; uint row_off; uint digest_off; };

constant uint WG [[function_constant(0)]];

uint4 load4(device const uint* matrix, uint at) {
    return uint4(matrix[at], matrix[at + 1u], matrix[at + 2u], matrix[at + 3u]);
}

kernel void merkle_leaves(device const uint* matrix [[buffer(0)]], device uint4* digests [[buffer(1)]],
                          constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                          uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.height) {
        return;
    }
    uint width = params.width;
    uint row = (params.row_off + i) * width;
    P2State s = P2State{uint4(0u), uint4(0u), uint4(0u), uint4(0u)};
    uint n_chunks = (width + P2_RATE - 1u) / P2_RATE;
    for (uint c = 0u; c < n_chunks; c++) {      // one permutation call site: it is inlined once
        uint at = row + c * P2_RATE;
        uint len = width - c * P2_RATE;         // the same in every thread, so the branches are uniform
        if (len >= P2_RATE) {
            s.a = load4(matrix, at);
            s.b = load4(matrix, at + 4u);
        } else {                                // the last, partial chunk overwrites lanes 0..len only
            s.a.x = matrix[at];
            if (len > 1u) { s.a.y = matrix[at + 1u]; }
            if (len > 2u) { s.a.z = matrix[at + 2u]; }
            if (len > 3u) { s.a.w = matrix[at + 3u]; }
            if (len > 4u) { s.b.x = matrix[at + 4u]; }
            if (len > 5u) { s.b.y = matrix[at + 5u]; }
            if (len > 6u) { s.b.z = matrix[at + 6u]; }
        }
        s = poseidon2_permute(s, p2_rc);
    }
    uint d = 2u * (params.digest_off + i);
    digests[d] = s.a;
    digests[d + 1u] = s.b;
}
