// requires: poseidon2 bb_ext4
// The device-resident duplex challenger (width 16, rate 8; bit-exact with protocol/transcript.py) and the
// interpreter of transcript programs (challenger.wgsl's twin: same ops, same words, same steps), for the transcript
// kernel and for the kernels that run a program as their epilogue (the last threadgroup of a reduction or a search).
// The challenger lives in scratch words [0, 26): [0, 16) sponge state, 16 input length, 17 output length,
// [18, 26) input buffer (the output buffer is sponge[0 .. output length), popped from the end).
// WGSL's accessor functions are a ChIo here: the kernel's buffers as pointers (scratch as plain words, or as atomic
// words in scratch_atomic with scratch null; points null where the kernel has no points binding: EXPAND is then a
// no-op, and is never given) and its params' ops / n_ops. Ops (x = code, y z w args; proof offsets relative to the
// window; listed in full in challenger.wgsl): 1 OBSERVE, 2 SAMPLE, 3 WITNESS, 4 QUERIES, 5 POW_RESET, 6 EXPAND,
// 7 POWERS (two op slots), 8 SORT (three op slots; made by the whole threadgroup), 9 DISTINCT (CH_DISTINCT_QUERIES).
// The variant, function constants as challenger.wgsl's overrides: CH_LENGTH_TAGGED (the length-tagged duplex),
// CH_DISTINCT_QUERIES (the DISTINCT op; else skipped).
// The whole threadgroup runs a program: transcript_run(lid, size, io, ch_next, ch_distinct), called by its `size`
// >= 16 threads in uniform control flow; thread 0 runs every op but SORT, and each duplex is a permutation on 16
// cooperating lanes (ch_duplex_coop, simd shuffles). WGSL's workgroup variables ch_next and ch_distinct are the
// kernel's `threadgroup uint ch_next[1];` and `threadgroup atomic_uint ch_distinct[1];`, passed in. The
// permutation has one call site (GPU compilers inline every call). Words Montgomery in [0, P).

constant constexpr uint CH_NOT_FOUND = 0xffffffffu;
constant constexpr uint CH_DUPLEX = 0xfffffffeu;  // ch_advance: a permutation is due
constant constexpr uint OP_OBSERVE = 1u;
constant constexpr uint OP_SAMPLE = 2u;
constant constexpr uint OP_WITNESS = 3u;
constant constexpr uint OP_QUERIES = 4u;
constant constexpr uint OP_POW_RESET = 5u;
constant constexpr uint OP_EXPAND = 6u;
constant constexpr uint OP_POWERS = 7u;
constant constexpr uint OP_SORT = 8u;
constant constexpr uint OP_DISTINCT = 9u;
constant uint CH_LENGTH_TAGGED [[function_constant(16)]];
constant uint CH_DISTINCT_QUERIES [[function_constant(17)]];

// What a transcript program reads and writes (WGSL's accessors and params fields).
struct ChIo {
    device uint* scratch;                // scratch words (null when scratch_atomic holds them)
    device atomic_uint* scratch_atomic;  // scratch as atomic words (pow_search), or null
    device uint* proof;                  // the proof window
    device uint4* points;                // the points region (EF entries), or null: no points binding
    constant uint4* p2_rc;
    constant uint4* ops;                 // params.ops
    uint n_ops;                          // params.n_ops
};

// WGSL's private variables: Metal has no mutable program-scope state, so the challenger is passed by reference
// (thread 0's is the live one).
struct Challenger {
    uint sponge[16];
    uint input[8];
    uint in_len;
    uint out_len;
    uint k;  // ch_advance's position: op k, its step i
    uint i;
    uint found;  // DISTINCT: indices found so far
};

uint ch_scratch_get(thread const ChIo& io, uint i) {
    if (io.scratch_atomic != nullptr) {
        return atomic_load_explicit(&io.scratch_atomic[i], memory_order_relaxed);
    }
    return io.scratch[i];
}

void ch_scratch_set(thread const ChIo& io, uint i, uint v) {
    if (io.scratch_atomic != nullptr) {
        atomic_store_explicit(&io.scratch_atomic[i], v, memory_order_relaxed);
    } else {
        io.scratch[i] = v;
    }
}

