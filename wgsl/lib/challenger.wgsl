// requires: challenger_sponge challenger_queries bb_ext4
// The interpreter of transcript programs on the device-resident duplex challenger (challenger_sponge.wgsl; the
// query ops DISTINCT and SORT in challenger_queries.wgsl), for the transcript kernel and for the kernels that run a program as their
// epilogue (the last workgroup of a reduction or a search observes its result and samples the next challenge).
// A kernel that requires this file declares `p2_rc` and defines the accessors
//   scratch_get(i) -> u32, scratch_set(i, v), proof_get(i) -> u32, proof_set(i, v), point_set(i, v: vec4<u32>)
// (word i of scratch / of its proof window, EF entry i of the points region; a kernel without a points binding
// makes point_set a no-op and is never given an EXPAND op) and a uniform `params` with fields
// `n_ops: u32` and `ops: array<vec4<u32>, 11>`. Ops (x = code, y z w args; proof offsets relative to the window):
//   1 OBSERVE   observe proof[y .. y + z)                       2 SAMPLE     scratch[y .. y + z) = z samples
//   3 WITNESS   w = monty(scratch[y]); proof[z] = w; observe w, sample once (check_witness); when
//               scratch[y] is 0xffffffff (no nonce found) proof[z] = 0xffffffff (never a field word) and w = 0
//   4 QUERIES   z & 0xffff = q, z >> 16 = L, w = per-call count: q raw indices < 2^L into scratch[y ..),
//               drawn by sample_bits(count * L) calls cut LSB first (q = 0: one sample_bits(0))
//   5 POW_RESET scratch[y] = 0xffffffff, scratch[z .. z + w) = 0 (a grind's smallest-nonce word and counters)
//   6 EXPAND    points[z + t] = x^(2^(w-1-t)) for t < w, x = the EF at scratch word y (an OOD point, x_0 first)
//   7 POWERS    (two op slots: this and (n, n_slots, 0, 0)) the EF at scratch word z + 4 i = x^i for
//               i < n + valid, 0 for the rest of n + n_slots; x = the EF at scratch word y; valid = min(scratch[w],
//               n_slots), or n_slots when w is 0xffffffff (select constraints past the drawn count get 0)
//   8 SORT      (three op slots: (8, raw, q, flags), (sorted, slots, count_at, points_at), (generator, proof_count,
//               0, 0)) the q drawn indices scratch[raw ..) become their `count` distinct values ascending in
//               scratch[sorted ..), zero-padded to `slots`; count goes to scratch[count_at] and proof[proof_count];
//               scratch[points_at + i] = generator^sorted[i] (1 for padding); scratch[flags .. flags + q) is work
//               space. Made by the whole workgroup (protocol/query_indices.py's order). After a DISTINCT with a
//               bitmap the third slot is (generator, proof_count, bitmap, bitmap words): the set bits are the
//               sorted indices (count q), no flags used.
//   9 DISTINCT  (CH_DISTINCT_QUERIES only) z & 0xffff = t, z >> 16 = L: t distinct indices < 2^L into
//               scratch[y ..) in draw order (protocol/query_indices.py's distinct_query_indices): each draw is one
//               sample_uniform_bits(L) (samples redrawn while canonical >= P with its low L bits cleared, then
//               masked to L bits; L at most the field's MAX_SINGLE_SAMPLE_BITS, which no folded domain exceeds),
//               a draw equal to an earlier one dropped, until t are found (L = 0: t <= 1 zeros, no sample). A SORT
//               of the t words follows (they are distinct: its count is t). w: 0xffffffff, or the scratch word
//               of a bitmap of max(1, 2^L / 32) words (cleared by the op) that tells an earlier draw in one read
//               instead of a scan of those found.
// The variant (compile-time constants, default 0: whir-p3's challenger): CH_LENGTH_TAGGED (challenger_sponge.wgsl);
// CH_DISTINCT_QUERIES 1, the DISTINCT op (else it is skipped, its words never written).
// The whole workgroup runs a program: transcript_run(lid, size), called by its `size` >= 16 threads in uniform
// control flow; thread 0 runs every op but SORT, and each duplex is a permutation on 16 cooperating lanes
// (ch_duplex_coop: one workgroup barrier a round). Words Montgomery in [0, P).

