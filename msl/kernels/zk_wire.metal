// requires: challenger bb_ext4
// One round message of the hiding PCS's masked sumcheck (upstream p3_sumcheck::zk, Construction 6.3), made on the
// device from the round's sums: with the previous round's mask m (mask_len EF coefficients; 0 on a batch's first
// round) and its challenge g,
//   past <- past + sum_{i < mask_len} m[i] g^i                (scratch, EF at past_at)
//   wire <- template; wire[0] += live * past + e * c0; wire[1] += e * c_inf
// c0, c_inf: the round's sums (proof, 2 EF at sums_at); scratch at consts_at holds template (wire_len EF), live,
// e and m, in that order; g: scratch EF at gamma_at; the wire goes to proof, wire_len EF at wire_at (wire_len >= 2).
// Then the transcript program params.ops[0 .. n_ops) runs as the epilogue (challenger.metal: the wire observed, the
// next challenge or proof-of-work reset; no EXPAND), so the round message needs no transcript launch of its own.
// Offsets in words, proof ones relative to the window bound. Bindings: 0 scratch (whole), 1 proof (a window holding
// the sums, the wire and every word the ops touch), 2 p2_rc, 3 params. Launch: one threadgroup of WG threads
// (thread 0 makes the wire). Words Montgomery in [0, P).

struct Params { uint sums_at; uint wire_at; uint past_at; uint gamma_at; uint consts_at; uint wire_len;
                uint mask_len; uint _pad0; uint n_ops; uint _t0; uint _t1; uint _t2; uint4 ops[11]; };

constant constexpr uint WG = 64u;

static uint4 load_ef(device const uint* words, uint at) {
    return uint4(words[at], words[at + 1u], words[at + 2u], words[at + 3u]);
}

static void store_ef(device uint* words, uint at, uint4 v) {
    words[at] = v.x;
    words[at + 1u] = v.y;
    words[at + 2u] = v.z;
    words[at + 3u] = v.w;
}

static void make_wire(device uint* scratch, device uint* proof, constant Params& params) {
    uint live_at = params.consts_at + 4u * params.wire_len;
    uint mask_at = live_at + 8u;
    uint4 past = load_ef(scratch, params.past_at);
    if (params.mask_len != 0u) {
        uint4 g = load_ef(scratch, params.gamma_at);
        uint4 acc = uint4(0u);
        for (uint i = params.mask_len; i > 0u; i--) {  // Horner, highest coefficient first
            acc = ef_add(ef_mul(acc, g), load_ef(scratch, mask_at + 4u * (i - 1u)));
        }
        past = ef_add(past, acc);
        store_ef(scratch, params.past_at, past);
    }
    uint4 live = load_ef(scratch, live_at);
    uint4 e = load_ef(scratch, live_at + 4u);
    for (uint i = 0u; i < params.wire_len; i++) {
        store_ef(proof, params.wire_at + 4u * i, load_ef(scratch, params.consts_at + 4u * i));
    }
    uint4 h0 = ef_add(ef_mul(live, past), ef_mul(e, load_ef(proof, params.sums_at)));
    store_ef(proof, params.wire_at, ef_add(load_ef(proof, params.wire_at), h0));
    uint4 h2 = ef_mul(e, load_ef(proof, params.sums_at + 4u));
    store_ef(proof, params.wire_at + 4u, ef_add(load_ef(proof, params.wire_at + 4u), h2));
}

kernel void zk_wire(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                    constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]],
                    uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    if (lid == 0u) {
        make_wire(scratch, proof, params);
    }
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    ChIo io = {scratch, nullptr, proof, nullptr, p2_rc, params.ops, params.n_ops};
    transcript_run(lid, WG, io, ch_next, ch_distinct);
}
