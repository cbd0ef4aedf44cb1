// requires: bb_ext4
// An out-of-domain answer of the hiding PCS's code switch (upstream padded_ood), made on the device: with the
// residual's univariate evaluation a = sum_b f[b] z^b at the sampled z,
//   answer = a + z^(2^log_n) * sum_{i < n_coeffs} c[i] z^i
// a: proof EF at at_at; z: scratch EF at z_at; c: scratch, n_coeffs EF at consts_at (the mask message); the answer
// goes to proof, EF at out_at. Offsets in words. Bindings: 0 scratch, 1 proof (both whole), 2 params. Launch: one
// threadgroup of one thread. Words Montgomery in [0, P).

struct Params { uint at_at; uint z_at; uint consts_at; uint n_coeffs; uint log_n; uint out_at; uint _pad0;
                uint _pad1; };

static uint4 scratch_ef(device const uint* scratch, uint at) {
    return uint4(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

kernel void zk_ood(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                   constant Params& params [[buffer(2)]]) {
    uint4 z = scratch_ef(scratch, params.z_at);
    uint4 acc = uint4(0u);
    for (uint i = params.n_coeffs; i > 0u; i--) {  // Horner, highest coefficient first
        acc = ef_add(ef_mul(acc, z), scratch_ef(scratch, params.consts_at + 4u * (i - 1u)));
    }
    uint4 shift = z;
    for (uint s = 0u; s < params.log_n; s++) {
        shift = ef_mul(shift, shift);
    }
    uint4 a = uint4(proof[params.at_at], proof[params.at_at + 1u], proof[params.at_at + 2u], proof[params.at_at + 3u]);
    uint4 answer = ef_add(a, ef_mul(shift, acc));
    proof[params.out_at] = answer.x;
    proof[params.out_at + 1u] = answer.y;
    proof[params.out_at + 2u] = answer.z;
    proof[params.out_at + 3u] = answer.w;
}
