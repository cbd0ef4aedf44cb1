// requires: reduction
// Multilinear evaluation: the answer sum_b T[b] eq_hi[b >> log_lo] eq_lo[b & mask] over b = base + i, i < len,
// summed over every launch of one evaluation (mask = 2^log_lo - 1; eq_hi, eq_lo are the eq tables of the point's
// first and last coordinates, so the sum is T's multilinear extension at the point). Each workgroup leaves its partial
// as pair partial_base + w of `work` (reduction.wgsl); the last of `total` workgroups (over all launches) writes the
// answer to proof words out_at .. out_at + 4 and runs the transcript program params.ops[0 .. n_ops)
// (challenger.wgsl: e.g. observe the answer, sample the next OOD point and expand it).
// Thread t of S = (groups * WG) threads visits i = t, t + S, ...; S and base are multiples of 2^log_lo, so
// eq_lo is the same for all of a thread's i and is applied once at the end.
// Entry points: mle_eval_base (T base words), mle_eval_ext (T EF vec4).
// Bindings: 0 table (window starting at b = base), 1 eq_hi (EF), 2 eq_lo (EF), 3 work (atomic words), 4 scratch
// (whole), 5 proof (a window; out_at and op offsets relative to it), 6 points (whole), 7 p2_rc, 8 params. Launch:
// `groups` workgroups (2-D grid; the overhang returns). Words Montgomery in [0, P).

struct Params { len: u32, base: u32, log_lo: u32, partial_base: u32, groups: u32, total: u32, out_at: u32, _pad0: u32,
                n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> eq_hi: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> eq_lo: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> work: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(5) var<storage, read_write> proof: array<u32>;
@group(0) @binding(6) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(8) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) { points[i] = v; }

// Multiplies in eq_lo and leaves this workgroup's partial; the last workgroup writes the answer and runs the
// transcript program.
fn finish(lid: u32, t: u32, wg: u32, acc: vec4<u32>) {
    let lo = (params.base + t) & ((1u << params.log_lo) - 1u);
    if (!finish_pairs(lid, params.partial_base + wg, params.total, ef_mul(acc, eq_lo[lo]), vec4<u32>(0u))) {
        return;
    }
    if (lid == 0u) {
        proof_set_ef(params.out_at, red_a[0]);
    }
    end_reduction(lid);
}

@compute @workgroup_size(WG)
fn mle_eval_base(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let t = wg * WG + lid;
    let stride = params.groups * WG;
    var acc = vec4<u32>(0u);
    for (var i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul_base(eq_hi[(params.base + i) >> params.log_lo], table_base[i]));
    }
    finish(lid, t, wg, acc);
}

@compute @workgroup_size(WG)
fn mle_eval_ext(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    if (wg >= params.groups) {
        return;
    }
    let t = wg * WG + lid;
    let stride = params.groups * WG;
    var acc = vec4<u32>(0u);
    for (var i = t; i < params.len; i += stride) {
        acc = ef_add(acc, ef_mul(table_ext[i], eq_hi[(params.base + i) >> params.log_lo]));
    }
    finish(lid, t, wg, acc);
}
