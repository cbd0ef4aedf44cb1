// Field samples from rand's StdRng keystream (ChaCha12, legacy layout: state words 4..11 the key, 12..13 a 64-bit
// block counter, 14..15 the stream id 0): Plonky3's StandardUniform for the composed field takes u = word >> 1 and
// accepts it when u < BB_P (u is then the Montgomery word); a rejected word is consumed. The key is the 8 words
// status[key_at .. key_at + 7] (a per-proof input written before the launches; none of them writes there). The
// keystream window is the n_words words from block counter (block_hi:block_lo), word position p = 16 b + k for
// block b (relative) and word k. The first n_samples accepted u, in keystream order, are the samples. Three
// launches (whirgpu/kernels/mask_rng.py): chacha_sample_count (thread = one block of 16 words, workgroup g =
// blocks g WG .. g WG + WG - 1: counts[g] = its accepted words), chacha_sample_scan (one workgroup, any number of
// groups: counts becomes the exclusive prefix sums; status[status_at] = 0 when n_samples = 0, 0xFFFFFFFF
// (NOT_FOUND) when fewer than n_samples words were accepted), chacha_sample_compact (the keystream again: accepted
// word of rank r with rank_first <= r < min(rank_end, n_samples) is written to out[out_off + r - rank_first]; when
// rank_first = 0 the thread holding rank n_samples - 1 writes its position + 1, the words consumed, to
// status[status_at]).
// Bindings: 0 counts, 1 status, 2 out (compact), then params. Ranges: n_words < 2^32 - 1, groups =
// ceil(ceil(n_words / 16) / WG), WG a power of two <= MAX_WG; status_at outside [key_at, key_at + 8); the counter
// wraps mod 2^64. Launch: count and compact over `groups` workgroups (2-D grid; the overhang returns), scan
// over one.

struct Params {
    key_at: u32, block_lo: u32, block_hi: u32, n_words: u32, n_samples: u32, rank_first: u32, rank_end: u32,
    out_off: u32, status_at: u32, groups: u32, _pad0: u32, _pad1: u32
}

const MAX_WG: u32 = 256u;
const NOT_FOUND: u32 = 0xFFFFFFFFu;

@id(0) override WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> counts: array<u32>;
@group(0) @binding(1) var<storage, read_write> status: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> params_cs: Params;  // count and scan
@group(0) @binding(3) var<uniform> params: Params;  // compact

var<workgroup> sums: array<u32, MAX_WG>;

fn rotl4(x: vec4<u32>, n: u32) -> vec4<u32> {
    return (x << vec4<u32>(n)) | (x >> vec4<u32>(32u - n));
}

struct Block { a: vec4<u32>, b: vec4<u32>, c: vec4<u32>, d: vec4<u32> }

fn quarter4(s: Block) -> Block {
    var r = s;
    r.a += r.b; r.d = rotl4(r.d ^ r.a, 16u);
    r.c += r.d; r.b = rotl4(r.b ^ r.c, 12u);
    r.a += r.b; r.d = rotl4(r.d ^ r.a, 8u);
    r.c += r.d; r.b = rotl4(r.b ^ r.c, 7u);
    return r;
}

// Key words k .. k + 3 of the status binding.
fn key4(k: u32) -> vec4<u32> {
    return vec4<u32>(status[k], status[k + 1u], status[k + 2u], status[k + 3u]);
}

// Keystream block `rel` blocks after (block_hi:block_lo) (64-bit add, carry into the high word) of the key at
// status[key_at ..]: words 0..15 as a.xyzw, b.xyzw, c.xyzw, d.xyzw.
fn chacha12(p: Params, rel: u32) -> Block {
    let lo = p.block_lo + rel;
    let hi = p.block_hi + select(0u, 1u, lo < p.block_lo);
    let init = Block(vec4<u32>(0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u), key4(p.key_at),
                     key4(p.key_at + 4u), vec4<u32>(lo, hi, 0u, 0u));
    var s = init;
    for (var i = 0u; i < 6u; i++) {
        s = quarter4(s);  // columns
        s = quarter4(Block(s.a, s.b.yzwx, s.c.zwxy, s.d.wxyz));  // diagonals, lanes rotated into columns
        s = Block(s.a, s.b.wxyz, s.c.zwxy, s.d.yzwx);
    }
    return Block(s.a + init.a, s.b + init.b, s.c + init.c, s.d + init.d);
}

