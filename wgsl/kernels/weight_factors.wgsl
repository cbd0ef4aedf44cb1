// requires: bb_ext4
// Factor tables of eq and select weights, built on the device (w(b) = hi(b >> L) * lo(b mod 2^L)).
// Offsets (coord_off, scale_off in EF elements, base_off in words) locate the inputs in bigger buffers.
// eq_factor:  out[e 2^len + j] = (scaled ? scales[scale_off + e] : 1) * prod_{s < len} (bit s of j, MSB first ? z_s : 1 - z_s),
//             z_s = coords[coord_off + e * nv + first + s]; e < m, j < 2^len. Bindings: 0 coords (EF), 1 scales (EF),
//             2 out (EF), 3 params.
// power_lo:   out[e 2^len + j] = bases[base_off + e]^j (base). Bindings: 0 bases, 1 out (base words), 2 params.
// power_hi:   out[e 2^len + j] = scales[scale_off + e] * bases[base_off + e]^(j 2^shift) (EF). Bindings: 0 bases, 1 scales (EF),
//             2 out (EF), 3 params.
// Launch: one thread per output entry (m 2^len of them) on a 2-D grid. Words Montgomery in [0, P).

struct Params { m: u32, nv: u32, first: u32, len: u32, scaled: u32, shift: u32, coord_off: u32, scale_off: u32,
                base_off: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> coords: array<vec4<u32>>;
@group(0) @binding(0) var<storage, read> bases: array<u32>;
@group(0) @binding(1) var<storage, read> scales: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out_base: array<u32>;
@group(0) @binding(2) var<storage, read_write> out_ext: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params_lo: Params;
@group(0) @binding(3) var<uniform> params: Params;

fn linear_id(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WG;
}

@compute @workgroup_size(WG)
fn eq_factor(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= (params.m << params.len)) {
        return;
    }
    let e = t >> params.len;
    let j = t & ((1u << params.len) - 1u);
    var acc = vec4<u32>(BB_R, 0u, 0u, 0u);
    if (params.scaled != 0u) {
        acc = scales[params.scale_off + e];
    }
    for (var s = 0u; s < params.len; s++) {
        let z = coords[params.coord_off + e * params.nv + params.first + s];
        if (((j >> (params.len - 1u - s)) & 1u) != 0u) {
            acc = ef_mul(acc, z);
        } else {
            acc = ef_mul(acc, ef_sub(vec4<u32>(BB_R, 0u, 0u, 0u), z));
        }
    }
    out_ext[t] = acc;
}

@compute @workgroup_size(WG)
fn power_lo(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= (params_lo.m << params_lo.len)) {
        return;
    }
    out_base[t] = bb_pow(bases[params_lo.base_off + (t >> params_lo.len)], t & ((1u << params_lo.len) - 1u));
}

@compute @workgroup_size(WG)
fn power_hi(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_id(gid, nwg);
    if (t >= (params.m << params.len)) {
        return;
    }
    let e = t >> params.len;
    let step = bb_pow(bases[params.base_off + e], 1u << params.shift);
    out_ext[t] = ef_mul_base(scales[params.scale_off + e], bb_pow(step, t & ((1u << params.len) - 1u)));
}
