// requires: bb_ext4
// Next-row weights from an eq sum S of points sharing one window (Backend.add_next_weights): for b = base + i,
// i < len, r = (b >> log_low) & mask (the window's local row): W[i] += (r >= 1 ? S[b - 2^log_low] : 0)
// + (r == mask ? S[b] : 0), the repeat-last successor (ref.shift). S is bound as two windows of win entries:
// cur = S[base, base + win) and prev, S[b - 2^log_low] being prev[off] (off = i + prev_shift < win) or cur[off - win].
// Bindings: 0 out_weights (EF window from b = base, in place), 1 prev, 2 cur (EF), 3 params. Thread i, 2-D grid.
// log_low is taken mod 32, as WGSL shifts do. Words Montgomery in [0, P).

struct Params { uint len; uint base; uint log_low; uint mask; uint prev_shift; uint win; uint _pad0; uint _pad1; };

constant constexpr uint WG = 256u;

kernel void next_weights(device uint4* out_weights [[buffer(0)]], device const uint4* prev [[buffer(1)]],
                         device const uint4* cur [[buffer(2)]], constant Params& params [[buffer(3)]],
                         uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    uint r = ((params.base + i) >> (params.log_low & 31u)) & params.mask;
    uint4 acc = out_weights[i];
    if (r >= 1u) {
        uint off = i + params.prev_shift;
        acc = ef_add(acc, off < params.win ? prev[off] : cur[off - params.win]);
    }
    if (r == params.mask) {
        acc = ef_add(acc, cur[i]);
    }
    out_weights[i] = acc;
}
