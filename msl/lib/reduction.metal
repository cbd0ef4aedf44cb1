// requires: challenger ef_reduce
// The end of a reduction whose threadgroups, over one or several launches, each leave a pair of EF partial sums, and
// whose last threadgroup sums them all and then runs the launch's transcript program (challenger.metal) on the
// result (reduction.wgsl's twin). `work` holds atomic words: word 0 the ticket (0 between reductions, reset by each
// last threadgroup), EF partial pair p at words 4 + 8 p. Threadgroups of RED_WG threads (ef_reduce.metal). The
// kernel declares `threadgroup uint4 red_a[8]; threadgroup uint4 red_b[8]; threadgroup uint red_is_last[1];`
// (ef_reduce.metal's and this file's) and `threadgroup uint ch_next[1]; threadgroup atomic_uint ch_distinct[1];`
// (challenger.metal's) and passes them in. Words Montgomery in [0, P).

// Partials go through atomics so that the last threadgroup reads what every other one stored (device coherence).
void red_store(device atomic_uint* work, uint word, uint4 v) {
    atomic_store_explicit(&work[word], v.x, memory_order_relaxed);
    atomic_store_explicit(&work[word + 1u], v.y, memory_order_relaxed);
    atomic_store_explicit(&work[word + 2u], v.z, memory_order_relaxed);
    atomic_store_explicit(&work[word + 3u], v.w, memory_order_relaxed);
}

uint4 red_load(device atomic_uint* work, uint word) {
    return uint4(atomic_load_explicit(&work[word], memory_order_relaxed),
                 atomic_load_explicit(&work[word + 1u], memory_order_relaxed),
                 atomic_load_explicit(&work[word + 2u], memory_order_relaxed),
                 atomic_load_explicit(&work[word + 3u], memory_order_relaxed));
}

// Leaves this threadgroup's pair (a, b) as partial pair `pair`; true (uniformly) in the last of `total`
// threadgroups, whose thread 0 then holds the sums over all pairs in a, b. Every thread of the group must call it.
bool finish_pairs(uint lid, uint lane, uint sg, uint pair, uint total, thread uint4& a, thread uint4& b,
                  threadgroup uint4* red_a, threadgroup uint4* red_b, threadgroup uint* red_is_last,
                  device atomic_uint* work) {
    reduce_pair(lid, lane, sg, a, b, red_a, red_b);
    if (lid == 0u) {
        red_store(work, 4u + 8u * pair, a);
        red_store(work, 8u + 8u * pair, b);
    }
    threadgroup_barrier(mem_flags::mem_device);
    if (lid == 0u) {
        red_is_last[0] = atomic_fetch_add_explicit(&work[0], 1u, memory_order_relaxed) == total - 1u;
    }
    // WGSL's workgroupUniformLoad: red_is_last is written once per threadgroup, so no second barrier is needed.
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (red_is_last[0] == 0u) {
        return false;  // uniform per threadgroup
    }
    uint4 sa = uint4(0u);
    uint4 sb = uint4(0u);
    for (uint g = lid; g < total; g += RED_WG) {
        sa = ef_add(sa, red_load(work, 4u + 8u * g));
        sb = ef_add(sb, red_load(work, 8u + 8u * g));
    }
    reduce_pair(lid, lane, sg, sa, sb, red_a, red_b);
    a = sa;
    b = sb;
    return true;
}

// The last threadgroup, after writing the results (every thread calls it): release the ticket and run the
// transcript program.
void end_reduction(uint lid, device atomic_uint* work, thread const ChIo& io, threadgroup uint* ch_next,
                   threadgroup atomic_uint* ch_distinct) {
    if (lid == 0u) {
        atomic_store_explicit(&work[0], 0u, memory_order_relaxed);
    }
    transcript_run(lid, RED_WG, io, ch_next, ch_distinct);
}

void proof_set_ef(thread const ChIo& io, uint at, uint4 v) {
    io.proof[at] = v.x;
    io.proof[at + 1u] = v.y;
    io.proof[at + 2u] = v.z;
    io.proof[at + 3u] = v.w;
}
