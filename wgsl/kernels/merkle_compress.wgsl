// requires: poseidon2 poseidon2_coop
// One Merkle level: parent[j] = perm(child[2j] || child[2j + 1])[0..8] (TruncatedPermutation<2, 8, 16>).
// Thread j (2-D grid: j = gid.x + gid.y * num_workgroups.x * WG) makes parent j; threads with j >= n return.
// Bindings: 0 child level (2n * 8 words), 1 parent level (n * 8 words), 2 Poseidon2 round constants
// (constants.poseidon2_rc_table), 3 params. The two levels may be disjoint ranges of one buffer (a tree's packed
// levels, kernels/merkle.py), so src is declared read_write although only read: WebGPU refuses a buffer bound
// read-only and writable in one dispatch, and allows it bound writable twice in disjoint ranges.
// Entry merkle_permute: the raw permutation of n 16-word states, src state j -> dst state j (tests, challenger).
// Entries *_coop: the same with 4 threads per state (poseidon2_coop; P2C_WG-thread workgroups, thread
// t = workgroup index * P2C_WG + local id serves state t / 4), for levels too small to fill the GPU.
// Every entry reads src from vec4 src_off and writes dst from vec4 dst_off (windows of split levels). The top levels
// of a tree are merkle_top.wgsl's.

struct Params { n: u32, src_off: u32, dst_off: u32, _pad0: u32 }

@id(0) override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(3) var<uniform> params: Params;

// The 16 words at src[16 j ..] (two adjacent children are one contiguous 16-word block), permuted.
fn permute_block(j: u32) -> P2State {
    let at = params.src_off + 4u * j;
    return poseidon2_permute(P2State(src[at], src[at + 1u], src[at + 2u], src[at + 3u]));
}

@compute @workgroup_size(WG)
fn merkle_compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    let s = permute_block(j);
    dst[params.dst_off + 2u * j] = s.a;
    dst[params.dst_off + 2u * j + 1u] = s.b;
}

@compute @workgroup_size(WG)
fn merkle_permute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    let s = permute_block(j);
    let at = params.dst_off + 4u * j;
    dst[at] = s.a;
    dst[at + 1u] = s.b;
    dst[at + 2u] = s.c;
    dst[at + 3u] = s.d;
}

// Chunk q of state j for thread t = 4j + q; threads past the last state load state 0 (n >= 1) and drop it.
fn coop_permute(lid: u32, wid: vec3<u32>, nwg: vec3<u32>) -> vec4<u32> {
    let j = ((wid.x + wid.y * nwg.x) * P2C_WG + lid) >> 2u;
    return p2c_permute(src[params.src_off + 4u * select(0u, j, j < params.n) + (lid & 3u)], lid);
}

@compute @workgroup_size(P2C_WG)
fn merkle_compress_coop(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                        @builtin(num_workgroups) nwg: vec3<u32>) {
    let x = coop_permute(lid, wid, nwg);
    let j = ((wid.x + wid.y * nwg.x) * P2C_WG + lid) >> 2u;
    if (j < params.n && (lid & 3u) < 2u) {
        dst[params.dst_off + 2u * j + (lid & 3u)] = x;
    }
}

@compute @workgroup_size(P2C_WG)
fn merkle_permute_coop(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let x = coop_permute(lid, wid, nwg);
    let j = ((wid.x + wid.y * nwg.x) * P2C_WG + lid) >> 2u;
    if (j < params.n) {
        dst[params.dst_off + 4u * j + (lid & 3u)] = x;
    }
}
