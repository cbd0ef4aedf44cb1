// requires: reduction variable_order
// Sumcheck round sums [h(0), h(2)]: h(0) = sum g_lo W_lo and h(2) = sum (2 g_hi - g_lo)(2 W_hi - W_lo) over i < len,
// g_lo[i] = table_lo[lo_off + s i], g_hi[i] = table_hi[hi_off + s i] (same for W), s = 1 + SUFFIX. lo and hi may be
// one binding (offsets 0 and half; in suffix order 0 and 1) or two windows. With SUFFIX = 1 the second sum is
// c_inf = sum (g_hi - g_lo)(W_hi - W_lo), the X^2 coefficient. Entry points: sumcheck_base (g base words), sumcheck_ext (g EF vec4).
// Each workgroup leaves its partial pair as pair partial_base + w of `work` (reduction.wgsl); the last of `total`
// workgroups (over all launches of one reduction) writes the sums to proof words out_at .. out_at + 8 and runs the
// transcript program params.ops[0 .. n_ops) (challenger.wgsl; no EXPAND: there is no points binding).
// Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi (EF vec4), 4 work (atomic words), 5 scratch (whole),
// 6 proof (a window; out_at and op offsets relative to it), 7 p2_rc, 8 params. Launch: `groups` workgroups (2-D
// grid; the overhang returns), a grid-stride loop over groups * WG threads. All words Montgomery in [0, P).

struct Params { len: u32, lo_off: u32, hi_off: u32, partial_base: u32, groups: u32, total: u32, out_at: u32, _pad0: u32,
                n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_lo_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_lo_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> table_hi_base: array<u32>;
@group(0) @binding(1) var<storage, read> table_hi_ext: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> weights_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> weights_hi: array<vec4<u32>>;
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
        let at = i * (1u + SUFFIX);
        let g_lo = table_lo_base[params.lo_off + at];
        let g_hi = table_hi_base[params.hi_off + at];
        let w_lo = weights_lo[params.lo_off + at];
        let w_hi = weights_hi[params.hi_off + at];
        h0 = ef_add(h0, ef_mul_base(w_lo, g_lo));
        h2 = ef_add(h2, ef_mul_base(slope_ext(w_hi, w_lo), slope_base(g_hi, g_lo)));
    }
    finish_sums(lid, params.partial_base + wg, h0, h2);
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
        let at = i * (1u + SUFFIX);
        let g_lo = table_lo_ext[params.lo_off + at];
        let g_hi = table_hi_ext[params.hi_off + at];
        let w_lo = weights_lo[params.lo_off + at];
        let w_hi = weights_hi[params.hi_off + at];
        h0 = ef_add(h0, ef_mul(g_lo, w_lo));
        h2 = ef_add(h2, ef_mul(slope_ext(g_hi, g_lo), slope_ext(w_hi, w_lo)));
    }
    finish_sums(lid, params.partial_base + wg, h0, h2);
}
