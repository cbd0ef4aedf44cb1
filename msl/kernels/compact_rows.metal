// Rows cut to their first columns (compact_rows.wgsl's twin): out[i * w_out + c] = matrix[i * w_in + c] for
// i < n_rows, c < w_out <= w_in (n_words = n_rows * w_out, every count below 2^32).
// Bindings: 0 matrix (row-major words), 1 out, 2 params.
// Launch: one thread per output word on a 2-D grid (t = gid.x + gid.y * nwg.x * WG).

struct Params { uint n_words; uint w_in; uint w_out; uint _pad0; };

constant constexpr uint WG = 256u;

kernel void compact_rows(device const uint* matrix [[buffer(0)]], device uint* out [[buffer(1)]],
                         constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                         uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n_words) {
        return;
    }
    uint row = t / params.w_out;
    out[t] = matrix[row * params.w_in + (t - row * params.w_out)];
}
