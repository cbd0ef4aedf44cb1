// requires: poseidon2
// Proof-of-work search: nonce = start + i for i < count (nonces >= P skipped). The candidate witness is the
// Montgomery word of nonce, written at lane `index` of the 16-word base state; it is valid when the canonical
// value of lane 7 of the permuted state has its low bits (mask) zero. result[0] (0xffffffff from the host) ends
// as the smallest valid nonce seen; a launch whose start is above an already found nonce exits.
// Thread i (2-D grid: i = gid.x + gid.y * threadgroups_per_grid.x * WG). Bindings: 0 result, 1 p2_rc, 2 params.

struct Params { uint4 base[4]; uint index; uint mask; uint start; uint count; };

constant uint WG [[function_constant(0)]];

// v with lane `index` (counted over the whole state; this chunk holds lanes first_lane..+3) replaced by w.
uint4 with_lane(uint4 v, uint first_lane, uint index, uint w) {
    return select(v, uint4(w), uint4(first_lane) + uint4(0u, 1u, 2u, 3u) == uint4(index));
}

kernel void pow_grind(device atomic_uint* result [[buffer(0)]], constant uint4* p2_rc [[buffer(1)]],
                      constant Params& params [[buffer(2)]],
                      uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    uint nonce = params.start + i;
    if (i >= params.count || nonce >= BB_P
        || atomic_load_explicit(&result[0], memory_order_relaxed) < params.start) {
        return;
    }
    uint w = bb_mul(nonce, BB_R2);
    uint index = params.index;
    P2State s = P2State{with_lane(params.base[0], 0u, index, w), with_lane(params.base[1], 4u, index, w),
                        with_lane(params.base[2], 8u, index, w), with_lane(params.base[3], 12u, index, w)};
    P2State out = poseidon2_permute(s, p2_rc);
    if ((bb_mul(out.b.w, 1u) & params.mask) == 0u) {
        atomic_fetch_min_explicit(&result[0], nonce, memory_order_relaxed);
    }
}
