// Commit matrix: the (H, w) row-major word matrix whose column j holds table entries j*2^lc .. (j+1)*2^lc - 1
// as coefficients (lc = log_coeffs = nv - k), rows >= 2^lc written as zero (nothing relies on zero-initialised
// memory). ROW_MAJOR = 1 (the p3-whir profile's layout): row t < 2^lc holds entries t*2^k .. t*2^k + 2^k - 1 instead
// (the table is the leading rows already; only padding and the row order change). An entry is 2^log_elem words (1 base, 4 EF as c0..c3), so w = 2^(k + log_elem) = 2^log_w.
// Windowed: this launch writes the n_words words of output rows row_base.. (global), and output row g holds
// natural row rev_{log_rev}(g) (log_rev = log H: bit-reversed order, the NTT's input; 0: natural order). The
// table binding holds entries tbl_first .. tbl_first + tbl_count - 1; a word whose entry lies outside it is
// not written, and padding words are written only by the launch whose tbl_first is 0.
// Thread i (2-D grid: i = gid.x + gid.y * threadgroups_per_grid.x * WG) writes window word i.
// Bindings: 0 table (read), 1 matrix window (write), 2 params. Shift amounts stay below 32.

struct Params {
    uint n_words; uint log_w; uint log_coeffs; uint log_elem;
    uint row_base; uint log_rev; uint tbl_first; uint tbl_count;
};

constant uint WG [[function_constant(0)]];
constant uint ROW_MAJOR [[function_constant(1)]];

kernel void transpose_pad(device const uint* table [[buffer(0)]], device uint* matrix [[buffer(1)]],
                          constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                          uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    uint row = params.row_base + (i >> params.log_w);
    if (params.log_rev != 0u) {
        row = reverse_bits(row) >> (32u - params.log_rev);  // log_rev >= 1: the shift stays below 32
    }
    uint col_word = i & ((1u << params.log_w) - 1u);
    uint column = col_word >> params.log_elem;               // which chunk of the table
    uint coeff = col_word & ((1u << params.log_elem) - 1u);  // which extension coefficient
    if (row < (1u << params.log_coeffs)) {
        uint natural = ROW_MAJOR == 1u ? (row << (params.log_w - params.log_elem)) + column
                                       : (column << params.log_coeffs) + row;
        uint entry = natural - params.tbl_first;  // wraps when before the window
        if (entry < params.tbl_count) {
            matrix[i] = table[(entry << params.log_elem) + coeff];
        }
    } else if (params.tbl_first == 0u) {
        matrix[i] = 0u;
    }
}
