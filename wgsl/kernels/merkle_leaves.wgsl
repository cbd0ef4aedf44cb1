// requires: poseidon2
// Merkle leaf hashing: digest[i] = PaddingFreeSponge<16, 8, 8>(row i) of a row-major (height, width) matrix.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) hashes row i; threads with i >= height return.
// Bindings: 0 matrix (height * width Montgomery words), 1 digests (height * 8 words), 2 params.
// Sponge: state = 0^16; each chunk of <= 8 words overwrites state[0..len] (the rest keeps its value), then
// permute; no padding, width 0 gives 0^8.

struct Params { height: u32, width: u32, _pad0: u32, _pad1: u32 }

override WG: u32 = 64u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(1) var<storage, read_write> digests: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn merkle_leaves(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.height) {
        return;
    }
    let width = params.width;
    let row = i * width;
    var s: array<u32, 16>;
    for (var k = 0u; k < 16u; k++) {
        s[k] = 0u;
    }
    for (var start = 0u; start < width; start += P2_RATE) {
        let len = min(P2_RATE, width - start);
        for (var k = 0u; k < len; k++) {
            s[k] = matrix[row + start + k];
        }
        poseidon2_permute(&s);
    }
    for (var k = 0u; k < 8u; k++) {
        digests[8u * i + k] = s[k];
    }
}
