// requires: bb_field
// Calibration kernels: the ceilings other kernels are measured against.
// copy_vec4: dst[i] = src[i] for i < n (16-byte elements, 4 per thread, coalesced); bindings 0 src, 1 dst,
// 2 params.
// mul_chain: each thread runs 8 independent chains of `rounds` Montgomery products (x = x * y, with a
// per-thread y) and writes their sum, so the result depends on every product; bindings 0 dst, 1 params.
// Launch: 2-D grid; copy_vec4 one thread per 4 elements, mul_chain one thread per output word.

struct Params { n: u32, rounds: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(0) var<storage, read_write> chain_out: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(1) var<uniform> chain_params: Params;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    let stride = nwg.x * nwg.y * WG;
    for (var k = 0u; k < 4u; k++) {
        let i = t + k * stride;
        if (i < params.n) {
            dst[i] = src[i];
        }
    }
}

@compute @workgroup_size(WG)
fn mul_chain(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= chain_params.n) {
        return;
    }
    let y = (t * 2654435761u) % BB_P;
    var x0 = t % BB_P; var x1 = (t + 1u) % BB_P; var x2 = (t + 2u) % BB_P; var x3 = (t + 3u) % BB_P;
    var x4 = (t + 4u) % BB_P; var x5 = (t + 5u) % BB_P; var x6 = (t + 6u) % BB_P; var x7 = (t + 7u) % BB_P;
    for (var r = 0u; r < chain_params.rounds; r++) {
        x0 = bb_mul(x0, y); x1 = bb_mul(x1, y); x2 = bb_mul(x2, y); x3 = bb_mul(x3, y);
        x4 = bb_mul(x4, y); x5 = bb_mul(x5, y); x6 = bb_mul(x6, y); x7 = bb_mul(x7, y);
    }
    chain_out[t] = bb_add(bb_add(bb_add(x0, x1), bb_add(x2, x3)), bb_add(bb_add(x4, x5), bb_add(x6, x7)));
}
