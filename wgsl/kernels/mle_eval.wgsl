// requires: bb_ext4
// Multilinear evaluation: out[0] = sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask] over b = base + i, i < len, summed
// over every launch of one evaluation (mask = 2^log_lo - 1; eq_hi, eq_lo are the eq tables of the point's first and
// last coordinates, so the sum is T's multilinear extension at the point). Each workgroup writes its partial to
// partials[partial_base + w]; the last of `total` workgroups (over all launches, counted by ticket[0]) sums every
// partial into out[0] and resets the ticket.
// Thread t of S = (groups * WG) threads visits i = t, t + S, ...; S and base are multiples of 2^log_lo, so
// eq_lo is the same for all of a thread's i and is applied once at the end.
// Entry points: mle_eval_base (T base words), mle_eval_ext (T EF vec4).
// Bindings: 0 table (window starting at b = base), 1 eq_hi (EF), 2 eq_lo (EF), 3 partials (EF as atomic words),
// 4 out (EF), 5 ticket (atomic, 0 between reductions), 6 params. Launch: `groups` workgroups (2-D grid; the
// overhang returns). Words Montgomery in [0, P).

struct Params { len: u32, base: u32, log_lo: u32, partial_base: u32, groups: u32, total: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq_hi: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> eq_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> partials: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> ticket: array<atomic<u32>>;
@group(0) @binding(6) var<uniform> params: Params;

var<workgroup> red: array<vec4<u32>, WG>;
var<workgroup> is_last: bool;

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

// Sums v over the workgroup into red[0]; every thread must call it.
fn reduce_one(lid: u32, v: vec4<u32>) {
    red[lid] = v;
    workgroupBarrier();
    for (var span = WG / 2u; span > 0u; span >>= 1u) {
        if (lid < span) {
            red[lid] = ef_add(red[lid], red[lid + span]);
        }
        workgroupBarrier();
    }
}

// Multiplies in eq_lo and writes this workgroup's partial; the last workgroup then sums all `total` into out[0].
fn finish(lid: u32, t: u32, wg: u32, acc: vec4<u32>) {
    let lo = (params.base + t) & ((1u << params.log_lo) - 1u);
    reduce_one(lid, ef_mul(acc, eq_lo[lo]));
    if (lid == 0u) {
        store_partial(params.partial_base + wg, red[0]);
    }
    storageBarrier();
    if (lid == 0u) {
        is_last = atomicAdd(&ticket[0], 1u) == params.total - 1u;
    }
    if (!workgroupUniformLoad(&is_last)) {
        return;
    }
    var sum = vec4<u32>(0u);
    for (var g = lid; g < params.total; g += WG) {
        sum = ef_add(sum, load_partial(g));
    }
    reduce_one(lid, sum);
    if (lid == 0u) {
        out[0] = red[0];
        atomicStore(&ticket[0], 0u);
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
