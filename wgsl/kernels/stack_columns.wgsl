// requires: bb_field
// One table's columns into the stacked polynomial (the tables' commitment), canonical words -> Montgomery. Thread t
// < n = 2^log_rows * cols reads src[t]: column-major (col_major = 1: c = t >> log_rows, r its low bits) or row-major
// (r = t / cols, c = t mod cols). Column c sits in slot s = first_slot + c: stacked[(s << m) + r] (prefix = 0, the
// suffix layout) or stacked[(r << sel_bits) | bitrev_{sel_bits}(s)] (prefix = 1). stack_zero zeroes stacked[0, n).
// Range check: a word >= P is stored as it is and the smallest such t is kept in check[0] (atomic min; the caller
// sets it to 0xffffffff first and refuses the proof when it changed). Bindings: 0 src (any u32), 1 stacked,
// 2 check, 3 params; stack_zero: 0 stacked_zero, 1 params_zero. Launch: one thread per word on a 2-D grid. Words
// Montgomery in [0, P) out for words in [0, P).

struct Params { n: u32, cols: u32, log_rows: u32, col_major: u32, first_slot: u32, m: u32, sel_bits: u32, prefix: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> stacked: array<u32>;
@group(0) @binding(2) var<storage, read_write> check: array<atomic<u32>>;
@group(0) @binding(3) var<uniform> params: Params;
@group(0) @binding(0) var<storage, read_write> stacked_zero: array<u32>;
@group(0) @binding(1) var<uniform> params_zero: Params;

@compute @workgroup_size(WG)
fn stack_columns(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    var r = t & ((1u << params.log_rows) - 1u);
    var c = t >> params.log_rows;
    if (params.col_major == 0u) {
        r = t / params.cols;
        c = t - r * params.cols;
    }
    let s = params.first_slot + c;
    var at = (s << params.m) + r;
    if (params.prefix != 0u) {
        var rev = 0u;
        if (params.sel_bits > 0u) {
            rev = reverseBits(s) >> (32u - params.sel_bits);  // sel_bits >= 1: the shift stays below 32
        }
        at = (r << params.sel_bits) | rev;
    }
    let a = src[t];
    if (a < BB_P) {
        stacked[at] = bb_mul(a, BB_R2);
    } else {
        stacked[at] = a;
        atomicMin(&check[0], t);
    }
}

@compute @workgroup_size(WG)
fn stack_zero(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t < params_zero.n) {
        stacked_zero[t] = 0u;
    }
}