void ch_point_set(thread const ChIo& io, uint i, uint4 v) {
    if (io.points != nullptr) {
        io.points[i] = v;
    }
}

// The cooperative duplex, by the whole threadgroup in uniform control flow: lane l < 16 of simd-group 0 holds
// state word l (chunk l / 4, position l mod 4); the words meet through simd shuffles, with no threadgroup memory
// and no barrier (the WGSL twin exchanges through workgroup memory). Every other lane computes a copy and drops
// it. Contract: simd-groups of at least 16 threads (Apple GPUs: 32). Thread 0's pending input and sponge in, the
// permuted state back to thread 0's sponge.
uint ch_chunk_sum(uint y) {  // the sum over the 4 chunks of the word at this lane's position
    uint pair = bb_add(y, simd_shuffle_xor(y, ushort(4)));
    return bb_add(pair, simd_shuffle_xor(pair, ushort(8)));
}

// mds_light of the state whose word x this lane holds: M4 on each chunk, plus the sum of the chunks.
uint ch_coop_mds(uint x, uint lane) {
    ushort base = ushort(lane & ~3u);
    uint4 chunk = uint4(simd_shuffle(x, base), simd_shuffle(x, ushort(base + 1u)), simd_shuffle(x, ushort(base + 2u)),
                        simd_shuffle(x, ushort(base + 3u)));
    uint y = p2_mat4(chunk)[lane & 3u];
    return bb_add(y, ch_chunk_sum(y));
}

void ch_duplex_coop(uint lid, thread Challenger& ch, constant uint4* p2_rc) {
    uint lane = lid & 31u;
    uint q = (lid >> 2u) & 3u;
    uint j = lid & 3u;
    for (uint i = 0u; i < ch.in_len; i++) {  // thread 0's pending input over its sponge's first lanes
        ch.sponge[i] = ch.input[i];
    }
    if (CH_LENGTH_TAGGED != 0u && ch.in_len != 0u) {  // length-tagged: the rest of the rate zeroed, + monty(k)
        for (uint i = ch.in_len; i < 8u; i++) {
            ch.sponge[i] = 0u;
        }
        ch.sponge[8] = bb_add(ch.sponge[8], bb_mul(ch.in_len, BB_R2));
    }
    uint x = 0u;
    for (uint i = 0u; i < 16u; i++) {
        uint w = simd_broadcast(ch.sponge[i], ushort(0));
        x = select(x, w, (lid & 15u) == i);
    }
    x = ch_coop_mds(x, lane);
    for (uint r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = ch_coop_mds(p2_sbox(bb_add(x, p2_rc[4u * r + q][j])), lane);
    }
    uint diag = p2_rc[P2_RC_DIAG_AT + q][j];
    for (uint r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        if ((lid & 15u) == 0u) {
            x = p2_sbox(bb_add(x, p2_rc[P2_RC_INTERNAL_AT + r].x));
        }
        uint t = bb_add(x, simd_shuffle_xor(x, ushort(1)));
        t = bb_add(t, simd_shuffle_xor(t, ushort(2)));
        x = bb_add(ch_chunk_sum(t), bb_mul(x, diag));
    }
    for (uint r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = ch_coop_mds(p2_sbox(bb_add(x, p2_rc[4u * r + q][j])), lane);
    }
    for (uint i = 0u; i < 16u; i++) {
        ch.sponge[i] = simd_shuffle(x, ushort(i));
    }
    ch.in_len = 0u;
    ch.out_len = 8u;
}

void ch_absorb(thread Challenger& ch, uint w) {
    ch.out_len = 0u;
    ch.input[ch.in_len] = w;
    ch.in_len += 1u;
}

// The next output word; the caller has made one available (ch_advance: no pending input, output not empty).
uint ch_pop(thread Challenger& ch) {
    ch.out_len -= 1u;
    return ch.sponge[ch.out_len];
}

