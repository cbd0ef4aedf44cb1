// requires: bb_ext4
// Second stage of every EF reduction: out[j] = sum over g < count of values[g * stride + j], for j < stride.
// Threadgroup j (stride of them, 256 threads) sums column j: a strided loop, then shuffles within each simd-group
// and the 8 simd-group sums in thread 0. Bindings: 0 values (EF), 1 out (EF, stride entries), 2 params.
// Words Montgomery in [0, P).

struct Params { uint count; uint stride; uint _pad0; uint _pad1; };

constant constexpr uint WG = 256u;

kernel void ef_reduce(device const uint4* values [[buffer(0)]], device uint4* out [[buffer(1)]],
                      constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                      uint lane [[thread_index_in_simdgroup]], uint sg [[simdgroup_index_in_threadgroup]],
                      uint3 wid [[threadgroup_position_in_grid]]) {
    threadgroup uint4 red[8];
    uint j = wid.x;
    uint4 acc = uint4(0u);
    for (uint g = lid; g < params.count; g += WG) {
        acc = ef_add(acc, values[g * params.stride + j]);
    }
    for (ushort d = 16; d > 0; d >>= 1) {
        acc = ef_add(acc, simd_shuffle_xor(acc, d));
    }
    if (lane == 0u) {
        red[sg] = acc;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0u) {
        acc = red[0];
        for (uint s = 1u; s < WG / 32u; s++) {
            acc = ef_add(acc, red[s]);
        }
        out[j] = acc;
    }
}
