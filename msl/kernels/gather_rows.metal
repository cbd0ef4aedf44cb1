// Row gather for query openings: out[out_off + q * w + c] = matrix[indices[q] * w + c] for q < n_rows,
// c < w = 2^log_w (n_words = n_rows * w; log_w < 32), for the rows the matrix binding holds: it is the window
// of rows row_first .. row_first + row_count - 1 (global row numbers in indices); other rows are not written.
// Bindings: 0 matrix window (row-major words), 1 indices (row numbers), 2 out, 3 params.
// Launch: one thread per output word on a 2-D grid (t = gid.x + gid.y * nwg.x * WG), once per window.

struct Params { uint n_words; uint log_w; uint out_off; uint row_first; uint row_count; uint _pad0; uint _pad1;
                uint _pad2; };

constant constexpr uint WG = 256u;

kernel void gather_rows(device const uint* matrix [[buffer(0)]], device const uint* indices [[buffer(1)]],
                        device uint* out [[buffer(2)]], constant Params& params [[buffer(3)]],
                        uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_words) {
        return;
    }
    uint row = indices[t >> params.log_w] - params.row_first;  // wraps when before the window
    if (row < params.row_count) {
        uint c = t & ((1u << params.log_w) - 1u);
        out[params.out_off + t] = matrix[(row << params.log_w) + c];
    }
}
