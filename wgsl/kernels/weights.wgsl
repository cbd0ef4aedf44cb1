// requires: bb_ext4
// Constraint weights, factored: for b = base + i, i < len, hi = b >> log_lo, lo = b & (2^log_lo - 1):
//   W[i] = (accumulate ? W[i] : 0) + sum_e eq_hi[e][hi] eq_lo[e][lo] + sum_m sel_hi[m][hi] sel_lo[m][lo]
// eq tables are EF (the coefficient folded into eq_hi); sel_lo is base (powers v^lo), sel_hi EF (c v^(hi 2^log_lo)).
// Bindings: 0 weights (EF, window starting at b = base, updated in place), 1 eq_lo (n_eq x 2^log_lo EF),
// 2 eq_hi (n_eq x hi_len EF), 3 sel_lo (n_sel x 2^log_lo base), 4 sel_hi (n_sel x hi_len EF), 5 params.
// Launch: one thread per i on a 2-D grid. Words Montgomery in [0, P).

struct Params { len: u32, base: u32, log_lo: u32, accumulate: u32, n_eq: u32, n_sel: u32, hi_len: u32, _pad: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> out_weights: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq_lo: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> eq_hi: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> sel_lo: array<u32>;
@group(0) @binding(4) var<storage, read> sel_hi: array<vec4<u32>>;
@group(0) @binding(5) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn weights(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    let b = params.base + i;
    let hi = b >> params.log_lo;
    let lo_len = 1u << params.log_lo;
    let lo = b & (lo_len - 1u);
    var acc = vec4<u32>(0u);
    if (params.accumulate != 0u) {
        acc = out_weights[i];
    }
    for (var e = 0u; e < params.n_eq; e++) {
        acc = ef_add(acc, ef_mul(eq_hi[e * params.hi_len + hi], eq_lo[e * lo_len + lo]));
    }
    for (var m = 0u; m < params.n_sel; m++) {
        acc = ef_add(acc, ef_mul_base(sel_hi[m * params.hi_len + hi], sel_lo[m * lo_len + lo]));
    }
    out_weights[i] = acc;
}
