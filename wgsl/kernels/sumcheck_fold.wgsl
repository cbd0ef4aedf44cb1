// requires: bb_ext4
// A fused sumcheck step: fold a table and its weights by r = challenge[0] (x_0 := r) and sum the next round's
// [h(0), h(2)] over the folded tables in the same pass. The input tables (2 half entries) are bound whole; thread
// j < len = half / 2 folds entries j and j + len (table_out[k] = g[k] + r (g[k + half] - g[k]), same for W) and
// accumulates h(0) += g'_lo W'_lo, h(2) += (2 g'_hi - g'_lo)(2 W'_hi - W'_lo) with lo = j, hi = j + len.
// Entry points: sumcheck_fold_base (table base words), sumcheck_fold_ext (table EF vec4); outputs are EF.
// Each workgroup writes its partial pair to partials[2 w]; the last of `total` (= groups) workgroups, counted by
// ticket[0], sums them into out[0], out[1] and resets the ticket. Bindings: 0 table, 1 weights, 2 table_out,
// 3 weights_out, 4 challenge, 5 partials (atomic words), 6 out, 7 ticket, 8 params. Launch: `groups` workgroups
// (2-D grid; the overhang returns), a grid-stride loop over groups * WG threads. Words Montgomery in [0, P).

struct Params { len: u32, half: u32, groups: u32, total: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> weights: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> table_out: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> weights_out: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> challenge: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> partials: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read_write> ticket: array<atomic<u32>>;
@group(0) @binding(8) var<uniform> params: Params;

var<workgroup> red_h0: array<vec4<u32>, WG>;
var<workgroup> red_h2: array<vec4<u32>, WG>;
var<workgroup> is_last: bool;

fn twice_minus(hi: vec4<u32>, lo: vec4<u32>) -> vec4<u32> {
    return ef_add(hi, ef_sub(hi, lo));
}

// Folds entry k of the weights, writes it and returns it.
fn fold_weights(k: u32, r: vec4<u32>) -> vec4<u32> {
    let w_lo = weights[k];
    let folded = ef_add(w_lo, ef_mul(ef_sub(weights[k + params.half], w_lo), r));
    weights_out[k] = folded;
    return folded;
}

fn fold_base(k: u32, r: vec4<u32>) -> vec4<u32> {
    let g_lo = table_base[k];
    let folded = ef_add(vec4<u32>(g_lo, 0u, 0u, 0u), ef_mul_base(r, bb_sub(table_base[k + params.half], g_lo)));
    table_out[k] = folded;
    return folded;
}

fn fold_ext(k: u32, r: vec4<u32>) -> vec4<u32> {
    let g_lo = table_ext[k];
    let folded = ef_add(g_lo, ef_mul(ef_sub(table_ext[k + params.half], g_lo), r));
    table_out[k] = folded;
    return folded;
}

// Partials go through atomics so that the last workgroup reads what every other one stored (device coherence).
fn store_partial(slot: u32, v: vec4<u32>) {
    for (var k = 0u; k < 4u; k++) {
        atomicStore(&partials[4u * slot + k], v[k]);
    }
}

fn load_partial(slot: u32) -> vec4<u32> {
    return vec4<u32>(atomicLoad(&partials[4u * slot]), atomicLoad(&partials[4u * slot + 1u]),
                     atomicLoad(&partials[4u * slot + 2u]), atomicLoad(&partials[4u * slot + 3u]));
}

// Sums h0 and h2 over the workgroup into red_h0[0], red_h2[0]; every thread must call it.
fn reduce_pair(lid: u32, h0: vec4<u32>, h2: vec4<u32>) {
    red_h0[lid] = h0;
    red_h2[lid] = h2;
    workgroupBarrier();
    for (var span = WG / 2u; span > 0u; span >>= 1u) {
        if (lid < span) {
            red_h0[lid] = ef_add(red_h0[lid], red_h0[lid + span]);
            red_h2[lid] = ef_add(red_h2[lid], red_h2[lid + span]);
        }
        workgroupBarrier();
    }
}

// Writes this workgroup's partial pair; the last workgroup then sums all `total` pairs into out.
fn finish(lid: u32, wg: u32, h0: vec4<u32>, h2: vec4<u32>) {
    reduce_pair(lid, h0, h2);
    if (lid == 0u) {
        store_partial(2u * wg, red_h0[0]);
        store_partial(2u * wg + 1u, red_h2[0]);
    }
    storageBarrier();
    if (lid == 0u) {
        is_last = atomicAdd(&ticket[0], 1u) == params.total - 1u;
    }
    if (!workgroupUniformLoad(&is_last)) {
        return;
    }
    var s0 = vec4<u32>(0u);
    var s2 = vec4<u32>(0u);
    for (var g = lid; g < params.total; g += WG) {
        s0 = ef_add(s0, load_partial(2u * g));
        s2 = ef_add(s2, load_partial(2u * g + 1u));
    }
    reduce_pair(lid, s0, s2);
    if (lid == 0u) {
        out[0] = red_h0[0];
        out[1] = red_h2[0];
        atomicStore(&ticket[0], 0u);
    }
}

@compute @workgroup_size(WG)
fn sumcheck_fold_base(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                      @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let r = challenge[0];
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var j = wg * WG + lid; j < params.len; j += stride) {
        let g_lo = fold_base(j, r);
        let g_hi = fold_base(j + params.len, r);
        let w_lo = fold_weights(j, r);
        let w_hi = fold_weights(j + params.len, r);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    finish(lid, wg, h0, h2);
}

@compute @workgroup_size(WG)
fn sumcheck_fold_ext(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                     @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let r = challenge[0];
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var j = wg * WG + lid; j < params.len; j += stride) {
        let g_lo = fold_ext(j, r);
        let g_hi = fold_ext(j + params.len, r);
        let w_lo = fold_weights(j, r);
        let w_hi = fold_weights(j + params.len, r);
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    finish(lid, wg, h0, h2);
}
