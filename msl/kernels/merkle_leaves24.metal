// requires: poseidon2_24
// Merkle leaf hashing with p3-whir's leaf hash: digest[i] = PaddingFreeSponge<Perm24, 24, 16, 8>(row i) of a
// row-major (height, width) matrix, width >= 0 words (an EF row of 2^k elements is its 4 * 2^k base words). The same
// grid, windows and bindings as merkle_leaves (width 16, rate 8): thread i (2-D grid: i = gid.x + gid.y *
// threadgroups_per_grid.x * WG) hashes row row_off + i of the matrix binding into digest digest_off + i of the
// digests binding (windows of split arrays); threads with i >= height return. Bindings: 0 matrix (height * width
// Montgomery words), 1 digests (height * 8 words), 2 width-24 round constants (constants.poseidon2_rc_table(field,
// 24)), 3 params.
// Sponge: state = 0^24; each chunk of <= 16 words overwrites state[0..len] (lanes len..24 keep their value), then
// permute; no padding, width 0 gives 0^8.
// Entry merkle_permute24: the raw permutation of `height` 24-word states, src state row_off + j -> dst state
// digest_off + j (6 vec4 each; tests).

struct Params { uint height; uint width; uint row_off; uint digest_off; };

constant uint WG [[function_constant(0)]];

// Lanes 0..n (n clamped to 4) of the 4 words at matrix[at ..]; the other lanes keep `keep`'s.
uint4 load_part(device const uint* matrix, uint at, uint n, uint4 keep) {
    if (n >= 4u) {
        return uint4(matrix[at], matrix[at + 1u], matrix[at + 2u], matrix[at + 3u]);
    }
    uint4 v = keep;
    if (n > 0u) { v.x = matrix[at]; }
    if (n > 1u) { v.y = matrix[at + 1u]; }
    if (n > 2u) { v.z = matrix[at + 2u]; }
    return v;
}

// Words of a chunk of n from lane q on (0 when n <= q).
uint words_from(uint n, uint q) {
    return n > q ? n - q : 0u;
}

kernel void merkle_leaves24(device const uint* matrix [[buffer(0)]], device uint4* digests [[buffer(1)]],
                            constant uint4* p24_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                            uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.height) {
        return;
    }
    uint width = params.width;
    uint row = (params.row_off + i) * width;
    P24State s = P24State{uint4(0u), uint4(0u), uint4(0u), uint4(0u), uint4(0u), uint4(0u)};
    uint n_chunks = (width + P24_RATE - 1u) / P24_RATE;
    for (uint c = 0u; c < n_chunks; c++) {      // one permutation call site: it is inlined once
        uint at = row + c * P24_RATE;
        uint n = min(width - c * P24_RATE, P24_RATE);  // the same in every thread, so the branches are uniform
        s.a = load_part(matrix, at, n, s.a);
        s.b = load_part(matrix, at + 4u, words_from(n, 4u), s.b);
        s.c = load_part(matrix, at + 8u, words_from(n, 8u), s.c);
        s.d = load_part(matrix, at + 12u, words_from(n, 12u), s.d);
        s = poseidon2_24_permute(s, p24_rc);
    }
    uint d = 2u * (params.digest_off + i);
    digests[d] = s.a;
    digests[d + 1u] = s.b;
}

kernel void merkle_permute24(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                             constant uint4* p24_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                             uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.height) {
        return;
    }
    uint at = 6u * (params.row_off + j);
    P24State s = poseidon2_24_permute(P24State{src[at], src[at + 1u], src[at + 2u], src[at + 3u], src[at + 4u],
                                               src[at + 5u]}, p24_rc);
    uint o = 6u * (params.digest_off + j);
    dst[o] = s.a;
    dst[o + 1u] = s.b;
    dst[o + 2u] = s.c;
    dst[o + 3u] = s.d;
    dst[o + 4u] = s.e;
    dst[o + 5u] = s.f;
}
