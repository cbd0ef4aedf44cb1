// requires: challenger bb_ext4
// An out-of-domain answer of the hiding PCS's code switch (upstream padded_ood), made on the device: with the
// residual's univariate evaluation a = sum_b f[b] z^b at the sampled z,
//   answer = a + z^(2^log_n) * sum_{i < n_coeffs} c[i] z^i
// a: proof EF at at_at; z: scratch EF at z_at; c: scratch, n_coeffs EF at consts_at (the mask message); the answer
// goes to proof, EF at out_at. Then the transcript program params.ops[0 .. n_ops) runs as the epilogue
// (challenger.metal: the answer observed, the next point sampled and expanded, ...), so an answer needs no
// transcript launch of its own. Offsets in words, proof ones relative to the window bound. Bindings: 0 scratch
// (whole), 1 proof (a window holding a, the answer and every word the ops touch), 2 points (whole), 3 p2_rc,
// 4 params. Launch: one threadgroup of WG threads (thread 0 makes the answer). Words Montgomery in [0, P).

struct Params { uint at_at; uint z_at; uint consts_at; uint n_coeffs; uint log_n; uint out_at; uint _pad0;
                uint _pad1; uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11]; };

constant constexpr uint WG = 64u;

static uint4 scratch_ef(device const uint* scratch, uint at) {
    return uint4(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

static void make_answer(device uint* scratch, device uint* proof, constant Params& params) {
    uint4 z = scratch_ef(scratch, params.z_at);
    uint4 acc = uint4(0u);
    for (uint i = params.n_coeffs; i > 0u; i--) {  // Horner, highest coefficient first
        acc = ef_add(ef_mul(acc, z), scratch_ef(scratch, params.consts_at + 4u * (i - 1u)));
    }
    uint4 shift = z;
    for (uint s = 0u; s < params.log_n; s++) {
        shift = ef_mul(shift, shift);
    }
    uint4 a = uint4(proof[params.at_at], proof[params.at_at + 1u], proof[params.at_at + 2u], proof[params.at_at + 3u]);
    uint4 answer = ef_add(a, ef_mul(shift, acc));
    proof[params.out_at] = answer.x;
    proof[params.out_at + 1u] = answer.y;
    proof[params.out_at + 2u] = answer.z;
    proof[params.out_at + 3u] = answer.w;
}

kernel void zk_ood(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                   device uint4* points [[buffer(2)]], constant uint4* p2_rc [[buffer(3)]],
                   constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    if (lid == 0u) {
        make_answer(scratch, proof, params);
    }
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
    transcript_run(lid, WG, io, ch_next, ch_distinct);
}
