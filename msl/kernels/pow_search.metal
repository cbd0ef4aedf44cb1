// requires: poseidon2
// Proof-of-work search on the device challenger (transcript.metal's layout in scratch words [0, 26)): the candidate
// witness monty(nonce) overwrites lane (input length) of the state the next duplex would permute; it is valid when
// canonical(lane 7 of the permuted state) & mask == 0. Threadgroups claim batches of WG * PER_THREAD nonces in
// increasing order while below end_batch and the smallest valid nonce so far (scratch[found], atomic min).
// Bindings: 0 scratch_atomic, 1 p2_rc, 2 params. Launch: any number of threadgroups (they loop over batches).

struct Params { uint mask; uint found; uint counter; uint first_batch; uint end_batch; uint _pad0; uint _pad1;
                uint _pad2; };

constant uint WG [[function_constant(0)]];
constant constexpr uint PER_THREAD = 16u;
constant constexpr uint STOP = 0xffffffffu;

uint base_lane(device atomic_uint* scratch_atomic, uint i, uint in_len) {
    return select(atomic_load_explicit(&scratch_atomic[i], memory_order_relaxed),
                  atomic_load_explicit(&scratch_atomic[18u + i], memory_order_relaxed), i < in_len);
}

uint4 base_chunk(device atomic_uint* scratch_atomic, uint c, uint in_len) {
    return uint4(base_lane(scratch_atomic, 4u * c, in_len), base_lane(scratch_atomic, 4u * c + 1u, in_len),
                 base_lane(scratch_atomic, 4u * c + 2u, in_len), base_lane(scratch_atomic, 4u * c + 3u, in_len));
}

uint4 with_lane(uint4 v, uint first_lane, uint index, uint w) {
    return select(v, uint4(w), uint4(first_lane) + uint4(0u, 1u, 2u, 3u) == uint4(index));
}

kernel void pow_search(device atomic_uint* scratch_atomic [[buffer(0)]], constant uint4* p2_rc [[buffer(1)]],
                       constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint claimed[1];
    uint in_len = atomic_load_explicit(&scratch_atomic[16], memory_order_relaxed);
    uint4 base0 = base_chunk(scratch_atomic, 0u, in_len);
    uint4 base1 = base_chunk(scratch_atomic, 1u, in_len);
    uint4 base2 = base_chunk(scratch_atomic, 2u, in_len);
    uint4 base3 = base_chunk(scratch_atomic, 3u, in_len);
    uint batch_size = WG * PER_THREAD;
    for (;;) {
        if (lid == 0u) {
            uint b = params.first_batch
                     + atomic_fetch_add_explicit(&scratch_atomic[params.counter], 1u, memory_order_relaxed);
            uint found = atomic_load_explicit(&scratch_atomic[params.found], memory_order_relaxed);
            claimed[0] = select(b, STOP, b >= params.end_batch || b * batch_size >= found);
        }
        // WGSL's workgroupUniformLoad: every thread reads thread 0's claim, and none reads it after the next
        // iteration's claim overwrites it (every thread reaches both barriers: b is uniform).
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint b = claimed[0];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (b == STOP) {
            break;
        }
        for (uint j = 0u; j < PER_THREAD; j++) {
            uint nonce = b * batch_size + j * WG + lid;
            if (nonce < BB_P) {
                uint w = bb_mul(nonce, BB_R2);
                P2State s = P2State{with_lane(base0, 0u, in_len, w), with_lane(base1, 4u, in_len, w),
                                    with_lane(base2, 8u, in_len, w), with_lane(base3, 12u, in_len, w)};
                P2State out = poseidon2_permute(s, p2_rc);
                if ((bb_mul(out.b.w, 1u) & params.mask) == 0u) {
                    atomic_fetch_min_explicit(&scratch_atomic[params.found], nonce, memory_order_relaxed);
                }
            }
        }
    }
}
