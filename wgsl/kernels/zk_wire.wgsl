// requires: challenger bb_ext4
// One round message of the hiding PCS's masked sumcheck (upstream p3_sumcheck::zk, Construction 6.3), made on the
// device from the round's sums: with the previous round's mask m (mask_len EF coefficients; 0 on a batch's first
// round) and its challenge g,
//   past <- past + sum_{i < mask_len} m[i] g^i                (scratch, EF at past_at)
//   wire <- template; wire[0] += live * past + e * c0; wire[1] += e * c_inf
// c0, c_inf: the round's sums (proof, 2 EF at sums_at); scratch at consts_at holds template (wire_len EF), live,
// e and m, in that order; g: scratch EF at gamma_at; the wire goes to proof, wire_len EF at wire_at (wire_len >= 2).
// Then the transcript program params.ops[0 .. n_ops) runs as the epilogue (challenger.wgsl: the wire observed, the
// next challenge or proof-of-work reset; no EXPAND), so the round message needs no transcript launch of its own.
// Offsets in words, proof ones relative to the window bound. Bindings: 0 scratch (whole), 1 proof (a window holding
// the sums, the wire and every word the ops touch), 2 p2_rc, 3 params. Launch: one workgroup of WG threads (thread
// 0 makes the wire). Words Montgomery in [0, P).

struct Params { sums_at: u32, wire_at: u32, past_at: u32, gamma_at: u32, consts_at: u32, wire_len: u32,
                mask_len: u32, _pad0: u32, n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 64u;

@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(3) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) {}

fn scratch_ef(at: u32) -> vec4<u32> {
    return vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
}

fn proof_ef(at: u32) -> vec4<u32> {
    return vec4<u32>(proof[at], proof[at + 1u], proof[at + 2u], proof[at + 3u]);
}

fn set_proof_ef(at: u32, v: vec4<u32>) {
    proof[at] = v.x;
    proof[at + 1u] = v.y;
    proof[at + 2u] = v.z;
    proof[at + 3u] = v.w;
}

fn make_wire() {
    let live_at = params.consts_at + 4u * params.wire_len;
    let mask_at = live_at + 8u;
    var past = scratch_ef(params.past_at);
    if (params.mask_len != 0u) {
        let g = scratch_ef(params.gamma_at);
        var acc = vec4<u32>(0u);
        for (var i = params.mask_len; i > 0u; i--) {  // Horner, highest coefficient first
            acc = ef_add(ef_mul(acc, g), scratch_ef(mask_at + 4u * (i - 1u)));
        }
        past = ef_add(past, acc);
        scratch[params.past_at] = past.x;
        scratch[params.past_at + 1u] = past.y;
        scratch[params.past_at + 2u] = past.z;
        scratch[params.past_at + 3u] = past.w;
    }
    let live = scratch_ef(live_at);
    let e = scratch_ef(live_at + 4u);
    for (var i = 0u; i < params.wire_len; i++) {
        set_proof_ef(params.wire_at + 4u * i, scratch_ef(params.consts_at + 4u * i));
    }
    let h0 = ef_add(ef_mul(live, past), ef_mul(e, proof_ef(params.sums_at)));
    set_proof_ef(params.wire_at, ef_add(proof_ef(params.wire_at), h0));
    let h2 = ef_mul(e, proof_ef(params.sums_at + 4u));
    set_proof_ef(params.wire_at + 4u, ef_add(proof_ef(params.wire_at + 4u), h2));
}

@compute @workgroup_size(WG)
fn zk_wire(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        make_wire();
    }
    storageBarrier();
    workgroupBarrier();
    transcript_run(lid, WG);
}
