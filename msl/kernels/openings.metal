// Query openings, rows and authentication paths together: for slot q < n_slots, out[q w + c] = matrix row
// indices[q] (w = 2^log_w words) when that row lies in the matrix window (global rows row_first ..
// row_first + row_count - 1; row_count 0: no rows this launch), and for each of the n_levels <= 32 levels k of
// the launch (tree level d = level + k < 32, leaf level 0), out[paths_off + (q depth + d) 8 + i] = word i of the
// sibling s = (indices[q] >> d) ^ 1 when s - node_first < node_count (a window of a split level; 0xFFFFFFFF: all).
// Level k is read from binding level<min(k, n_own)>, node s at word offsets[k] + 8 (s - node_first): the first
// n_own levels have a binding each (offset 0), the others share the next one (a tree's packed levels, each at
// its own word offset in one buffer). Contract: every word read lies in its binding.
// Thread t (2-D grid) serves slot t / per, word t % per, per = (row_count > 0 ? w : 0) + 8 n_levels.
// Bindings: 0 matrix window, 1 indices, 2 out, 3-7 levels (digests, 8 words per node), 8 params.

struct Params { uint n_slots; uint log_w; uint depth; uint paths_off; uint row_first; uint row_count; uint level;
                uint n_levels; uint node_first; uint node_count; uint n_own; uint _pad0; uint4 offsets[8]; };

constant constexpr uint WG = 256u;

kernel void openings(device const uint* matrix [[buffer(0)]], device const uint* indices [[buffer(1)]],
                     device uint* out [[buffer(2)]], device const uint* level0 [[buffer(3)]],
                     device const uint* level1 [[buffer(4)]], device const uint* level2 [[buffer(5)]],
                     device const uint* level3 [[buffer(6)]], device const uint* level4 [[buffer(7)]],
                     constant Params& params [[buffer(8)]], uint3 gid [[thread_position_in_grid]],
                     uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    uint log_w = params.log_w & 31u;
    uint row_words = params.row_count > 0u ? 1u << log_w : 0u;
    uint per = row_words + 8u * params.n_levels;
    if (per == 0u || t >= params.n_slots * per) {
        return;
    }
    uint q = t / per;
    uint r = t % per;
    uint leaf = indices[q];
    if (r < row_words) {
        uint row = leaf - params.row_first;  // wraps when before the window
        if (row < params.row_count) {
            out[(q << log_w) + r] = matrix[(row << log_w) + r];
        }
        return;
    }
    uint k = (r - row_words) >> 3u;
    uint i = (r - row_words) & 7u;
    uint d = params.level + k;
    uint sibling = ((leaf >> (d & 31u)) ^ 1u) - params.node_first;  // wraps when before the window
    if (sibling < params.node_count) {
        device const uint* levels[5] = {level0, level1, level2, level3, level4};
        uint at = params.offsets[min(k, 31u) >> 2][k & 3u] + sibling * 8u + i;
        out[params.paths_off + (q * params.depth + d) * 8u + i] = levels[min(min(k, params.n_own), 4u)][at];
    }
}
