// requires: poseidon2
// Merkle openings to roots (ref.merkle.compute_roots_batched): thread t (t = gid.x + gid.y * nwg.x * WG) walks opening
// t's chain: the sponge of its row (PaddingFreeSponge<16, 8, 8>), then per level the compression with its sibling (the
// node on the left when the index bit there is 0); any widths and depths in one launch. Words are read mod P.
// Bindings: 0 desc (per opening: row_at, width, sib_at, depth, index lo, index hi, 0, 0; row_at a word of rows, sib_at
// a vec4 of siblings), 1 rows, 2 siblings (8 words a level, leaf level first), 3 roots (8 words each), 4 p2_rc,
// 5 params (n openings).

struct Params { n: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

@id(0) override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> desc: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read> siblings: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> roots: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(5) var<uniform> params: Params;

// in: any u32 (< 3P); out: x mod P in [0, P). The reference reads a word x as the element x R^-1, whose
// Montgomery word is x mod P.
fn paths_reduce(x: u32) -> u32 {
    let once = min(x, x - BB_P);  // x - P wraps past 2^32 exactly when x < P
    return min(once, once - BB_P);
}

fn paths_reduce4(v: vec4<u32>) -> vec4<u32> {
    let once = min(v, v - vec4<u32>(BB_P));
    return min(once, once - vec4<u32>(BB_P));
}

fn row_word(at: u32) -> u32 {
    return paths_reduce(rows[at]);
}

// Bit `level` of the index as a two's-complement 64-bit integer (lo, hi); past bit 63, its sign.
fn index_bit(lo: u32, hi: u32, level: u32) -> bool {
    var word = hi >> 31u;
    if (level < 32u) {
        word = lo >> level;
    } else if (level < 64u) {
        word = hi >> (level - 32u);
    }
    return (word & 1u) == 1u;
}

@compute @workgroup_size(WG)
fn merkle_paths(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    let head = desc[2u * t];        // row_at, width, sib_at, depth
    let index = desc[2u * t + 1u];  // lo, hi
    let width = head.y;
    let n_chunks = (width + P2_RATE - 1u) / P2_RATE;
    var s = P2State(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    for (var k = 0u; k < n_chunks + head.w; k++) {  // one permutation call site: it is inlined once
        if (k < n_chunks) {     // absorb: the chunk overwrites lanes 0..len (the rest keeps its value)
            let at = head.x + k * P2_RATE;
            let len = min(width - k * P2_RATE, P2_RATE);
            s.a.x = row_word(at);
            if (len > 1u) { s.a.y = row_word(at + 1u); }
            if (len > 2u) { s.a.z = row_word(at + 2u); }
            if (len > 3u) { s.a.w = row_word(at + 3u); }
            if (len > 4u) { s.b.x = row_word(at + 4u); }
            if (len > 5u) { s.b.y = row_word(at + 5u); }
            if (len > 6u) { s.b.z = row_word(at + 6u); }
            if (len > 7u) { s.b.w = row_word(at + 7u); }
        } else {                   // compress with the sibling of this level
            let level = k - n_chunks;
            let lo = paths_reduce4(siblings[head.z + 2u * level]);
            let hi = paths_reduce4(siblings[head.z + 2u * level + 1u]);
            if (index_bit(index.x, index.y, level)) {
                s = P2State(lo, hi, s.a, s.b);
            } else {
                s = P2State(s.a, s.b, lo, hi);
            }
        }
        s = poseidon2_permute(s);
    }
    roots[2u * t] = s.a;
    roots[2u * t + 1u] = s.b;
}
