// requires: poseidon2
// Proof-of-work search: nonce = start + i for i < count (nonces >= P skipped). The candidate witness is the
// Montgomery word of nonce, written at lane `index` of the 16-word base state; it is valid when the canonical
// value of lane 7 of the permuted state has its low bits (mask) zero. result[0] (initialised to 0xffffffff by
// the host) ends as the smallest valid nonce seen; a launch whose start is above an already found nonce exits.
// Bindings: 0 result (one atomic word), 1 Poseidon2 round constants, 2 params. Launch: 2-D grid of threads.

struct Params { base: array<vec4<u32>, 4>, index: u32, mask: u32, start: u32, count: u32 }

@id(0) override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> result: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(2) var<uniform> params: Params;

fn with_lane(v: vec4<u32>, first_lane: u32, w: u32) -> vec4<u32> {
    return select(v, vec4<u32>(w), vec4<u32>(first_lane) + vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(params.index));
}

@compute @workgroup_size(WG)
fn pow_grind(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    let nonce = params.start + i;
    if (i >= params.count || nonce >= BB_P || atomicLoad(&result[0]) < params.start) {
        return;
    }
    let w = bb_mul(nonce, BB_R2);
    let s = P2State(with_lane(params.base[0], 0u, w), with_lane(params.base[1], 4u, w),
                    with_lane(params.base[2], 8u, w), with_lane(params.base[3], 12u, w));
    let out = poseidon2_permute(s);
    if ((bb_mul(out.b.w, 1u) & params.mask) == 0u) {
        atomicMin(&result[0], nonce);
    }
}
