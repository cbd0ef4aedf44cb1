// In-place bit-reversal of the rows of an (H, w) row-major word matrix (H = 2^log_h, w = 2^log_w): the input
// permutation of the DIT NTT in ntt.metal. Thread i (2-D grid: i = gid.x + gid.y * nwg.x * WG) owns word
// (row r = i >> log_w, column i & (w - 1)) and swaps it with row rev(r) when r < rev(r).
// Bindings: 0 data (read_write), 1 params.

struct Params { uint n_words; uint log_w; uint log_h; uint _pad; };

constant uint WG [[function_constant(0)]];

kernel void ntt_bitrev(device uint* data [[buffer(0)]], constant Params& params [[buffer(1)]],
                       uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    uint row = i >> params.log_w;
    // rev = reverse_bits(row) >> (32 - log_h) in two steps, so no shift reaches 32 (log_h <= 31)
    uint rev = (reverse_bits(row) >> 1u) >> (31u - params.log_h);
    if (row < rev) {
        uint j = (rev << params.log_w) + (i & ((1u << params.log_w) - 1u));
        uint a = data[i];
        data[i] = data[j];
        data[j] = a;
    }
}
