// Row gather for query openings: out[out_off + q * w + c] = matrix[indices[q] * w + c] for q < n_rows,
// c < w = 2^log_w (n_words = n_rows * w), for the rows the matrix binding holds: it is the window of rows
// row_first .. row_first + row_count - 1 (global row numbers in indices); words of other rows are not written.
// Bindings: 0 matrix window (row-major words), 1 indices (row numbers), 2 out, 3 params.
// Launch: one thread per output word on a 2-D grid, once per window.

struct Params { n_words: u32, log_w: u32, out_off: u32, row_first: u32, row_count: u32, _pad0: u32, _pad1: u32,
                _pad2: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(1) var<storage, read> indices: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn gather_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_words) {
        return;
    }
    let row = indices[t >> params.log_w] - params.row_first;  // wraps when before the window
    if (row < params.row_count) {
        let c = t & ((1u << params.log_w) - 1u);
        out[params.out_off + t] = matrix[(row << params.log_w) + c];
    }
}
