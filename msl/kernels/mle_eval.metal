// requires: reduction
// Multilinear evaluation: the answer sum_b T[b] eq(b, z) over the table's b = base + i, i < len, summed over every
// launch of one evaluation, eq(b, z) = prod_{s < nv} (bit nv-1-s of b ? z_s : 1 - z_s), z_s = points[point_at + s].
// No eq table: with S = groups * WG threads and L = log_s = log2(min(S, len)), H = nv - L, thread t visits
// b_k = base + t + k S, so eq(b_k, z) = eq_lo(t) eq_hi(base / 2^L + k): eq_hi from z's first H coordinates, made WG
// values of k at a time by the threadgroup into threadgroup memory, eq_lo from the last L once per threadgroup as a
// table over its threads (the group's bits of t, then doubled over the thread's 8 bits; mle_eval.wgsl says why).
// `groups` threadgroups of 256 (2-D grid; the overhang returns); each leaves its partial as pair partial_base + w of
// `work` (reduction.metal; second half 0); the last of `total` (over all launches)
// writes the answer to proof words out_at .. out_at + 4 and runs the transcript program params.ops[0 .. n_ops)
// (challenger.metal: e.g. observe the answer, sample and expand the next OOD point). Entry points: mle_eval_base
// (T base words), mle_eval_ext (T EF). Bindings: 0 table (window from b = base), 1 work (atomic words), 2 scratch
// (whole), 3 proof (a window; out_at and op offsets relative to it), 4 points (whole), 5 p2_rc, 6 params.
// Powers mode (MLE_POWERS = 1): a 0 bit's factor is 1 instead of 1 - z_s, so the answer is
// sum_b T[b] prod_s (bit nv-1-s of b ? z_s : 1), at z_s = y^(2^(nv-1-s)) (expand_point(y)) the univariate
// sum_b T[b] y^b. Contracts: len and S powers of two, 2^L divides base, base + len <= 2^nv. Shifts are taken
// mod 32, as in WGSL. Words Montgomery in [0, P).

struct Params {
    uint len; uint base; uint log_s; uint partial_base; uint groups; uint total; uint out_at; uint point_at;
    uint nv; uint _pad0; uint _pad1; uint _pad2;
    uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11];
};

constant constexpr uint WG = 256u;
constant constexpr uint LOG_WG = 8u;
constant uint MLE_POWERS [[function_constant(9)]];  // 1: the powers mode (a 0 bit's factor is 1)

// prod_{s < len} (bit len-1-s of j ? z : 1 - z), z = points[at + s] (powers mode: a 0 bit's factor is 1).
uint4 eq_product(device const uint4* points, uint at, uint len, uint j) {
    uint4 acc = uint4(BB_R, 0u, 0u, 0u);
    for (uint s = 0u; s < len; s++) {
        uint4 z = points[at + s];
        if (((j >> ((len - 1u - s) & 31u)) & 1u) != 0u) {
            acc = ef_mul(acc, z);
        } else if (MLE_POWERS == 0u) {
            acc = ef_mul(acc, ef_sub(uint4(BB_R, 0u, 0u, 0u), z));
        }
    }
    return acc;
}

