// requires: bb_ext4
// Sumcheck round sums [h(0), h(2)]: h(0) = sum g_lo W_lo and h(2) = sum (2 g_hi - g_lo)(2 W_hi - W_lo) for i < len,
// g_lo[i] = table_lo[lo_off + i], g_hi[i] = table_hi[hi_off + i] (same for W). Entry points: sumcheck_base (g base
// words), sumcheck_ext (g EF). `groups` threadgroups of 256 (2-D grid; the overhang returns) stride over i; simd-groups
// reduce by shuffles, thread 0 sums the 8 simd-groups and writes the group's pair to partials[2 (partial_base + w)];
// the last of `total` groups (over all launches of one reduction, counted by ticket[0]) sums every pair into out[0],
// out[1] and resets the ticket. Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi (EF), 4 partials (EF as
// atomic words), 5 out (EF), 6 ticket (atomic, 0 between reductions), 7 params. Words Montgomery in [0, P).

struct Params {
    uint len; uint lo_off; uint hi_off; uint partial_base; uint groups; uint total; uint _pad0; uint _pad1;
};

constant constexpr uint WG = 256u;

uint4 twice_minus(uint4 hi, uint4 lo) {
    return ef_add(hi, ef_sub(hi, lo));
}

// Partials go through atomics so that the last threadgroup reads what every other one stored (device coherence).
void store_partial(device atomic_uint* partials, uint slot, uint4 v) {
    for (uint k = 0u; k < 4u; k++) {
        atomic_store_explicit(&partials[4u * slot + k], v[k], memory_order_relaxed);
    }
}

uint4 load_partial(device atomic_uint* partials, uint slot) {
    return uint4(atomic_load_explicit(&partials[4u * slot], memory_order_relaxed),
                 atomic_load_explicit(&partials[4u * slot + 1u], memory_order_relaxed),
                 atomic_load_explicit(&partials[4u * slot + 2u], memory_order_relaxed),
                 atomic_load_explicit(&partials[4u * slot + 3u], memory_order_relaxed));
}

// Sums h0 and h2 over the threadgroup, valid in thread 0; every thread of the group must call it.
void reduce_pair(uint lid, uint lane, uint sg, thread uint4& h0, thread uint4& h2, threadgroup uint4* red_h0,
                 threadgroup uint4* red_h2) {
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
    }
}

// Writes this group's partial pair; the last group of the reduction then sums all `total` pairs into out. Every
// thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint wg, uint4 h0, uint4 h2, threadgroup uint4* red_h0,
            threadgroup uint4* red_h2, threadgroup uint* is_last, device atomic_uint* partials, device uint4* out,
            device atomic_uint* ticket, constant Params& params) {
    reduce_pair(lid, lane, sg, h0, h2, red_h0, red_h2);
    if (lid == 0u) {
        store_partial(partials, 2u * (params.partial_base + wg), h0);
        store_partial(partials, 2u * (params.partial_base + wg) + 1u, h2);
    }
    threadgroup_barrier(mem_flags::mem_device);
    if (lid == 0u) {
        is_last[0] = atomic_fetch_add_explicit(&ticket[0], 1u, memory_order_relaxed) == params.total - 1u;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (is_last[0] == 0u) {
        return;  // uniform per threadgroup
    }
    uint4 s0 = uint4(0u);
    uint4 s2 = uint4(0u);
    for (uint g = lid; g < params.total; g += WG) {
        s0 = ef_add(s0, load_partial(partials, 2u * g));
        s2 = ef_add(s2, load_partial(partials, 2u * g + 1u));
    }
    reduce_pair(lid, lane, sg, s0, s2, red_h0, red_h2);
    if (lid == 0u) {
        out[0] = s0;
        out[1] = s2;
        atomic_store_explicit(&ticket[0], 0u, memory_order_relaxed);
    }
}

kernel void sumcheck_base(device const uint* table_lo_base [[buffer(0)]],
                          device const uint* table_hi_base [[buffer(1)]],
                          device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                          device atomic_uint* partials [[buffer(4)]], device uint4* out [[buffer(5)]],
                          device atomic_uint* ticket [[buffer(6)]], constant Params& params [[buffer(7)]],
                          uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]], uint3 wid [[threadgroup_position_in_grid]],
                          uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    threadgroup uint is_last[1];
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
    finish(lid, lane, sg, wg, h0, h2, red_h0, red_h2, is_last, partials, out, ticket, params);
}

kernel void sumcheck_ext(device const uint4* table_lo_ext [[buffer(0)]],
                         device const uint4* table_hi_ext [[buffer(1)]],
                         device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                         device atomic_uint* partials [[buffer(4)]], device uint4* out [[buffer(5)]],
                         device atomic_uint* ticket [[buffer(6)]], constant Params& params [[buffer(7)]],
                         uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]], uint3 wid [[threadgroup_position_in_grid]],
                         uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    threadgroup uint is_last[1];
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
    finish(lid, lane, sg, wg, h0, h2, red_h0, red_h2, is_last, partials, out, ticket, params);
}