// Output words op `op` takes from step i on (SAMPLE: one a step; WITNESS: step 1; QUERIES: one a draw call;
// DISTINCT: one a step until it is done, none when t or L is 0).
bool ch_wants_output(uint4 op, uint i) {
    switch (op.x) {
        case OP_SAMPLE:
            return i < op.z;
        case OP_WITNESS:
            return i == 1u;
        case OP_QUERIES: {
            // ceil(q / w) draw calls, at least one; w is 0 only when q is 0 (query_calls), where x / 0 is undefined
            // here (WGSL's x / 0 = x would make it 2^32 - 1 calls): max(w, 1) changes nothing else
            uint per = max(op.w, 1u);
            return i < max(1u, ((op.z & 0xffffu) + per - 1u) / per);
        }
        case OP_DISTINCT:
            return CH_DISTINCT_QUERIES != 0u && (op.z & 0xffffu) != 0u && (op.z >> 16u) != 0u;
        default:
            return false;
    }
}

uint4 ch_scratch_ef(thread const ChIo& io, uint at) {
    return uint4(ch_scratch_get(io, at), ch_scratch_get(io, at + 1u), ch_scratch_get(io, at + 2u),
                 ch_scratch_get(io, at + 3u));
}

void ch_set_scratch_ef(thread const ChIo& io, uint at, uint4 v) {
    ch_scratch_set(io, at, v.x);
    ch_scratch_set(io, at + 1u, v.y);
    ch_scratch_set(io, at + 2u, v.z);
    ch_scratch_set(io, at + 3u, v.w);
}

// points[dst + t] = x^(2^(nv-1-t)) for t < nv, x = the EF at scratch word src.
void ch_expand(thread const ChIo& io, uint src, uint dst, uint nv) {
    uint4 current = ch_scratch_ef(io, src);
    for (uint t = nv; t > 0u; t--) {
        ch_point_set(io, dst + t - 1u, current);
        current = ef_mul(current, current);
    }
}

// The EF at scratch word dst + 4 i = x^i for i < n + valid, 0 for the rest of n + n_slots.
void ch_powers(thread const ChIo& io, uint src, uint dst, uint count_at, uint n, uint n_slots) {
    uint valid = n_slots;
    if (count_at != CH_NOT_FOUND) {
        valid = min(ch_scratch_get(io, count_at), n_slots);
    }
    uint4 x = ch_scratch_ef(io, src);
    uint4 acc = uint4(BB_R, 0u, 0u, 0u);
    for (uint i = 0u; i < n + n_slots; i++) {
        ch_set_scratch_ef(io, dst + 4u * i, select(uint4(0u), acc, i < n + valid));
        acc = ef_mul(acc, x);
    }
}

void ch_load(thread Challenger& ch, thread const ChIo& io) {
    for (uint i = 0u; i < 16u; i++) {
        ch.sponge[i] = ch_scratch_get(io, i);
    }
    ch.in_len = ch_scratch_get(io, 16u);
    ch.out_len = ch_scratch_get(io, 17u);
    for (uint i = 0u; i < 8u; i++) {
        ch.input[i] = ch_scratch_get(io, 18u + i);
    }
}

void ch_store(thread const Challenger& ch, thread const ChIo& io) {
    for (uint i = 0u; i < 16u; i++) {
        ch_scratch_set(io, i, ch.sponge[i]);
    }
    ch_scratch_set(io, 16u, ch.in_len);
    ch_scratch_set(io, 17u, ch.out_len);
    for (uint i = 0u; i < 8u; i++) {
        ch_scratch_set(io, 18u + i, ch.input[i]);
    }
}

