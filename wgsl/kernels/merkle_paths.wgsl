// Merkle authentication paths, one tree level per launch: for query q < n_queries and word w < 8,
//   out[out_off + (q * depth + level) * 8 + w] = digests[(((indices[q] >> level) ^ 1) * 8) + w]
// (the sibling of the query's node at this level; leaf level = 0), for the nodes the digests binding holds: it
// is the window of nodes node_first .. node_first + node_count - 1 of the level; other words are not written.
// Bindings: 0 digests (a window of this level, 8 words per node), 1 indices (leaf indices), 2 out, 3 params.
// Launch: one thread per output word (n_queries * 8) on a 2-D grid, once per window.

struct Params { n_queries: u32, level: u32, depth: u32, out_off: u32, node_first: u32, node_count: u32, _pad0: u32,
                _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> digests: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn merkle_paths(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_queries * 8u) {
        return;
    }
    let q = t >> 3u;
    let sibling = ((indices[q] >> params.level) ^ 1u) - params.node_first;  // wraps when before the window
    if (sibling < params.node_count) {
        out[params.out_off + (q * params.depth + params.level) * 8u + (t & 7u)] = digests[sibling * 8u + (t & 7u)];
    }
}
