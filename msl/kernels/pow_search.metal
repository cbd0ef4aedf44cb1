// requires: challenger
// Proof-of-work search on the device challenger (challenger.metal's layout in scratch words [0, 26)): the candidate
// witness monty(nonce) overwrites lane (input length) of the state the next duplex would permute (CH_LENGTH_TAGGED:
// the rate lanes past it zero, lane 8 plus input length + 1); it is valid when canonical(lane 7 of the permuted
// state) & mask == 0. `groups` threadgroups (2-D grid; the overhang returns) loop,
// claiming batches of WG nonces (thread lid takes nonce batch * WG + lid) in increasing order, and stop at their
// first claim at or past end_batch or starting at or above the smallest valid nonce so far (scratch[found], atomic
// min). Each threadgroup leaving the loop counts itself in scratch[exit_ticket] (0 at launch); the last of `groups`
// resets it and, with all its threads, runs the transcript program params.ops[0 .. n_ops) (challenger.metal;
// scratch as atomic words). Contracts: WG >= 16; (end_batch + groups) * WG < 2^32; scratch[counter] = 0 at launch.
// Bindings: 0 scratch_atomic, 1 proof (a window; op offsets relative to it), 2 points (whole), 3 p2_rc, 4 params.

struct Params { uint mask; uint found; uint counter; uint first_batch; uint end_batch; uint exit_ticket; uint groups;
                uint _pad0; uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11]; };

constant uint WG [[function_constant(0)]];
constant uint TAIL [[function_constant(1)]];  // 0: no exit ticket and no epilogue (a search without a program)
constant constexpr uint STOP = 0xffffffffu;

uint4 with_lane(uint4 v, uint first_lane, uint index, uint w) {
    return select(v, uint4(w), uint4(first_lane) + uint4(0u, 1u, 2u, 3u) == uint4(index));
}

kernel void pow_search(device atomic_uint* scratch_atomic [[buffer(0)]], device uint* proof [[buffer(1)]],
                       device uint4* points [[buffer(2)]], constant uint4* p2_rc [[buffer(3)]],
                       constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]],
                       uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint claimed[1];
    threadgroup uint exit_last[1];
    threadgroup uint base_words[16];
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    if (wid.x + wid.y * nwg.x >= params.groups) {
        return;  // the overhang of a 2-D grid (uniform per threadgroup)
    }
    uint in_len = atomic_load_explicit(&scratch_atomic[16], memory_order_relaxed);
    // The state to permute read once per threadgroup (see pow_search.wgsl).
    if (lid < 16u) {
        uint word = atomic_load_explicit(&scratch_atomic[lid < in_len ? 18u + lid : lid], memory_order_relaxed);
        if (CH_LENGTH_TAGGED != 0u) {
            if (lid > in_len && lid < 8u) {
                word = 0u;
            }
            if (lid == 8u) {
                word = bb_add(word, bb_mul(in_len + 1u, BB_R2));
            }
        }
        base_words[lid] = word;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint4 base0 = uint4(base_words[0], base_words[1], base_words[2], base_words[3]);
    uint4 base1 = uint4(base_words[4], base_words[5], base_words[6], base_words[7]);
    uint4 base2 = uint4(base_words[8], base_words[9], base_words[10], base_words[11]);
    uint4 base3 = uint4(base_words[12], base_words[13], base_words[14], base_words[15]);
    for (;;) {
        if (lid == 0u) {
            uint b = params.first_batch
                     + atomic_fetch_add_explicit(&scratch_atomic[params.counter], 1u, memory_order_relaxed);
            uint found = atomic_load_explicit(&scratch_atomic[params.found], memory_order_relaxed);
            claimed[0] = select(b, STOP, b >= params.end_batch || b * WG >= found);
        }
        // WGSL's workgroupUniformLoad: every thread reads thread 0's claim, and none reads it after the next
        // iteration's claim overwrites it (every thread reaches both barriers: b is uniform).
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint b = claimed[0];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (b == STOP) {
            break;
        }
        uint nonce = b * WG + lid;
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
    if (TAIL == 0u) {
        return;  // uniform: a constant
    }
    // Every thread's atomic min is done before this threadgroup counts itself out.
    threadgroup_barrier(mem_flags::mem_device);
    if (lid == 0u) {
        exit_last[0] = atomic_fetch_add_explicit(&scratch_atomic[params.exit_ticket], 1u, memory_order_relaxed)
                       == params.groups - 1u;
    }
    // WGSL's workgroupUniformLoad: exit_last is written once per threadgroup, so no second barrier is needed.
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (exit_last[0] != 0u) {  // uniform per threadgroup: the whole last threadgroup runs the program
        if (lid == 0u) {
            atomic_store_explicit(&scratch_atomic[params.exit_ticket], 0u, memory_order_relaxed);
        }
        ChIo io = {nullptr, scratch_atomic, proof, points, p2_rc, params.ops, params.n_ops};
        transcript_run(lid, WG, io, ch_next, ch_distinct);
    }
}
