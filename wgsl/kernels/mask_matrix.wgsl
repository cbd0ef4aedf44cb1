// A hiding-PCS mask oracle's coefficient matrix from mask draws already on the device: out is 2^log_rows rows of
// 2^log_cols EF entries (4 words c0..c3), row-major. Entry e = (g << log_cols) + c of row g, column c, with
// r = rev_{log_rows}(g) (reversed = 1) or g: src entry msg_at + c msg_stride + r for c < columns, r < msg_len;
// src entry rnd_at + c rnd_stride + (r - msg_len) for c < columns, msg_len <= r < msg_len + rnd_len; else zero.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) writes out word i; every word below n_words.
// Bindings: 0 src (EF entries, read), 1 out (write), 2 params. Ranges: n_words = 4 << (log_rows + log_cols) < 2^32,
// every src word read below 2^32 (kernels/mask_matrix.py checks both).

struct Params {
    n_words: u32, log_rows: u32, log_cols: u32, columns: u32, msg_at: u32, msg_stride: u32, msg_len: u32,
    rnd_at: u32, rnd_stride: u32, rnd_len: u32, reversed: u32, _pad0: u32
}

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

// g's log_rows low bits reversed when reversed = 1 (g < 2^log_rows), else g.
fn row_of(g: u32) -> u32 {
    if (params.reversed == 0u) {
        return g;
    }
    return (reverseBits(g) >> 1u) >> (31u - params.log_rows);  // two shifts: none reaches 32 (log_rows <= 31)
}

@compute @workgroup_size(WG)
fn mask_matrix(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    let entry = i >> 2u;
    let word = i & 3u;
    let c = entry & ((1u << params.log_cols) - 1u);
    let r = row_of(entry >> params.log_cols);
    var value = 0u;
    if (c < params.columns) {
        if (r < params.msg_len) {
            value = src[((params.msg_at + c * params.msg_stride + r) << 2u) + word];
        } else if (r < params.msg_len + params.rnd_len) {
            value = src[((params.rnd_at + c * params.rnd_stride + (r - params.msg_len)) << 2u) + word];
        }
    }
    out[i] = value;
}