// eq_hi(base / 2^L + k) for k = k0 + lid into eq_hi_chunk[lid]; every thread of the group must call it.
void make_chunk(uint lid, uint k0, uint n_k, threadgroup uint4* eq_hi_chunk, device const uint4* points,
                constant Params& params) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (k0 + lid < n_k) {
        uint h = params.nv - params.log_s;
        eq_hi_chunk[lid] = eq_product(points, params.point_at, h, (params.base >> (params.log_s & 31u)) + k0 + lid);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

// eq_lo(t) for t = wg * WG + l into table[l], l < WG (mle_eval.wgsl's make_eq_lo): thread 0 makes the group's
// part (t's bits 8 .. L-1 when L > 8), each of l's bits from the highest doubles the table (factor 1 for bits at or
// past L). Every thread of the group must call it.
void make_eq_lo(uint lid, uint wg, threadgroup uint4* table, device const uint4* points, constant Params& params) {
    uint l = params.log_s;
    uint last = params.point_at + params.nv - 1u;   // z_{nv-1-j} is points[last - j]
    uint4 one = uint4(BB_R, 0u, 0u, 0u);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0u) {
        table[0] = l > LOG_WG ? eq_product(points, last + 1u - l, l - LOG_WG, wg) : one;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint b = LOG_WG; b > 0u; b--) {
        uint j = b - 1u;                            // the bit of l this step splits on
        if ((lid & ((2u << j) - 1u)) == 0u) {
            uint4 x = table[lid];
            if (j < l) {
                uint4 z = points[last - j];
                table[lid + (1u << j)] = ef_mul(x, z);
                if (MLE_POWERS == 0u) {
                    table[lid] = ef_mul(x, ef_sub(one, z));
                }
            } else {
                table[lid + (1u << j)] = x;
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
}

// Multiplies in eq_lo (made in eq_table, the group's eq_hi memory) and leaves the group's partial; the last group
// writes the answer and runs the transcript program. Every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint wg, uint4 acc, threadgroup uint4* eq_table, threadgroup uint4* red_a,
            threadgroup uint4* red_b, threadgroup uint* red_is_last, threadgroup uint* ch_next,
            threadgroup atomic_uint* ch_distinct, device atomic_uint* work, device uint* scratch, device uint* proof,
            device uint4* points, constant uint4* p2_rc, constant Params& params) {
    make_eq_lo(lid, wg, eq_table, points, params);
    uint4 a = ef_mul(acc, eq_table[lid]);
    uint4 b = uint4(0u);
    if (!finish_pairs(lid, lane, sg, params.partial_base + wg, params.total, a, b, red_a, red_b, red_is_last,
                      work)) {
        return;
    }
    ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
    if (lid == 0u) {
        proof_set_ef(io, params.out_at, a);
    }
    end_reduction(lid, work, io, ch_next, ch_distinct);
}

kernel void mle_eval_base(device const uint* table_base [[buffer(0)]], device atomic_uint* work [[buffer(1)]],
                          device uint* scratch [[buffer(2)]], device uint* proof [[buffer(3)]],
                          device uint4* points [[buffer(4)]], constant uint4* p2_rc [[buffer(5)]],
                          constant Params& params [[buffer(6)]], uint lid [[thread_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    threadgroup uint4 eq_hi_chunk[WG];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint t = wg * WG + lid;
    uint stride = params.groups * WG;
    uint n_k = (params.len + stride - 1u) / stride;
    uint4 acc = uint4(0u);
    for (uint k0 = 0u; k0 < n_k; k0 += WG) {
        make_chunk(lid, k0, n_k, eq_hi_chunk, points, params);
        for (uint k = k0; k < min(k0 + WG, n_k); k++) {
            uint i = t + k * stride;
            if (i < params.len) {
                acc = ef_add(acc, ef_mul_base(eq_hi_chunk[k - k0], table_base[i]));
            }
        }
    }
    finish(lid, lane, sg, wg, acc, eq_hi_chunk, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof,
           points, p2_rc, params);
}

kernel void mle_eval_ext(device const uint4* table_ext [[buffer(0)]], device atomic_uint* work [[buffer(1)]],
                         device uint* scratch [[buffer(2)]], device uint* proof [[buffer(3)]],
                         device uint4* points [[buffer(4)]], constant uint4* p2_rc [[buffer(5)]],
                         constant Params& params [[buffer(6)]], uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                         uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    threadgroup uint4 eq_hi_chunk[WG];
    uint wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;  // uniform per threadgroup
    }
    uint t = wg * WG + lid;
    uint stride = params.groups * WG;
    uint n_k = (params.len + stride - 1u) / stride;
    uint4 acc = uint4(0u);
    for (uint k0 = 0u; k0 < n_k; k0 += WG) {
        make_chunk(lid, k0, n_k, eq_hi_chunk, points, params);
        for (uint k = k0; k < min(k0 + WG, n_k); k++) {
            uint i = t + k * stride;
            if (i < params.len) {
                acc = ef_add(acc, ef_mul(table_ext[i], eq_hi_chunk[k - k0]));
            }
        }
    }
    finish(lid, lane, sg, wg, acc, eq_hi_chunk, red_a, red_b, red_is_last, ch_next, ch_distinct, work, scratch, proof,
           points, p2_rc, params);
}
