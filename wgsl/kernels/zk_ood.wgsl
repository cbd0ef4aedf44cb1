// requires: bb_ext4
// An out-of-domain answer of the hiding PCS's code switch (upstream padded_ood), made on the device: with the
// residual's univariate evaluation a = sum_b f[b] z^b at the sampled z,
//   answer = a + z^(2^log_n) * sum_{i < n_coeffs} c[i] z^i
// a: proof EF at at_at; z: scratch EF at z_at; c: scratch, n_coeffs EF at consts_at (the mask message); the answer
// goes to proof, EF at out_at. Offsets in words. Bindings: 0 scratch, 1 proof (both whole), 2 params. Launch: one
// workgroup of one thread. Words Montgomery in [0, P).

struct Params { at_at: u32, z_at: u32, consts_at: u32, n_coeffs: u32, log_n: u32, out_at: u32, _pad0: u32,
                _pad1: u32 }

@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

fn scratch_ef(at: u32) -> vec4<u32> {
    return vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

@compute @workgroup_size(1)
fn zk_ood() {
    let z = scratch_ef(params.z_at);
    var acc = vec4<u32>(0u);
    for (var i = params.n_coeffs; i > 0u; i--) {  // Horner, highest coefficient first
        acc = ef_add(ef_mul(acc, z), scratch_ef(params.consts_at + 4u * (i - 1u)));
    }
    var shift = z;
    for (var s = 0u; s < params.log_n; s++) {
        shift = ef_mul(shift, shift);
    }
    let a = vec4<u32>(proof[params.at_at], proof[params.at_at + 1u], proof[params.at_at + 2u],
                      proof[params.at_at + 3u]);
    let answer = ef_add(a, ef_mul(shift, acc));
    proof[params.out_at] = answer.x;
    proof[params.out_at + 1u] = answer.y;
    proof[params.out_at + 2u] = answer.z;
    proof[params.out_at + 3u] = answer.w;
}
