// Commit matrix: the (H, w) row-major word matrix whose column j holds table entries j*2^lc .. (j+1)*2^lc - 1
// as coefficients (lc = log_coeffs = nv - k), rows >= 2^lc written as zero (nothing relies on zero-initialised
// memory). An entry is 2^log_elem words (1 base, 4 EF as c0..c3), so w = 2^(k + log_elem) = 2^log_w.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) writes output word i: row i >> log_w.
// Bindings: 0 table (read), 1 matrix (write), 2 params.

struct Params { n_words: u32, log_w: u32, log_coeffs: u32, log_elem: u32 }

@group(0) @binding(0) var<storage, read> table: array<u32>;
@group(0) @binding(1) var<storage, read_write> matrix: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@id(0) override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn transpose_pad(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    let row = i >> params.log_w;
    let col_word = i & ((1u << params.log_w) - 1u);
    let column = col_word >> params.log_elem;               // which chunk of the table
    let coeff = col_word & ((1u << params.log_elem) - 1u);  // which extension coefficient
    var value = 0u;
    if (row < (1u << params.log_coeffs)) {
        value = table[(((column << params.log_coeffs) + row) << params.log_elem) + coeff];
    }
    matrix[i] = value;
}
