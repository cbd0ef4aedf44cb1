// requires: poseidon2
// The device-resident duplex challenger's sponge (width 16, rate 8; bit-exact with protocol/transcript.py): its
// state, absorb and pop, and the duplex as one permutation on 16 cooperating lanes of a workgroup.
// The challenger lives in scratch words [0, 26): [0, 16) sponge state, 16 input length, 17 output length,
// [18, 26) input buffer (the output buffer is sponge[0 .. output length), popped from the end).
// ch_load / ch_store move it between scratch and the workgroup's copy (thread 0's: the sponge and input words in
// workgroup memory, where the cooperative permutation reads and writes them; the lengths thread 0's own) through
// the accessors a kernel defines (challenger.wgsl states them). The variant (a compile-time constant, default 0: whir-p3's challenger):
// CH_LENGTH_TAGGED 1, a duplex absorbing k > 0 words writes them to sponge[0 .. k), zeroes sponge[k .. 8) and adds
// k to sponge[8] (upstream Plonky3's DuplexChallenger). Words Montgomery in [0, P).

@id(16) override CH_LENGTH_TAGGED: u32 = 0u;

var<workgroup> ch_sponge: array<u32, 16>;
var<workgroup> ch_input: array<u32, 8>;
var<private> ch_in_len: u32;
var<private> ch_out_len: u32;
var<workgroup> ch_swap: array<u32, 32>;  // the cooperative permutation's exchange, [parity][lane]
// The round constants by lane, loaded once a program (p2_rc's words, read where a round needs them, each wait on
// memory a round's latency): [16 r + l] external round r, lane l; [CH_RC_INTERNAL + r] internal round r;
// [CH_RC_DIAG + l] the internal diagonal.
const CH_RC_INTERNAL: u32 = 32u * P2_EXTERNAL_HALF_ROUNDS;
const CH_RC_DIAG: u32 = CH_RC_INTERNAL + P2_INTERNAL_ROUNDS;
const CH_RC_WORDS: u32 = CH_RC_DIAG + 16u;
var<workgroup> ch_rc: array<u32, CH_RC_WORDS>;

// Thread 0: the pending input over the sponge's first words (length-tagged: the rest of the rate zeroed and the
// input length added to the first capacity word, when there is input), as the duplex permutes it.
fn ch_duplex_input() {
    for (var i = 0u; i < ch_in_len; i++) {
        ch_sponge[i] = ch_input[i];
    }
    if (CH_LENGTH_TAGGED != 0u && ch_in_len != 0u) {
        for (var i = ch_in_len; i < 8u; i++) {
            ch_sponge[i] = 0u;
        }
        ch_sponge[8] = bb_add(ch_sponge[8], bb_mul(ch_in_len, BB_R2));  // + monty(k)
    }
}

// The cooperative permutation: lane l < 16 of the workgroup holds state word l (chunk l / 4, position l mod 4);
// every exchange is one barrier on ch_swap, double-buffered by parity (a buffer is rewritten only after the
// barrier of the exchange between, which every reader of its last contents has passed). Threads past lane 15
// compute a copy of lane (lid mod 16) and write nothing.
fn ch_lanes_in(at: u32, c: u32) -> vec4<u32> {
    return vec4<u32>(ch_swap[at + 4u * c], ch_swap[at + 4u * c + 1u], ch_swap[at + 4u * c + 2u],
                     ch_swap[at + 4u * c + 3u]);
}

fn ch_publish(lid: u32, x: u32, parity: u32) {
    if (lid < 16u) {
        ch_swap[16u * parity + lid] = x;
    }
    workgroupBarrier();
}

// mds_light of the state whose word x this lane holds: M4 on each chunk, plus the sum of the chunks. By linearity
// that is M4(own chunk + column sums t) at this lane's position i, and row i of M4 is sum(v) + v[i] + 2 v[i + 1]
// (indices mod 4): a few sums of words read by address, no M4 per chunk and no dynamic vector index.
fn ch_coop_mds(lid: u32, x: u32, parity: u32) -> u32 {
    ch_publish(lid, x, parity);
    let at = 16u * parity;
    let own = at + (lid & 12u);                  // the lane's chunk
    let i = lid & 3u;
    let i1 = (i + 1u) & 3u;
    let t = bb_add4(bb_add4(ch_lanes_in(at, 0u), ch_lanes_in(at, 1u)),
                    bb_add4(ch_lanes_in(at, 2u), ch_lanes_in(at, 3u)));
    let total = bb_add(bb_add(t.x, t.y), bb_add(t.z, t.w));
    let col = bb_add(bb_add(ch_swap[at + i], ch_swap[at + 4u + i]), bb_add(ch_swap[at + 8u + i], ch_swap[at + 12u + i]));
    let col1 = bb_add(bb_add(ch_swap[at + i1], ch_swap[at + 4u + i1]),
                      bb_add(ch_swap[at + 8u + i1], ch_swap[at + 12u + i1]));
    let chunk = bb_add(bb_add(ch_swap[own], ch_swap[own + 1u]), bb_add(ch_swap[own + 2u], ch_swap[own + 3u]));
    let next = bb_add(ch_swap[own + i1], col1);
    return bb_add(bb_add(chunk, total), bb_add(bb_add(ch_swap[own + i], col), bb_add(next, next)));
}

