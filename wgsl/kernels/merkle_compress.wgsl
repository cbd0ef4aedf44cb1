// requires: poseidon2
// One Merkle level: parent[j] = perm(child[2j] || child[2j + 1])[0..8] (TruncatedPermutation<2, 8, 16>).
// Thread j (2-D grid: j = gid.x + gid.y * num_workgroups.x * WG) makes parent j; threads with j >= n return.
// Levels live in separate buffers. Bindings: 0 child level (2n * 8 words), 1 parent level (n * 8 words), 2 params.
// Entry merkle_permute: the raw permutation of n 16-word states, src state j -> dst state j (tests, challenger).

struct Params { n: u32, _pad0: u32, _pad1: u32, _pad2: u32 }

override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

// Loads the 16 words at src[16 j ..] (two adjacent children are one contiguous 16-word block) and permutes them.
fn permute_block(j: u32) -> array<u32, 16> {
    var s: array<u32, 16>;
    for (var k = 0u; k < 16u; k++) {
        s[k] = src[16u * j + k];
    }
    poseidon2_permute(&s);
    return s;
}

@compute @workgroup_size(WG)
fn merkle_compress(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    let s = permute_block(j);
    for (var k = 0u; k < 8u; k++) {
        dst[8u * j + k] = s[k];
    }
}

@compute @workgroup_size(WG)
fn merkle_permute(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = gid.x + gid.y * nwg.x * WG;
    if (j >= params.n) {
        return;
    }
    let s = permute_block(j);
    for (var k = 0u; k < 16u; k++) {
        dst[16u * j + k] = s[k];
    }
}
