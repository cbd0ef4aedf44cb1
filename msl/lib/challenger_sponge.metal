// requires: poseidon2
// The device-resident duplex challenger's sponge (width 16, rate 8; bit-exact with protocol/transcript.py;
// challenger_sponge.wgsl's twin): its state, absorb and pop, and the duplex as one permutation on 16 lanes.
// The challenger lives in scratch words [0, 26): [0, 16) sponge state, 16 input length, 17 output length,
// [18, 26) input buffer (the output buffer is sponge[0 .. output length), popped from the end).
// WGSL's accessor functions are a ChIo here: the kernel's buffers as pointers (scratch as plain words, or as atomic
// words in scratch_atomic with scratch null; points null where the kernel has no points binding: EXPAND is then a
// no-op, and is never given) and its params' ops / n_ops. The variant, a function constant as
// challenger_sponge.wgsl's override: CH_LENGTH_TAGGED (the length-tagged duplex). Words Montgomery in [0, P).

constant uint CH_LENGTH_TAGGED [[function_constant(16)]];

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
    uint bitmap[32];  // DISTINCT's bitmap while it draws (thread 0's), copied to its scratch words when done
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
