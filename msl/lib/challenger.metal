// requires: challenger_sponge challenger_queries bb_ext4
// The interpreter of transcript programs (challenger.wgsl's twin: same ops, same words, same steps) on the
// device-resident duplex challenger (challenger_sponge.metal; the query ops DISTINCT and SORT in
// challenger_queries.metal), for the transcript kernel and for the kernels that run a program as their epilogue
// (the last threadgroup of a reduction or a search). A kernel passes its buffers and params as a ChIo
// (challenger_sponge.metal). Ops (x = code, y z w args; proof offsets relative to the window; listed in full in
// challenger.wgsl): 1 OBSERVE, 2 SAMPLE, 3 WITNESS, 4 QUERIES, 5 POW_RESET, 6 EXPAND, 7 POWERS (two op slots),
// 8 SORT (three op slots; made by the whole threadgroup), 9 DISTINCT (CH_DISTINCT_QUERIES).
// The variant, function constants as challenger.wgsl's overrides: CH_LENGTH_TAGGED (challenger_sponge.metal),
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
constant uint CH_DISTINCT_QUERIES [[function_constant(17)]];

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
