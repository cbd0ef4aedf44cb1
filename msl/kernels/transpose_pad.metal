// Commit matrix: the (H, w) row-major word matrix whose column j holds table entries j*2^lc .. (j+1)*2^lc - 1
// as coefficients (lc = log_coeffs = nv - k), rows >= 2^lc written as zero (nothing relies on zero-initialised
// memory). An entry is 2^log_elem words (1 base, 4 EF as c0..c3), so w = 2^(k + log_elem) = 2^log_w.
// Thread i (2-D grid: i = gid.x + gid.y * threadgroups_per_grid.x * WG) writes output word i: row i >> log_w.
// Bindings: 0 table (read), 1 matrix (write), 2 params. Shift amounts stay below 32: log_h + log_w < 32.

struct Params { uint n_words; uint log_w; uint log_coeffs; uint log_elem; };

constant uint WG [[function_constant(0)]];

kernel void transpose_pad(device const uint* table [[buffer(0)]], device uint* matrix [[buffer(1)]],
                          constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                          uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    uint row = i >> params.log_w;
    uint col_word = i & ((1u << params.log_w) - 1u);
    uint column = col_word >> params.log_elem;               // which chunk of the table
    uint coeff = col_word & ((1u << params.log_elem) - 1u);  // which extension coefficient
    uint value = 0u;
    if (row < (1u << params.log_coeffs)) {
        value = table[(((column << params.log_coeffs) + row) << params.log_elem) + coeff];
    }
    matrix[i] = value;
}
