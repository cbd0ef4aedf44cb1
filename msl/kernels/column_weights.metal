// requires: bb_ext4
// A batch's claims as weights on the stacked polynomial (the tables' openings): for row i < len = 2^m of the batch's
// point (eq table E) and each claim c with descriptor (off, log_stride, next, power):
//   W[off + (i << log_stride)] += coefficients[power] * (next ? N[i] : E[i]), N[i] = E[i - 1] (i >= 1) + E[i] (i = len - 1)
// (the repeat-last successor, ref.shift). Thread i does every claim of its row in order, so claims on one column
// never race. Bindings: 0 weights (EF, whole), 1 eq (EF), 2 desc (uint4 per claim), 3 coefficients (EF), 4 params.
// Launch: one thread per row on a 2-D grid. Contract: every off + ((len - 1) << log_stride) inside W. Shifts are
// taken mod 32, as in WGSL. Words Montgomery in [0, P).

struct Params { uint len; uint n_claims; uint _pad0; uint _pad1; };

constant constexpr uint WG = 256u;

kernel void column_weights(device uint4* weights [[buffer(0)]], device const uint4* eq [[buffer(1)]],
                           device const uint4* desc [[buffer(2)]], device const uint4* coefficients [[buffer(3)]],
                           constant Params& params [[buffer(4)]], uint3 gid [[thread_position_in_grid]],
                           uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    uint4 e = eq[i];
    uint4 nx = i >= 1u ? eq[i - 1u] : uint4(0u);
    if (i == params.len - 1u) {
        nx = ef_add(nx, e);
    }
    for (uint c = 0u; c < params.n_claims; c++) {
        uint4 d = desc[c];
        uint at = d.x + (i << (d.y & 31u));
        weights[at] = ef_add(weights[at], ef_mul(coefficients[d.w], d.z != 0u ? nx : e));
    }
}
