// requires: bb_ext4
// Claims of a batch of columns of one base table at one local point (the tables' openings): for claim c with
// descriptor (off, log_stride, next), col[i] = table[off + (i << log_stride)], i < len = 2^m, the value is
// sum_i E[i] col[next ? min(i + 1, len - 1) : i] (E = the point's eq table: MLE(col) or MLE(repeat-last shift)).
// column_claims_partial: workgroup w = c * groups + g (2-D grid, overhang returns) sums i = g WG + lid + k groups WG
// into partials[w]; column_claims_finish: workgroup c sums its groups partials into out[c].
// Bindings, partial: 0 table (base), 1 eq (EF), 2 desc (vec4 per claim), 3 partials (EF), 4 params; finish:
// 0 partials_in, 1 out (EF), 2 params_finish (the same Params). Contracts:
// every off + ((len - 1) << log_stride) inside table, groups <= 65535. Words Montgomery in [0, P).

struct Params { n_claims: u32, groups: u32, len: u32, _pad0: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> eq: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> desc: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> partials: array<vec4<u32>>;
@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read> partials_in: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params_finish: Params;

var<workgroup> red: array<vec4<u32>, WG>;

// The sum of every thread's acc, in red[0]; every thread of the workgroup must call it.
fn reduce(lid: u32, acc: vec4<u32>) {
    red[lid] = acc;
    for (var s = WG / 2u; s > 0u; s >>= 1u) {
        workgroupBarrier();
        if (lid < s) {
            red[lid] = ef_add(red[lid], red[lid + s]);
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WG)
fn column_claims_partial(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                         @builtin(num_workgroups) nwg: vec3<u32>) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= params.n_claims * params.groups) {
        return;
    }
    let c = w / params.groups;
    let d = desc[c];
    var acc = vec4<u32>(0u);
    for (var i = (w - c * params.groups) * WG + lid; i < params.len; i += params.groups * WG) {
        var row = i;
        if (d.z != 0u) {
            row = min(i + 1u, params.len - 1u);
        }
        acc = ef_add(acc, ef_mul_base(eq[i], table[d.x + (row << d.y)]));
    }
    reduce(lid, acc);
    if (lid == 0u) {
        partials[w] = red[0];
    }
}

@compute @workgroup_size(WG)
fn column_claims_finish(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = wid.x + wid.y * nwg.x;
    if (c >= params_finish.n_claims) {
        return;
    }
    var acc = vec4<u32>(0u);
    for (var g = lid; g < params_finish.groups; g += WG) {
        acc = ef_add(acc, partials_in[c * params_finish.groups + g]);
    }
    reduce(lid, acc);
    if (lid == 0u) {
        out[c] = red[0];
    }
}
