// requires: reduction
// Multilinear evaluation: the answer sum_b T[b] eq(b, z) over the table's b = base + i, i < len, summed over every
// launch of one evaluation, with eq(b, z) = prod_{s < nv} (bit nv-1-s of b ? z_s : 1 - z_s), z_s = points[point_at
// + s] (x_0 is the most significant bit of b), so the sum is T's multilinear extension at z. No eq table is
// stored: with S = groups * WG threads and L = log_s = log2(min(S, len)), H = nv - L, thread t visits
// b_k = base + t + k S (k >= 1 only when S <= len, so S = 2^L), whose low L bits are t's and whose high bits are
// h_k = base / 2^L + k, so eq(b_k, z) = eq_lo(t) eq_hi(h_k): eq_hi from z's first H coordinates, made 256 values
// of k at a time by the workgroup into workgroup memory; eq_lo from the last L, once per workgroup as a table over
// its 256 threads (the workgroup's bits of t once, then doubled over the thread's 8 bits), so a thread pays one
// product for it instead of one per coordinate (a product of its own was about a tenth of a 2^20 evaluation).
// Each workgroup leaves its partial as pair partial_base + w of `work` (reduction.wgsl); the last of `total`
// workgroups (over all launches) writes the answer to proof words out_at .. out_at + 4 and runs the transcript
// program params.ops[0 .. n_ops) (challenger.wgsl: e.g. observe the answer, sample the next OOD point and expand it).
// Powers mode (MLE_POWERS = 1): the factor of a 0 bit is 1 instead of 1 - z_s, so the answer is
// sum_b T[b] prod_s (bit nv-1-s of b ? z_s : 1); at z_s = y^(2^(nv-1-s)) (z = expand_point(y), the transcript's
// EXPAND) that is the univariate sum_b T[b] y^b, for every y (no eq form of y's powers is needed).
// Entry points: mle_eval_base (T base words), mle_eval_ext (T EF vec4).
// Bindings: 0 table (window starting at b = base), 1 work (atomic words), 2 scratch (whole), 3 proof (a window;
// out_at and op offsets relative to it), 4 points (whole), 5 p2_rc, 6 params. Launch: `groups` workgroups (2-D
// grid; the overhang returns). Contracts: len and S powers of two, 2^L divides base, base + len <= 2^nv. Words
// Montgomery in [0, P).

struct Params { len: u32, base: u32, log_s: u32, partial_base: u32, groups: u32, total: u32, out_at: u32,
                point_at: u32, nv: u32, _pad0: u32, _pad1: u32, _pad2: u32,
                n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;
@id(9) override MLE_POWERS: u32 = 0u;  // 1: the powers mode (a 0 bit's factor is 1)

@group(0) @binding(0) var<storage, read> table_base: array<u32>;
@group(0) @binding(0) var<storage, read> table_ext: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> work: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(3) var<storage, read_write> proof: array<u32>;
@group(0) @binding(4) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(6) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) { points[i] = v; }

const LOG_WG: u32 = 8u;
var<workgroup> eq_hi_chunk: array<vec4<u32>, WG>;  // eq_hi of 256 values of k; at the end eq_lo of the threads

// prod_{s < len} (bit len-1-s of j ? z : 1 - z), z = points[at + s] (powers mode: a 0 bit's factor is 1).
fn eq_product(at: u32, len: u32, j: u32) -> vec4<u32> {
    var acc = vec4<u32>(BB_R, 0u, 0u, 0u);
    for (var s = 0u; s < len; s++) {
        let z = points[at + s];
        if (((j >> (len - 1u - s)) & 1u) != 0u) {
            acc = ef_mul(acc, z);
        } else if (MLE_POWERS == 0u) {
            acc = ef_mul(acc, ef_sub(vec4<u32>(BB_R, 0u, 0u, 0u), z));
        }
    }
    return acc;
}

// eq_hi(base / 2^L + k) for k = k0 + lid into eq_hi_chunk[lid]; every thread must call it.
fn make_chunk(lid: u32, k0: u32, n_k: u32) {
    workgroupBarrier();
    if (k0 + lid < n_k) {
        let h = params.nv - params.log_s;
        eq_hi_chunk[lid] = eq_product(params.point_at, h, (params.base >> params.log_s) + k0 + lid);
    }
    workgroupBarrier();
}

// eq_lo(t) for t = wg * WG + l into eq_hi_chunk[l], l < WG, over t's low L = log_s bits (bit j of t <-> z_{nv-1-j};
// the powers mode's 0 bit a factor 1): thread 0 makes the workgroup's part (t's bits 8 .. L-1, when L > 8), then each
// of l's bits from the highest doubles the table; l's bits at or past L (threads past the 2^L that visit the table,
// whose sums are zero) double it with factor 1. Every thread must call it.
fn make_eq_lo(lid: u32, wg: u32) {
    let l = params.log_s;
    let last = params.point_at + params.nv - 1u;   // z_{nv-1-j} is points[last - j]
    let one = vec4<u32>(BB_R, 0u, 0u, 0u);
    workgroupBarrier();                             // every thread is done with eq_hi
    if (lid == 0u) {
        var root = one;
        if (l > LOG_WG) {
            root = eq_product(last + 1u - l, l - LOG_WG, wg);
        }
        eq_hi_chunk[0] = root;
    }
    workgroupBarrier();
    for (var b = LOG_WG; b > 0u; b--) {
        let j = b - 1u;                             // the bit of l this step splits on
        if ((lid & ((2u << j) - 1u)) == 0u) {
            let x = eq_hi_chunk[lid];
            if (j < l) {
                let z = points[last - j];
                eq_hi_chunk[lid + (1u << j)] = ef_mul(x, z);
                if (MLE_POWERS == 0u) {
                    eq_hi_chunk[lid] = ef_mul(x, ef_sub(one, z));
                }
            } else {
                eq_hi_chunk[lid + (1u << j)] = x;
            }
        }
        workgroupBarrier();
    }
}

// Multiplies in eq_lo and leaves this workgroup's partial; the last workgroup writes the answer and runs the
// transcript program.
fn finish(lid: u32, wg: u32, acc: vec4<u32>) {
    make_eq_lo(lid, wg);
    if (!finish_pairs(lid, params.partial_base + wg, params.total, ef_mul(acc, eq_hi_chunk[lid]), vec4<u32>(0u))) {
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
    let n_k = (params.len + stride - 1u) / stride;
    var acc = vec4<u32>(0u);
    for (var k0 = 0u; k0 < n_k; k0 += WG) {
        make_chunk(lid, k0, n_k);
        for (var k = k0; k < min(k0 + WG, n_k); k++) {
            let i = t + k * stride;
            if (i < params.len) {
                acc = ef_add(acc, ef_mul_base(eq_hi_chunk[k - k0], table_base[i]));
            }
        }
    }
    finish(lid, wg, acc);
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
    let n_k = (params.len + stride - 1u) / stride;
    var acc = vec4<u32>(0u);
    for (var k0 = 0u; k0 < n_k; k0 += WG) {
        make_chunk(lid, k0, n_k);
        for (var k = k0; k < min(k0 + WG, n_k); k++) {
            let i = t + k * stride;
            if (i < params.len) {
                acc = ef_add(acc, ef_mul(table_ext[i], eq_hi_chunk[k - k0]));
            }
        }
    }
    finish(lid, wg, acc);
}
