// requires: challenger
// A transcript program (challenger.wgsl's ops) on its own, for ops that no other launch can carry: the workgroup
// runs params.ops[0 .. n_ops) on the challenger in scratch (thread 0; all of them for a SORT). Bindings: 0 scratch (whole), 1 proof (a window holding every
// proof word the ops touch; offsets are relative to it), 2 points (whole), 3 p2_rc, 4 params. Launch: one
// workgroup. Words Montgomery.

struct Params { n_ops: u32, _pad0: u32, _pad1: u32, _pad2: u32, ops: array<vec4<u32>, 11> }

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

const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn transcript(@builtin(local_invocation_index) lid: u32) {
    transcript_run(lid, WG);
}
