// requires: bb_field
// Radix-2 DIT NTT over the columns of an (H, w) row-major Montgomery matrix whose rows are already in
// bit-reversed order (ntt_bitrev); the output is in natural order. H = 2^log_h, w = 2^log_w words.
// Stage s (half = 2^s) combines rows (b*2^(s+1) + k, + 2^s) with twiddle tw[2^s + k] = omega_{2^(s+1)}^k:
// the table is stage-major and independent of H (tw[0] unused). Entry points, one dispatch per call:
// - ntt_local: stages 0..log_stage-1 for a tile of 2^log_stage rows x 2^log_cw columns in workgroup memory
//   (tile <= TILE_WORDS words); one workgroup per tile (linear id = wg.x + wg.y * nwg.x), params.n tiles.
// - ntt_radix4: stages s and s+1 (s = log_stage); thread i owns 4 words of one column (column = i & (w-1)).
// - ntt_radix2: stage s alone; thread i owns 2 words. Twiddles are loaded per thread, never from params.
// Bindings: 0 data (read_write), 1 tw (read), 2 params.

struct Params { n: u32, log_w: u32, log_stage: u32, log_cw: u32 }

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read> tw: array<u32>;
@group(0) @binding(2) var<uniform> params: Params;

@id(0) override WG: u32 = 256u;
const TILE_WORDS: u32 = 4096u;  // 16 KiB of workgroup memory; the driver's LOG_TILE_WORDS = 12

var<workgroup> tile: array<u32, TILE_WORDS>;

@compute @workgroup_size(WG)
fn ntt_local(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.x + wid.y * nwg.x;
    let live = wg < params.n;  // uniform per workgroup: barriers stay in uniform control flow
    let log_t = params.log_stage;
    let log_cw = params.log_cw;
    let log_w = params.log_w;
    let n_words = 1u << (log_t + log_cw);
    let col_mask = (1u << log_cw) - 1u;
    let log_col_tiles = log_w - log_cw;
    let col_tile = wg & ((1u << log_col_tiles) - 1u);
    let row_tile = wg >> log_col_tiles;
    let base = ((row_tile << log_t) << log_w) + (col_tile << log_cw);
    if (live) {
        for (var j = lid; j < n_words; j += WG) {
            tile[j] = data[base + ((j >> log_cw) << log_w) + (j & col_mask)];
        }
    }
    workgroupBarrier();
    for (var s = 0u; s < log_t; s++) {
        let half = 1u << s;
        if (live) {
            for (var j = lid; j < (n_words >> 1u); j += WG) {
                let q = j >> log_cw;  // butterfly index within the column
                let k = q & (half - 1u);
                let i0 = ((((q >> s) << (s + 1u)) + k) << log_cw) + (j & col_mask);
                let i1 = i0 + (half << log_cw);
                let a = tile[i0];
                let t = bb_mul(tile[i1], tw[half + k]);
                tile[i0] = bb_add(a, t);
                tile[i1] = bb_sub(a, t);
            }
        }
        workgroupBarrier();
    }
    if (live) {
        for (var j = lid; j < n_words; j += WG) {
            data[base + ((j >> log_cw) << log_w) + (j & col_mask)] = tile[j];
        }
    }
}

@compute @workgroup_size(WG)
fn ntt_radix4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    let s = params.log_stage;
    let log_w = params.log_w;
    let half = 1u << s;
    let q = i >> log_w;  // quad index within the column
    let k = q & (half - 1u);
    let i0 = ((((q >> s) << (s + 2u)) + k) << log_w) + (i & ((1u << log_w) - 1u));
    let step = half << log_w;
    let x0 = data[i0];
    let x1 = data[i0 + step];
    let x2 = data[i0 + 2u * step];
    let x3 = data[i0 + 3u * step];
    // stage s: pairs (x0, x1) and (x2, x3), both at position k of their half
    let w1 = tw[half + k];
    let t1 = bb_mul(x1, w1);
    let t3 = bb_mul(x3, w1);
    let y0 = bb_add(x0, t1);
    let y1 = bb_sub(x0, t1);
    let y2 = bb_add(x2, t3);
    let y3 = bb_sub(x2, t3);
    // stage s + 1: pairs (y0, y2) at position k and (y1, y3) at position k + half
    let t2 = bb_mul(y2, tw[2u * half + k]);
    let t4 = bb_mul(y3, tw[3u * half + k]);
    data[i0] = bb_add(y0, t2);
    data[i0 + 2u * step] = bb_sub(y0, t2);
    data[i0 + step] = bb_add(y1, t4);
    data[i0 + 3u * step] = bb_sub(y1, t4);
}

@compute @workgroup_size(WG)
fn ntt_radix2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    let s = params.log_stage;
    let log_w = params.log_w;
    let half = 1u << s;
    let q = i >> log_w;
    let k = q & (half - 1u);
    let i0 = ((((q >> s) << (s + 1u)) + k) << log_w) + (i & ((1u << log_w) - 1u));
    let i1 = i0 + (half << log_w);
    let a = data[i0];
    let t = bb_mul(data[i1], tw[half + k]);
    data[i0] = bb_add(a, t);
    data[i1] = bb_sub(a, t);
}
