// requires: bb_field
// Radix-2 DIT NTT over the columns of an (H, w) row-major Montgomery matrix whose rows are already in
// bit-reversed order (ntt_bitrev); the output is in natural order. H = 2^log_h, w = 2^log_w words.
// Stage s (half = 2^s) combines rows (b*2^(s+1) + k, + 2^s) with twiddle tw[2^s + k] = omega_{2^(s+1)}^k:
// the table is stage-major and independent of H (tw[0] unused). Entry points, one dispatch per call:
// - ntt_local: stages 0..log_stage-1 for a tile of 2^log_stage rows x 2^log_cw columns in threadgroup memory
//   (tile <= TILE_WORDS words); one threadgroup per tile (linear id = wid.x + wid.y * nwg.x), params.n tiles.
// - ntt_radix4: stages s and s+1 (s = log_stage); thread i owns 4 words of one column (column = i & (w-1)).
// - ntt_radix2: stage s alone; thread i owns 2 words. Twiddles are loaded per thread, never from params.
// Bindings: 0 data (read_write), 1 tw (read), 2 params. Shift amounts stay below 32: log_h + log_w < 32.

struct Params { uint n; uint log_w; uint log_stage; uint log_cw; };

constant uint WG [[function_constant(0)]];
constant constexpr uint TILE_WORDS = 4096u;  // 16 KiB of threadgroup memory; the driver's LOG_TILE_WORDS = 12

kernel void ntt_local(device uint* data [[buffer(0)]], device const uint* tw [[buffer(1)]],
                      constant Params& params [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                      uint3 wid [[threadgroup_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    threadgroup uint tile[TILE_WORDS];
    uint wg = wid.x + wid.y * nwg.x;
    bool live = wg < params.n;  // uniform per threadgroup: barriers stay in uniform control flow
    uint log_t = params.log_stage;
    uint log_cw = params.log_cw;
    uint log_w = params.log_w;
    uint n_words = 1u << (log_t + log_cw);
    uint col_mask = (1u << log_cw) - 1u;
    uint log_col_tiles = log_w - log_cw;
    uint col_tile = wg & ((1u << log_col_tiles) - 1u);
    uint row_tile = wg >> log_col_tiles;
    uint base = ((row_tile << log_t) << log_w) + (col_tile << log_cw);
    if (live) {
        for (uint j = lid; j < n_words; j += WG) {
            tile[j] = data[base + ((j >> log_cw) << log_w) + (j & col_mask)];
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = 0u; s < log_t; s++) {
        uint half = 1u << s;
        if (live) {
            for (uint j = lid; j < (n_words >> 1u); j += WG) {
                uint q = j >> log_cw;  // butterfly index within the column
                uint k = q & (half - 1u);
                uint i0 = ((((q >> s) << (s + 1u)) + k) << log_cw) + (j & col_mask);
                uint i1 = i0 + (half << log_cw);
                uint a = tile[i0];
                uint t = bb_mul(tile[i1], tw[half + k]);
                tile[i0] = bb_add(a, t);
                tile[i1] = bb_sub(a, t);
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (live) {
        for (uint j = lid; j < n_words; j += WG) {
            data[base + ((j >> log_cw) << log_w) + (j & col_mask)] = tile[j];
        }
    }
}

kernel void ntt_radix4(device uint* data [[buffer(0)]], device const uint* tw [[buffer(1)]],
                       constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                       uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    uint s = params.log_stage;
    uint log_w = params.log_w;
    uint half = 1u << s;
    uint q = i >> log_w;  // quad index within the column
    uint k = q & (half - 1u);
    uint i0 = ((((q >> s) << (s + 2u)) + k) << log_w) + (i & ((1u << log_w) - 1u));
    uint step = half << log_w;
    uint x0 = data[i0];
    uint x1 = data[i0 + step];
    uint x2 = data[i0 + 2u * step];
    uint x3 = data[i0 + 3u * step];
    // stage s: pairs (x0, x1) and (x2, x3), both at position k of their half
    uint w1 = tw[half + k];
    uint t1 = bb_mul(x1, w1);
    uint t3 = bb_mul(x3, w1);
    uint y0 = bb_add(x0, t1);
    uint y1 = bb_sub(x0, t1);
    uint y2 = bb_add(x2, t3);
    uint y3 = bb_sub(x2, t3);
    // stage s + 1: pairs (y0, y2) at position k and (y1, y3) at position k + half
    uint t2 = bb_mul(y2, tw[2u * half + k]);
    uint t4 = bb_mul(y3, tw[3u * half + k]);
    data[i0] = bb_add(y0, t2);
    data[i0 + 2u * step] = bb_sub(y0, t2);
    data[i0 + step] = bb_add(y1, t4);
    data[i0 + 3u * step] = bb_sub(y1, t4);
}

kernel void ntt_radix2(device uint* data [[buffer(0)]], device const uint* tw [[buffer(1)]],
                       constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                       uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    uint s = params.log_stage;
    uint log_w = params.log_w;
    uint half = 1u << s;
    uint q = i >> log_w;
    uint k = q & (half - 1u);
    uint i0 = ((((q >> s) << (s + 1u)) + k) << log_w) + (i & ((1u << log_w) - 1u));
    uint i1 = i0 + (half << log_w);
    uint a = data[i0];
    uint t = bb_mul(data[i1], tw[half + k]);
    data[i0] = bb_add(a, t);
    data[i1] = bb_sub(a, t);
}
