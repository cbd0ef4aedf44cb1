// requires: bb_ext4
// Multilinear evaluation, first stage: per-workgroup partials of sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask]
// over b = base + i, i < len (mask = 2^log_lo - 1; eq_hi, eq_lo are the eq tables of the point's first and last
// coordinates, so the sum is T's multilinear extension at the point).
// Thread t of S = (groups * WG) threads visits i = t, t + S, ...; S and base are multiples of 2^log_lo, so
// eq_lo is the same for all of a thread's i and is applied once at the end.
// Entry points: mle_eval_base (T base words), mle_eval_ext (T EF vec4).
// Bindings: 0 table (window starting at b = base), 1 eq_hi (EF), 2 eq_lo (EF), 3 partials (EF; workgroup w
// writes partial_base + w), 4 params. Launch: `groups` workgroups (2-D grid; the overhang returns).
// Words Montgomery in [0, P).

struct Params { len: u32, base: u32, log_lo: u32, partial_base: u32, groups: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq_hi: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> eq_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<u32>>;
@group(0) @binding(4) var<uniform> params: Params;

var<workgroup> red: array<vec4<u32>, WG>;

fn finish(lid: u32, t: u32, wg: u32, acc: vec4<u32>) {
    let lo = (params.base + t) & ((1u << params.log_lo) - 1u);
    red[lid] = ef_mul(acc, eq_lo[lo]);
    workgroupBarrier();
    for (var span = WG / 2u; span > 0u; span >>= 1u) {
        if (lid < span) {
            red[lid] = ef_add(red[lid], red[lid + span]);
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        partials[params.partial_base + wg] = red[0];
    }
}

@compute @workgroup_size(WG)
fn mle_eval_base(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let t = wg * WG + lid;
    let stride = params.groups * WG;
    var acc = vec4<u32>(0u);
    for (var i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul_base(eq_hi[(params.base + i) >> params.log_lo], table_base[i]));
    }
    finish(lid, t, wg, acc);
}

@compute @workgroup_size(WG)
fn mle_eval_ext(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let t = wg * WG + lid;
    let stride = params.groups * WG;
    var acc = vec4<u32>(0u);
    for (var i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul(table_ext[i], eq_hi[(params.base + i) >> params.log_lo]));
    }
    finish(lid, t, wg, acc);
}
