// requires: challenger
// Query indices as the transcript draws them, sorted and de-duplicated on the device (protocol/query_indices.py):
// the q raw indices scratch[raw .. raw + q) become the `count` distinct values ascending in scratch[sorted ..),
// zero-padded to `slots` entries; count goes to scratch[count_at] and proof[proof_count_at]; scratch[points_at + i] =
// generator^sorted[i] (Montgomery; 1 for padding); scratch[flags .. flags + q) is work space. Then thread 0 runs the
// transcript program params.ops[0 .. n_ops) (challenger.metal). Bindings: 0 scratch (whole), 1 proof (a window;
// proof_count_at and op offsets relative to it), 2 points (whole), 3 p2_rc, 4 params. One threadgroup; thread i:
// entries i, i + WG, ...

struct Params { uint raw; uint q; uint sorted; uint slots; uint count_at; uint proof_count_at; uint points_at;
                uint flags; uint generator; uint _pad0; uint _pad1; uint _pad2; uint n_ops; uint _t0; uint _t1;
                uint _t2; uint4 ops[11]; };

constant constexpr uint WG = 256u;

kernel void queries(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                    device uint4* points [[buffer(2)]], constant uint4* p2_rc [[buffer(3)]],
                    constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup atomic_uint n_distinct[1];
    if (lid == 0u) {
        atomic_store_explicit(&n_distinct[0], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint q = params.q;
    for (uint i = lid; i < q; i += WG) {
        uint v = scratch[params.raw + i];
        uint first = 1u;
        for (uint j = 0u; j < i; j++) {
            if (scratch[params.raw + j] == v) {
                first = 0u;
                break;
            }
        }
        scratch[params.flags + i] = first;
        if (first == 1u) {
            atomic_fetch_add_explicit(&n_distinct[0], 1u, memory_order_relaxed);
        }
    }
    // the flags (device memory) and the count (threadgroup memory) of every thread are visible past this point
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    uint count = atomic_load_explicit(&n_distinct[0], memory_order_relaxed);
    for (uint i = lid; i < q; i += WG) {
        if (scratch[params.flags + i] == 1u) {
            uint v = scratch[params.raw + i];
            uint rank = 0u;
            for (uint j = 0u; j < q; j++) {
                if (scratch[params.flags + j] == 1u && scratch[params.raw + j] < v) {
                    rank += 1u;
                }
            }
            scratch[params.sorted + rank] = v;
            scratch[params.points_at + rank] = bb_pow(params.generator, v);
        }
    }
    for (uint i = count + lid; i < params.slots; i += WG) {
        scratch[params.sorted + i] = 0u;
        scratch[params.points_at + i] = BB_R;
    }
    if (lid == 0u) {
        scratch[params.count_at] = count;
        proof[params.proof_count_at] = count;
    }
    // every thread's sorted entries and domain points are visible to the program (e.g. POWERS reads the count)
    threadgroup_barrier(mem_flags::mem_device);
    if (lid == 0u) {
        ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
        transcript_run(io);
    }
}
