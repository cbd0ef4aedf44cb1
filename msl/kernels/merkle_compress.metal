// requires: poseidon2 poseidon2_coop
// One Merkle level: parent[j] = perm(child[2j] || child[2j + 1])[0..8] (TruncatedPermutation<2, 8, 16>).
// Thread j (2-D grid: j = gid.x + gid.y * threadgroups_per_grid.x * WG) makes parent j; threads with j >= n
// return. Bindings: 0 src (child level, 2n * 8 words), 1 dst (parent level, n * 8 words; src and dst may be
// disjoint ranges of one buffer), 2 p2_rc, 3 params.
// merkle_permute: the raw permutation of n 16-word states, src state j -> dst state j. *_coop: the same with
// 4 threads per state (thread t = threadgroup index * P2C_WG + lid serves state t / 4). Every entry reads src from
// vec4 src_off and writes dst from vec4 dst_off. The top levels of a tree are merkle_top.metal's.

struct Params { uint n; uint src_off; uint dst_off; uint _pad0; };

constant uint WG [[function_constant(0)]];

// The 16 words at src[4 j ..] (two adjacent children are one contiguous 16-word block), permuted.
P2State permute_block(device const uint4* src, uint j, constant uint4* p2_rc) {
    uint at = 4u * j;
    return poseidon2_permute(P2State{src[at], src[at + 1u], src[at + 2u], src[at + 3u]}, p2_rc);
}

kernel void merkle_compress(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                            constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                            uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    P2State s = permute_block(src + params.src_off, j, p2_rc);
    dst += params.dst_off;
    dst[2u * j] = s.a;
    dst[2u * j + 1u] = s.b;
}

kernel void merkle_permute(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                           constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                           uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    P2State s = permute_block(src + params.src_off, j, p2_rc);
    dst += params.dst_off;
    dst[4u * j] = s.a;
    dst[4u * j + 1u] = s.b;
    dst[4u * j + 2u] = s.c;
    dst[4u * j + 3u] = s.d;
}

// Chunk q = lid & 3 of state j, permuted; threads past the last state permute state 0 (n >= 1) and drop it.
uint4 coop_permute(device const uint4* src, uint j, uint n, uint lid, constant uint4* p2_rc) {
    return p2c_permute(src[4u * select(0u, j, j < n) + (lid & 3u)], lid, p2_rc);
}

kernel void merkle_compress_coop(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                                 constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                                 uint lid [[thread_index_in_threadgroup]],
                                 uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint j = ((wid.x + wid.y * nwg.x) * P2C_WG + lid) >> 2u;
    uint4 x = coop_permute(src + params.src_off, j, params.n, lid, p2_rc);
    dst += params.dst_off;
    if (j < params.n && (lid & 3u) < 2u) {
        dst[2u * j + (lid & 3u)] = x;
    }
}

kernel void merkle_permute_coop(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                                constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                                uint lid [[thread_index_in_threadgroup]],
                                uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint j = ((wid.x + wid.y * nwg.x) * P2C_WG + lid) >> 2u;
    uint4 x = coop_permute(src + params.src_off, j, params.n, lid, p2_rc);
    dst += params.dst_off;
    if (j < params.n) {
        dst[4u * j + (lid & 3u)] = x;
    }
}
