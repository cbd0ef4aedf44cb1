// requires: bb_ext4
// Every factor table of one weights call in one launch (w(b) = hi(b >> L) * lo(b mod 2^L), L = log_lo,
// H = nv - L), written at word offsets of one out buffer:
//   eq_lo[e 2^L + j]  = prod_{s < L} (bit s of j, MSB first ? z : 1 - z), z = coords[coord_off + e nv + H + s]
//   eq_hi[e 2^H + j]  = (eq_scaled ? eq_scales[eq_scale_off + e] : 1) * the same over z = coords[.. + e nv + s]
//   sel_lo[m 2^L + j] = v_m^j (base), sel_hi[m 2^H + j] = sel_scales[sel_scale_off + m] * v_m^(j 2^L) (EF),
//   v_m = bases[base_off + m]; e < n_eq, m < n_sel. EF entries are 4 words, base entries 1.
// Thread i of the 2-D grid makes entry t = first + i < end of the four tables in that order (eq_lo, eq_hi, sel_lo,
// sel_hi): a launch may make a part of them (each table its own launch when all do not fit one binding).
// Bindings: 0 coords (EF), 1 eq_scales (EF), 2 bases, 3 sel_scales (EF), 4 out (words), 5 params. Words
// Montgomery in [0, P); log_lo, nv - log_lo < 32.

struct Params { n_eq: u32, n_sel: u32, nv: u32, log_lo: u32, eq_scaled: u32, coord_off: u32, eq_scale_off: u32,
                base_off: u32, sel_scale_off: u32, eq_lo_at: u32, eq_hi_at: u32, sel_lo_at: u32, sel_hi_at: u32,
                first: u32, end: u32, _pad0: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> coords: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq_scales: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> bases: array<u32>;
@group(0) @binding(3) var<storage, read> sel_scales: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<uniform> params: Params;

fn store_ext(at: u32, v: vec4<u32>) {
    out[at] = v.x;
    out[at + 1u] = v.y;
    out[at + 2u] = v.z;
    out[at + 3u] = v.w;
}

// acc * prod_{s < len} (bit s of j, MSB first ? z_s : 1 - z_s), z_s = coords[at + s].
fn eq_product(acc0: vec4<u32>, at: u32, len: u32, j: u32) -> vec4<u32> {
    var acc = acc0;
    for (var s = 0u; s < len; s++) {
        let z = coords[at + s];
        if (((j >> (len - 1u - s)) & 1u) != 0u) {
            acc = ef_mul(acc, z);
        } else {
            acc = ef_mul(acc, ef_sub(vec4<u32>(BB_R, 0u, 0u, 0u), z));
        }
    }
    return acc;
}

@compute @workgroup_size(WG)
fn factor_tables(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    var t = gid.x + gid.y * nwg.x * WG + params.first;
    if (t >= params.end) {
        return;
    }
    let lo = params.log_lo;
    let hi = params.nv - lo;
    let one = vec4<u32>(BB_R, 0u, 0u, 0u);
    if (t < (params.n_eq << lo)) {
        let e = t >> lo;
        store_ext(params.eq_lo_at + 4u * t, eq_product(one, params.coord_off + e * params.nv + hi, lo,
                                                       t & ((1u << lo) - 1u)));
        return;
    }
    t -= params.n_eq << lo;
    if (t < (params.n_eq << hi)) {
        let e = t >> hi;
        var acc = one;
        if (params.eq_scaled != 0u) {
            acc = eq_scales[params.eq_scale_off + e];
        }
        store_ext(params.eq_hi_at + 4u * t, eq_product(acc, params.coord_off + e * params.nv, hi,
                                                       t & ((1u << hi) - 1u)));
        return;
    }
    t -= params.n_eq << hi;
    if (t < (params.n_sel << lo)) {
        out[params.sel_lo_at + t] = bb_pow(bases[params.base_off + (t >> lo)], t & ((1u << lo) - 1u));
        return;
    }
    t -= params.n_sel << lo;
    if (t < (params.n_sel << hi)) {
        let m = t >> hi;
        let step = bb_pow(bases[params.base_off + m], 1u << lo);
        store_ext(params.sel_hi_at + 4u * t,
                  ef_mul_base(sel_scales[params.sel_scale_off + m], bb_pow(step, t & ((1u << hi) - 1u))));
    }
}
