// In-place bit-reversal of the rows of an (H, w) row-major word matrix (H = 2^log_h >= 2, w = 2^log_w):
// the input permutation of the DIT NTT in ntt.wgsl. Thread i (2-D grid: i = gid.x + gid.y * nwg.x * WG) owns
// word (row r = i >> log_w, column i & (w - 1)) and swaps it with row rev(r) when r < rev(r).
// Bindings: 0 data (read_write), 1 params.

struct Params { n_words: u32, log_w: u32, log_h: u32, _pad: u32 }

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<uniform> params: Params;

@id(0) override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn ntt_bitrev(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n_words) {
        return;
    }
    let row = i >> params.log_w;
    let rev = reverseBits(row) >> (32u - params.log_h);  // log_h >= 1: the shift stays below 32
    if (row < rev) {
        let j = (rev << params.log_w) + (i & ((1u << params.log_w) - 1u));
        let a = data[i];
        data[i] = data[j];
        data[j] = a;
    }
}
