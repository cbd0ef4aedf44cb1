// requires: bb_ext4
// Small transcript-dependent tables, one thread each (inputs are a handful of EF words in scratch):
// expand_point: points[dst + t] = z^(2^(n-1-t)) for t < n, z = scratch_in EF at src (an OOD point, x_0 first).
// ef_powers: scratch EF at dst + i = x^i for i < n + valid, 0 for the rest of n + n_slots, x = scratch EF at src;
//   valid = min(word count_at of scratch, n_slots), or n_slots when count_at is 0xffffffff. src, dst count EF
//   elements, count_at words. Bindings: expand_point 0 scratch_in, 1 points, 2 params; ef_powers 0 scratch_ext,
//   1 params. Launch: one threadgroup of one thread.

struct Params { uint src; uint dst; uint n; uint n_slots; uint count_at; uint _pad0; uint _pad1; uint _pad2; };

// Word k (< 4) of an EF element.
uint ef_word(uint4 v, uint k) {
    return k == 0u ? v.x : k == 1u ? v.y : k == 2u ? v.z : v.w;
}

kernel void expand_point(device const uint4* scratch_in [[buffer(0)]], device uint4* points [[buffer(1)]],
                         constant Params& params [[buffer(2)]]) {
    uint4 current = scratch_in[params.src];
    for (uint t = params.n; t > 0u; t--) {
        points[params.dst + t - 1u] = current;
        current = ef_mul(current, current);
    }
}

kernel void ef_powers(device uint4* scratch_ext [[buffer(0)]], constant Params& params [[buffer(1)]]) {
    uint valid = params.n_slots;
    if (params.count_at != 0xffffffffu) {
        valid = min(ef_word(scratch_ext[params.count_at >> 2u], params.count_at & 3u), params.n_slots);
    }
    uint4 x = scratch_ext[params.src];
    uint4 acc = uint4(BB_R, 0u, 0u, 0u);
    for (uint i = 0u; i < params.n + params.n_slots; i++) {
        scratch_ext[params.dst + i] = i < params.n + valid ? acc : uint4(0u);
        acc = ef_mul(acc, x);
    }
}
