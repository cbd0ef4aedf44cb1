// requires: challenger
// A transcript program (challenger.metal's ops) on its own, for ops that no other launch can carry: the threadgroup
// runs params.ops[0 .. n_ops) on the challenger in scratch (thread 0; all of them for a SORT). Bindings: 0 scratch
// (whole), 1 proof (a window holding every proof word the ops touch; offsets are relative to it), 2 points (whole),
// 3 p2_rc, 4 params. Launch: one threadgroup of WG threads. Words Montgomery.

struct Params { uint n_ops; uint _pad0; uint _pad1; uint _pad2; uint4 ops[11]; };

constant constexpr uint WG = 64u;

kernel void transcript(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                       device uint4* points [[buffer(2)]], constant uint4* p2_rc [[buffer(3)]],
                       constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    ChIo io = {scratch, nullptr, proof, points, p2_rc, params.ops, params.n_ops};
    transcript_run(lid, WG, io, ch_next, ch_distinct);
}
