// requires: poseidon2 poseidon2_coop
// One Merkle level: parent[j] = perm(child[2j] || child[2j + 1])[0..8] (TruncatedPermutation<2, 8, 16>).
// Thread j (2-D grid: j = gid.x + gid.y * threadgroups_per_grid.x * WG) makes parent j; threads with j >= n
// return. Bindings: 0 src (child level, 2n * 8 words), 1 dst (parent level, n * 8 words; src and dst may be
// disjoint ranges of one buffer), 2 p2_rc, 3 params.
// merkle_permute: the raw permutation of n 16-word states, src state j -> dst state j. *_coop: the same with
// 4 threads per state (thread t = threadgroup index * P2C_WG + lid serves state t / 4). merkle_top (n / per
// threadgroups of P2C_WG threads, g = wid.x + wid.y * nwg.x): the levels of n, n / 2, ..., n / per parents back to
// back in dst (level k at digest sum_{i<k} n >> i); threadgroup g makes the subtree over parents [g per, (g + 1)
// per) up to its root, its levels kept in dst (device barriers between levels). n, per powers of two, per <= n;
// it ignores src_off / dst_off. The other entries read src from vec4 src_off and write dst from vec4 dst_off.

struct Params { uint n; uint src_off; uint dst_off; uint per; };

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

kernel void merkle_top(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                       constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                       uint lid [[thread_index_in_threadgroup]], uint3 wid [[threadgroup_position_in_grid]],
                       uint3 nwg [[threadgroups_per_grid]]) {
    uint g = wid.x + wid.y * nwg.x;
    if (g >= params.n / params.per) {           // padding of the 2-D grid: whole threadgroups leave
        return;
    }
    uint q = lid & 3u;
    uint count = params.per;                    // this threadgroup's parents in the current level
    uint n = params.n;                          // parents in the current level
    uint out_at = 0u;                           // first digest of the current level in dst
    for (;;) {                                  // trip counts depend on params only: uniform, barriers allowed
        uint first = g * count;
        for (uint base = 0u; base < count; base += P2C_WG / 4u) {
            uint j = base + (lid >> 2u);
            uint jj = first + min(j, count - 1u);   // threads past the block permute a copy of its last state
            uint4 chunk = out_at == 0u ? src[4u * jj + q] : dst[2u * (out_at - 2u * n) + 4u * jj + q];
            uint4 x = p2c_permute(chunk, lid, p2_rc);
            if (j < count && q < 2u) {
                dst[2u * (out_at + first + j) + q] = x;
            }
        }
        threadgroup_barrier(mem_flags::mem_device);
        if (count == 1u) {
            break;
        }
        out_at += n;
        n >>= 1u;
        count >>= 1u;
    }
}