// Accepted words of one row (4 words at positions pos .. pos + 3; words at or past n_words are not drawn).
fn row_count(v: vec4<u32>, pos: u32, n_words: u32) -> u32 {
    let drawn = (vec4<u32>(pos) + vec4<u32>(0u, 1u, 2u, 3u)) < vec4<u32>(n_words);
    let ok = ((v >> vec4<u32>(1u)) < vec4<u32>(BB_P)) & drawn;
    let one = select(vec4<u32>(0u), vec4<u32>(1u), ok);
    return one.x + one.y + one.z + one.w;
}

fn block_count(s: Block, pos: u32, n_words: u32) -> u32 {
    return row_count(s.a, pos, n_words) + row_count(s.b, pos + 4u, n_words) + row_count(s.c, pos + 8u, n_words)
        + row_count(s.d, pos + 12u, n_words);
}

// The inclusive prefix sum of v over the workgroup's threads (lid order); every thread must call it.
fn scan_inclusive(lid: u32, v: u32) -> u32 {
    sums[lid] = v;
    for (var s = 1u; s < WG; s <<= 1u) {
        workgroupBarrier();
        var t = sums[lid];
        if (lid >= s) {
            t += sums[lid - s];
        }
        workgroupBarrier();
        sums[lid] = t;
    }
    workgroupBarrier();
    return sums[lid];
}

@compute @workgroup_size(WG)
fn chacha_sample_count(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                       @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= params_cs.groups) {
        return;
    }
    let rel = g * WG + lid;
    let pos = rel * 16u;
    var c = 0u;
    if (pos < params_cs.n_words) {
        c = block_count(chacha12(params_cs, rel), pos, params_cs.n_words);
    }
    let total = scan_inclusive(lid, c);
    if (lid == WG - 1u) {
        counts[g] = total;
    }
}

@compute @workgroup_size(WG)
fn chacha_sample_scan(@builtin(local_invocation_index) lid: u32) {
    let groups = params_cs.groups;
    let chunk = (groups + WG - 1u) / WG;
    let first = min(lid * chunk, groups);
    let end = min(first + chunk, groups);
    var s = 0u;
    for (var g = first; g < end; g++) {
        s += counts[g];
    }
    let incl = scan_inclusive(lid, s);
    var run = incl - s;
    for (var g = first; g < end; g++) {
        let c = counts[g];
        counts[g] = run;
        run += c;
    }
    if (lid == WG - 1u) {
        if (params_cs.n_samples == 0u) {
            status[params_cs.status_at] = 0u;
        } else if (incl < params_cs.n_samples) {
            status[params_cs.status_at] = NOT_FOUND;
        }
    }
}

// Word u at position pos, accepted, of rank r: written when its rank is in the launch's window; the last sample's
// position + 1 to the status in the first window's launch. Returns the next rank.
fn emit(u: u32, pos: u32, r: u32) -> u32 {
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

fn emit_row(v: vec4<u32>, pos: u32, r: u32) -> u32 {
    let u = v >> vec4<u32>(1u);
    var k = emit(u.x, pos, r);
    k = emit(u.y, pos + 1u, k);
    k = emit(u.z, pos + 2u, k);
    return emit(u.w, pos + 3u, k);
}

@compute @workgroup_size(WG)
fn chacha_sample_compact(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
                         @builtin(num_workgroups) nwg: vec3<u32>) {
    let g = wid.x + wid.y * nwg.x;
    if (g >= params.groups) {
        return;
    }
    let rel = g * WG + lid;
    let pos = rel * 16u;
    var s = Block(vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u), vec4<u32>(0u));
    var c = 0u;
    if (pos < params.n_words) {
        s = chacha12(params, rel);
        c = block_count(s, pos, params.n_words);
    }
    let incl = scan_inclusive(lid, c);
    if (c == 0u) {
        return;
    }
    var r = counts[g] + incl - c;
    r = emit_row(s.a, pos, r);
    r = emit_row(s.b, pos + 4u, r);
    r = emit_row(s.c, pos + 8u, r);
    r = emit_row(s.d, pos + 12u, r);
}
