// requires: reduction variable_order
// A fused sumcheck step: fold a table and its weights by r (the EF at scratch word challenge_at; x_0 := r) and sum
// the next round's [h(0), h(2)] over the folded tables in the same pass. The input tables (2 half entries) are bound
// whole; thread j < len = half / 2 folds entries j and j + len (table_out[k] = g[k] + r (g[k + half] - g[k]), same
// for W) and accumulates h(0) += g'_lo W'_lo, h(2) += (2 g'_hi - g'_lo)(2 W'_hi - W'_lo) with lo = j, hi = j + len.
// With SUFFIX = 1 every pair is adjacent instead (fold: g'[k] = g[2k] + r (g[2k + 1] - g[2k]); sums: lo = 2j,
// hi = 2j + 1) and the second sum is c_inf = sum (g'_hi - g'_lo)(W'_hi - W'_lo).
// Entry points: sumcheck_fold_base (table base words), sumcheck_fold_ext (table EF); outputs are EF. `groups`
// threadgroups of 256 (2-D grid; the overhang returns) stride over j; each leaves its pair as pair w of `work`
// (reduction.metal) and the last of `total` (= groups) writes the sums to proof words out_at .. out_at + 8 and runs
// the transcript program params.ops[0 .. n_ops) (challenger.metal; no EXPAND: there is no points binding).
// Bindings: 0 table, 1 weights, 2 table_out, 3 weights_out, 4 work (atomic words), 5 scratch (whole), 6 proof (a
// window; out_at and op offsets relative to it), 7 p2_rc, 8 params. Words Montgomery in [0, P).

struct Params {
    uint len; uint half; uint groups; uint total; uint challenge_at; uint out_at; uint _pad0; uint _pad1;
    uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11];
};

constant constexpr uint WG = 256u;

// Folds entry k of the weights, writes it and returns it.
uint4 fold_weights(uint k, uint4 r, device const uint4* weights, device uint4* weights_out, constant Params& params) {
    uint4 w_lo = weights[pair_lo(k, params.half)];
    uint4 folded = ef_add(w_lo, ef_mul(ef_sub(weights[pair_hi(k, params.half)], w_lo), r));
    weights_out[k] = folded;
    return folded;
}

uint4 fold_base(uint k, uint4 r, device const uint* table_base, device uint4* table_out, constant Params& params) {
    uint g_lo = table_base[pair_lo(k, params.half)];
    uint4 folded = ef_add(uint4(g_lo, 0u, 0u, 0u),
                          ef_mul_base(r, bb_sub(table_base[pair_hi(k, params.half)], g_lo)));
    table_out[k] = folded;
    return folded;
}

uint4 fold_ext(uint k, uint4 r, device const uint4* table_ext, device uint4* table_out, constant Params& params) {
    uint4 g_lo = table_ext[pair_lo(k, params.half)];
    uint4 folded = ef_add(g_lo, ef_mul(ef_sub(table_ext[pair_hi(k, params.half)], g_lo), r));
    table_out[k] = folded;
    return folded;
}

// The folding challenge: the EF at scratch word challenge_at.
uint4 challenge(device const uint* scratch, constant Params& params) {
    uint at = params.challenge_at;
    return uint4(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

// The last threadgroup writes [h(0), h(2)] and runs the transcript program. Every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint wg, uint4 h0, uint4 h2, threadgroup uint4* red_a,
            threadgroup uint4* red_b, threadgroup uint* red_is_last, threadgroup uint* ch_next,
            threadgroup atomic_uint* ch_distinct, device atomic_uint* work, device uint* scratch, device uint* proof,
            constant uint4* p2_rc, constant Params& params) {
    if (!finish_pairs(lid, lane, sg, wg, params.total, h0, h2, red_a, red_b, red_is_last, work)) {
        return;
    }
    ChIo io = {scratch, nullptr, proof, nullptr, p2_rc, params.ops, params.n_ops};
    if (lid == 0u) {
        proof_set_ef(io, params.out_at, h0);
        proof_set_ef(io, params.out_at + 4u, h2);
    }
    end_reduction(lid, work, io, ch_next, ch_distinct);
}

kernel void sumcheck_fold_base(device const uint* table_base [[buffer(0)]], device const uint4* weights [[buffer(1)]],
                               device uint4* table_out [[buffer(2)]], device uint4* weights_out [[buffer(3)]],
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
    uint4 r = challenge(scratch, params);
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint j = wg * WG + lid; j < params.len; j += stride) {
        uint lo = pair_lo(j, params.len);
        uint hi = pair_hi(j, params.len);
        uint4 g_lo = fold_base(lo, r, table_base, table_out, params);
        uint4 g_hi = fold_base(hi, r, table_base, table_out, params);
        uint4 w_lo = fold_weights(lo, r, weights, weights_out, params);
        uint4 w_hi = fold_weights(hi, r, weights, weights_out, params);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope(g_hi, g_lo), slope(w_hi, w_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof, p2_rc,
           params);
}

kernel void sumcheck_fold_ext(device const uint4* table_ext [[buffer(0)]], device const uint4* weights [[buffer(1)]],
                              device uint4* table_out [[buffer(2)]], device uint4* weights_out [[buffer(3)]],
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
    uint4 r = challenge(scratch, params);
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint j = wg * WG + lid; j < params.len; j += stride) {
        uint lo = pair_lo(j, params.len);
        uint hi = pair_hi(j, params.len);
        uint4 g_lo = fold_ext(lo, r, table_ext, table_out, params);
        uint4 g_hi = fold_ext(hi, r, table_ext, table_out, params);
        uint4 w_lo = fold_weights(lo, r, weights, weights_out, params);
        uint4 w_hi = fold_weights(hi, r, weights, weights_out, params);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope(g_hi, g_lo), slope(w_hi, w_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof, p2_rc,
           params);
}