const CH_NOT_FOUND: u32 = 0xffffffffu;
const CH_DUPLEX: u32 = 0xfffffffeu;      // ch_advance: a permutation is due
const OP_OBSERVE: u32 = 1u;
const OP_SAMPLE: u32 = 2u;
const OP_WITNESS: u32 = 3u;
const OP_QUERIES: u32 = 4u;
const OP_POW_RESET: u32 = 5u;
const OP_EXPAND: u32 = 6u;
const OP_POWERS: u32 = 7u;
const OP_SORT: u32 = 8u;
const OP_DISTINCT: u32 = 9u;
@id(17) override CH_DISTINCT_QUERIES: u32 = 0u;

var<private> ch_k: u32;                  // ch_advance's position: op ch_k, its step ch_i
var<private> ch_i: u32;
var<workgroup> ch_next: u32;             // the next op for the whole workgroup (a SORT, or n_ops when done)

// Output words op `op` takes from step i on (SAMPLE: one a step; WITNESS: step 1; QUERIES: one a draw call;
// DISTINCT: one a step until it is done, none when t or L is 0).
fn ch_wants_output(op: vec4<u32>, i: u32) -> bool {
    switch op.x {
        case OP_SAMPLE: {
            return i < op.z;
        }
        case OP_WITNESS: {
            return i == 1u;
        }
        case OP_QUERIES: {
            let q = op.z & 0xffffu;              // q = 0: one call of 0 bits (and per_call = 0)
            return i < select((q + op.w - 1u) / max(op.w, 1u), 1u, q == 0u);
        }
        case OP_DISTINCT: {
            return CH_DISTINCT_QUERIES != 0u && (op.z & 0xffffu) != 0u && (op.z >> 16u) != 0u;
        }
        default: {
            return false;
        }
    }
}

fn ch_scratch_ef(at: u32) -> vec4<u32> {
    return vec4<u32>(scratch_get(at), scratch_get(at + 1u), scratch_get(at + 2u), scratch_get(at + 3u));
}

fn ch_set_scratch_ef(at: u32, v: vec4<u32>) {
    for (var k = 0u; k < 4u; k++) {
        scratch_set(at + k, v[k]);
    }
}

fn ch_expand(src: u32, dst: u32, nv: u32) {
    var current = ch_scratch_ef(src);
    for (var t = nv; t > 0u; t--) {
        point_set(dst + t - 1u, current);
        current = ef_mul(current, current);
    }
}

fn ch_powers(src: u32, dst: u32, count_at: u32, n: u32, n_slots: u32) {
    var valid = n_slots;
    if (count_at != CH_NOT_FOUND) {
        valid = min(scratch_get(count_at), n_slots);
    }
    let x = ch_scratch_ef(src);
    var acc = vec4<u32>(BB_R, 0u, 0u, 0u);
    for (var i = 0u; i < n + n_slots; i++) {
        ch_set_scratch_ef(dst + 4u * i, select(vec4<u32>(0u), acc, i < n + valid));
        acc = ef_mul(acc, x);
    }
}

