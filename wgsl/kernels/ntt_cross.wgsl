// requires: bb_field
// One radix-2 DIT stage across two windows of a split NTT matrix (ntt.wgsl's stage s when the half-span 2^s is
// at least a window): lo holds rows a .. a + R - 1 and hi rows a + 2^s .. (same column layout, w = 2^log_w
// words per row), a at position k0 of its half-block; row r of the pair uses twiddle tw[tw_base + r], the
// binding placed so that tw[tw_base] = omega_{2^(s+1)}^k0.
// Thread i (2-D grid: i = gid.x + gid.y * num_workgroups.x * WG) owns word i of both windows; params.n words.
// Bindings: 0 lo (read_write), 1 hi (read_write), 2 tw (read), 3 params.

struct Params { n: u32, log_w: u32, tw_base: u32, _pad0: u32 }

@group(0) @binding(0) var<storage, read_write> lo: array<u32>;
@group(0) @binding(1) var<storage, read_write> hi: array<u32>;
@group(0) @binding(2) var<storage, read> tw: array<u32>;
@group(0) @binding(3) var<uniform> params: Params;

@id(0) override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn ntt_cross(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.n) {
        return;
    }
    let a = lo[i];
    let t = bb_mul(hi[i], tw[params.tw_base + (i >> params.log_w)]);
    lo[i] = bb_add(a, t);
    hi[i] = bb_sub(a, t);
}
