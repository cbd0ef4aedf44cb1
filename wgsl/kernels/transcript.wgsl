// requires: poseidon2
// The device-resident duplex challenger (width 16, rate 8; bit-exact with protocol/transcript.py). One thread
// runs a short program of ops from params; the challenger lives in `scratch` words [0, 26):
//   [0, 16) sponge state, 16 input length, 17 output length, [18, 26) input buffer
// (the output buffer is always sponge[0 .. output length), popped from the end). Ops (x = code, y z w args):
//   1 OBSERVE   observe proof[y .. y + z)                       2 SAMPLE     scratch[y .. y + z) = z samples
//   3 WITNESS   w = monty(scratch[y]); proof[z] = w; observe w, sample once (check_witness); when
//               scratch[y] is 0xffffffff (no nonce found) proof[z] = 0xffffffff (never a field word) and w = 0
//   4 QUERIES   z & 0xffff = q, z >> 16 = L, w = per-call count: q raw indices < 2^L into scratch[y ..),
//               drawn by sample_bits(count * L) calls cut LSB first (q = 0: one sample_bits(0))
//   5 POW_RESET scratch[y] = 0xffffffff, scratch[z .. z + w) = 0 (a grind's smallest-nonce and batch counters)
// Bindings: 0 scratch (whole), 1 proof (a window holding every proof word the ops touch; offsets are relative
// to it), 2 p2_rc, 3 params. Launch: one workgroup of one thread. Words Montgomery.

struct Params { n_ops: u32, _pad0: u32, _pad1: u32, _pad2: u32, ops: array<vec4<u32>, 15> }

@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(3) var<uniform> params: Params;

const NOT_FOUND: u32 = 0xffffffffu;

var<private> sponge: array<u32, 16>;
var<private> input: array<u32, 8>;
var<private> in_len: u32;
var<private> out_len: u32;

fn duplex() {
    for (var i = 0u; i < in_len; i++) {
        sponge[i] = input[i];
    }
    var s = P2State(vec4<u32>(sponge[0], sponge[1], sponge[2], sponge[3]),
                    vec4<u32>(sponge[4], sponge[5], sponge[6], sponge[7]),
                    vec4<u32>(sponge[8], sponge[9], sponge[10], sponge[11]),
                    vec4<u32>(sponge[12], sponge[13], sponge[14], sponge[15]));
    s = poseidon2_permute(s);
    for (var i = 0u; i < 4u; i++) {
        sponge[i] = s.a[i];
        sponge[4u + i] = s.b[i];
        sponge[8u + i] = s.c[i];
        sponge[12u + i] = s.d[i];
    }
    in_len = 0u;
    out_len = 8u;
}

fn observe(w: u32) {
    out_len = 0u;
    input[in_len] = w;
    in_len += 1u;
    if (in_len == 8u) {
        duplex();
    }
}

fn sample() -> u32 {
    if (in_len != 0u || out_len == 0u) {
        duplex();
    }
    out_len -= 1u;
    return sponge[out_len];
}

// The low `bits` bits (bits <= 30) of one sample's canonical value.
fn sample_bits(bits: u32) -> u32 {
    return bb_mul(sample(), 1u) & ((1u << bits) - 1u);
}

fn draw_queries(dst: u32, q: u32, log_size: u32, per_call: u32) {
    if (q == 0u) {
        _ = sample();
        return;
    }
    var done = 0u;
    while (done < q) {
        let count = min(q - done, per_call);
        var v = sample_bits(count * log_size);
        for (var j = 0u; j < count; j++) {
            scratch[dst + done + j] = v & ((1u << log_size) - 1u);
            v >>= log_size;
        }
        done += count;
    }
}

@compute @workgroup_size(1)
fn transcript() {
    for (var i = 0u; i < 16u; i++) {
        sponge[i] = scratch[i];
    }
    in_len = scratch[16];
    out_len = scratch[17];
    for (var i = 0u; i < 8u; i++) {
        input[i] = scratch[18u + i];
    }
    for (var k = 0u; k < params.n_ops; k++) {
        let op = params.ops[k];
        switch op.x {
            case 1u: {
                for (var i = 0u; i < op.z; i++) {
                    observe(proof[op.y + i]);
                }
            }
            case 2u: {
                for (var i = 0u; i < op.z; i++) {
                    scratch[op.y + i] = sample();
                }
            }
            case 3u: {
                let nonce = scratch[op.y];
                let w = bb_mul(select(nonce, 0u, nonce == NOT_FOUND), BB_R2);
                proof[op.z] = select(w, NOT_FOUND, nonce == NOT_FOUND);
                observe(w);
                _ = sample();
            }
            case 4u: {
                draw_queries(op.y, op.z & 0xffffu, op.z >> 16u, op.w);
            }
            case 5u: {
                scratch[op.y] = NOT_FOUND;
                for (var i = 0u; i < op.w; i++) {
                    scratch[op.z + i] = 0u;
                }
            }
            default: {}
        }
    }
    for (var i = 0u; i < 16u; i++) {
        scratch[i] = sponge[i];
    }
    scratch[16] = in_len;
    scratch[17] = out_len;
    for (var i = 0u; i < 8u; i++) {
        scratch[18u + i] = input[i];
    }
}