// Step i of a DISTINCT op (challenger.wgsl); whether the op is done.
bool ch_distinct_step(thread Challenger& ch, thread const ChIo& io, uint4 op, uint i) {
    uint wanted = op.z & 0xffffu;
    uint log_size = op.z >> 16u;
    if (i == 0u) {
        ch.found = 0u;
    }
    if (wanted == 0u || log_size == 0u) {
        for (uint j = 0u; j < wanted; j++) {
            ch_scratch_set(io, op.y + j, 0u);  // a folded domain of one point: index 0, sampled from nothing
        }
        return true;
    }
    uint mask = (1u << log_size) - 1u;
    uint v = bb_mul(ch_pop(ch), 1u);
    if (v < (BB_P & ~mask)) {  // else rejected: the draw takes the next sample
        uint index = v & mask;
        bool fresh = true;
        for (uint j = 0u; j < ch.found; j++) {
            if (ch_scratch_get(io, op.y + j) == index) {
                fresh = false;
                break;
            }
        }
        if (fresh) {
            ch_scratch_set(io, op.y + ch.found, index);
            ch.found += 1u;
        }
    }
    return ch.found >= wanted;
}

// Thread 0: advances the program from step ch.i of op ch.k (both kept across calls) until a permutation is due
// (returns CH_DUPLEX: the threadgroup runs ch_duplex_coop and thread 0 calls again) or the next SORT or the end
// (returns that op's index). One step at a time: an observed word, a sampled word, a query draw call, or a whole
// op that touches no sponge word; a permutation is due when the input is full (as the host duplexes eagerly) or
// the next step takes an output word while input is pending or the output is empty. Shifts are taken mod 32, as
// in WGSL.
uint ch_advance(thread Challenger& ch, thread const ChIo& io, uint end) {
    uint k = ch.k;
    uint i = ch.i;  // steps of op k done
    for (;;) {
        uint4 op = uint4(0u);
        if (k < end) {
            op = io.ops[k];
        }
        if (ch.in_len == 8u || (k < end && ch_wants_output(op, i) && (ch.in_len != 0u || ch.out_len == 0u))) {
            ch.k = k;
            ch.i = i;
            return CH_DUPLEX;
        }
        if (k >= end || op.x == OP_SORT) {
            break;
        }
        bool done = true;  // op k finished with this step
        switch (op.x) {
            case OP_OBSERVE: {
                if (i < op.z) {
                    ch_absorb(ch, io.proof[op.y + i]);
                }
                done = i + 1u >= op.z;
                break;
            }
            case OP_SAMPLE: {
                if (i < op.z) {
                    ch_scratch_set(io, op.y + i, ch_pop(ch));
                }
                done = i + 1u >= op.z;
                break;
            }
            case OP_WITNESS: {
                if (i == 0u) {
                    uint nonce = ch_scratch_get(io, op.y);
                    uint w = bb_mul(select(nonce, 0u, nonce == CH_NOT_FOUND), BB_R2);
                    io.proof[op.z] = select(w, CH_NOT_FOUND, nonce == CH_NOT_FOUND);  // never a field word
                    ch_absorb(ch, w);
                } else {
                    ch_pop(ch);
                }
                done = i == 1u;
                break;
            }
            case OP_QUERIES: {
                // draw call i: min(per_call, q - done) indices of L bits from one word, LSB first (q = 0: one
                // call of 0 bits)
                uint q = op.z & 0xffffu;
                uint log_size = (op.z >> 16u) & 31u;
                uint first = i * op.w;
                uint count = min(op.w, q - min(q, first));
                uint v = bb_mul(ch_pop(ch), 1u) & ((1u << ((count * log_size) & 31u)) - 1u);
                for (uint j = 0u; j < count; j++) {
                    ch_scratch_set(io, op.y + first + j, v & ((1u << log_size) - 1u));
                    v >>= log_size;
                }
                done = !ch_wants_output(op, i + 1u);
                break;
            }
            case OP_DISTINCT: {
                if (CH_DISTINCT_QUERIES != 0u) {
                    done = ch_distinct_step(ch, io, op, i);
                }
                break;
            }
            case OP_POW_RESET: {
                ch_scratch_set(io, op.y, CH_NOT_FOUND);
                for (uint j = 0u; j < op.w; j++) {
                    ch_scratch_set(io, op.z + j, 0u);
                }
                break;
            }
            case OP_EXPAND: {
                ch_expand(io, op.y, op.z, op.w);
                break;
            }
            case OP_POWERS: {
                uint4 counts = io.ops[k + 1u];
                ch_powers(io, op.y, op.z, op.w, counts.x, counts.y);
                k += 1u;
                break;
            }
            default:
                break;
        }
        if (done) {
            k += 1u;
            i = 0u;
        } else {
            i += 1u;
        }
    }
    ch.k = k;
    ch.i = 0u;
    return k;
}

