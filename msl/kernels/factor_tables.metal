// requires: bb_ext4
// Every factor table of one weights call in one launch (w(b) = hi(b >> L) * lo(b mod 2^L), L = log_lo,
// H = nv - L), written at word offsets of one out buffer:
//   eq_lo[e 2^L + j]  = prod_{s < L} (bit s of j, MSB first ? z : 1 - z), z = coords[coord_off + e nv + H + s]
//   eq_hi[e 2^H + j]  = (eq_scaled ? eq_scales[eq_scale_off + e] : 1) * the same over z = coords[.. + e nv + s]
//   sel_lo[m 2^L + j] = v_m^j (base), sel_hi[m 2^H + j] = sel_scales[sel_scale_off + m] * v_m^(j 2^L) (EF),
//   v_m = bases[base_off + m]; e < n_eq, m < n_sel. EF entries are 4 words, base entries 1.
// Thread i of the 2-D grid makes entry t = first + i < end of the four tables in that order (eq_lo, eq_hi, sel_lo,
// sel_hi): a launch may make a part of them (each table its own launch when all do not fit one binding).
// Bindings: 0 coords, 1 eq_scales, 2 bases, 3 sel_scales, 4 out (words), 5 params. Words Montgomery in [0, P);
// log_lo, nv - log_lo < 32.

struct Params { uint n_eq; uint n_sel; uint nv; uint log_lo; uint eq_scaled; uint coord_off; uint eq_scale_off;
                uint base_off; uint sel_scale_off; uint eq_lo_at; uint eq_hi_at; uint sel_lo_at; uint sel_hi_at;
                uint first; uint end; uint _pad0; };

constant constexpr uint WG = 256u;

void store_ext(device uint* out, uint at, uint4 v) {
    out[at] = v.x;
    out[at + 1u] = v.y;
    out[at + 2u] = v.z;
    out[at + 3u] = v.w;
}

// acc * prod_{s < len} (bit s of j, MSB first ? z_s : 1 - z_s), z_s = coords[at + s].
uint4 eq_product(device const uint4* coords, uint4 acc, uint at, uint len, uint j) {
    uint4 one = uint4(BB_R, 0u, 0u, 0u);
    for (uint s = 0u; s < len; s++) {
        uint4 z = coords[at + s];
        acc = ((j >> ((len - 1u - s) & 31u)) & 1u) != 0u ? ef_mul(acc, z) : ef_mul(acc, ef_sub(one, z));
    }
    return acc;
}

kernel void factor_tables(device const uint4* coords [[buffer(0)]], device const uint4* eq_scales [[buffer(1)]],
                          device const uint* bases [[buffer(2)]], device const uint4* sel_scales [[buffer(3)]],
                          device uint* out [[buffer(4)]], constant Params& params [[buffer(5)]],
                          uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG + params.first;
    if (t >= params.end) {
        return;
    }
    uint lo = params.log_lo & 31u;
    uint hi = (params.nv - params.log_lo) & 31u;
    uint4 one = uint4(BB_R, 0u, 0u, 0u);
    if (t < (params.n_eq << lo)) {
        uint e = t >> lo;
        store_ext(out, params.eq_lo_at + 4u * t,
                  eq_product(coords, one, params.coord_off + e * params.nv + hi, lo, t & ((1u << lo) - 1u)));
        return;
    }
    t -= params.n_eq << lo;
    if (t < (params.n_eq << hi)) {
        uint e = t >> hi;
        uint4 acc = params.eq_scaled != 0u ? eq_scales[params.eq_scale_off + e] : one;
        store_ext(out, params.eq_hi_at + 4u * t,
                  eq_product(coords, acc, params.coord_off + e * params.nv, hi, t & ((1u << hi) - 1u)));
        return;
    }
    t -= params.n_eq << hi;
    if (t < (params.n_sel << lo)) {
        out[params.sel_lo_at + t] = bb_pow(bases[params.base_off + (t >> lo)], t & ((1u << lo) - 1u));
        return;
    }
    t -= params.n_sel << lo;
    if (t < (params.n_sel << hi)) {
        uint m = t >> hi;
        uint step = bb_pow(bases[params.base_off + m], 1u << lo);
        store_ext(out, params.sel_hi_at + 4u * t,
                  ef_mul_base(sel_scales[params.sel_scale_off + m], bb_pow(step, t & ((1u << hi) - 1u))));
    }
}
