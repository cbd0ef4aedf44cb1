// Interleaved columns (the hiding PCS's encoding, Backend.interleave_columns): out is 2^k columns of
// 2^log_rows entries; entry e = (b << log_rows) + r of column b holds table[b * m + r] for r < m,
// randomness[rnd_base + b * t + r - m] for m <= r < m + t, zero below (the randomness starts at entry rnd_base
// of its binding). An entry is 2^log_elem words (1 base, 4 EF).
// Windowed: this launch writes the n_words words of out's entries out_first.. (global), bound as the window
// ``out``; the table binding holds the table's entries from tbl_base (global) on, which include every entry this
// window reads (the caller picks that window); randomness is bound whole (entries before rnd_base unread).
// Thread i (2-D grid: i = gid.x + gid.y * nwg.x * WG) writes window word i.
// Bindings: 0 table (read), 1 randomness (read), 2 out window (write), 3 params.

struct Params { uint n_words; uint log_elem; uint out_first; uint log_rows; uint m; uint t; uint tbl_base;
                uint rnd_base; };

constant constexpr uint WG = 256u;

kernel void interleave_columns(device const uint* table [[buffer(0)]], device const uint* randomness [[buffer(1)]],
                               device uint* out [[buffer(2)]], constant Params& params [[buffer(3)]],
                               uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    uint entry = params.out_first + (i >> params.log_elem);
    uint word = i & ((1u << params.log_elem) - 1u);
    uint column = entry >> params.log_rows;
    uint row = entry & ((1u << params.log_rows) - 1u);
    uint value = 0u;
    if (row < params.m) {
        value = table[((column * params.m + row - params.tbl_base) << params.log_elem) + word];
    } else if (row < params.m + params.t) {
        value = randomness[((params.rnd_base + column * params.t + row - params.m) << params.log_elem) + word];
    }
    out[i] = value;
}
