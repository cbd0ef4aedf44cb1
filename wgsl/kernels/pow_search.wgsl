// requires: poseidon2
// Proof-of-work search on the device challenger (transcript.wgsl's layout in scratch words [0, 26)): the
// candidate witness monty(nonce) is written over the pending input at lane (input length) of the state the next
// duplex would permute; it is valid when canonical(lane 7 of the permuted state) & mask == 0. Workgroups claim
// batches of BATCH = WG * PER_THREAD nonces in increasing order (batch first_batch + atomicAdd(counter)) while
// the batch is below end_batch and starts below the smallest valid nonce found so far (scratch[found], atomicMin),
// so scratch[found] ends as the smallest valid nonce below end_batch * BATCH (or stays 0xffffffff).
// Bindings: 0 scratch (atomic words), 1 p2_rc, 2 params. Launch: any number of workgroups (they loop).

struct Params { mask: u32, found: u32, counter: u32, first_batch: u32, end_batch: u32, _pad0: u32, _pad1: u32,
                _pad2: u32 }

@id(0) override WG: u32 = 64u;
const PER_THREAD: u32 = 16u;
const STOP: u32 = 0xffffffffu;

@group(0) @binding(0) var<storage, read_write> scratch_atomic: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(2) var<uniform> params: Params;

var<workgroup> claimed: u32;

fn base_lane(i: u32, in_len: u32) -> u32 {
    return select(atomicLoad(&scratch_atomic[i]), atomicLoad(&scratch_atomic[18u + i]), i < in_len);
}

fn with_lane(v: vec4<u32>, first_lane: u32, index: u32, w: u32) -> vec4<u32> {
    return select(v, vec4<u32>(w), vec4<u32>(first_lane) + vec4<u32>(0u, 1u, 2u, 3u) == vec4<u32>(index));
}

@compute @workgroup_size(WG)
fn pow_search(@builtin(local_invocation_index) lid: u32) {
    let in_len = atomicLoad(&scratch_atomic[16]);
    var base: array<vec4<u32>, 4>;
    for (var c = 0u; c < 4u; c++) {
        base[c] = vec4<u32>(base_lane(4u * c, in_len), base_lane(4u * c + 1u, in_len),
                            base_lane(4u * c + 2u, in_len), base_lane(4u * c + 3u, in_len));
    }
    let batch_size = WG * PER_THREAD;
    loop {
        if (lid == 0u) {
            let b = params.first_batch + atomicAdd(&scratch_atomic[params.counter], 1u);
            let found = atomicLoad(&scratch_atomic[params.found]);
            claimed = select(b, STOP, b >= params.end_batch || b * batch_size >= found);
        }
        let b = workgroupUniformLoad(&claimed);
        if (b == STOP) {
            break;
        }
        for (var j = 0u; j < PER_THREAD; j++) {
            let nonce = b * batch_size + j * WG + lid;
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
    }
}
