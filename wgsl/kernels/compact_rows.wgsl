// Rows cut to their first columns: out[i * w_out + c] = matrix[i * w_in + c] for i < n_rows, c < w_out <= w_in
// (n_words = n_rows * w_out, every count below 2^32): a matrix made with padding columns (a power-of-two width for
// the column NTT) as the rows its Merkle leaves hash.
// Bindings: 0 matrix (row-major words), 1 out, 2 params.
// Launch: one thread per output word on a 2-D grid.

struct Params { n_words: u32, w_in: u32, w_out: u32, _pad0: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> matrix: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn compact_rows(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_words) {
        return;
    }
    let row = t / params.w_out;
    out[t] = matrix[row * params.w_in + (t - row * params.w_out)];
}
