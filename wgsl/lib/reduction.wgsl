// requires: challenger ef_reduce
// The end of a reduction whose workgroups, over one or several launches, each leave a pair of EF partial sums, and
// whose last workgroup sums them all and then runs the launch's transcript program (challenger.wgsl) on the result.
// A kernel that requires this file has params fields `total` and `out_at`, declares `work: array<atomic<u32>>`
// (word 0: the ticket, 0 between reductions, reset by each last workgroup; EF partial pair p at words 4 + 8 p) and
// is launched with workgroups of RED_WG threads (ef_reduce.wgsl). Partials go through atomics so that the last workgroup reads what every other one
// stored.

var<workgroup> red_is_last: bool;

fn red_store(word: u32, v: vec4<u32>) {
    for (var k = 0u; k < 4u; k++) {
        atomicStore(&work[word + k], v[k]);
    }
}

fn red_load(word: u32) -> vec4<u32> {
    return vec4<u32>(atomicLoad(&work[word]), atomicLoad(&work[word + 1u]), atomicLoad(&work[word + 2u]),
                     atomicLoad(&work[word + 3u]));
}

// Leaves this workgroup's pair (a, b) as partial pair `pair`; true (uniformly) in the last of `total` workgroups,
// whose red_a[0], red_b[0] then hold the sums over all pairs. Every thread must call it.
fn finish_pairs(lid: u32, pair: u32, total: u32, a: vec4<u32>, b: vec4<u32>) -> bool {
    reduce_pair(lid, a, b);
    if (lid == 0u) {
        red_store(4u + 8u * pair, red_a[0]);
        red_store(8u + 8u * pair, red_b[0]);
    }
    storageBarrier();
    if (lid == 0u) {
        red_is_last = atomicAdd(&work[0], 1u) == total - 1u;
    }
    if (!workgroupUniformLoad(&red_is_last)) {
        return false;
    }
    var sa = vec4<u32>(0u);
    var sb = vec4<u32>(0u);
    for (var g = lid; g < total; g += RED_WG) {
        sa = ef_add(sa, red_load(4u + 8u * g));
        sb = ef_add(sb, red_load(8u + 8u * g));
    }
    reduce_pair(lid, sa, sb);
    return true;
}

// The last workgroup, after writing the results (every thread calls it): release the ticket and run the
// transcript program.
fn end_reduction(lid: u32) {
    if (lid == 0u) {
        atomicStore(&work[0], 0u);
    }
    transcript_run(lid, RED_WG);
}

// The end of a sumcheck reduction (every thread calls it): the pair is partial pair `pair` of params.total; the
// last workgroup writes the sums [h(0), h(2)] to proof words params.out_at .. + 8 and runs the program.
fn finish_sums(lid: u32, pair: u32, h0: vec4<u32>, h2: vec4<u32>) {
    if (!finish_pairs(lid, pair, params.total, h0, h2)) {
        return;
    }
    if (lid == 0u) {
        proof_set_ef(params.out_at, red_a[0]);
        proof_set_ef(params.out_at + 4u, red_b[0]);
    }
    end_reduction(lid);
}

fn proof_set_ef(at: u32, v: vec4<u32>) {
    for (var k = 0u; k < 4u; k++) {
        proof_set(at + k, v[k]);
    }
}