// ch_rc from p2_rc, by the `size` threads of the workgroup.
fn ch_load_constants(lid: u32, size: u32) {
    for (var i = lid; i < CH_RC_WORDS; i += size) {
        var row = 4u * (i >> 4u) + ((i >> 2u) & 3u);                  // external round i / 16, lane i mod 16
        var lane = i & 3u;
        if (i >= CH_RC_DIAG) {
            row = P2_RC_DIAG_AT + ((i - CH_RC_DIAG) >> 2u);
            lane = (i - CH_RC_DIAG) & 3u;
        } else if (i >= CH_RC_INTERNAL) {
            row = P2_RC_INTERNAL_AT + i - CH_RC_INTERNAL;
            lane = 0u;
        }
        ch_rc[i] = p2_rc[row][lane];
    }
    workgroupBarrier();
}

// The permutation on 16 lanes (ch_rc loaded); returns the parity of the buffer the next exchange writes.
// in/out: [0, P).
fn ch_coop_permute(lid: u32, x0: u32) -> vec2<u32> {
    let l = lid & 15u;
    var x = ch_coop_mds(lid, x0, 1u);            // buffer 0 holds the input, read by every lane
    var parity = 0u;
    for (var r = 0u; r < P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = ch_coop_mds(lid, p2_sbox(bb_add(x, ch_rc[16u * r + l])), parity);
        parity ^= 1u;
    }
    let diag = ch_rc[CH_RC_DIAG + l];
    for (var r = 0u; r < P2_INTERNAL_ROUNDS; r++) {
        if (l == 0u) {
            x = p2_sbox(bb_add(x, ch_rc[CH_RC_INTERNAL + r]));
        }
        ch_publish(lid, x, parity);
        let at = 16u * parity;
        let t = bb_add4(bb_add4(ch_lanes_in(at, 0u), ch_lanes_in(at, 1u)),
                        bb_add4(ch_lanes_in(at, 2u), ch_lanes_in(at, 3u)));
        x = bb_add(bb_add(bb_add(t.x, t.y), bb_add(t.z, t.w)), bb_mul(x, diag));
        parity ^= 1u;
    }
    for (var r = P2_EXTERNAL_HALF_ROUNDS; r < 2u * P2_EXTERNAL_HALF_ROUNDS; r++) {
        x = ch_coop_mds(lid, p2_sbox(bb_add(x, ch_rc[16u * r + l])), parity);
        parity ^= 1u;
    }
    return vec2<u32>(x, parity);
}

// A duplex by the whole workgroup (uniform control flow): the sponge with thread 0's pending input permuted in
// place, its rate the output.
fn ch_duplex_coop(lid: u32) {
    if (lid == 0u) {
        ch_duplex_input();
    }
    workgroupBarrier();
    let out = ch_coop_permute(lid, ch_sponge[lid & 15u]);
    if (lid < 16u) {                             // every lane read its input words many barriers ago
        ch_sponge[lid] = out.x;
    }
    workgroupBarrier();
    if (lid == 0u) {
        ch_in_len = 0u;
        ch_out_len = 8u;
    }
}

fn ch_absorb(w: u32) {
    ch_out_len = 0u;
    ch_input[ch_in_len] = w;
    ch_in_len += 1u;
}

// The next output word; the caller has made one available (ch_advance: no pending input, output not empty).
fn ch_pop() -> u32 {
    ch_out_len -= 1u;
    return ch_sponge[ch_out_len];
}

fn ch_load() {
    for (var i = 0u; i < 16u; i++) {
        ch_sponge[i] = scratch_get(i);
    }
    ch_in_len = scratch_get(16u);
    ch_out_len = scratch_get(17u);
    for (var i = 0u; i < 8u; i++) {
        ch_input[i] = scratch_get(18u + i);
    }
}

fn ch_store() {
    for (var i = 0u; i < 16u; i++) {
        scratch_set(i, ch_sponge[i]);
    }
    scratch_set(16u, ch_in_len);
    scratch_set(17u, ch_out_len);
    for (var i = 0u; i < 8u; i++) {
        scratch_set(18u + i, ch_input[i]);
    }
}
