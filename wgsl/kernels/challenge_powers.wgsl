// requires: bb_ext4
// Small transcript-dependent tables, one thread each (inputs are a handful of EF words in scratch):
// expand_point: points[dst + t] = z^(2^(nv-1-t)) for t < nv, z = scratch EF at z_at (an OOD point, x_0 first).
// ef_powers:    scratch EF at dst + i = x^i for i < n_plain + valid, 0 for the rest of n_plain + n_slots,
//               x = scratch EF at src; valid = min(word count_at of scratch, n_slots), or n_slots when count_at
//               is 0xffffffff (constraint coefficients: select slots past the drawn count get 0).
// src, dst count EF elements; count_at counts words. Bindings: ef_powers: 0 scratch, 1 params;
// expand_point: 0 scratch_in (read), 1 points, 2 params. Launch: one workgroup of one thread.

struct Params { src: u32, dst: u32, n: u32, n_slots: u32, count_at: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@group(0) @binding(0) var<storage, read_write> scratch_ext: array<vec4<u32>>;
@group(0) @binding(0) var<storage, read> scratch_in: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(1) var<uniform> params_powers: Params;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(1)
fn expand_point() {
    var current = scratch_in[params.src];
    for (var t = params.n; t > 0u; t--) {
        points[params.dst + t - 1u] = current;
        current = ef_mul(current, current);
    }
}

@compute @workgroup_size(1)
fn ef_powers() {
    let p = params_powers;
    var valid = p.n_slots;
    if (p.count_at != 0xffffffffu) {
        valid = min(scratch_ext[p.count_at >> 2u][p.count_at & 3u], p.n_slots);
    }
    let x = scratch_ext[p.src];
    var acc = vec4<u32>(BB_R, 0u, 0u, 0u);
    for (var i = 0u; i < p.n + p.n_slots; i++) {
        scratch_ext[p.dst + i] = select(vec4<u32>(0u), acc, i < p.n + valid);
        acc = ef_mul(acc, x);
    }
}
