// requires: bb_ext4
// A batch's claims as weights on the stacked polynomial (the tables' openings): for row i < len = 2^m of the batch's
// point (eq table E) and each claim c with descriptor (off, log_stride, next, power):
//   W[off + (i << log_stride)] += coefficients[power] * (next ? N[i] : E[i]), N[i] = E[i - 1] (i >= 1) + E[i] (i = len - 1)
// (the repeat-last successor, ref.shift). Thread i does every claim of its row in order, so claims on one column
// never race. Bindings: 0 weights (EF, whole), 1 eq (EF), 2 desc (vec4 per claim), 3 coefficients (EF), 4 params.
// Launch: one thread per row on a 2-D grid. Contract: every off + ((len - 1) << log_stride) inside W. Words
// Montgomery in [0, P).

struct Params { len: u32, n_claims: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> weights: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> desc: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> coefficients: array<vec4<u32>>;
@group(0) @binding(4) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn column_weights(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    let e = eq[i];
    var nx = vec4<u32>(0u);
    if (i >= 1u) {
        nx = eq[i - 1u];
    }
    if (i == params.len - 1u) {
        nx = ef_add(nx, e);
    }
    for (var c = 0u; c < params.n_claims; c++) {
        let d = desc[c];
        var v = e;
        if (d.z != 0u) {
            v = nx;
        }
        let at = d.x + (i << d.y);
        weights[at] = ef_add(weights[at], ef_mul(coefficients[d.w], v));
    }
}
