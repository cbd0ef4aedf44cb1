// requires: reduction variable_order
// Sumcheck round sums [h(0), h(2)]: h(0) = sum g_lo W_lo and h(2) = sum (2 g_hi - g_lo)(2 W_hi - W_lo) for i < len,
// g_lo[i] = table_lo[lo_off + s i], g_hi[i] = table_hi[hi_off + s i] (same for W), s = 1 + SUFFIX; with SUFFIX = 1
// the second sum is c_inf = sum (g_hi - g_lo)(W_hi - W_lo). Entry points: sumcheck_base (g base
// words), sumcheck_ext (g EF). `groups` threadgroups of 256 (2-D grid; the overhang returns) stride over i; each
// leaves its pair as pair partial_base + w of `work` (reduction.metal); the last of `total` (over all launches of one
// reduction) writes the sums to proof words out_at .. out_at + 8 and runs the transcript program params.ops[0 ..
// n_ops) (challenger.metal; no EXPAND: there is no points binding). Bindings: 0 table_lo, 1 table_hi, 2 weights_lo,
// 3 weights_hi (EF), 4 work (atomic words), 5 scratch (whole), 6 proof (a window; out_at and op offsets relative to
// it), 7 p2_rc, 8 params. Words Montgomery in [0, P).

struct Params {
    uint len; uint lo_off; uint hi_off; uint partial_base; uint groups; uint total; uint out_at; uint _pad0;
    uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11];
};

constant constexpr uint WG = 256u;

// The last threadgroup writes [h(0), h(2)] and runs the transcript program. Every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint wg, uint4 h0, uint4 h2, threadgroup uint4* red_a,
            threadgroup uint4* red_b, threadgroup uint* red_is_last, threadgroup uint* ch_next,
            threadgroup atomic_uint* ch_distinct, device atomic_uint* work, device uint* scratch, device uint* proof,
            constant uint4* p2_rc, constant Params& params) {
    if (!finish_pairs(lid, lane, sg, params.partial_base + wg, params.total, h0, h2, red_a, red_b, red_is_last,
                      work)) {
        return;
    }
    ChIo io = {scratch, nullptr, proof, nullptr, p2_rc, params.ops, params.n_ops};
    if (lid == 0u) {
        proof_set_ef(io, params.out_at, h0);
        proof_set_ef(io, params.out_at + 4u, h2);
    }
    end_reduction(lid, work, io, ch_next, ch_distinct);
}

kernel void sumcheck_base(device const uint* table_lo_base [[buffer(0)]],
                          device const uint* table_hi_base [[buffer(1)]],
                          device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                          device atomic_uint* work [[buffer(4)]], device uint* scratch [[buffer(5)]],
                          device uint* proof [[buffer(6)]], constant uint4* p2_rc [[buffer(7)]],
                          constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint i = wg * WG + lid; i < params.len; i += stride) {
        uint at = i * (1u + SUFFIX);
        uint g_lo = table_lo_base[params.lo_off + at];
        uint g_hi = table_hi_base[params.hi_off + at];
        uint4 w_lo = weights_lo[params.lo_off + at];
        uint4 w_hi = weights_hi[params.hi_off + at];
        h0 = ef_add(h0, ef_mul_base(w_lo, g_lo));
        h2 = ef_add(h2, ef_mul_base(slope(w_hi, w_lo), slope_base(g_hi, g_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof, p2_rc,
           params);
}

kernel void sumcheck_ext(device const uint4* table_lo_ext [[buffer(0)]],
                         device const uint4* table_hi_ext [[buffer(1)]],
                         device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                         device atomic_uint* work [[buffer(4)]], device uint* scratch [[buffer(5)]],
                         device uint* proof [[buffer(6)]], constant uint4* p2_rc [[buffer(7)]],
                         constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                         uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint i = wg * WG + lid; i < params.len; i += stride) {
        uint at = i * (1u + SUFFIX);
        uint4 g_lo = table_lo_ext[params.lo_off + at];
        uint4 g_hi = table_hi_ext[params.hi_off + at];
        uint4 w_lo = weights_lo[params.lo_off + at];
        uint4 w_hi = weights_hi[params.hi_off + at];
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope(g_hi, g_lo), slope(w_hi, w_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof, p2_rc,
           params);
}
