// requires: bb_ext4
// Claims of a batch of columns of one base table at one local point (the tables' openings): for claim c with
// descriptor (off, log_stride, next), col[i] = table[off + (i << log_stride)], i < len = 2^m, the value is
// sum_i E[i] col[next ? min(i + 1, len - 1) : i] (E = the point's eq table: MLE(col) or MLE(repeat-last shift)).
// column_claims_partial: threadgroup w = c * groups + g (2-D grid, overhang returns) sums i = g WG + lid + k groups WG
// into partials[w]; column_claims_finish: threadgroup c sums its groups partials into out[c].
// Bindings, partial: 0 table (base), 1 eq (EF), 2 desc (uint4 per claim), 3 partials (EF), 4 params; finish:
// 0 partials_in, 1 out (EF), 2 params (the same Params). Contracts:
// every off + ((len - 1) << log_stride) inside table, groups <= 65535. Words Montgomery in [0, P).

struct Params { uint n_claims; uint groups; uint len; uint _pad0; };

constant constexpr uint WG = 256u;

// The sum of every thread's acc, in red[0]; every thread of the threadgroup must call it.
void reduce_claims(uint lid, uint4 acc, threadgroup uint4* red) {
    red[lid] = acc;
    for (uint s = WG / 2u; s > 0u; s >>= 1u) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (lid < s) {
            red[lid] = ef_add(red[lid], red[lid + s]);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
}

kernel void column_claims_partial(device const uint* table [[buffer(0)]], device const uint4* eq [[buffer(1)]],
                                  device const uint4* desc [[buffer(2)]], device uint4* partials [[buffer(3)]],
                                  constant Params& params [[buffer(4)]],
                                  uint lid [[thread_index_in_threadgroup]],
                                  uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[WG];
    uint w = wid.x + wid.y * nwg.x;
    if (w >= params.n_claims * params.groups) {
        return;
    }
    uint c = w / params.groups;
    uint4 d = desc[c];
    uint4 acc = uint4(0u);
    for (uint i = (w - c * params.groups) * WG + lid; i < params.len; i += params.groups * WG) {
        uint row = d.z != 0u ? min(i + 1u, params.len - 1u) : i;
        acc = ef_add(acc, ef_mul_base(eq[i], table[d.x + (row << (d.y & 31u))]));
    }
    reduce_claims(lid, acc, red);
    if (lid == 0u) {
        partials[w] = red[0];
    }
}

kernel void column_claims_finish(device const uint4* partials_in [[buffer(0)]], device uint4* out [[buffer(1)]],
                                 constant Params& params [[buffer(2)]],
                                 uint lid [[thread_index_in_threadgroup]],
                                 uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint4 red[WG];
    uint c = wid.x + wid.y * nwg.x;
    if (c >= params.n_claims) {
        return;
    }
    uint4 acc = uint4(0u);
    for (uint g = lid; g < params.groups; g += WG) {
        acc = ef_add(acc, partials_in[c * params.groups + g]);
    }
    reduce_claims(lid, acc, red);
    if (lid == 0u) {
        out[c] = red[0];
    }
}
