// requires: poseidon2_24
// Merkle leaf hashing with p3-whir's leaf hash: digest[i] = PaddingFreeSponge<Perm24, 24, 16, 8>(row i) of a
// row-major (height, width) matrix, width >= 0 words (an EF row of 2^k elements is its 4 * 2^k base words). The same
// grid, windows and bindings as merkle_leaves (width 16, rate 8): thread i (2-D grid: i = gid.x + gid.y *
// num_workgroups.x * WG) hashes row row_off + i of the matrix binding into digest digest_off + i of the digests
// binding (windows of split arrays); threads with i >= height return. Bindings: 0 matrix (height * width Montgomery
// words), 1 digests (height * 8 words), 2 width-24 round constants (constants.poseidon2_rc_table(field, 24)),
// 3 params.
// Sponge: state = 0^24; each chunk of <= 16 words overwrites state[0..len] (lanes len..24 keep their value), then
// permute; no padding, width 0 gives 0^8.
// Entry merkle_permute24: the raw permutation of `height` 24-word states, src state row_off + j -> dst state
// digest_off + j (6 vec4 each; tests).

struct Params { height: u32, width: u32, row_off: u32, digest_off: u32 }

@id(0) override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> digests: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> p24_rc: array<vec4<u32>, P24_RC_VEC4S>;
@group(0) @binding(3) var<uniform> params: Params;

// Lanes 0..n (n clamped to 4) of the 4 words at matrix[at ..]; the other lanes keep `keep`'s.
fn load_part(at: u32, n: u32, keep: vec4<u32>) -> vec4<u32> {
    if (n >= 4u) {
        return vec4<u32>(matrix[at], matrix[at + 1u], matrix[at + 2u], matrix[at + 3u]);
    }
    var v = keep;
    if (n > 0u) { v.x = matrix[at]; }
    if (n > 1u) { v.y = matrix[at + 1u]; }
    if (n > 2u) { v.z = matrix[at + 2u]; }
    return v;
}

// Words of a chunk of n from lane q on (0 when n <= q).
fn words_from(n: u32, q: u32) -> u32 {
    return select(0u, n - q, n > q);
}

@compute @workgroup_size(WG)
fn merkle_leaves24(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.height) {
        return;
    }
    let width = params.width;
    let row = (params.row_off + i) * width;
    var s = P24State(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    let n_chunks = (width + P24_RATE - 1u) / P24_RATE;
    for (var c = 0u; c < n_chunks; c++) {       // one permutation call site: it is inlined once
        let at = row + c * P24_RATE;
        let n = min(width - c * P24_RATE, P24_RATE);  // the same in every thread, so the branches are uniform
        s.a = load_part(at, n, s.a);
        s.b = load_part(at + 4u, words_from(n, 4u), s.b);
        s.c = load_part(at + 8u, words_from(n, 8u), s.c);
        s.d = load_part(at + 12u, words_from(n, 12u), s.d);
        s = poseidon2_24_permute(s);
    }
    let d = 2u * (params.digest_off + i);
    digests[d] = s.a;
    digests[d + 1u] = s.b;
}

@compute @workgroup_size(WG)
fn merkle_permute24(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.height) {
        return;
    }
    let at = 6u * (params.row_off + j);
    let s = poseidon2_24_permute(P24State(src[at], src[at + 1u], src[at + 2u], src[at + 3u], src[at + 4u],
                                          src[at + 5u]));
    let o = 6u * (params.digest_off + j);
    dst[o] = s.a;
    dst[o + 1u] = s.b;
    dst[o + 2u] = s.c;
    dst[o + 3u] = s.d;
    dst[o + 4u] = s.e;
    dst[o + 5u] = s.f;
}
