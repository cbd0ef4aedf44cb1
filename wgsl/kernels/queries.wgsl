// requires: challenger
// Query indices as the transcript draws them, sorted and de-duplicated on the device (protocol/query_indices.py):
// the q raw indices scratch[raw .. raw + q) become the `count` distinct values ascending in
// scratch[sorted .. sorted + count), zero-padded to `slots` entries; count goes to scratch[count_at] and
// proof[proof_count_at]; scratch[points + i] = generator^sorted[i] (Montgomery) for i < slots (1 for padding).
// scratch[flags .. flags + q) is work space. Then thread 0 runs the transcript program params.ops[0 .. n_ops)
// (challenger.wgsl: e.g. sample the combination challenge and its powers). Bindings: 0 scratch (whole), 1 proof (a
// window; proof_count_at and op offsets are relative to it), 2 points (whole), 3 p2_rc, 4 params.
// Launch: one workgroup; thread i handles entries i, i + WG, ...; O(q) work per entry.

struct Params { raw: u32, q: u32, sorted: u32, slots: u32, count_at: u32, proof_count_at: u32, points_at: u32,
                flags: u32, generator: u32, _pad0: u32, _pad1: u32, _pad2: u32, n_ops: u32, _t0: u32, _t1: u32,
                _t2: u32, ops: array<vec4<u32>, 11> }

const WG: u32 = 256u;

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

var<workgroup> n_distinct: atomic<u32>;

@compute @workgroup_size(WG)
fn queries(@builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        atomicStore(&n_distinct, 0u);
    }
    workgroupBarrier();
    let q = params.q;
    for (var i = lid; i < q; i += WG) {
        let v = scratch[params.raw + i];
        var first = 1u;
        for (var j = 0u; j < i; j++) {
            if (scratch[params.raw + j] == v) {
                first = 0u;
                break;
            }
        }
        scratch[params.flags + i] = first;
        if (first == 1u) {
            atomicAdd(&n_distinct, 1u);
        }
    }
    storageBarrier();
    workgroupBarrier();
    let count = atomicLoad(&n_distinct);
    for (var i = lid; i < q; i += WG) {
        if (scratch[params.flags + i] == 1u) {
            let v = scratch[params.raw + i];
            var rank = 0u;
            for (var j = 0u; j < q; j++) {
                if (scratch[params.flags + j] == 1u && scratch[params.raw + j] < v) {
                    rank += 1u;
                }
            }
            scratch[params.sorted + rank] = v;
            scratch[params.points_at + rank] = bb_pow(params.generator, v);
        }
    }
    for (var i = count + lid; i < params.slots; i += WG) {
        scratch[params.sorted + i] = 0u;
        scratch[params.points_at + i] = BB_R;
    }
    if (lid == 0u) {
        scratch[params.count_at] = count;
        proof[params.proof_count_at] = count;
    }
    storageBarrier();
    workgroupBarrier();
    if (lid == 0u) {
        transcript_run();
    }
}
