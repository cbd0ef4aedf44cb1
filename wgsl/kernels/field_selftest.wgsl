// requires: bb_ext4
// Differential-test kernel for the field library: out[i] = op(a[i], b[i]) elementwise.
// Thread i (2-D grid, row = num_workgroups.x * 64) handles element i. Bindings: 0 a, 1 b, 2 out, 3 params.
// op: 0 add, 1 sub, 2 mul, 3 ext mul (elements are vec4 = 4 words), 4 ext add.

struct Params { n: u32, op: u32, _pad0: u32, _pad1: u32 }

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

fn load4(buf_is_a: bool, i: u32) -> vec4<u32> {
    if (buf_is_a) {
        return vec4<u32>(a[4u * i], a[4u * i + 1u], a[4u * i + 2u], a[4u * i + 3u]);
    }
    return vec4<u32>(b[4u * i], b[4u * i + 1u], b[4u * i + 2u], b[4u * i + 3u]);
}

@compute @workgroup_size(64)
fn field_selftest(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) {
        return;
    }
    switch params.op {
        case 0u: { out[i] = bb_add(a[i], b[i]); }
        case 1u: { out[i] = bb_sub(a[i], b[i]); }
        case 2u: { out[i] = bb_mul(a[i], b[i]); }
        case 3u, 4u: {
            let x = load4(true, i);
            let y = load4(false, i);
            var z: vec4<u32>;
            if (params.op == 3u) { z = ef_mul(x, y); } else { z = ef_add(x, y); }
            out[4u * i] = z.x; out[4u * i + 1u] = z.y; out[4u * i + 2u] = z.z; out[4u * i + 3u] = z.w;
        }
        default: {}
    }
}
