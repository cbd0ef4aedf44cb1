// Interleaved columns (the hiding PCS's encoding, Backend.interleave_columns): out is 2^k columns of
// 2^log_rows entries; entry e = (b << log_rows) + r of column b holds table[b * m + r] for r < m,
// randomness[rnd_base + b * t + r - m] for m <= r < m + t, zero below (the randomness starts at entry rnd_base
// of its binding). An entry is 2^log_elem words (1 base, 4 EF).
// Windowed: this launch writes the n_words words of out's entries out_first.. (global), bound as the window
// ``out``; the table binding holds the table's entries from tbl_base (global) on, which include every entry this
// window reads (the caller picks that window); randomness is bound whole (entries before rnd_base unread).
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) writes window word i.
// Bindings: 0 table (read), 1 randomness (read), 2 out window (write), 3 params.

struct Params { n_words: u32, log_elem: u32, out_first: u32, log_rows: u32, m: u32, t: u32, tbl_base: u32,
                rnd_base: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read> randomness: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn interleave_columns(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    let entry = params.out_first + (i >> params.log_elem);
    let word = i & ((1u << params.log_elem) - 1u);
    let column = entry >> params.log_rows;
    let row = entry & ((1u << params.log_rows) - 1u);
    var value = 0u;
    if (row < params.m) {
        value = table[((column * params.m + row - params.tbl_base) << params.log_elem) + word];
    } else if (row < params.m + params.t) {
        value = randomness[((params.rnd_base + column * params.t + row - params.m) << params.log_elem) + word];
    }
    out[i] = value;
}