// Thread 0: advances the program from step ch_i of op ch_k (both kept across calls) until a permutation is due
// (returns CH_DUPLEX: the caller permutes the sponge with the pending input, and calls again) or the next SORT or the end (returns that op's
// index). One step at a time: an observed word, a sampled word, a query draw call, or a whole op that touches no
// sponge word; a permutation is due when the input is full (as the host duplexes eagerly) or the next step takes
// an output word while input is pending or the output is empty. The caller owns the permutation so that a shader
// has one (compilers inline every call): transcript_range's cooperative one, or a search's own.
fn ch_advance(end: u32) -> u32 {
    var k = ch_k;
    var i = ch_i;                                // steps of op k done
    loop {
        var op = vec4<u32>(0u);
        if (k < end) {
            op = params.ops[k];
        }
        if (ch_in_len == 8u || (k < end && ch_wants_output(op, i) && (ch_in_len != 0u || ch_out_len == 0u))) {
            ch_k = k;
            ch_i = i;
            return CH_DUPLEX;
        }
        if (k >= end || op.x == OP_SORT) {
            break;
        }
        var done = true;                         // op k finished with this step
        switch op.x {
            case OP_OBSERVE: {
                if (i < op.z) {
                    ch_absorb(proof_get(op.y + i));
                }
                done = i + 1u >= op.z;
            }
            case OP_SAMPLE: {
                if (i < op.z) {
                    scratch_set(op.y + i, ch_pop());
                }
                done = i + 1u >= op.z;
            }
            case OP_WITNESS: {
                if (i == 0u) {
                    let nonce = scratch_get(op.y);
                    let w = bb_mul(select(nonce, 0u, nonce == CH_NOT_FOUND), BB_R2);
                    proof_set(op.z, select(w, CH_NOT_FOUND, nonce == CH_NOT_FOUND));
                    ch_absorb(w);
                } else {
                    _ = ch_pop();
                }
                done = i == 1u;
            }
            case OP_QUERIES: {
                // draw call i: min(per_call, q - done) indices of L bits from one word, LSB first (q = 0: one
                // call of 0 bits)
                let q = op.z & 0xffffu;
                let log_size = op.z >> 16u;
                let first = i * op.w;
                let count = min(op.w, q - min(q, first));
                var v = bb_mul(ch_pop(), 1u) & ((1u << (count * log_size)) - 1u);
                for (var j = 0u; j < count; j++) {
                    scratch_set(op.y + first + j, v & ((1u << log_size) - 1u));
                    v >>= log_size;
                }
                done = !ch_wants_output(op, i + 1u);
            }
            case OP_DISTINCT: {
                if (CH_DISTINCT_QUERIES != 0u) {
                    done = ch_distinct_step(op, i);
                }
            }
            case OP_POW_RESET: {
                scratch_set(op.y, CH_NOT_FOUND);
                for (var j = 0u; j < op.w; j++) {
                    scratch_set(op.z + j, 0u);
                }
            }
            case OP_EXPAND: {
                ch_expand(op.y, op.z, op.w);
            }
            case OP_POWERS: {
                let counts = params.ops[k + 1u];
                ch_powers(op.y, op.z, op.w, counts.x, counts.y);
                k += 1u;
            }
            default: {}
        }
        if (done) {
            k += 1u;
            i = 0u;
        } else {
            i += 1u;
        }
    }
    ch_k = k;
    ch_i = 0u;
    return k;
}

// Runs params.ops[first .. end) on the challenger in scratch (loaded first, stored back last). Called by all `size`
// threads of one workgroup in uniform control flow.
fn transcript_range(lid: u32, size: u32, first: u32, end: u32) {
    if (first >= end) {
        return;
    }
    if (lid == 0u) {
        ch_load();
        ch_k = first;
        ch_i = 0u;
    }
    ch_load_constants(lid, size);
    loop {
        if (lid == 0u) {
            ch_next = ch_advance(end);
        }
        let k = workgroupUniformLoad(&ch_next);
        if (k == CH_DUPLEX) {
            ch_duplex_coop(lid);
            continue;
        }
        if (k >= end) {
            break;
        }
        ch_sort(lid, size, k);
        if (lid == 0u) {
            ch_k = k + 3u;
            ch_i = 0u;
        }
    }
    if (lid == 0u) {
        ch_store();
    }
}

// The whole program, params.ops[0 .. n_ops).
fn transcript_run(lid: u32, size: u32) {
    transcript_range(lid, size, 0u, params.n_ops);
}
