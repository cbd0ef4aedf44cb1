// requires: reduction variable_order
// A fused sumcheck step: fold a table and its weights by r (the EF at scratch word challenge_at; x_0 := r) and sum
// the next round's [h(0), h(2)] over the folded tables in the same pass. The input tables (2 half entries) are bound
// whole; thread j < len = half / 2 folds entries j and j + len (table_out[k] = g[k] + r (g[k + half] - g[k]), same
// for W) and accumulates h(0) += g'_lo W'_lo, h(2) += (2 g'_hi - g'_lo)(2 W'_hi - W'_lo) with lo = j, hi = j + len.
// With SUFFIX = 1 every pair is adjacent instead (fold: g'[k] = g[2k] + r (g[2k + 1] - g[2k]); sums: lo = 2j,
// hi = 2j + 1) and the second sum is c_inf = sum (g'_hi - g'_lo)(W'_hi - W'_lo).
// Entry points: sumcheck_fold_base (table base words), sumcheck_fold_ext (table EF vec4); outputs are EF.
// Each workgroup leaves its partial pair as pair w of `work` (reduction.wgsl); the last of `total` (= groups)
// workgroups writes the sums to proof words out_at .. out_at + 8 and runs the transcript program params.ops[0 ..
// n_ops) (challenger.wgsl; no EXPAND: there is no points binding). Bindings: 0 table, 1 weights, 2 table_out,
// 3 weights_out, 4 work (atomic words), 5 scratch (whole), 6 proof (a window; out_at and op offsets relative to
// it), 7 p2_rc, 8 params. Launch: `groups` workgroups (2-D grid; the overhang returns), a grid-stride loop over
// groups * WG threads. Words Montgomery in [0, P).

struct Params { len: u32, half: u32, groups: u32, total: u32, challenge_at: u32, out_at: u32, _pad0: u32, _pad1: u32,
                n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> weights: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> table_out: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> weights_out: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> work: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(6) var<storage, read_write> proof: array<u32>;
@group(0) @binding(7) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(8) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) {}

// Folds entry k of the weights, writes it and returns it.
fn fold_weights(k: u32, r: vec4<u32>) -> vec4<u32> {
    let w_lo = weights[pair_lo(k, params.half)];
    let folded = ef_add(w_lo, ef_mul(ef_sub(weights[pair_hi(k, params.half)], w_lo), r));
    weights_out[k] = folded;
    return folded;
}

fn fold_base(k: u32, r: vec4<u32>) -> vec4<u32> {
    let g_lo = table_base[pair_lo(k, params.half)];
    let folded = ef_add(vec4<u32>(g_lo, 0u, 0u, 0u),
                        ef_mul_base(r, bb_sub(table_base[pair_hi(k, params.half)], g_lo)));
    table_out[k] = folded;
    return folded;
}

fn fold_ext(k: u32, r: vec4<u32>) -> vec4<u32> {
    let g_lo = table_ext[pair_lo(k, params.half)];
    let folded = ef_add(g_lo, ef_mul(ef_sub(table_ext[pair_hi(k, params.half)], g_lo), r));
    table_out[k] = folded;
    return folded;
}

fn challenge() -> vec4<u32> {
    let at = params.challenge_at;
    return vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

@compute @workgroup_size(WG)
fn sumcheck_fold_base(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let r = challenge();
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var j = wg * WG + lid; j < params.len; j += stride) {
        let lo = pair_lo(j, params.len);
        let hi = pair_hi(j, params.len);
        let g_lo = fold_base(lo, r);
        let g_hi = fold_base(hi, r);
        let w_lo = fold_weights(lo, r);
        let w_hi = fold_weights(hi, r);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope_ext(g_hi, g_lo), slope_ext(w_hi, w_lo)));
    }
    finish_sums(lid, wg, h0, h2);
}

@compute @workgroup_size(WG)
fn sumcheck_fold_ext(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let r = challenge();
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var j = wg * WG + lid; j < params.len; j += stride) {
        let lo = pair_lo(j, params.len);
        let hi = pair_hi(j, params.len);
        let g_lo = fold_ext(lo, r);
        let g_hi = fold_ext(hi, r);
        let w_lo = fold_weights(lo, r);
        let w_hi = fold_weights(hi, r);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope_ext(g_hi, g_lo), slope_ext(w_hi, w_lo)));
    }
    finish_sums(lid, wg, h0, h2);
}
