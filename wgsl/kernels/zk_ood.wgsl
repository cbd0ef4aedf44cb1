// requires: challenger bb_ext4
// An out-of-domain answer of the hiding PCS's code switch (upstream padded_ood), made on the device: with the
// residual's univariate evaluation a = sum_b f[b] z^b at the sampled z,
//   answer = a + z^(2^log_n) * sum_{i < n_coeffs} c[i] z^i
// a: proof EF at at_at; z: scratch EF at z_at; c: scratch, n_coeffs EF at consts_at (the mask message); the answer
// goes to proof, EF at out_at. Then the transcript program params.ops[0 .. n_ops) runs as the epilogue
// (challenger.wgsl: the answer observed, the next point sampled and expanded, ...), so an answer needs no transcript
// launch of its own. Offsets in words, proof ones relative to the window bound. Bindings: 0 scratch (whole), 1 proof
// (a window holding a, the answer and every word the ops touch), 2 points (whole), 3 p2_rc, 4 params. Launch: one
// workgroup of WG threads (thread 0 makes the answer). Words Montgomery in [0, P).

struct Params { at_at: u32, z_at: u32, consts_at: u32, n_coeffs: u32, log_n: u32, out_at: u32, _pad0: u32,
                _pad1: u32, n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(4) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) { points[i] = v; }

fn scratch_ef(at: u32) -> vec4<u32> {
    return vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

fn make_answer() {
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

@compute @workgroup_size(WG)
fn zk_ood(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        make_answer();
    }
    storageBarrier();
    workgroupBarrier();
    transcript_run(lid, WG);
}
