// Field samples from rand's StdRng keystream (ChaCha12, legacy layout: state words 4..11 the key, 12..13 a 64-bit
// block counter, 14..15 the stream id 0): Plonky3's StandardUniform for the composed field takes u = word >> 1 and
// accepts it when u < BB_P (u is then the Montgomery word); a rejected word is consumed. The key is the 8 words
// status[key_at .. key_at + 7] (a per-proof input written before the launches; none of them writes there). The
// keystream window is the n_words words from block counter (block_hi:block_lo), word position p = 16 b + k for
// block b (relative) and word k. The first n_samples accepted u, in keystream order, are the samples. Three
// launches (whirgpu/kernels/mask_rng.py): chacha_sample_count (thread = one block of 16 words, threadgroup g =
// blocks g WG .. g WG + WG - 1: counts[g] = its accepted words), chacha_sample_scan (one threadgroup, any number of
// groups: counts becomes the exclusive prefix sums; status[status_at] = 0 when n_samples = 0, 0xFFFFFFFF
// (NOT_FOUND) when fewer than n_samples words were accepted), chacha_sample_compact (the keystream again: accepted
// word of rank r with rank_first <= r < min(rank_end, n_samples) is written to out[out_off + r - rank_first]; when
// rank_first = 0 the thread holding rank n_samples - 1 writes its position + 1, the words consumed, to
// status[status_at]).
// Bindings: 0 counts, 1 status, 2 out (compact), then params. Ranges: n_words < 2^32 - 1, groups =
// ceil(ceil(n_words / 16) / WG), WG a power of two <= MAX_WG; status_at outside [key_at, key_at + 8); the counter
// wraps mod 2^64. Launch: count and compact over `groups` threadgroups (2-D grid; the overhang returns), scan
// over one.

struct Params {
    uint key_at; uint block_lo; uint block_hi; uint n_words; uint n_samples; uint rank_first; uint rank_end;
    uint out_off; uint status_at; uint groups; uint _pad0; uint _pad1;
};

constant constexpr uint MAX_WG = 256u;
constant constexpr uint NOT_FOUND = 0xFFFFFFFFu;

constant uint WG [[function_constant(0)]];

struct Block { uint4 a; uint4 b; uint4 c; uint4 d; };

uint4 rotl4(uint4 x, uint n) {
    return (x << n) | (x >> (32u - n));
}

Block quarter4(Block s) {
    s.a += s.b; s.d = rotl4(s.d ^ s.a, 16u);
    s.c += s.d; s.b = rotl4(s.b ^ s.c, 12u);
    s.a += s.b; s.d = rotl4(s.d ^ s.a, 8u);
    s.c += s.d; s.b = rotl4(s.b ^ s.c, 7u);
    return s;
}

// Key words k .. k + 3 of the status binding.
uint4 key4(device const uint* status, uint k) {
    return uint4(status[k], status[k + 1u], status[k + 2u], status[k + 3u]);
}

// Keystream block `rel` blocks after (block_hi:block_lo) (64-bit add, carry into the high word) of the key at
// status[key_at ..]: words 0..15 as a.xyzw, b.xyzw, c.xyzw, d.xyzw.
Block chacha12(constant Params& p, device const uint* status, uint rel) {
    uint lo = p.block_lo + rel;
    uint hi = p.block_hi + (lo < p.block_lo ? 1u : 0u);
    Block init = {uint4(0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u), key4(status, p.key_at),
                  key4(status, p.key_at + 4u), uint4(lo, hi, 0u, 0u)};
    Block s = init;
    for (uint i = 0u; i < 6u; i++) {
        s = quarter4(s);  // columns
        Block t = {s.a, uint4(s.b.y, s.b.z, s.b.w, s.b.x), uint4(s.c.z, s.c.w, s.c.x, s.c.y),
                   uint4(s.d.w, s.d.x, s.d.y, s.d.z)};  // diagonals, lanes rotated into columns
        t = quarter4(t);
        s.a = t.a;
        s.b = uint4(t.b.w, t.b.x, t.b.y, t.b.z);
        s.c = uint4(t.c.z, t.c.w, t.c.x, t.c.y);
        s.d = uint4(t.d.y, t.d.z, t.d.w, t.d.x);
    }
    Block r = {s.a + init.a, s.b + init.b, s.c + init.c, s.d + init.d};
    return r;
}

uint word_ok(uint w, uint pos, uint n_words) {
    return (pos < n_words && (w >> 1u) < BB_P) ? 1u : 0u;
}

