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

struct Params { n_slots: u32, log_w: u32, depth: u32, paths_off: u32, row_first: u32, row_count: u32, level: u32,
                n_levels: u32, node_first: u32, node_count: u32, n_own: u32, _pad0: u32,
                offsets: array<vec4<u32>, 8> }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<storage, read> level0: array<u32>;
@group(0) @binding(4) var<storage, read> level1: array<u32>;
@group(0) @binding(5) var<storage, read> level2: array<u32>;
@group(0) @binding(6) var<storage, read> level3: array<u32>;
@group(0) @binding(7) var<storage, read> level4: array<u32>;
@group(0) @binding(8) var<uniform> params: Params;

// Word i of level binding b (b < 5).
fn level_word(b: u32, i: u32) -> u32 {
    switch b {
        case 0u: { return level0[i]; }
        case 1u: { return level1[i]; }
        case 2u: { return level2[i]; }
        case 3u: { return level3[i]; }
        default: { return level4[i]; }
    }
}

@compute @workgroup_size(WG)
fn openings(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    let row_words = select(0u, 1u << params.log_w, params.row_count > 0u);
    let per = row_words + 8u * params.n_levels;
    if (per == 0u || t >= params.n_slots * per) {
        return;
    }
    let q = t / per;
    let r = t % per;
    let leaf = indices[q];
    if (r < row_words) {
        let row = leaf - params.row_first;  // wraps when before the window
        if (row < params.row_count) {
            out[(q << params.log_w) + r] = matrix[(row << params.log_w) + r];
        }
        return;
    }
    let k = (r - row_words) >> 3u;
    let i = (r - row_words) & 7u;
    let d = params.level + k;
    let sibling = ((leaf >> d) ^ 1u) - params.node_first;  // wraps when before the window
    if (sibling < params.node_count) {
        let at = params.offsets[k >> 2u][k & 3u] + sibling * 8u + i;
        out[params.paths_off + (q * params.depth + d) * 8u + i] = level_word(min(k, params.n_own), at);
    }
}
