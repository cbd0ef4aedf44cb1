// requires: bb_ext4
// Sumcheck round sums, first stage: per-threadgroup partials of h(0) = sum g_lo W_lo and
// h(2) = sum (2 g_hi - g_lo)(2 W_hi - W_lo) for i < len, g_lo[i] = table_lo[lo_off + i], g_hi[i] = table_hi[hi_off + i]
// (same for W). Entry points: sumcheck_base (g base words), sumcheck_ext (g EF). `groups` threadgroups of 256 (2-D
// grid; the overhang returns) stride over i; simd-groups reduce by shuffles, then thread 0 sums the 8 simd-groups.
// Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi (EF), 4 partials (EF; group w writes h0 at
// 2 (partial_base + w), h2 at 2 (partial_base + w) + 1), 5 params. Words Montgomery in [0, P).

struct Params {
    uint len; uint lo_off; uint hi_off; uint partial_base; uint groups; uint _pad0; uint _pad1; uint _pad2;
};

constant constexpr uint WG = 256u;

uint4 twice_minus(uint4 hi, uint4 lo) {
    return ef_add(hi, ef_sub(hi, lo));
}

// Sums h0 and h2 over the threadgroup and writes them; every thread of the group must call it.
void write_partials(uint lid, uint lane, uint sg, uint wg, uint4 h0, uint4 h2, threadgroup uint4* red_h0,
                    threadgroup uint4* red_h2, device uint4* partials, constant Params& params) {
    for (ushort d = 16; d > 0; d >>= 1) {
        h0 = ef_add(h0, simd_shuffle_xor(h0, d));
        h2 = ef_add(h2, simd_shuffle_xor(h2, d));
    }
    if (lane == 0u) {
        red_h0[sg] = h0;
        red_h2[sg] = h2;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0u) {
        h0 = red_h0[0];
        h2 = red_h2[0];
        for (uint s = 1u; s < WG / 32u; s++) {
            h0 = ef_add(h0, red_h0[s]);
            h2 = ef_add(h2, red_h2[s]);
        }
        partials[2u * (params.partial_base + wg)] = h0;
        partials[2u * (params.partial_base + wg) + 1u] = h2;
    }
}

kernel void sumcheck_base(device const uint* table_lo_base [[buffer(0)]],
                          device const uint* table_hi_base [[buffer(1)]],
                          device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                          device uint4* partials [[buffer(4)]], constant Params& params [[buffer(5)]],
                          uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]], uint3 wid [[threadgroup_position_in_grid]],
                          uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint i = wg * WG + lid; i < params.len; i += stride) {
        uint g_lo = table_lo_base[params.lo_off + i];
        uint g_hi = table_hi_base[params.hi_off + i];
        uint4 w_lo = weights_lo[params.lo_off + i];
        uint4 w_hi = weights_hi[params.hi_off + i];
        h0 = ef_add(h0, ef_mul_base(w_lo, g_lo));
        h2 = ef_add(h2, ef_mul_base(twice_minus(w_hi, w_lo), bb_add(g_hi, bb_sub(g_hi, g_lo))));
    }
    write_partials(lid, lane, sg, wg, h0, h2, red_h0, red_h2, partials, params);
}

kernel void sumcheck_ext(device const uint4* table_lo_ext [[buffer(0)]],
                         device const uint4* table_hi_ext [[buffer(1)]],
                         device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                         device uint4* partials [[buffer(4)]], constant Params& params [[buffer(5)]],
                         uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]], uint3 wid [[threadgroup_position_in_grid]],
                         uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint i = wg * WG + lid; i < params.len; i += stride) {
        uint4 g_lo = table_lo_ext[params.lo_off + i];
        uint4 g_hi = table_hi_ext[params.hi_off + i];
        uint4 w_lo = weights_lo[params.lo_off + i];
        uint4 w_hi = weights_hi[params.hi_off + i];
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    write_partials(lid, lane, sg, wg, h0, h2, red_h0, red_h2, partials, params);
}
