// requires: bb_ext4 variable_order
// Sumcheck fold (bind x_0 := r; x_{n-1} with SUFFIX = 1; r = challenge[0] where the transcript drew it) of a table
// and its weights, i < len:
//   table_out[out_off + i] = g_lo + r (g_hi - g_lo),  weights_out[out_off + i] = W_lo + r (W_hi - W_lo),
// with g_lo = table_lo[lo_off + s i], g_hi = table_hi[hi_off + s i], s = 1 + SUFFIX (same offsets for W). Entry points: fold_base
// (table base words), fold_ext (table EF uint4); outputs are EF. Thread i = gid.x + gid.y * nwg.x * WG (2-D grid).
// Bindings: 0 table_lo, 1 table_hi, 2 weights_lo, 3 weights_hi, 4 table_out, 5 weights_out, 6 challenge (EF),
// 7 params. Words in [0, P).

struct Params { uint len; uint lo_off; uint hi_off; uint out_off; };

constant constexpr uint WG = 256u;

void fold_weights(uint i, uint4 r, device const uint4* weights_lo, device const uint4* weights_hi,
                  device uint4* weights_out, constant Params& params) {
    uint4 w_lo = weights_lo[params.lo_off + i * (1u + SUFFIX)];
    uint4 w_hi = weights_hi[params.hi_off + i * (1u + SUFFIX)];
    weights_out[params.out_off + i] = ef_add(w_lo, ef_mul(ef_sub(w_hi, w_lo), r));
}

kernel void fold_base(device const uint* table_lo_base [[buffer(0)]], device const uint* table_hi_base [[buffer(1)]],
                      device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                      device uint4* table_out [[buffer(4)]], device uint4* weights_out [[buffer(5)]],
                      device const uint4* challenge [[buffer(6)]], constant Params& params [[buffer(7)]],
                      uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    uint4 r = challenge[0];
    uint g_lo = table_lo_base[params.lo_off + i * (1u + SUFFIX)];
    uint g_hi = table_hi_base[params.hi_off + i * (1u + SUFFIX)];
    table_out[params.out_off + i] = ef_add(uint4(g_lo, 0u, 0u, 0u), ef_mul_base(r, bb_sub(g_hi, g_lo)));
    fold_weights(i, r, weights_lo, weights_hi, weights_out, params);
}

kernel void fold_ext(device const uint4* table_lo_ext [[buffer(0)]], device const uint4* table_hi_ext [[buffer(1)]],
                     device const uint4* weights_lo [[buffer(2)]], device const uint4* weights_hi [[buffer(3)]],
                     device uint4* table_out [[buffer(4)]], device uint4* weights_out [[buffer(5)]],
                     device const uint4* challenge [[buffer(6)]], constant Params& params [[buffer(7)]],
                     uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    uint4 r = challenge[0];
    uint4 g_lo = table_lo_ext[params.lo_off + i * (1u + SUFFIX)];
    uint4 g_hi = table_hi_ext[params.hi_off + i * (1u + SUFFIX)];
    table_out[params.out_off + i] = ef_add(g_lo, ef_mul(ef_sub(g_hi, g_lo), r));
    fold_weights(i, r, weights_lo, weights_hi, weights_out, params);
}
