// requires: challenger ef_reduce variable_order
// The last rounds of a sumcheck phase without proof of work, on a table small enough for one threadgroup: for
// round r < rounds, with m = n >> r entries and half = m / 2, the sums h(0) = sum_j g[j] W[j] and h(2) = sum_j
// (2 g[j + half] - g[j])(2 W[j + half] - W[j]) over j < half go to proof words out_at + 8 r .. + 8; then the
// program's ops [2 r, 2 r + 2) run (the host makes them: observe those 8 words, sample the challenge c into scratch
// words challenge_at + 4 r .. + 4), and g, W are folded: g'[k] = g[k] + c (g[k + half] - g[k]) (x_0 := c).
// With SUFFIX = 1 (p3-whir's suffix order) pairs are adjacent, (2j, 2j + 1) for sums and folds (x_{n-1} := c), and
// the second sum is c_inf = sum_j (g[2j+1] - g[2j])(W[2j+1] - W[2j]).
// Round 0 reads the input table and weights; every fold is written to table_out / weights_out (n / 2 entries each;
// round r > 0 folds them in place), which end holding the n >> rounds entries of the folded tables. Then the rest of
// the program, ops [2 rounds, n_ops), runs (challenger.metal; no EXPAND). rounds + 1 passes of one loop, so that the
// program runs from one place (the interpreter is inlined once). The table is EF. Bindings: 0 table, 1 weights (EF),
// 2 table_out (EF), 3 weights_out (EF), 4 scratch (whole), 5 proof (a window; out_at and op offsets relative to
// it), 6 p2_rc, 7 params. Launch: one threadgroup of WG = RED_WG threads. Contracts: n a power of two,
// 1 <= rounds <= log2 n, 2 rounds <= n_ops. Words Montgomery in [0, P).

struct Params { uint n; uint rounds; uint out_at; uint challenge_at; uint n_ops; uint _t0; uint _t1; uint _t2;
                uint4 ops[11]; };

constant constexpr uint WG = 256u;

// Entry k of a table (g or W) as this round reads it: the input in round 0, the last fold after (WGSL's table_at,
// weights_at).
uint4 entry_at(bool first, uint k, device const uint4* input, device const uint4* folded) {
    if (first) {
        return input[k];
    }
    return folded[k];
}

// Round r's sums into the proof (thread 0 writes them); every thread of the group must call it.
void round_sums(uint lid, uint lane, uint sg, uint r, device const uint4* table, device const uint4* weights,
                device uint4* table_out, device uint4* weights_out, device uint* proof, threadgroup uint4* red_a,
                threadgroup uint4* red_b, constant Params& params) {
    bool first = r == 0u;
    uint half = (params.n >> r) / 2u;
    uint4 h0 = uint4(0u);
    uint4 h2 = uint4(0u);
    for (uint j = lid; j < half; j += WG) {
        uint4 g_lo = entry_at(first, pair_lo(j, half), table, table_out);
        uint4 g_hi = entry_at(first, pair_hi(j, half), table, table_out);
        uint4 w_lo = entry_at(first, pair_lo(j, half), weights, weights_out);
        uint4 w_hi = entry_at(first, pair_hi(j, half), weights, weights_out);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope(g_hi, g_lo), slope(w_hi, w_lo)));
    }
    reduce_pair(lid, lane, sg, h0, h2, red_a, red_b);
    if (lid == 0u) {
        uint at = params.out_at + 8u * r;
        proof[at] = h0.x;
        proof[at + 1u] = h0.y;
        proof[at + 2u] = h0.z;
        proof[at + 3u] = h0.w;
        proof[at + 4u] = h2.x;
        proof[at + 5u] = h2.y;
        proof[at + 6u] = h2.z;
        proof[at + 7u] = h2.w;
    }
}

// Round r's fold by the challenge the program sampled into scratch.
void round_fold(uint lid, uint r, device const uint4* table, device const uint4* weights, device uint4* table_out,
                device uint4* weights_out, device const uint* scratch, constant Params& params) {
    bool first = r == 0u;
    uint half = (params.n >> r) / 2u;
    uint at = params.challenge_at + 4u * r;
    uint4 c = uint4(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
    // In suffix order the fold is in place from round 1 and output k reads 2k, 2k + 1: each chunk of WG outputs is
    // read whole before it is written, and later chunks read only entries past every one written so far.
    for (uint base = 0u; base < half; base += WG) {
        uint k = base + lid;
        uint4 g = uint4(0u);
        uint4 w = uint4(0u);
        if (k < half) {
            uint4 g_lo = entry_at(first, pair_lo(k, half), table, table_out);
            uint4 g_hi = entry_at(first, pair_hi(k, half), table, table_out);
            uint4 w_lo = entry_at(first, pair_lo(k, half), weights, weights_out);
            uint4 w_hi = entry_at(first, pair_hi(k, half), weights, weights_out);
            g = ef_add(g_lo, ef_mul(ef_sub(g_hi, g_lo), c));
            w = ef_add(w_lo, ef_mul(ef_sub(w_hi, w_lo), c));
        }
        if (SUFFIX == 1u) {
            threadgroup_barrier(mem_flags::mem_device);
        }
        if (k < half) {
            table_out[k] = g;
            weights_out[k] = w;
        }
    }
}

kernel void sumcheck_tail(device const uint4* table [[buffer(0)]], device const uint4* weights [[buffer(1)]],
                          device uint4* table_out [[buffer(2)]], device uint4* weights_out [[buffer(3)]],
                          device uint* scratch [[buffer(4)]], device uint* proof [[buffer(5)]],
                          constant uint4* p2_rc [[buffer(6)]], constant Params& params [[buffer(7)]],
                          uint lid [[thread_index_in_threadgroup]], uint lane [[thread_index_in_simdgroup]],
                          uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup uint4 red_a[8];
    threadgroup uint4 red_b[8];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    ChIo io = {scratch, nullptr, proof, nullptr, p2_rc, params.ops, params.n_ops};
    // rounds + 1 passes, so that the program runs from one place (the challenger is inlined once)
    for (uint r = 0u; r <= params.rounds; r++) {
        bool last = r == params.rounds;
        if (!last) {
            round_sums(lid, lane, sg, r, table, weights, table_out, weights_out, proof, red_a, red_b, params);
        }
        threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
        transcript_range(lid, WG, 2u * r, select(2u * r + 2u, params.n_ops, last), io, ch_next, ch_distinct);
        threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
        if (!last) {
            round_fold(lid, r, table, weights, table_out, weights_out, scratch, params);
        }
        threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    }
}
