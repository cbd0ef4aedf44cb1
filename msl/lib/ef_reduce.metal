// requires: bb_ext4
// Threadgroup sums of EF pairs (ef_reduce.wgsl's twin): reduce_pair(lid, lane, sg, a, b, red_a, red_b) leaves the
// sums of a and of b over the RED_WG threads of a threadgroup in thread 0's a, b (every thread must call it).
// Simd-groups reduce by shuffles, then thread 0 adds the RED_WG / 32 simd-group sums. The kernel declares
// `threadgroup uint4 red_a[8]; threadgroup uint4 red_b[8];` (RED_WG / 32 entries) and passes them in.
// Words Montgomery in [0, P).

constant constexpr uint RED_WG = 256u;

// Sums a and b over the threadgroup, valid in thread 0; every thread of the group must call it.
void reduce_pair(uint lid, uint lane, uint sg, thread uint4& a, thread uint4& b, threadgroup uint4* red_a,
                 threadgroup uint4* red_b) {
    for (ushort d = 16; d > 0; d >>= 1) {
        a = ef_add(a, simd_shuffle_xor(a, d));
        b = ef_add(b, simd_shuffle_xor(b, d));
    }
    if (lane == 0u) {
        red_a[sg] = a;
        red_b[sg] = b;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0u) {
        a = red_a[0];
        b = red_b[0];
        for (uint s = 1u; s < RED_WG / 32u; s++) {
            a = ef_add(a, red_a[s]);
            b = ef_add(b, red_b[s]);
        }
    }
}
