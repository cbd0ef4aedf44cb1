// requires: challenger poseidon2_coop
// The top levels of a Merkle tree, parent[j] = perm(child[2j] || child[2j + 1])[0..8], made in place: n / per
// workgroups of P2C_WG threads (2-D grid: g = wid.x + wid.y * nwg.x; 4 threads per state, poseidon2_coop) write the
// levels of n, n / 2, ..., n / per parents back to back in dst from vec4 dst_off (level k at digest sum_{i<k} n >> i);
// workgroup g makes the subtree over parents [g per, (g + 1) per) of the first level up to its root, reading the
// children (2n digests) from vec4 src_off of src, or of dst when from_dst is 1 (a launch after the first reads the
// subtree roots the one before it wrote), then each level from dst (storage barriers between levels: a workgroup
// reads only what it wrote). Contract: n, per powers of two, per <= n.
// When per = n (one workgroup, up to the tree's root) the root is also written to proof words root_at .. +8, then
// the workgroup runs the transcript program params.ops[0 .. n_ops) (challenger.wgsl: the root observed, the OOD point
// sampled and expanded). Bindings: 0 src, 1 dst (disjoint ranges of one buffer may be both, so src is read_write),
// 2 scratch (whole), 3 proof (a window; root_at and op offsets relative to it), 4 points (whole), 5 p2_rc, 6 params.

struct Params { n: u32, src_off: u32, dst_off: u32, per: u32, root_at: u32, from_dst: u32, _pad0: u32, _pad1: u32,
                n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

@group(0) @binding(0) var<storage, read_write> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
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

// Vec4 c of the first level's children.
fn child_chunk(c: u32) -> vec4<u32> {
    if (params.from_dst != 0u) {
        return dst[params.src_off + c];
    }
    return src[params.src_off + c];
}

@compute @workgroup_size(P2C_WG)
fn merkle_top(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= params.n / params.per) {            // padding of the 2-D grid: whole workgroups leave
        return;
    }
    let q = lid & 3u;
    var count = params.per;                      // this workgroup's parents in the current level
    var n = params.n;                            // parents in the current level
    var out_at = 0u;                             // first digest of the current level, from dst_off
    loop {                                       // trip counts depend on params only: uniform, barriers allowed
        let first = g * count;
        for (var base = 0u; base < count; base += P2C_WG / 4u) {
            let j = base + (lid >> 2u);
            let jj = first + min(j, count - 1u); // threads past the block permute a copy of its last state
            var chunk: vec4<u32>;
            if (out_at == 0u) {
                chunk = child_chunk(4u * jj + q);
            } else {
                chunk = dst[params.dst_off + 2u * (out_at - 2u * n) + 4u * jj + q];  // the previous level
            }
            let x = p2c_permute(chunk, lid);
            if (j < count && q < 2u) {
                dst[params.dst_off + 2u * (out_at + first + j) + q] = x;
                if (n == 1u) {                   // the tree's root
                    for (var i = 0u; i < 4u; i++) {
                        proof_set(params.root_at + 4u * q + i, x[i]);
                    }
                }
            }
        }
        storageBarrier();
        if (count == 1u) {
            break;
        }
        out_at += n;
        n >>= 1u;
        count >>= 1u;
    }
    if (n == 1u) {                               // after the barrier: the whole root is in proof (uniform)
        transcript_run(lid, P2C_WG);
    }
}
