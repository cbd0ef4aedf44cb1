// requires: reduction
// Multilinear evaluation: the answer sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask] over b = base + i, i < len, summed
// over every launch of one evaluation (mask = 2^log_lo - 1). Thread t of S = groups * WG visits i = t, t + S, ...;
// S and base are multiples of 2^log_lo, so eq_lo is applied once at the end. `groups` threadgroups of 256 (2-D grid;
// the overhang returns); each leaves its partial as pair partial_base + w of `work` (reduction.metal; second half 0);
// the last of `total` (over all launches) writes the answer to proof words out_at .. out_at + 4 and runs the
// transcript program params.ops[0 .. n_ops) (challenger.metal: e.g. observe the answer, sample and expand the next
// OOD point). Entry points: mle_eval_base (T base words), mle_eval_ext (T EF). Bindings: 0 table (window from
// b = base), 1 eq_hi, 2 eq_lo (EF), 3 work (atomic words), 4 scratch (whole), 5 proof (a window; out_at and op
// offsets relative to it), 6 points (whole), 7 p2_rc, 8 params. log_lo is taken mod 32, as WGSL shifts do.
// Words Montgomery in [0, P).

struct Params {
    uint len; uint base; uint log_lo; uint partial_base; uint groups; uint total; uint out_at; uint _pad0;
    uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11];
};

constant constexpr uint WG = 256u;

// Multiplies in eq_lo and leaves the group's partial; the last group writes the answer and runs the transcript
// program. Every thread of the group must call it.
void finish(uint lid, uint lane, uint sg, uint t, uint wg, uint4 acc, threadgroup uint4* red_a,
            threadgroup uint4* red_b, threadgroup uint* red_is_last, device const uint4* eq_lo,
            device atomic_uint* work, device uint* scratch, device uint* proof, device uint4* points,
            constant uint4* p2_rc, constant Params& params) {
    uint4 a = ef_mul(acc, eq_lo[(params.base + t) & ((1u << (params.log_lo & 31u)) - 1u)]);
    uint4 b = uint4(0u);
    if (!finish_pairs(lid, lane, sg, params.partial_base + wg, params.total, a, b, red_a, red_b, red_is_last,
                      work)) {
        return;
    }
    ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
    if (lid == 0u) {
        proof_set_ef(io, params.out_at, a);
    }
    end_reduction(lid, work, io);
}

kernel void mle_eval_base(device const uint* table_base [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                          device const uint4* eq_lo [[buffer(2)]], device atomic_uint* work [[buffer(3)]],
                          device uint* scratch [[buffer(4)]], device uint* proof [[buffer(5)]],
                          device uint4* points [[buffer(6)]], constant uint4* p2_rc [[buffer(7)]],
                          constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                          uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                          uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
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
    finish(lid, lane, sg, t, wg, acc, red_a, red_b, red_is_last, eq_lo, work, scratch, proof, points, p2_rc, params);
}

kernel void mle_eval_ext(device const uint4* table_ext [[buffer(0)]], device const uint4* eq_hi [[buffer(1)]],
                         device const uint4* eq_lo [[buffer(2)]], device atomic_uint* work [[buffer(3)]],
                         device uint* scratch [[buffer(4)]], device uint* proof [[buffer(5)]],
                         device uint4* points [[buffer(6)]], constant uint4* p2_rc [[buffer(7)]],
                         constant Params& params [[buffer(8)]], uint lid [[thread_index_in_threadgroup]],
                         uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                         uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint red_is_last[1];
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
    finish(lid, lane, sg, t, wg, acc, red_a, red_b, red_is_last, eq_lo, work, scratch, proof, points, p2_rc, params);
}
