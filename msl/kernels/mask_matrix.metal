// A hiding-PCS mask oracle's coefficient matrix from mask draws already on the device: out is 2^log_rows rows of
// 2^log_cols EF entries (4 words c0..c3), row-major. Entry e = (g << log_cols) + c of row g, column c, with
// r = rev_{log_rows}(g) (reversed = 1) or g: src entry msg_at + c msg_stride + r for c < columns, r < msg_len;
// src entry rnd_at + c rnd_stride + (r - msg_len) for c < columns, msg_len <= r < msg_len + rnd_len; else zero.
// Thread i (2-D grid: i = gid.x + gid.y * nwg.x * WG) writes out word i; every word below n_words.
// Bindings: 0 src (EF entries, read), 1 out (write), 2 params. Ranges: n_words = 4 << (log_rows + log_cols) < 2^32,
// every src word read below 2^32 (kernels/mask_matrix.py checks both).

struct Params {
    uint n_words; uint log_rows; uint log_cols; uint columns; uint msg_at; uint msg_stride; uint msg_len;
    uint rnd_at; uint rnd_stride; uint rnd_len; uint reversed; uint _pad0;
};

constant constexpr uint WG = 256u;

// g's log_rows low bits reversed when reversed = 1 (g < 2^log_rows), else g.
uint row_of(uint g, constant Params& params) {
    if (params.reversed == 0u) {
        return g;
    }
    return (reverse_bits(g) >> 1u) >> (31u - params.log_rows);  // two shifts: none reaches 32 (log_rows <= 31)
}

kernel void mask_matrix(device const uint* src [[buffer(0)]], device uint* out [[buffer(1)]],
                        constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                        uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    uint entry = i >> 2u;
    uint word = i & 3u;
    uint c = entry & ((1u << params.log_cols) - 1u);
    uint r = row_of(entry >> params.log_cols, params);
    uint value = 0u;
    if (c < params.columns) {
        if (r < params.msg_len) {
            value = src[((params.msg_at + c * params.msg_stride + r) << 2u) + word];
        } else if (r < params.msg_len + params.rnd_len) {
            value = src[((params.rnd_at + c * params.rnd_stride + (r - params.msg_len)) << 2u) + word];
        }
    }
    out[i] = value;
}