// Accepted words of one row (4 words at positions pos .. pos + 3; words at or past n_words are not drawn).
uint row_count(uint4 v, uint pos, uint n_words) {
    return word_ok(v.x, pos, n_words) + word_ok(v.y, pos + 1u, n_words) + word_ok(v.z, pos + 2u, n_words)
        + word_ok(v.w, pos + 3u, n_words);
}

uint block_count(Block s, uint pos, uint n_words) {
    return row_count(s.a, pos, n_words) + row_count(s.b, pos + 4u, n_words) + row_count(s.c, pos + 8u, n_words)
        + row_count(s.d, pos + 12u, n_words);
}

// The inclusive prefix sum of v over the threadgroup's threads (lid order); every thread must call it.
uint scan_inclusive(uint lid, uint v, threadgroup uint* sums) {
    sums[lid] = v;
    for (uint s = 1u; s < WG; s <<= 1u) {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint t = sums[lid];
        if (lid >= s) {
            t += sums[lid - s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        sums[lid] = t;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return sums[lid];
}

kernel void chacha_sample_count(device uint* counts [[buffer(0)]], device uint* status [[buffer(1)]],
                                constant Params& params [[buffer(2)]],
                                uint lid [[thread_index_in_threadgroup]],
                                uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint sums[MAX_WG];
    uint g = wid.x + wid.y * nwg.x;
    if (g >= params.groups) {
        return;
    }
    uint rel = g * WG + lid;
    uint pos = rel * 16u;
    uint c = pos < params.n_words ? block_count(chacha12(params, status, rel), pos, params.n_words) : 0u;
    uint total = scan_inclusive(lid, c, sums);
    if (lid == WG - 1u) {
        counts[g] = total;
    }
}

kernel void chacha_sample_scan(device uint* counts [[buffer(0)]], device uint* status [[buffer(1)]],
                               constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint sums[MAX_WG];
    uint groups = params.groups;
    uint chunk = (groups + WG - 1u) / WG;
    uint first = min(lid * chunk, groups);
    uint end = min(first + chunk, groups);
    uint s = 0u;
    for (uint g = first; g < end; g++) {
        s += counts[g];
    }
    uint incl = scan_inclusive(lid, s, sums);
    uint run = incl - s;
    for (uint g = first; g < end; g++) {
        uint c = counts[g];
        counts[g] = run;
        run += c;
    }
    if (lid == WG - 1u) {
        if (params.n_samples == 0u) {
            status[params.status_at] = 0u;
        } else if (incl < params.n_samples) {
            status[params.status_at] = NOT_FOUND;
        }
    }
}

// Word u at position pos, accepted, of rank r: written when its rank is in the launch's window; the last sample's
// position + 1 to the status in the first window's launch. Returns the next rank.
uint emit(uint u, uint pos, uint r, constant Params& params, device uint* status, device uint* out) {
    if (pos >= params.n_words || u >= BB_P) {
        return r;
    }
    if (r >= params.rank_first && r < params.rank_end && r < params.n_samples) {
        out[params.out_off + (r - params.rank_first)] = u;
    }
    if (r + 1u == params.n_samples && params.rank_first == 0u) {
        status[params.status_at] = pos + 1u;
    }
    return r + 1u;
}

uint emit_row(uint4 v, uint pos, uint r, constant Params& params, device uint* status, device uint* out) {
    uint k = emit(v.x >> 1u, pos, r, params, status, out);
    k = emit(v.y >> 1u, pos + 1u, k, params, status, out);
    k = emit(v.z >> 1u, pos + 2u, k, params, status, out);
    return emit(v.w >> 1u, pos + 3u, k, params, status, out);
}

kernel void chacha_sample_compact(device uint* counts [[buffer(0)]], device uint* status [[buffer(1)]],
                                  device uint* out [[buffer(2)]], constant Params& params [[buffer(3)]],
                                  uint lid [[thread_index_in_threadgroup]],
                                  uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint sums[MAX_WG];
    uint g = wid.x + wid.y * nwg.x;
    if (g >= params.groups) {
        return;
    }
    uint rel = g * WG + lid;
    uint pos = rel * 16u;
    Block s = {uint4(0u), uint4(0u), uint4(0u), uint4(0u)};
    uint c = 0u;
    if (pos < params.n_words) {
        s = chacha12(params, status, rel);
        c = block_count(s, pos, params.n_words);
    }
    uint incl = scan_inclusive(lid, c, sums);
    if (c == 0u) {
        return;
    }
    uint r = counts[g] + incl - c;
    r = emit_row(s.a, pos, r, params, status, out);
    r = emit_row(s.b, pos + 4u, r, params, status, out);
    r = emit_row(s.c, pos + 8u, r, params, status, out);
    emit_row(s.d, pos + 12u, r, params, status, out);
}
