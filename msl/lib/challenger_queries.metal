// requires: challenger_sponge
// The query sampler of transcript programs (challenger_queries.wgsl's twin; challenger.wgsl lists the ops' words):
// DISTINCT, t distinct indices drawn one rejection-sampled sample a step by thread 0, and SORT, the drawn indices
// made distinct, ascending and mapped to domain points by the whole threadgroup (protocol/query_indices.py's order).

// Step i of a DISTINCT op (challenger_queries.wgsl); whether the op is done.
bool ch_distinct_step(thread Challenger& ch, thread const ChIo& io, uint4 op, uint i) {
    uint wanted = op.z & 0xffffu;
    uint log_size = op.z >> 16u;
    if (wanted == 0u || log_size == 0u) {
        for (uint j = 0u; j < wanted; j++) {
            ch_scratch_set(io, op.y + j, 0u);  // a folded domain of one point: index 0, sampled from nothing
        }
        return true;
    }
    uint words = max(1u, (1u << log_size) >> 5u);
    if (i == 0u) {
        ch.found = 0u;
        if (op.w != 0xffffffffu) {  // the domain's bitmap, cleared (0xffffffff: none)
            for (uint j = 0u; j < words; j++) {
                ch.bitmap[j] = 0u;
            }
        }
    }
    uint mask = (1u << log_size) - 1u;
    uint v = bb_mul(ch_pop(ch), 1u);
    if (v < (BB_P & ~mask)) {  // else rejected: the draw takes the next sample
        uint index = v & mask;
        bool fresh = true;
        if (op.w != 0xffffffffu) {  // one word of the bitmap, not a scan of those found
            uint bits = ch.bitmap[index >> 5u];
            fresh = (bits & (1u << (index & 31u))) == 0u;
            if (fresh) {
                ch.bitmap[index >> 5u] = bits | (1u << (index & 31u));
            }
        } else {
            for (uint j = 0u; j < ch.found; j++) {
                if (ch_scratch_get(io, op.y + j) == index) {
                    fresh = false;
                    break;
                }
            }
        }
        if (fresh) {
            ch_scratch_set(io, op.y + ch.found, index);
            ch.found += 1u;
        }
    }
    bool done = ch.found >= wanted;
    if (done && op.w != 0xffffffffu) {  // the bitmap to its scratch words, for the SORT
        for (uint j = 0u; j < words; j++) {
            ch_scratch_set(io, op.w + j, ch.bitmap[j]);
        }
    }
    return done;
}

// The end of a SORT of `count` indices (b, c: its second and third slots): the slots past them padded (index 0,
// point 1), the count to scratch and proof, then a barrier (every thread's sorted entries and domain points
// visible to thread 0's next ops, e.g. POWERS reads the count).
void ch_sort_finish(uint lid, uint size, uint4 b, uint4 c, uint count, thread const ChIo& io) {
    for (uint i = count + lid; i < b.y; i += size) {
        ch_scratch_set(io, b.x + i, 0u);
        ch_scratch_set(io, b.w + i, BB_R);
    }
    if (lid == 0u) {
        ch_scratch_set(io, b.z, count);
        io.proof[c.y] = count;
    }
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
}

// The SORT at op k, by the `size` threads of the threadgroup: each distinct value finds its rank by counting; after
// a DISTINCT with a bitmap (its third slot's z, w: where, how many words) the bitmap's set bits are the sorted
// indices, each word's rank the popcount of those before it.
void ch_sort(uint lid, uint size, uint k, thread const ChIo& io, threadgroup atomic_uint* ch_distinct) {
    uint4 a = io.ops[k];
    uint4 b = io.ops[k + 1u];
    uint4 c = io.ops[k + 2u];
    uint raw = a.y;
    uint q = a.z;
    uint flags = a.w;
    if (c.w != 0u) {  // a DISTINCT's bitmap (c.w words at c.z): its q indices, in order
        for (uint w = lid; w < c.w; w += size) {
            uint rank = 0u;
            for (uint j = 0u; j < w; j++) {
                rank += popcount(ch_scratch_get(io, c.z + j));
            }
            uint bits = ch_scratch_get(io, c.z + w);
            while (bits != 0u) {
                uint v = 32u * w + ctz(bits);
                ch_scratch_set(io, b.x + rank, v);
                ch_scratch_set(io, b.w + rank, bb_pow(c.x, v));
                rank += 1u;
                bits &= bits - 1u;
            }
        }
        ch_sort_finish(lid, size, b, c, q, io);
        return;
    }
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
    ch_sort_finish(lid, size, b, c, count, io);
}
