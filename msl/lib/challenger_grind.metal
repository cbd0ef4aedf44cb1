// requires: challenger_sponge
// The GRIND op of a transcript program (challenger_grind.wgsl's twin: the same search, the same result): the
// threadgroup running the program searches the smallest nonce below `end` whose witness monty(nonce), written
// over the pending input at lane (input length) of the state the next duplex would permute (length-tagged: the
// rate lanes past it zeroed and input length + 1 added to lane 8), leaves canonical(lane 7) & mask == 0; waves of
// `size` / 16 nonces, one state per 16 lanes of a simd-group (ch_coop_permute), stopping after the first wave with
// a hit. Thread 0's challenger is stored to scratch first, where every thread reads the state. Contracts: the
// input is not full (ch_advance permutes first); end <= P; size a multiple of 16, simd-groups of 16 or 32;
// called by all `size` threads in uniform control flow; `hit` a threadgroup word free for the op (the
// interpreter's ch_distinct).

constant constexpr uint CH_GRIND_NONE = 0xffffffffu;  // challenger.metal's CH_NOT_FOUND (declared after this file)

// Runs GRIND op (10, found word, bits, end): scratch[found word] := the smallest valid nonce below end, or
// 0xffffffff.
void ch_grind(uint lid, uint size, uint4 op, thread const Challenger& ch, thread const ChIo& io,
              threadgroup atomic_uint* hit) {
    if (lid == 0u) {
        ch_store(ch, io);
        atomic_store_explicit(hit, CH_GRIND_NONE, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    uint l = lid & 15u;
    uint in_len = ch_scratch_get(io, 16u);
    uint word = ch_scratch_get(io, l < in_len ? 18u + l : l);
    if (CH_LENGTH_TAGGED != 0u) {
        if (l > in_len && l < 8u) {
            word = 0u;
        }
        if (l == 8u) {
            word = bb_add(word, bb_mul(in_len + 1u, BB_R2));
        }
    }
    uint groups = size >> 4u;
    uint mask = (1u << op.z) - 1u;
    uint found = CH_GRIND_NONE;
    for (uint first = 0u;; first += groups) {
        uint nonce = first + min(lid >> 4u, groups - 1u);
        uint x = ch_coop_permute(lid, l == in_len ? bb_mul(nonce, BB_R2) : word, io.p2_rc);
        if (l == 7u && nonce < op.w && (bb_mul(x, 1u) & mask) == 0u) {
            atomic_fetch_min_explicit(hit, nonce, memory_order_relaxed);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        found = atomic_load_explicit(hit, memory_order_relaxed);
        // every thread has read the wave's result before any thread's next wave may lower it
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (found != CH_GRIND_NONE || first + groups >= op.w) {
            break;
        }
    }
    if (lid == 0u) {
        ch_scratch_set(io, op.y, found);
    }
}
