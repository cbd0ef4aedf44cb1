// requires: bb_ext4
// Second stage of every EF reduction: out[j] = sum over g < count of values[g * stride + j], for j < stride.
// Launch: stride workgroups (workgroup j sums column j). Bindings: 0 values (EF vec4), 1 out (EF vec4, stride
// entries), 2 params. Words Montgomery in [0, P).

struct Params { count: u32, stride: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> values: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> red: array<vec4<u32>, WG>;

@compute @workgroup_size(WG)
fn ef_reduce(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let j = wid.x;
    var acc = vec4<u32>(0u);
    for (var g = lid; g < params.count; g += WG) {
        acc = ef_add(acc, values[g * params.stride + j]);
    }
    red[lid] = acc;
    workgroupBarrier();
    for (var span = WG / 2u; span > 0u; span >>= 1u) {
        if (lid < span) {
            red[lid] = ef_add(red[lid], red[lid + span]);
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        out[j] = red[0];
    }
}
