// requires: challenger poseidon2_coop
// The top levels of a Merkle tree made in place (merkle_top.wgsl's twin): n / per threadgroups of P2C_WG threads
// (g = wid.x + wid.y * nwg.x; 4 threads per state) write the levels of n, n / 2, ..., n / per parents back to back in
// dst from vec4 dst_off (level k at digest sum_{i<k} n >> i), threadgroup g the subtree over parents [g per, (g + 1)
// per), children from vec4 src_off of src (of dst when from_dst is 1), device barriers between levels. n, per powers
// of two, per <= n. When per = n the root also goes to proof words root_at .. +8, then the threadgroup runs the
// transcript program (challenger.metal). Bindings: 0 src, 1 dst, 2 scratch, 3 proof (a window), 4 points, 5 p2_rc,
// 6 params.

struct Params { uint n; uint src_off; uint dst_off; uint per; uint root_at; uint from_dst; uint _pad0; uint _pad1;
                uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11]; };

kernel void merkle_top(device uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                       device uint* scratch [[buffer(2)]], device uint* proof [[buffer(3)]],
                       device uint4* points [[buffer(4)]], constant uint4* p2_rc [[buffer(5)]],
                       constant Params& params [[buffer(6)]], uint lid [[thread_index_in_threadgroup]],
                       uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    uint g = wid.x + wid.y * nwg.x;
    if (g >= params.n / params.per) {           // padding of the 2-D grid: whole threadgroups leave
        return;
    }
    device uint4* children = (params.from_dst != 0u ? dst : src) + params.src_off;
    dst += params.dst_off;
    uint q = lid & 3u;
    uint count = params.per;                    // this threadgroup's parents in the current level
    uint n = params.n;                          // parents in the current level
    uint out_at = 0u;                           // first digest of the current level in dst
    for (;;) {                                  // trip counts depend on params only: uniform, barriers allowed
        uint first = g * count;
        for (uint base = 0u; base < count; base += P2C_WG / 4u) {
            uint j = base + (lid >> 2u);
            uint jj = first + min(j, count - 1u);   // threads past the block permute a copy of its last state
            uint4 chunk = out_at == 0u ? children[4u * jj + q] : dst[2u * (out_at - 2u * n) + 4u * jj + q];
            uint4 x = p2c_permute(chunk, lid, p2_rc);
            if (j < count && q < 2u) {
                dst[2u * (out_at + first + j) + q] = x;
                if (n == 1u) {                  // the tree's root
                    uint words[4] = {x.x, x.y, x.z, x.w};
                    for (uint i = 0u; i < 4u; i++) {
                        proof[params.root_at + 4u * q + i] = words[i];
                    }
                }
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
    if (n == 1u) {                              // after the barrier: the whole root is in proof (uniform)
        ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
        transcript_run(lid, P2C_WG, io, ch_next, ch_distinct);
    }
}
