// requires: poseidon2
// Merkle openings to roots (ref.merkle.compute_roots_batched): thread t (t = gid.x + gid.y * nwg.x * WG) walks opening
// t's chain: the sponge of its row (PaddingFreeSponge<16, 8, 8>), then per level the compression with its sibling (the
// node on the left when the index bit there is 0); any widths and depths in one launch. Words are read mod P.
// Bindings: 0 desc (per opening: row_at, width, sib_at, depth, index lo, index hi, 0, 0; row_at a word of rows, sib_at
// a vec4 of siblings), 1 rows, 2 siblings (8 words a level, leaf level first), 3 roots (8 words each), 4 p2_rc,
// 5 params (n openings).

struct Params { uint n; uint _pad0; uint _pad1; uint _pad2; };

constant uint WG [[function_constant(0)]];

// in: any u32 (< 3P); out: x mod P in [0, P). The reference reads a word x as the element x R^-1, whose
// Montgomery word is x mod P.
uint paths_reduce(uint x) {
    uint once = min(x, x - BB_P);  // x - P wraps past 2^32 exactly when x < P
    return min(once, once - BB_P);
}

uint4 paths_reduce4(uint4 v) {
    uint4 once = min(v, v - uint4(BB_P));
    return min(once, once - uint4(BB_P));
}

// Bit `level` of the index as a two's-complement 64-bit integer (lo, hi); past bit 63, its sign.
bool index_bit(uint lo, uint hi, uint level) {
    uint word = hi >> 31u;
    if (level < 32u) {
        word = lo >> level;
    } else if (level < 64u) {
        word = hi >> (level - 32u);
    }
    return (word & 1u) == 1u;
}

kernel void merkle_paths(device const uint4* desc [[buffer(0)]], device const uint* rows [[buffer(1)]],
                         device const uint4* siblings [[buffer(2)]], device uint4* roots [[buffer(3)]],
                         constant uint4* p2_rc [[buffer(4)]], constant Params& params [[buffer(5)]],
                         uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    uint4 head = desc[2u * t];        // row_at, width, sib_at, depth
    uint4 index = desc[2u * t + 1u];  // lo, hi
    uint width = head.y;
    uint n_chunks = (width + P2_RATE - 1u) / P2_RATE;
    P2State s = P2State{uint4(0u), uint4(0u), uint4(0u), uint4(0u)};
    for (uint k = 0u; k < n_chunks + head.w; k++) {  // one permutation call site: it is inlined once
        if (k < n_chunks) {        // absorb: the chunk overwrites lanes 0..len (the rest keeps its value)
            uint at = head.x + k * P2_RATE;
            uint len = min(width - k * P2_RATE, P2_RATE);
            s.a.x = paths_reduce(rows[at]);
            if (len > 1u) { s.a.y = paths_reduce(rows[at + 1u]); }
            if (len > 2u) { s.a.z = paths_reduce(rows[at + 2u]); }
            if (len > 3u) { s.a.w = paths_reduce(rows[at + 3u]); }
            if (len > 4u) { s.b.x = paths_reduce(rows[at + 4u]); }
            if (len > 5u) { s.b.y = paths_reduce(rows[at + 5u]); }
            if (len > 6u) { s.b.z = paths_reduce(rows[at + 6u]); }
            if (len > 7u) { s.b.w = paths_reduce(rows[at + 7u]); }
        } else {                   // compress with the sibling of this level
            uint level = k - n_chunks;
            uint4 lo = paths_reduce4(siblings[head.z + 2u * level]);
            uint4 hi = paths_reduce4(siblings[head.z + 2u * level + 1u]);
            if (index_bit(index.x, index.y, level)) {
                s = P2State{lo, hi, s.a, s.b};
            } else {
                s = P2State{s.a, s.b, lo, hi};
            }
        }
        s = poseidon2_permute(s, p2_rc);
    }
    roots[2u * t] = s.a;
    roots[2u * t + 1u] = s.b;
}
