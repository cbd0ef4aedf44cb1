// requires: poseidon2
// The device-resident duplex challenger (width 16, rate 8; bit-exact with protocol/transcript.py): one thread runs
// the ops of params (x = code, y z w args; listed in transcript.wgsl) on the challenger in scratch words [0, 26):
// [0, 16) sponge state, 16 input length, 17 output length, [18, 26) input buffer (the output buffer is sponge[0 ..
// output length), popped from the end). Ops: 1 OBSERVE, 2 SAMPLE, 3 WITNESS, 4 QUERIES, 5 POW_RESET. Bindings:
// 0 scratch (whole), 1 proof (a window: op offsets are relative to it), 2 p2_rc, 3 params. One thread. Monty words.

struct Params { uint n_ops; uint _pad0; uint _pad1; uint _pad2; uint4 ops[15]; };

constant constexpr uint NOT_FOUND = 0xffffffffu;

// WGSL's private variables: Metal has no mutable program-scope state, so the challenger is passed by reference.
struct Challenger {
    uint sponge[16];
    uint input[8];
    uint in_len;
    uint out_len;
};

void duplex(thread Challenger& ch, constant uint4* p2_rc) {
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

void observe(thread Challenger& ch, uint w, constant uint4* p2_rc) {
    ch.out_len = 0u;
    ch.input[ch.in_len] = w;
    ch.in_len += 1u;
    if (ch.in_len == 8u) {
        duplex(ch, p2_rc);
    }
}

// WGSL's sample(): the next output word.
uint sample_word(thread Challenger& ch, constant uint4* p2_rc) {
    if (ch.in_len != 0u || ch.out_len == 0u) {
        duplex(ch, p2_rc);
    }
    ch.out_len -= 1u;
    return ch.sponge[ch.out_len];
}

// The low `bits` bits (bits <= 30) of one sample's canonical value. Shifts count mod 32, as in WGSL.
uint sample_bits(thread Challenger& ch, uint bits, constant uint4* p2_rc) {
    return bb_mul(sample_word(ch, p2_rc), 1u) & ((1u << (bits & 31u)) - 1u);
}

void draw_queries(thread Challenger& ch, device uint* scratch, uint dst, uint q, uint log_size, uint per_call,
                  constant uint4* p2_rc) {
    if (q == 0u) {
        sample_word(ch, p2_rc);
        return;
    }
    uint done = 0u;
    while (done < q) {
        uint count = min(q - done, per_call);
        uint v = sample_bits(ch, count * log_size, p2_rc);
        for (uint j = 0u; j < count; j++) {
            scratch[dst + done + j] = v & ((1u << (log_size & 31u)) - 1u);
            v >>= (log_size & 31u);
        }
        done += count;
    }
}

kernel void transcript(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                       constant uint4* p2_rc [[buffer(2)]], constant Params& params [[buffer(3)]]) {
    Challenger ch;
    for (uint i = 0u; i < 16u; i++) {
        ch.sponge[i] = scratch[i];
    }
    ch.in_len = scratch[16];
    ch.out_len = scratch[17];
    for (uint i = 0u; i < 8u; i++) {
        ch.input[i] = scratch[18u + i];
    }
    for (uint k = 0u; k < params.n_ops; k++) {
        uint4 op = params.ops[k];
        switch (op.x) {
            case 1u: {
                for (uint i = 0u; i < op.z; i++) {
                    observe(ch, proof[op.y + i], p2_rc);
                }
                break;
            }
            case 2u: {
                for (uint i = 0u; i < op.z; i++) {
                    scratch[op.y + i] = sample_word(ch, p2_rc);
                }
                break;
            }
            case 3u: {
                uint nonce = scratch[op.y];
                uint w = bb_mul(select(nonce, 0u, nonce == NOT_FOUND), BB_R2);
                proof[op.z] = select(w, NOT_FOUND, nonce == NOT_FOUND);  // never a field word: searched in vain
                observe(ch, w, p2_rc);
                sample_word(ch, p2_rc);
                break;
            }
            case 4u: {
                draw_queries(ch, scratch, op.y, op.z & 0xffffu, op.z >> 16u, op.w, p2_rc);
                break;
            }
            case 5u: {
                scratch[op.y] = NOT_FOUND;
                for (uint i = 0u; i < op.w; i++) {
                    scratch[op.z + i] = 0u;
                }
                break;
            }
            default: break;
        }
    }
    for (uint i = 0u; i < 16u; i++) {
        scratch[i] = ch.sponge[i];
    }
    scratch[16] = ch.in_len;
    scratch[17] = ch.out_len;
    for (uint i = 0u; i < 8u; i++) {
        scratch[18u + i] = ch.input[i];
    }
}
