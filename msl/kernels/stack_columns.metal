// requires: bb_field
// One table's columns into the stacked polynomial (the tables' commitment), canonical words -> Montgomery. Thread t
// < n = 2^log_rows * cols reads src[t]: column-major (col_major = 1: c = t >> log_rows, r its low bits) or row-major
// (r = t / cols, c = t mod cols). Column c sits in slot s = first_slot + c: stacked[(s << m) + r] (prefix = 0, the
// suffix layout) or stacked[(r << sel_bits) | bitrev_{sel_bits}(s)] (prefix = 1). stack_zero zeroes stacked[0, n).
// Range check: a word >= P is stored as it is and the smallest such t is kept in check[0] (atomic min; the caller
// sets it to 0xffffffff first and refuses the proof when it changed). Bindings: 0 src (any uint), 1 stacked,
// 2 check, 3 params; stack_zero: 0 stacked_zero, 1 params. One thread per word on a 2-D grid. Shifts are taken
// mod 32, as in WGSL. Words Montgomery in [0, P) out for words in [0, P).

struct Params {
    uint n; uint cols; uint log_rows; uint col_major; uint first_slot; uint m; uint sel_bits; uint prefix;
};

constant constexpr uint WG = 256u;

kernel void stack_columns(device const uint* src [[buffer(0)]], device uint* stacked [[buffer(1)]],
                          device atomic_uint* check [[buffer(2)]], constant Params& params [[buffer(3)]],
                          uint3 gid [[thread_position_in_grid]],
                          uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    uint r = t & ((1u << (params.log_rows & 31u)) - 1u);
    uint c = t >> (params.log_rows & 31u);
    if (params.col_major == 0u) {
        r = t / params.cols;
        c = t - r * params.cols;
    }
    uint s = params.first_slot + c;
    uint at = (s << (params.m & 31u)) + r;
    if (params.prefix != 0u) {
        // bitrev in two steps, so no shift reaches 32 (sel_bits <= 31); 0 when sel_bits = 0
        uint rev = params.sel_bits > 0u ? (reverse_bits(s) >> 1u) >> (31u - params.sel_bits) : 0u;
        at = (r << (params.sel_bits & 31u)) | rev;
    }
    uint a = src[t];
    if (a < BB_P) {
        stacked[at] = bb_mul(a, BB_R2);
    } else {
        stacked[at] = a;
        atomic_fetch_min_explicit(&check[0], t, memory_order_relaxed);
    }
}

kernel void stack_zero(device uint* stacked_zero [[buffer(0)]], constant Params& params [[buffer(1)]],
                       uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t < params.n) {
        stacked_zero[t] = 0u;
    }
}