// The SORT at op k, by the `size` threads of the threadgroup: each distinct value finds its rank by counting.
void ch_sort(uint lid, uint size, uint k, thread const ChIo& io, threadgroup atomic_uint* ch_distinct) {
    uint4 a = io.ops[k];
    uint4 b = io.ops[k + 1u];
    uint4 c = io.ops[k + 2u];
    uint raw = a.y;
    uint q = a.z;
    uint flags = a.w;
    if (lid == 0u) {
        atomic_store_explicit(&ch_distinct[0], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint i = lid; i < q; i += size) {
        uint v = ch_scratch_get(io, raw + i);
        uint first = 1u;
        for (uint j = 0u; j < i; j++) {
            if (ch_scratch_get(io, raw + j) == v) {
                first = 0u;
                break;
            }
        }
        ch_scratch_set(io, flags + i, first);
        if (first == 1u) {
            atomic_fetch_add_explicit(&ch_distinct[0], 1u, memory_order_relaxed);
        }
    }
    // the flags (device memory) and the count (threadgroup memory) of every thread are visible past this point
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    uint count = atomic_load_explicit(&ch_distinct[0], memory_order_relaxed);
    for (uint i = lid; i < q; i += size) {
        if (ch_scratch_get(io, flags + i) == 1u) {
            uint v = ch_scratch_get(io, raw + i);
            uint rank = 0u;
            for (uint j = 0u; j < q; j++) {
                if (ch_scratch_get(io, flags + j) == 1u && ch_scratch_get(io, raw + j) < v) {
                    rank += 1u;
                }
            }
            ch_scratch_set(io, b.x + rank, v);
            ch_scratch_set(io, b.w + rank, bb_pow(c.x, v));
        }
    }
    for (uint i = count + lid; i < b.y; i += size) {
        ch_scratch_set(io, b.x + i, 0u);
        ch_scratch_set(io, b.w + i, BB_R);
    }
    if (lid == 0u) {
        ch_scratch_set(io, b.z, count);
        io.proof[c.y] = count;
    }
    // every thread's sorted entries and domain points are visible to thread 0's next ops (e.g. POWERS reads the
    // count)
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
}

// Runs io.ops[first .. end) on the challenger in scratch (loaded first, stored back last). Called by all `size`
// threads of one threadgroup in uniform control flow.
void transcript_range(uint lid, uint size, uint first, uint end, thread const ChIo& io, threadgroup uint* ch_next,
                      threadgroup atomic_uint* ch_distinct) {
    if (first >= end) {
        return;  // uniform
    }
    Challenger ch = {};  // thread 0's is the live one; the others feed zeros to the cooperative duplex
    if (lid == 0u) {
        ch_load(ch, io);
        ch.k = first;
        ch.i = 0u;
    }
    for (;;) {
        if (lid == 0u) {
            ch_next[0] = ch_advance(ch, io, end);
        }
        // WGSL's workgroupUniformLoad(&ch_next), the first barrier also ordering thread 0's scratch words (the raw
        // indices a SORT reads) before the other threads' reads
        threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
        uint k = ch_next[0];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (k == CH_DUPLEX) {
            ch_duplex_coop(lid, ch, io.p2_rc);
            continue;
        }
        if (k >= end) {
            break;
        }
        ch_sort(lid, size, k, io, ch_distinct);
        if (lid == 0u) {
            ch.k = k + 3u;
            ch.i = 0u;
        }
    }
    if (lid == 0u) {
        ch_store(ch, io);
    }
}

// The whole program, io.ops[0 .. n_ops).
void transcript_run(uint lid, uint size, thread const ChIo& io, threadgroup uint* ch_next,
                    threadgroup atomic_uint* ch_distinct) {
    transcript_range(lid, size, 0u, io.n_ops, io, ch_next, ch_distinct);
}
