// requires: bb_ext4
// Sumcheck round sums [h(0), h(2)]: h(0) = sum g_lo W_lo and h(2) = sum (2 g_hi - g_lo)(2 W_hi - W_lo) over i < len,
// g_lo[i] = table_lo[lo_off + i], g_hi[i] = table_hi[hi_off + i] (same for W). lo and hi may be one binding (offsets 0
// and half) or two windows. Entry points: sumcheck_base (g base words), sumcheck_ext (g EF vec4).
// Each workgroup writes its partial pair to partials[2 (partial_base + w)]; the last of `total` workgroups (over all
// launches of one reduction, counted by ticket[0]) sums every partial into out[0], out[1] and resets the ticket.
// Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi (EF vec4), 4 partials (EF as atomic words), 5 out (EF),
// 6 ticket (atomic, 0 between reductions), 7 params. Launch: `groups` workgroups (2-D grid; the overhang returns), a
// grid-stride loop over groups * WG threads. All words Montgomery in [0, P).

struct Params { len: u32, lo_off: u32, hi_off: u32, partial_base: u32, groups: u32, total: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_lo_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_lo_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> table_hi_base: array<u32>;
@group(0) @binding(1) var<storage, read> table_hi_ext: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> weights_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> weights_hi: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> partials: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> ticket: array<atomic<u32>>;
@group(0) @binding(7) var<uniform> params: Params;

var<workgroup> red_h0: array<vec4<u32>, WG>;
var<workgroup> red_h2: array<vec4<u32>, WG>;
var<workgroup> is_last: bool;

fn twice_minus(hi: vec4<u32>, lo: vec4<u32>) -> vec4<u32> {
    return ef_add(hi, ef_sub(hi, lo));
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

// Writes this workgroup's partial pair; the last workgroup of the reduction then sums all `total` pairs into out.
fn finish(lid: u32, wg: u32, h0: vec4<u32>, h2: vec4<u32>) {
    reduce_pair(lid, h0, h2);
    if (lid == 0u) {
        store_partial(2u * (params.partial_base + wg), red_h0[0]);
        store_partial(2u * (params.partial_base + wg) + 1u, red_h2[0]);
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
fn sumcheck_base(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var i = wg * WG + lid; i < params.len; i += stride) {
        let g_lo = table_lo_base[params.lo_off + i];
        let g_hi = table_hi_base[params.hi_off + i];
        let w_lo = weights_lo[params.lo_off + i];
        let w_hi = weights_hi[params.hi_off + i];
        h0 = ef_add(h0, ef_mul_base(w_lo, g_lo));
        h2 = ef_add(h2, ef_mul_base(twice_minus(w_hi, w_lo), bb_add(g_hi, bb_sub(g_hi, g_lo))));
    }
    finish(lid, wg, h0, h2);
}

@compute @workgroup_size(WG)
fn sumcheck_ext(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    var h0 = vec4<u32>(0u);
    var h2 = vec4<u32>(0u);
    let stride = params.groups * WG;
    for (var i = wg * WG + lid; i < params.len; i += stride) {
        let g_lo = table_lo_ext[params.lo_off + i];
        let g_hi = table_hi_ext[params.hi_off + i];
        let w_lo = weights_lo[params.lo_off + i];
        let w_hi = weights_hi[params.hi_off + i];
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(twice_minus(g_hi, g_lo), twice_minus(w_hi, w_lo)));
    }
    finish(lid, wg, h0, h2);
}
