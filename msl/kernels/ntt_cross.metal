// requires: bb_field
// One radix-2 DIT stage across two windows of a split NTT matrix (ntt.metal's stage s when the half-span 2^s
// is at least a window): lo holds rows a .. a + R - 1 and hi rows a + 2^s .. (same column layout, w = 2^log_w
// words per row), a at position k0 of its half-block; row r of the pair uses twiddle tw[tw_base + r], the
// binding placed so that tw[tw_base] = omega_{2^(s+1)}^k0.
// Thread i (2-D grid: i = gid.x + gid.y * threadgroups_per_grid.x * WG) owns word i of both windows.
// Bindings: 0 lo (read_write), 1 hi (read_write), 2 tw (read), 3 params.

struct Params { uint n; uint log_w; uint tw_base; uint _pad0; };

constant uint WG [[function_constant(0)]];

kernel void ntt_cross(device uint* lo [[buffer(0)]], device uint* hi [[buffer(1)]],
                      device const uint* tw [[buffer(2)]], constant Params& params [[buffer(3)]],
                      uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    uint a = lo[i];
    uint t = bb_mul(hi[i], tw[params.tw_base + (i >> params.log_w)]);
    lo[i] = bb_add(a, t);
    hi[i] = bb_sub(a, t);
}
