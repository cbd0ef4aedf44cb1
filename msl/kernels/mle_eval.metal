// requires: bb_ext4
// Multilinear evaluation: out[0] = sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask] over b = base + i, i < len, summed
// over every launch of one evaluation (mask = 2^log_lo - 1). Thread t of S = groups * WG visits i = t, t + S, ...;
// S and base are multiples of 2^log_lo, so eq_lo is applied once at the end. `groups` threadgroups of 256 (2-D grid;
// the overhang returns); simd-groups reduce by shuffles, then thread 0 writes the group's partial to
// partials[partial_base + w]; the last of `total` groups (over all launches, counted by ticket[0]) sums every partial
// into out[0] and resets the ticket. Entry points: mle_eval_base (T base words), mle_eval_ext (T EF). Bindings:
// 0 table (window from b = base), 1 eq_hi, 2 eq_lo (EF), 3 partials (EF as atomic words), 4 out (EF), 5 ticket
// (atomic, 0 between reductions), 6 params. log_lo is taken mod 32, as WGSL shifts do. Words Montgomery in [0, P).

struct Params { uint len; uint base; uint log_lo; uint partial_base; uint groups; uint total; uint _pad0; uint _pad1; };

constant constexpr uint WG = 256u;

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

// Sums acc over the threadgroup, valid in thread 0; every thread of the group must call it.
uint4 reduce_one(uint lid, uint lane, uint sg, uint4 acc, threadgroup uint4* red) {
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
    }
    return acc;
}

// Multiplies in eq_lo and writes the group's partial; the last group then sums all `total` partials into out[0].
// Every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint t, uint wg, uint4 acc, threadgroup uint4* red,
            threadgroup uint* is_last, device const uint4* eq_lo, device atomic_uint* partials, device uint4* out,
            device atomic_uint* ticket, constant Params& params) {
    acc = ef_mul(acc, eq_lo[(params.base + t) & ((1u << (params.log_lo & 31u)) - 1u)]);
    acc = reduce_one(lid, lane, sg, acc, red);
    if (lid == 0u) {
        store_partial(partials, params.partial_base + wg, acc);
    }
    threadgroup_barrier(mem_flags::mem_device);
    if (lid == 0u) {
        is_last[0] = atomic_fetch_add_explicit(&ticket[0], 1u, memory_order_relaxed) == params.total - 1u;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (is_last[0] == 0u) {
        return;  // uniform per threadgroup
    }
    uint4 sum = uint4(0u);
    for (uint g = lid; g < params.total; g += WG) {
        sum = ef_add(sum, load_partial(partials, g));
    }
    sum = reduce_one(lid, lane, sg, sum, red);
    if (lid == 0u) {
        out[0] = sum;
        atomic_store_explicit(&ticket[0], 0u, memory_order_relaxed);
    }
}

kernel void mle_eval_base(device const uint* table_base [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                          device const uint4* eq_lo [[buffer(2)]], device atomic_uint* partials [[buffer(3)]],
                          device uint4* out [[buffer(4)]], device atomic_uint* ticket [[buffer(5)]],
                          constant Params& params [[buffer(6)]], uint lid [[thread_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[8];
    threadgroup uint is_last[1];
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
    finish(lid, lane, sg, t, wg, acc, red, is_last, eq_lo, partials, out, ticket, params);
}

kernel void mle_eval_ext(device const uint4* table_ext [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                         device const uint4* eq_lo [[buffer(2)]], device atomic_uint* partials [[buffer(3)]],
                         device uint4* out [[buffer(4)]], device atomic_uint* ticket [[buffer(5)]],
                         constant Params& params [[buffer(6)]], uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                         uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[8];
    threadgroup uint is_last[1];
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
    finish(lid, lane, sg, t, wg, acc, red, is_last, eq_lo, partials, out, ticket, params);
}
