// requires: bb_ext4
// A fused sumcheck step: fold a table and its weights by r = challenge[0] (x_0 := r) and sum the next round's
// [h(0), h(2)] over the folded tables in the same pass. The input tables (2 half entries) are bound whole; thread
// j < len = half / 2 folds entries j and j + len (table_out[k] = g[k] + r (g[k + half] - g[k]), same for W) and
// accumulates h(0) += g'_lo W'_lo, h(2) += (2 g'_hi - g'_lo)(2 W'_hi - W'_lo) with lo = j, hi = j + len.
// Entry points: sumcheck_fold_base (table base words), sumcheck_fold_ext (table EF); outputs are EF. `groups`
// threadgroups of 256 (2-D grid; the overhang returns) stride over j; each writes its pair to partials[2 w] and the
// last of `total` (= groups), counted by ticket[0], sums them into out[0], out[1] and resets the ticket.
// Bindings: 0 table, 1 weights, 2 table_out, 3 weights_out, 4 challenge, 5 partials (atomic words), 6 out, 7 ticket,
// 8 params. Words Montgomery in [0, P).

struct Params { uint len; uint half; uint groups; uint total; };

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
        store_partial(partials, 2u * wg, h0);
        store_partial(partials, 2u * wg + 1u, h2);
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

// Folds entry k of the weights, writes it and returns it.
uint4 fold_weights(uint k, uint4 r, device const uint4* weights, device uint4* weights_out, constant Params& params) {
    uint4 w_lo = weights[k];
    uint4 folded = ef_add(w_lo, ef_mul(ef_sub(weights[k + params.half], w_lo), r));
    weights_out[k] = folded;
    return folded;
}

uint4 fold_base(uint k, uint4 r, device const uint* table_base, device uint4* table_out, constant Params& params) {
    uint g_lo = table_base[k];
    uint4 folded = ef_add(uint4(g_lo, 0u, 0u, 0u), ef_mul_base(r, bb_sub(table_base[k + params.half], g_lo)));
    table_out[k] = folded;
    return folded;
}

uint4 fold_ext(uint k, uint4 r, device const uint4* table_ext, device uint4* table_out, constant Params& params) {
    uint4 g_lo = table_ext[k];
    uint4 folded = ef_add(g_lo, ef_mul(ef_sub(table_ext[k + params.half], g_lo), r));
    table_out[k] = folded;
    return folded;
}

kernel void sumcheck_fold_base(device const uint* table_base [[buffer(0)]], device const uint4* weights [[buffer(1)]],
                               device uint4* table_out [[buffer(2)]], device uint4* weights_out [[buffer(3)]],
                               device const uint4* challenge [[buffer(4)]], device atomic_uint* partials [[buffer(5)]],
                               device uint4* out [[buffer(6)]], device atomic_uint* ticket [[buffer(7)]],
                               constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                               uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                               uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    threadgroup uint is_last[1];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 r = challenge[0];
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint j = wg * WG + lid; j < params.len; j += stride) {
        uint4 g_lo = fold_base(j, r, table_base, table_out, params);
        uint4 g_hi = fold_base(j + params.len, r, table_base, table_out, params);
        uint4 w_lo = fold_weights(j, r, weights, weights_out, params);
        uint4 w_hi = fold_weights(j + params.len, r, weights, weights_out, params);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_h0, red_h2, is_last, partials, out, ticket, params);
}

kernel void sumcheck_fold_ext(device const uint4* table_ext [[buffer(0)]], device const uint4* weights [[buffer(1)]],
                              device uint4* table_out [[buffer(2)]], device uint4* weights_out [[buffer(3)]],
                              device const uint4* challenge [[buffer(4)]], device atomic_uint* partials [[buffer(5)]],
                              device uint4* out [[buffer(6)]], device atomic_uint* ticket [[buffer(7)]],
                              constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                              uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                              uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_h0[8];
    threadgroup uint4 red_h2[8];
    threadgroup uint is_last[1];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint4 r = challenge[0];
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    uint stride = params.groups * WG;
    for (uint j = wg * WG + lid; j < params.len; j += stride) {
        uint4 g_lo = fold_ext(j, r, table_ext, table_out, params);
        uint4 g_hi = fold_ext(j + params.len, r, table_ext, table_out, params);
        uint4 w_lo = fold_weights(j, r, weights, weights_out, params);
        uint4 w_hi = fold_weights(j + params.len, r, weights, weights_out, params);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    finish(lid, lane, sg, wg, h0, h2, red_h0, red_h2, is_last, partials, out, ticket, params);
}
