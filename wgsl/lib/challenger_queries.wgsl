// requires: challenger_sponge
// The query sampler of transcript programs (challenger.wgsl lists the ops' words): DISTINCT, t distinct indices
// drawn one rejection-sampled sample a step by thread 0, and SORT, the drawn indices made distinct, ascending and
// mapped to domain points by the whole workgroup (protocol/query_indices.py's order).

var<private> ch_found: u32;              // DISTINCT: indices found so far
var<workgroup> ch_distinct: atomic<u32>;
// DISTINCT's bitmap while it draws (thread 0's; copied to its scratch words when the op is done): a draw's test
// and mark cost no round trip to device memory. Domains of up to 2^10 points (device_transcript.BITMAP_MAX_LOG).
var<workgroup> ch_bitmap: array<u32, 32>;
// SORT's indices and first-occurrence flags while it ranks them (up to CH_SORT_SHARED indices; a larger draw ranks
// them in device memory): each thread's scans of the draw read workgroup memory, not a storage round trip a word.
const CH_SORT_SHARED: u32 = 256u;
var<workgroup> ch_sort_raw: array<u32, 256>;
var<workgroup> ch_sort_first: array<u32, 256>;

// Step i of a DISTINCT op (one sample, or none when t or L is 0); whether the op is done.
fn ch_distinct_step(op: vec4<u32>, i: u32) -> bool {
    let wanted = op.z & 0xffffu;
    let log_size = op.z >> 16u;
    if (wanted == 0u || log_size == 0u) {
        for (var j = 0u; j < wanted; j++) {
            scratch_set(op.y + j, 0u);   // a folded domain of one point: index 0, sampled from nothing
        }
        return true;
    }
    let words = max(1u, (1u << log_size) >> 5u);
    if (i == 0u) {
        ch_found = 0u;
        if (op.w != CH_NOT_FOUND) {              // the domain's bitmap, cleared
            for (var j = 0u; j < words; j++) {
                ch_bitmap[j] = 0u;
            }
        }
    }
    let mask = (1u << log_size) - 1u;
    let v = bb_mul(ch_pop(), 1u);
    if (v < (BB_P & ~mask)) {                    // else rejected: the draw takes the next sample
        let index = v & mask;
        var fresh = true;
        if (op.w != CH_NOT_FOUND) {              // one word of the bitmap, not a scan of those found
            let bits = ch_bitmap[index >> 5u];
            fresh = (bits & (1u << (index & 31u))) == 0u;
            if (fresh) {
                ch_bitmap[index >> 5u] = bits | (1u << (index & 31u));
            }
        } else {
            for (var j = 0u; j < ch_found; j++) {
                if (scratch_get(op.y + j) == index) {
                    fresh = false;
                    break;
                }
            }
        }
        if (fresh) {
            scratch_set(op.y + ch_found, index);
            ch_found += 1u;
        }
    }
    let done = ch_found >= wanted;
    if (done && op.w != CH_NOT_FOUND) {          // the bitmap to its scratch words, for the SORT
        for (var j = 0u; j < words; j++) {
            scratch_set(op.w + j, ch_bitmap[j]);
        }
    }
    return done;
}

// The end of a SORT of `count` indices (b, c: its second and third slots): the slots past them padded (index 0,
// point 1), the count to scratch and proof, then a barrier (every thread's entries visible to the next ops).
fn ch_sort_finish(lid: u32, size: u32, b: vec4<u32>, c: vec4<u32>, count: u32) {
    for (var i = count + lid; i < b.y; i += size) {
        scratch_set(b.x + i, 0u);
        scratch_set(b.w + i, BB_R);
    }
    if (lid == 0u) {
        scratch_set(b.z, count);
        proof_set(c.y, count);
    }
    storageBarrier();
    workgroupBarrier();
}

// ch_sort's ranking with the q <= CH_SORT_SHARED drawn indices staged in workgroup memory (the same result).
fn ch_sort_shared(lid: u32, size: u32, raw: u32, q: u32, b: vec4<u32>, c: vec4<u32>) {
    for (var i = lid; i < q; i += size) {
        ch_sort_raw[i] = scratch_get(raw + i);
    }
    workgroupBarrier();
    for (var i = lid; i < q; i += size) {
        let v = ch_sort_raw[i];
        var first = 1u;
        for (var j = 0u; j < i; j++) {
            if (ch_sort_raw[j] == v) {
                first = 0u;
                break;
            }
        }
        ch_sort_first[i] = first;
        if (first == 1u) {
            atomicAdd(&ch_distinct, 1u);
        }
    }
    workgroupBarrier();
    let count = atomicLoad(&ch_distinct);
    for (var i = lid; i < q; i += size) {
        if (ch_sort_first[i] == 1u) {
            let v = ch_sort_raw[i];
            var rank = 0u;
            for (var j = 0u; j < q; j++) {
                rank += select(0u, 1u, ch_sort_first[j] == 1u && ch_sort_raw[j] < v);
            }
            scratch_set(b.x + rank, v);
            scratch_set(b.w + rank, bb_pow(c.x, v));
        }
    }
    ch_sort_finish(lid, size, b, c, count);
}

// The SORT at op k, by the `size` threads of the workgroup: each distinct value finds its rank by counting; after
// a DISTINCT with a bitmap (its third slot's z, w: where, how many words) the bitmap's set bits are the sorted
// indices, each word's rank the popcount of those before it.
fn ch_sort(lid: u32, size: u32, k: u32) {
    let a = params.ops[k];
    let b = params.ops[k + 1u];
    let c = params.ops[k + 2u];
    let raw = a.y;
    let q = a.z;
    let flags = a.w;
    if (c.w != 0u) {                             // a DISTINCT's bitmap (c.w words at c.z): its q indices, in order
        for (var w = lid; w < c.w; w += size) {
            var rank = 0u;
            for (var j = 0u; j < w; j++) {
                rank += countOneBits(scratch_get(c.z + j));
            }
            var bits = scratch_get(c.z + w);
            loop {
                if (bits == 0u) {
                    break;
                }
                let v = 32u * w + firstTrailingBit(bits);
                scratch_set(b.x + rank, v);
                scratch_set(b.w + rank, bb_pow(c.x, v));
                rank += 1u;
                bits &= bits - 1u;
            }
        }
        ch_sort_finish(lid, size, b, c, q);
        return;
    }
    if (lid == 0u) {
        atomicStore(&ch_distinct, 0u);
    }
    if (q <= CH_SORT_SHARED) {
        ch_sort_shared(lid, size, raw, q, b, c);
        return;
    }
    workgroupBarrier();
    for (var i = lid; i < q; i += size) {
        let v = scratch_get(raw + i);
        var first = 1u;
        for (var j = 0u; j < i; j++) {
            if (scratch_get(raw + j) == v) {
                first = 0u;
                break;
            }
        }
        scratch_set(flags + i, first);
        if (first == 1u) {
            atomicAdd(&ch_distinct, 1u);
        }
    }
    storageBarrier();
    workgroupBarrier();
    let count = atomicLoad(&ch_distinct);
    for (var i = lid; i < q; i += size) {
        if (scratch_get(flags + i) == 1u) {
            let v = scratch_get(raw + i);
            var rank = 0u;
            for (var j = 0u; j < q; j++) {
                if (scratch_get(flags + j) == 1u && scratch_get(raw + j) < v) {
                    rank += 1u;
                }
            }
            scratch_set(b.x + rank, v);
            scratch_set(b.w + rank, bb_pow(c.x, v));
        }
    }
    ch_sort_finish(lid, size, b, c, count);
}
