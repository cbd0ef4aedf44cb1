// Commit matrix: the (H, w) row-major word matrix whose column j holds table entries j*2^lc .. (j+1)*2^lc - 1
// as coefficients (lc = log_coeffs = nv - k), rows >= 2^lc written as zero (nothing relies on zero-initialised
// memory). ROW_MAJOR = 1 (the p3-whir profile's layout): row t < 2^lc holds entries t*2^k .. t*2^k + 2^k - 1 instead
// (the table is the leading rows already; only padding and the row order change). An entry is 2^log_elem words (1 base, 4 EF as c0..c3), so w = 2^(k + log_elem) = 2^log_w.
// Windowed: this launch writes the n_words words of output rows row_base.. (global), and output row g holds
// natural row rev_{log_rev}(g) (log_rev = log H: bit-reversed order, the NTT's input; 0: natural order). The
// table binding holds entries tbl_first .. tbl_first + tbl_count - 1; a word whose entry lies outside it is
// not written, and padding words are written only by the launch whose tbl_first is 0.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) writes window word i.
// Bindings: 0 table (read), 1 matrix window (write), 2 params.

struct Params {
    n_words: u32, log_w: u32, log_coeffs: u32, log_elem: u32,
    row_base: u32, log_rev: u32, tbl_first: u32, tbl_count: u32,
}

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read_write> matrix: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@id(0) override WG: u32 = 256u;
@id(1) override ROW_MAJOR: u32 = 0u;

@compute @workgroup_size(WG)
fn transpose_pad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    var row = params.row_base + (i >> params.log_w);
    if (params.log_rev != 0u) {
        row = reverseBits(row) >> (32u - params.log_rev);  // log_rev >= 1: the shift stays below 32
    }
    let col_word = i & ((1u << params.log_w) - 1u);
    let column = col_word >> params.log_elem;               // which chunk of the table
    let coeff = col_word & ((1u << params.log_elem) - 1u);  // which extension coefficient
    if (row < (1u << params.log_coeffs)) {
        let natural = select((column << params.log_coeffs) + row, (row << (params.log_w - params.log_elem)) + column,
                             ROW_MAJOR == 1u);
        let entry = natural - params.tbl_first;  // wraps when before the window
        if (entry < params.tbl_count) {
            matrix[i] = table[(entry << params.log_elem) + coeff];
        }
    } else if (params.tbl_first == 0u) {
        matrix[i] = 0u;
    }
}
