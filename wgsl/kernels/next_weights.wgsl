// requires: bb_ext4
// Next-row weights from an eq sum S of points sharing one window (Backend.add_next_weights): for b = base + i,
// i < len, r = (b >> log_low) & mask (the window's local row): W[i] += (r >= 1 ? S[b - 2^log_low] : 0)
// + (r == mask ? S[b] : 0), the repeat-last successor (ref.shift). S is bound as two windows of win entries:
// cur = S[base, base + win) and prev, S[b - 2^log_low] being prev[off] (off = i + prev_shift < win) or cur[off - win].
// Bindings: 0 out_weights (EF window from b = base, in place), 1 prev, 2 cur (EF), 3 params. Thread i, 2-D grid.
// Words Montgomery in [0, P).

struct Params { len: u32, base: u32, log_low: u32, mask: u32, prev_shift: u32, win: u32, _pad0: u32, _pad1: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> out_weights: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> prev: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> cur: array<vec4<u32>>;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn next_weights(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WG;
    if (i >= params.len) {
        return;
    }
    let r = ((params.base + i) >> params.log_low) & params.mask;
    var acc = out_weights[i];
    if (r >= 1u) {
        let off = i + params.prev_shift;
        if (off < params.win) {
            acc = ef_add(acc, prev[off]);
        } else {
            acc = ef_add(acc, cur[off - params.win]);
        }
    }
    if (r == params.mask) {
        acc = ef_add(acc, cur[i]);
    }
    out_weights[i] = acc;
}
