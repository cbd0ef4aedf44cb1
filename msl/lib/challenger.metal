// requires: poseidon2 bb_ext4
// The device-resident duplex challenger (width 16, rate 8; bit-exact with protocol/transcript.py) and the
// interpreter of transcript programs (challenger.wgsl's twin: same ops, same words), for the transcript kernel and
// for the kernels that run a program as their epilogue (the last threadgroup of a reduction or a search).
// The challenger lives in scratch words [0, 26): [0, 16) sponge state, 16 input length, 17 output length,
// [18, 26) input buffer (the output buffer is sponge[0 .. output length), popped from the end).
// WGSL's accessor functions are a ChIo here: the kernel's buffers as pointers (scratch as plain words, or as atomic
// words in scratch_atomic with scratch null; points null where the kernel has no points binding: EXPAND is then a
// no-op, and is never given) and its params' ops / n_ops. Ops (x = code, y z w args; proof offsets relative to the
// window; listed in full in challenger.wgsl): 1 OBSERVE, 2 SAMPLE, 3 WITNESS, 4 QUERIES, 5 POW_RESET, 6 EXPAND,
// 7 POWERS (two op slots). One thread runs a program: transcript_run(io). Words Montgomery in [0, P).

constant constexpr uint CH_NOT_FOUND = 0xffffffffu;

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

// WGSL's private variables: Metal has no mutable program-scope state, so the challenger is passed by reference.
struct Challenger {
    uint sponge[16];
    uint input[8];
    uint in_len;
    uint out_len;
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

void ch_duplex(thread Challenger& ch, constant uint4* p2_rc) {
    for (uint i = 0u; i < ch.in_len; i++) {
        ch.sponge[i] = ch.input[i];
    }
    P2State s = P2State{uint4(ch.sponge[0], ch.sponge[1], ch.sponge[2], ch.sponge[3]),
                        uint4(ch.sponge[4], ch.sponge[5], ch.sponge[6], ch.sponge[7]),
                        uint4(ch.sponge[8], ch.sponge[9], ch.sponge[10], ch.sponge[11]),
                        uint4(ch.sponge[12], ch.sponge[13], ch.sponge[14], ch.sponge[15])};
    s = poseidon2_permute(s, p2_rc);
    uint4 lanes[4] = {s.a, s.b, s.c, s.d};
    for (uint c = 0u; c < 4u; c++) {
        ch.sponge[4u * c] = lanes[c].x;
        ch.sponge[4u * c + 1u] = lanes[c].y;
        ch.sponge[4u * c + 2u] = lanes[c].z;
        ch.sponge[4u * c + 3u] = lanes[c].w;
    }
    ch.in_len = 0u;
    ch.out_len = 8u;
}

void ch_observe(thread Challenger& ch, uint w, constant uint4* p2_rc) {
    ch.out_len = 0u;
    ch.input[ch.in_len] = w;
    ch.in_len += 1u;
    if (ch.in_len == 8u) {
        ch_duplex(ch, p2_rc);
    }
}

// WGSL's ch_sample(): the next output word.
uint ch_sample(thread Challenger& ch, constant uint4* p2_rc) {
    if (ch.in_len != 0u || ch.out_len == 0u) {
        ch_duplex(ch, p2_rc);
    }
    ch.out_len -= 1u;
    return ch.sponge[ch.out_len];
}

// The low `bits` bits (bits <= 30) of one sample's canonical value. Shifts count mod 32, as in WGSL.
uint ch_sample_bits(thread Challenger& ch, uint bits, constant uint4* p2_rc) {
    return bb_mul(ch_sample(ch, p2_rc), 1u) & ((1u << (bits & 31u)) - 1u);
}

void ch_draw_queries(thread Challenger& ch, thread const ChIo& io, uint dst, uint q, uint log_size, uint per_call) {
    if (q == 0u) {
        ch_sample(ch, io.p2_rc);
        return;
    }
    uint done = 0u;
    while (done < q) {
        uint count = min(q - done, per_call);
        uint v = ch_sample_bits(ch, count * log_size, io.p2_rc);
        for (uint j = 0u; j < count; j++) {
            ch_scratch_set(io, dst + done + j, v & ((1u << (log_size & 31u)) - 1u));
            v >>= (log_size & 31u);
        }
        done += count;
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

// Runs io.ops[0 .. n_ops) on the challenger in scratch (loaded first, stored back last). One thread.
void transcript_run(thread const ChIo& io) {
    if (io.n_ops == 0u) {
        return;
    }
    Challenger ch;
    for (uint i = 0u; i < 16u; i++) {
        ch.sponge[i] = ch_scratch_get(io, i);
    }
    ch.in_len = ch_scratch_get(io, 16u);
    ch.out_len = ch_scratch_get(io, 17u);
    for (uint i = 0u; i < 8u; i++) {
        ch.input[i] = ch_scratch_get(io, 18u + i);
    }
    for (uint k = 0u; k < io.n_ops; k++) {
        uint4 op = io.ops[k];
        switch (op.x) {
            case 1u: {  // OBSERVE
                for (uint i = 0u; i < op.z; i++) {
                    ch_observe(ch, io.proof[op.y + i], io.p2_rc);
                }
                break;
            }
            case 2u: {  // SAMPLE
                for (uint i = 0u; i < op.z; i++) {
                    ch_scratch_set(io, op.y + i, ch_sample(ch, io.p2_rc));
                }
                break;
            }
            case 3u: {  // WITNESS
                uint nonce = ch_scratch_get(io, op.y);
                uint w = bb_mul(select(nonce, 0u, nonce == CH_NOT_FOUND), BB_R2);
                io.proof[op.z] = select(w, CH_NOT_FOUND, nonce == CH_NOT_FOUND);  // never a field word
                ch_observe(ch, w, io.p2_rc);
                ch_sample(ch, io.p2_rc);
                break;
            }
            case 4u: {  // QUERIES
                ch_draw_queries(ch, io, op.y, op.z & 0xffffu, op.z >> 16u, op.w);
                break;
            }
            case 5u: {  // POW_RESET
                ch_scratch_set(io, op.y, CH_NOT_FOUND);
                for (uint i = 0u; i < op.w; i++) {
                    ch_scratch_set(io, op.z + i, 0u);
                }
                break;
            }
            case 6u: {  // EXPAND
                ch_expand(io, op.y, op.z, op.w);
                break;
            }
            case 7u: {  // POWERS
                uint4 counts = io.ops[k + 1u];
                ch_powers(io, op.y, op.z, op.w, counts.x, counts.y);
                k += 1u;
                break;
            }
            default: break;
        }
    }
    for (uint i = 0u; i < 16u; i++) {
        ch_scratch_set(io, i, ch.sponge[i]);
    }
    ch_scratch_set(io, 16u, ch.in_len);
    ch_scratch_set(io, 17u, ch.out_len);
    for (uint i = 0u; i < 8u; i++) {
        ch_scratch_set(io, 18u + i, ch.input[i]);
    }
}
