// requires: bb_ext4 variable_order
// Sumcheck fold (bind x_0 := r; x_{n-1} with SUFFIX = 1) of a table and its weights together, for i < len:
//   table_out[out_off + i] = g_lo + r (g_hi - g_lo),  weights_out[out_off + i] = W_lo + r (W_hi - W_lo),
// with g_lo = table_lo[lo_off + s i], g_hi = table_hi[hi_off + s i], s = 1 + SUFFIX (same offsets for W).
// Entry points: fold_base (table base words), fold_ext (table EF vec4); outputs are EF.
// r = challenge[0], the folding challenge where the transcript drew it (a one-element window of device memory).
// Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi, 4 table_out, 5 weights_out, 6 challenge, 7 params.
// Launch: one thread per i on a 2-D grid (i = gid.x + gid.y * nwg.x * WG). Words Montgomery in [0, P).

struct Params { len: u32, lo_off: u32, hi_off: u32, out_off: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_lo_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_lo_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> table_hi_base: array<u32>;
@group(0) @binding(1) var<storage, read> table_hi_ext: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> weights_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> weights_hi: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> table_out: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> weights_out: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> challenge: array<vec4<u32>>;
@group(0) @binding(7) var<uniform> params: Params;

fn fold_weights(i: u32) {
    let w_lo = weights_lo[params.lo_off + i * (1u + SUFFIX)];
    let w_hi = weights_hi[params.hi_off + i * (1u + SUFFIX)];
    weights_out[params.out_off + i] = ef_add(w_lo, ef_mul(ef_sub(w_hi, w_lo), challenge[0]));
}

@compute @workgroup_size(WG)
fn fold_base(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    let g_lo = table_lo_base[params.lo_off + i * (1u + SUFFIX)];
    let g_hi = table_hi_base[params.hi_off + i * (1u + SUFFIX)];
    table_out[params.out_off + i] = ef_add(vec4<u32>(g_lo, 0u, 0u, 0u), ef_mul_base(challenge[0], bb_sub(g_hi, g_lo)));
    fold_weights(i);
}

@compute @workgroup_size(WG)
fn fold_ext(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    let g_lo = table_lo_ext[params.lo_off + i * (1u + SUFFIX)];
    let g_hi = table_hi_ext[params.hi_off + i * (1u + SUFFIX)];
    table_out[params.out_off + i] = ef_add(g_lo, ef_mul(ef_sub(g_hi, g_lo), challenge[0]));
    fold_weights(i);
}
