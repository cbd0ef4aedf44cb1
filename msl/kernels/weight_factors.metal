// requires: bb_ext4
// Factor tables of eq and select weights, built on the device (w(b) = hi(b >> L) * lo(b mod 2^L)); the offsets
// (coord_off, scale_off in EF elements, base_off in words) locate the inputs in bigger buffers. e < m, j < 2^len:
// eq_factor: out[e 2^len + j] = (scaled ? scales[scale_off + e] : 1) * prod_{s < len} (bit s of j, MSB first ? z_s :
//   1 - z_s), z_s = coords[coord_off + e * nv + first + s]. Bindings: 0 coords, 1 scales, 2 out_ext (EF), 3 params.
// power_lo: out[e 2^len + j] = bases[base_off + e]^j. Bindings: 0 bases, 1 out_base (base words), 2 params.
// power_hi: out[e 2^len + j] = scales[scale_off + e] bases[base_off + e]^(j 2^shift); 0 bases, 1 scales, 2 out_ext,
//   3 params. One thread per output on a 2-D grid; shifts count mod 32 as in WGSL. Words Montgomery in [0, P).

struct Params { uint m; uint nv; uint first; uint len; uint scaled; uint shift; uint coord_off; uint scale_off;
                uint base_off; uint _pad0; uint _pad1; uint _pad2; };

constant constexpr uint WG = 256u;

uint linear_id(uint3 gid, uint3 nwg) {
    return gid.x + gid.y * nwg.x * WG;
}

kernel void eq_factor(device const uint4* coords [[buffer(0)]], device const uint4* scales [[buffer(1)]],
                      device uint4* out_ext [[buffer(2)]], constant Params& params [[buffer(3)]],
                      uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = linear_id(gid, nwg);
    uint len = params.len & 31u;
    if (t >= (params.m << len)) {
        return;
    }
    uint e = t >> len;
    uint j = t & ((1u << len) - 1u);
    uint4 one = uint4(BB_R, 0u, 0u, 0u);
    uint4 acc = params.scaled != 0u ? scales[params.scale_off + e] : one;
    for (uint s = 0u; s < params.len; s++) {
        uint4 z = coords[params.coord_off + e * params.nv + params.first + s];
        if (((j >> ((params.len - 1u - s) & 31u)) & 1u) != 0u) {
            acc = ef_mul(acc, z);
        } else {
            acc = ef_mul(acc, ef_sub(one, z));
        }
    }
    out_ext[t] = acc;
}

kernel void power_lo(device const uint* bases [[buffer(0)]], device uint* out_base [[buffer(1)]],
                     constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                     uint3 nwg [[threadgroups_per_grid]]) {
    uint t = linear_id(gid, nwg);
    uint len = params.len & 31u;
    if (t >= (params.m << len)) {
        return;
    }
    out_base[t] = bb_pow(bases[params.base_off + (t >> len)], t & ((1u << len) - 1u));
}

kernel void power_hi(device const uint* bases [[buffer(0)]], device const uint4* scales [[buffer(1)]],
                     device uint4* out_ext [[buffer(2)]], constant Params& params [[buffer(3)]],
                     uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = linear_id(gid, nwg);
    uint len = params.len & 31u;
    if (t >= (params.m << len)) {
        return;
    }
    uint e = t >> len;
    uint step = bb_pow(bases[params.base_off + e], 1u << (params.shift & 31u));
    out_ext[t] = ef_mul_base(scales[params.scale_off + e], bb_pow(step, t & ((1u << len) - 1u)));
}
