// requires: bb_field
// Calibration kernels: the ceilings other kernels are measured against.
// copy_vec4: dst[i] = src[i] for i < n (16-byte elements, 4 per thread, coalesced); bindings 0 src, 1 dst,
// 2 params.
// mul_chain: each thread runs 8 independent chains of `rounds` Montgomery products (x = x * y, with a
// per-thread y) and writes their sum, so the result depends on every product; bindings 0 chain_out, 1 params.
// Launch: 2-D grid; copy_vec4 one thread per 4 elements, mul_chain one thread per output word.

struct Params { uint n; uint rounds; uint _pad0; uint _pad1; };

constant constexpr uint WG = 256u;

kernel void copy_vec4(device const uint4* src [[buffer(0)]], device uint4* dst [[buffer(1)]],
                      constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                      uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    uint stride = nwg.x * nwg.y * WG;
    for (uint k = 0u; k < 4u; k++) {
        uint i = t + k * stride;
        if (i < params.n) {
            dst[i] = src[i];
        }
    }
}

kernel void mul_chain(device uint* chain_out [[buffer(0)]], constant Params& params [[buffer(1)]],
                      uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    uint y = (t * 2654435761u) % BB_P;
    uint x0 = t % BB_P; uint x1 = (t + 1u) % BB_P; uint x2 = (t + 2u) % BB_P; uint x3 = (t + 3u) % BB_P;
    uint x4 = (t + 4u) % BB_P; uint x5 = (t + 5u) % BB_P; uint x6 = (t + 6u) % BB_P; uint x7 = (t + 7u) % BB_P;
    for (uint r = 0u; r < params.rounds; r++) {
        x0 = bb_mul(x0, y); x1 = bb_mul(x1, y); x2 = bb_mul(x2, y); x3 = bb_mul(x3, y);
        x4 = bb_mul(x4, y); x5 = bb_mul(x5, y); x6 = bb_mul(x6, y); x7 = bb_mul(x7, y);
    }
    chain_out[t] = bb_add(bb_add(bb_add(x0, x1), bb_add(x2, x3)), bb_add(bb_add(x4, x5), bb_add(x6, x7)));
}
