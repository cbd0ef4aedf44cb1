// requires: bb_ext4
// Multilinear evaluation, first stage: per-threadgroup partials of sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask] over
// b = base + i, i < len (mask = 2^log_lo - 1). Thread t of S = groups * WG visits i = t, t + S, ...; S and base are
// multiples of 2^log_lo, so eq_lo is applied once at the end. `groups` threadgroups of 256 (2-D grid; the overhang
// returns); simd-groups reduce by shuffles, then 8 partials per group. Entry points: mle_eval_base (T base words),
// mle_eval_ext (T EF). Bindings: 0 table (window from b = base), 1 eq_hi, 2 eq_lo (EF), 3 partials (EF; group w
// writes partial_base + w), 4 params. log_lo is taken mod 32, as WGSL shifts do. Words Montgomery in [0, P).

struct Params { uint len; uint base; uint log_lo; uint partial_base; uint groups; uint _pad0; uint _pad1; uint _pad2; };

constant constexpr uint WG = 256u;

// Multiplies in eq_lo, sums over the threadgroup and writes the partial; every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint t, uint wg, uint4 acc, threadgroup uint4* red,
            device const uint4* eq_lo, device uint4* partials, constant Params& params) {
    acc = ef_mul(acc, eq_lo[(params.base + t) & ((1u << (params.log_lo & 31u)) - 1u)]);
    for (ushort d = 16; d > 0; d >>= 1) {
        acc = ef_add(acc, simd_shuffle_xor(acc, d));
    }
    if (lane == 0u) {
        red[sg] = acc;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0u) {
        acc = red[0];
        for (uint s = 1u; s < WG / 32u; s++) {
            acc = ef_add(acc, red[s]);
        }
        partials[params.partial_base + wg] = acc;
    }
}

kernel void mle_eval_base(device const uint* table_base [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                          device const uint4* eq_lo [[buffer(2)]], device uint4* partials [[buffer(3)]],
                          constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[8];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint t = wg * WG + lid;
    uint stride = params.groups * WG;
    uint log_lo = params.log_lo & 31u;
    uint4 acc = uint4(0u);
    for (uint i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul_base(eq_hi[(params.base + i) >> log_lo], table_base[i]));
    }
    finish(lid, lane, sg, t, wg, acc, red, eq_lo, partials, params);
}

kernel void mle_eval_ext(device const uint4* table_ext [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                         device const uint4* eq_lo [[buffer(2)]], device uint4* partials [[buffer(3)]],
                         constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                         uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[8];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint t = wg * WG + lid;
    uint stride = params.groups * WG;
    uint log_lo = params.log_lo & 31u;
    uint4 acc = uint4(0u);
    for (uint i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul(table_ext[i], eq_hi[(params.base + i) >> log_lo]));
    }
    finish(lid, lane, sg, t, wg, acc, red, eq_lo, partials, params);
}
