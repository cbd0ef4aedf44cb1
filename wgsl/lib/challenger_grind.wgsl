// requires: challenger_sponge
// The GRIND op of a transcript program (challenger.wgsl): a proof-of-work search by the workgroup that runs the
// program, for grinds of a few bits where a pow_search launch of its own would cost more than the search. Its
// semantics are pow_search.wgsl's: the candidate witness monty(nonce) is written over the pending input at lane
// (input length) of the state the next duplex would permute (length-tagged: the rate lanes past it zeroed and
// input length + 1 added to lane 8), valid when canonical(lane 7 of the permuted state) & mask == 0; the result is
// the smallest valid nonce below `end`, or CH_NOT_FOUND. Waves of `size` / 16 nonces, ascending, one state per 16
// lanes (ch_coop_permute); the search stops after the first wave with a hit. Contracts: the input is not full
// (ch_advance permutes first); end <= P; size a multiple of 16 in [16, 16 CH_GROUPS]; called by all `size`
// threads in uniform control flow, ch_rc loaded, ch_grind_len holding thread 0's ch_in_len.

var<workgroup> ch_grind_len: u32;
var<workgroup> ch_grind_hit: atomic<u32>;
var<workgroup> ch_grind_found: u32;

// Runs GRIND op (10, found word, bits, end): scratch[found word] := the smallest valid nonce below end.
fn ch_grind(lid: u32, size: u32, op: vec4<u32>) {
    let groups = size >> 4u;
    let l = lid & 15u;
    let in_len = ch_grind_len;
    var word = select(ch_sponge[l], ch_input[min(l, 7u)], l < in_len);
    if (CH_LENGTH_TAGGED != 0u) {
        if (l > in_len && l < 8u) {
            word = 0u;
        }
        if (l == 8u) {
            word = bb_add(word, bb_mul(in_len + 1u, BB_R2));
        }
    }
    let mask = (1u << op.z) - 1u;
    if (lid == 0u) {
        atomicStore(&ch_grind_hit, CH_NOT_FOUND);
    }
    var first = 0u;                              // the wave's first nonce
    loop {
        let nonce = first + min(lid >> 4u, groups - 1u);
        let x = ch_coop_permute(lid, select(word, bb_mul(nonce, BB_R2), l == in_len), groups);
        if (l == 7u && nonce < op.w && (bb_mul(x, 1u) & mask) == 0u) {
            atomicMin(&ch_grind_hit, nonce);
        }
        workgroupBarrier();
        if (lid == 0u) {
            ch_grind_found = atomicLoad(&ch_grind_hit);
        }
        first += groups;
        if (workgroupUniformLoad(&ch_grind_found) != CH_NOT_FOUND || first >= op.w) {
            break;
        }
    }
    if (lid == 0u) {
        scratch_set(op.y, ch_grind_found);
    }
}
