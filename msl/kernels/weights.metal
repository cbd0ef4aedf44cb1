// requires: bb_ext4
// Constraint weights, factored: for b = base + i, i < len, hi = b >> log_lo, lo = b & (2^log_lo - 1):
//   W[i] = (accumulate ? W[i] : 0) + sum_e eq_hi[e][hi] eq_lo[e][lo] + sum_m sel_hi[m][hi] sel_lo[m][lo]
// eq tables EF (the coefficient folded into eq_hi); sel_lo base (v^lo), sel_hi EF (c v^(hi 2^log_lo)). Thread i on a
// 2-D grid. Bindings: 0 out_weights (EF window from b = base, updated in place), 1 eq_lo (n_eq x 2^log_lo EF),
// 2 eq_hi (n_eq x hi_len EF), 3 sel_lo (n_sel x 2^log_lo base), 4 sel_hi (n_sel x hi_len EF), 5 params.
// log_lo is taken mod 32, as WGSL shifts do. Words Montgomery in [0, P).

struct Params { uint len; uint base; uint log_lo; uint accumulate; uint n_eq; uint n_sel; uint hi_len; uint _pad; };

constant constexpr uint WG = 256u;

kernel void weights(device uint4* out_weights [[buffer(0)]], device const uint4* eq_lo [[buffer(1)]],
                    device const uint4* eq_hi [[buffer(2)]], device const uint* sel_lo [[buffer(3)]],
                    device const uint4* sel_hi [[buffer(4)]], constant Params& params [[buffer(5)]],
                    uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    uint log_lo = params.log_lo & 31u;
    uint b = params.base + i;
    uint hi = b >> log_lo;
    uint lo_len = 1u << log_lo;
    uint lo = b & (lo_len - 1u);
    uint4 acc = params.accumulate != 0u ? out_weights[i] : uint4(0u);
    for (uint e = 0u; e < params.n_eq; e++) {
        acc = ef_add(acc, ef_mul(eq_hi[e * params.hi_len + hi], eq_lo[e * lo_len + lo]));
    }
    for (uint m = 0u; m < params.n_sel; m++) {
        acc = ef_add(acc, ef_mul_base(sel_hi[m * params.hi_len + hi], sel_lo[m * lo_len + lo]));
    }
    out_weights[i] = acc;
}
