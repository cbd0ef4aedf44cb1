// requires: challenger
// Proof-of-work search on the device challenger (transcript.wgsl's layout in scratch words [0, 26)): the
// candidate witness monty(nonce) is written over the pending input at lane (input length) of the state the next
// duplex would permute (CH_LENGTH_TAGGED: that duplex absorbs input length + 1 words, so the rate lanes past the
// witness are zero and lane 8 has input length + 1 added); it is valid when canonical(lane 7 of the permuted
// state) & mask == 0. A grid of a fixed
// number of workgroups (not one thread per nonce): each loops, claiming batches of WG nonces (thread lid takes
// nonce batch * WG + lid) in increasing order (batch first_batch + atomicAdd(counter)), and stops at its first
// claim at or past end_batch or starting at or above the smallest valid nonce found so far (scratch[found],
// atomicMin), so scratch[found] ends as the smallest valid nonce below min(P, end_batch * WG) (or stays
// 0xffffffff). Contracts: WG >= 16; (end_batch + workgroups) * WG < 2^32; scratch[counter] = 0 at launch.
// Each workgroup leaving the loop counts itself in scratch[exit_ticket] (0 at launch); the last of the launch's
// `groups` resets it and runs the transcript program params.ops[0 .. n_ops) (challenger.wgsl: absorb the witness,
// sample the next challenge, draw the queries), its duplexes on 16 cooperating lanes. Bindings: 0 scratch (atomic
// words), 1 proof (a window; op offsets relative to it), 2 points (whole), 3 p2_rc, 4 params. Launch: `groups`
// workgroups (they loop; 2-D grid, the overhang returns).

struct Params { mask: u32, found: u32, counter: u32, first_batch: u32, end_batch: u32, exit_ticket: u32, groups: u32,
                _pad0: u32, n_ops: u32, _t0: u32, _t1: u32, _t2: u32, ops: array<vec4<u32>, 11> }

@id(0) override WG: u32 = 64u;
@id(1) override TAIL: u32 = 1u;  // 0: no exit ticket and no program (the search alone)
const STOP: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read_write> scratch_atomic: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(4) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return atomicLoad(&scratch_atomic[i]); }
fn scratch_set(i: u32, v: u32) { atomicStore(&scratch_atomic[i], v); }
fn proof_get(i: u32) -> u32 { return proof[i]; }
fn proof_set(i: u32, v: u32) { proof[i] = v; }
fn point_set(i: u32, v: vec4<u32>) { points[i] = v; }

var<workgroup> claimed: u32;
var<workgroup> exit_last: bool;
var<workgroup> base_words: array<u32, 16>;

fn with_lane(v: vec4<u32>, first_lane: u32, index: u32, w: u32) -> vec4<u32> {
    return select(v, vec4<u32>(w), vec4<u32>(first_lane) + vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(index));
}

@compute @workgroup_size(WG)
fn pow_search(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
              @builtin(num_workgroups) nwg: vec3<u32>) {
    if (wid.x + wid.y * nwg.x >= params.groups) {
        return;  // the overhang of a 2-D grid
    }
    let in_len = atomicLoad(&scratch_atomic[16]);
    // The state to permute (pending input over the sponge's first lanes) read once per workgroup: the words are
    // atomics (the binding holds the counters), and 32 atomic loads per thread would hit the same few words.
    if (lid < 16u) {
        var word = atomicLoad(&scratch_atomic[select(lid, 18u + lid, lid < in_len)]);
        if (CH_LENGTH_TAGGED != 0u) {
            if (lid > in_len && lid < 8u) {
                word = 0u;
            }
            if (lid == 8u) {
                word = bb_add(word, bb_mul(in_len + 1u, BB_R2));
            }
        }
        base_words[lid] = word;
    }
    workgroupBarrier();
    var base: array<vec4<u32>, 4>;
    for (var c = 0u; c < 4u; c++) {
        base[c] = vec4<u32>(base_words[4u * c], base_words[4u * c + 1u], base_words[4u * c + 2u],
                            base_words[4u * c + 3u]);
    }
    loop {
        if (lid == 0u) {
            let b = params.first_batch + atomicAdd(&scratch_atomic[params.counter], 1u);
            let found = atomicLoad(&scratch_atomic[params.found]);
            claimed = select(b, STOP, b >= params.end_batch || b * WG >= found);
        }
        let b = workgroupUniformLoad(&claimed);
        if (b == STOP) {
            break;
        }
        let nonce = b * WG + lid;
        if (nonce < BB_P) {
            let w = bb_mul(nonce, BB_R2);
            let s = P2State(with_lane(base[0], 0u, in_len, w), with_lane(base[1], 4u, in_len, w),
                            with_lane(base[2], 8u, in_len, w), with_lane(base[3], 12u, in_len, w));
            let out = poseidon2_permute(s);
            if ((bb_mul(out.b.w, 1u) & params.mask) == 0u) {
                atomicMin(&scratch_atomic[params.found], nonce);
            }
        }
    }
    if (TAIL == 0u) {
        return;
    }
    storageBarrier();
    if (lid == 0u) {
        exit_last = atomicAdd(&scratch_atomic[params.exit_ticket], 1u) == params.groups - 1u;
    }
    if (workgroupUniformLoad(&exit_last)) {
        if (lid == 0u) {
            atomicStore(&scratch_atomic[params.exit_ticket], 0u);
        }
        transcript_run(lid, WG);
    }
}
