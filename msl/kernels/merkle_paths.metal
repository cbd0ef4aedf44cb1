// Merkle authentication paths, one tree level per launch: for query q < n_queries and word w < 8,
//   out[out_off + (q * depth + level) * 8 + w] = digests[(((indices[q] >> level) ^ 1) * 8) + w]
// (the sibling of the query's node at this level; leaf level = 0; level < depth < 32), for the nodes the
// digests binding holds: the window of nodes node_first .. node_first + node_count - 1; other words unwritten.
// Bindings: 0 digests (a window of this level, 8 words per node), 1 indices (leaf indices), 2 out, 3 params.
// Launch: one thread per output word (n_queries * 8) on a 2-D grid (t = gid.x + gid.y * nwg.x * WG).

struct Params { uint n_queries; uint level; uint depth; uint out_off; uint node_first; uint node_count; uint _pad0;
                uint _pad1; };

constant constexpr uint WG = 256u;

kernel void merkle_paths(device const uint* digests [[buffer(0)]], device const uint* indices [[buffer(1)]],
                         device uint* out [[buffer(2)]], constant Params& params [[buffer(3)]],
                         uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_queries * 8u) {
        return;
    }
    uint q = t >> 3u;
    uint sibling = ((indices[q] >> params.level) ^ 1u) - params.node_first;  // wraps when before the window
    if (sibling < params.node_count) {
        out[params.out_off + (q * params.depth + params.level) * 8u + (t & 7u)] = digests[sibling * 8u + (t & 7u)];
    }
}
