// requires: challenger ef_reduce variable_order
// The last rounds of a sumcheck phase without proof of work, on a table small enough for one workgroup: for
// round r < rounds, with m = n >> r entries and half = m / 2, the sums h(0) = sum_j g[j] W[j] and h(2) = sum_j
// (2 g[j + half] - g[j])(2 W[j + half] - W[j]) over j < half go to proof words out_at + 8 r .. + 8; then the
// program's ops [2 r, 2 r + 2) run (the host makes them: observe those 8 words, sample the challenge c into scratch
// words challenge_at + 4 r .. + 4), and g, W are folded: g'[k] = g[k] + c (g[k + half] - g[k]) (x_0 := c).
// Round 0 reads the input table and weights; every fold is written to table_out / weights_out (n / 2 entries each;
// round r > 0 folds them in place), which end holding the n >> rounds entries of the folded tables. Then the rest of
// the program, ops [2 rounds, n_ops), runs (challenger.wgsl; no EXPAND). The table is EF (a base table is folded by
// the reductions first). Bindings: 0 table, 1 weights (EF), 2 table_out (EF), 3 weights_out (EF), 4 scratch
// (whole), 5 proof (a window; out_at and op offsets relative to it), 6 p2_rc, 7 params. Launch: one workgroup.
// With SUFFIX = 1 (p3-whir's suffix order) pairs are adjacent, (2j, 2j + 1) for sums and folds, the second sum is
// c_inf = sum_j (g[2j+1] - g[2j])(W[2j+1] - W[2j]), and an in-place fold reads each chunk of WG pairs before it
// writes it (a fold's output k < the 2k it reads, so later chunks read only entries not yet written).
// Contracts: n a power of two, 1 <= rounds <= log2 n, 2 rounds <= n_ops. Words Montgomery in [0, P).

struct Params { n: u32, rounds: u32, out_at: u32, challenge_at: u32, n_ops: u32, _t0: u32, _t1: u32, _t2: u32,
                ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> weights: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> table_out: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> weights_out: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(5) var<storage, read_write> proof: array<u32>;
@group(0) @binding(6) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(7) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) {}

fn table_at(first: bool, k: u32) -> vec4<u32> {
    if (first) {
        return table[k];
    }
    return table_out[k];
}

fn weights_at(first: bool, k: u32) -> vec4<u32> {
    if (first) {
        return weights[k];
    }
    return weights_out[k];
}

// Round r's sums into the proof (thread 0 writes them); every thread must call it.
fn round_sums(lid: u32, r: u32) {
    let first = r == 0u;
    let half = (params.n >> r) / 2u;
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    for (var j = lid; j < half; j += WG) {
        let g_lo = table_at(first, pair_lo(j, half));
        let g_hi = table_at(first, pair_hi(j, half));
        let w_lo = weights_at(first, pair_lo(j, half));
        let w_hi = weights_at(first, pair_hi(j, half));
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope_ext(g_hi, g_lo), slope_ext(w_hi, w_lo)));
    }
    reduce_pair(lid, h0, h2);
    if (lid == 0u) {
        let at = params.out_at + 8u * r;
        for (var k = 0u; k < 4u; k++) {
            proof_set(at + k, red_a[0][k]);
            proof_set(at + 4u + k, red_b[0][k]);
        }
    }
}

// Round r's fold by the challenge the program sampled into scratch.
fn round_fold(lid: u32, r: u32) {
    let first = r == 0u;
    let half = (params.n >> r) / 2u;
    let at = params.challenge_at + 4u * r;
    let c = vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
    for (var base = 0u; base < half; base += WG) {
        let k = base + lid;
        var g = vec4<u32>(0u);
        var w = vec4<u32>(0u);
        if (k < half) {
            let g_lo = table_at(first, pair_lo(k, half));
            let g_hi = table_at(first, pair_hi(k, half));
            let w_lo = weights_at(first, pair_lo(k, half));
            let w_hi = weights_at(first, pair_hi(k, half));
            g = ef_add(g_lo, ef_mul(ef_sub(g_hi, g_lo), c));
            w = ef_add(w_lo, ef_mul(ef_sub(w_hi, w_lo), c));
        }
        if (SUFFIX == 1u) {
            storageBarrier();
            workgroupBarrier();
        }
        if (k < half) {
            table_out[k] = g;
            weights_out[k] = w;
        }
    }
}

@compute @workgroup_size(WG)
fn sumcheck_tail(@builtin(local_invocation_index) lid: u32) {
    // rounds + 1 passes, so that the program runs from one place (the challenger is inlined once)
    for (var r = 0u; r <= params.rounds; r++) {
        let last = r == params.rounds;
        if (!last) {
            round_sums(lid, r);
        }
        storageBarrier();
        workgroupBarrier();
        transcript_range(lid, WG, 2u * r, select(2u * r + 2u, params.n_ops, last));
        storageBarrier();
        workgroupBarrier();
        if (!last) {
            round_fold(lid, r);
        }
        storageBarrier();
        workgroupBarrier();
    }
}
