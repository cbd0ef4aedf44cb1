// requires: bb_field
// Canonical words -> Montgomery words (a -> a R mod P, as bb_mul(a, R^2 mod P)) with a range check, over one window
// of a table: word t < n (global index base + t) is converted when it is below P; a word >= P is left as it is,
// and the smallest global index of such a word is kept in check[check_at] (atomic min over launches: the caller
// sets it to 0xffffffff first). to_monty_inplace converts table in place; to_monty_copy reads canonical (a buffer
// the caller owns, never written) into table. Bindings: 0 check, 1 table, 2 canonical (copy only), then params.
// Launch: one thread per word on a 2-D grid (t = gid.x + gid.y * nwg.x * WG), once per window.

struct Params { uint n; uint base; uint check_at; uint _pad0; };

constant constexpr uint WG = 256u;

kernel void to_monty_inplace(device atomic_uint* check [[buffer(0)]], device uint* table [[buffer(1)]],
                             constant Params& params [[buffer(2)]], uint3 gid [[thread_position_in_grid]],
                             uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    uint a = table[t];
    if (a < BB_P) {
        table[t] = bb_mul(a, BB_R2);
    } else {
        atomic_fetch_min_explicit(&check[params.check_at], params.base + t, memory_order_relaxed);
    }
}

kernel void to_monty_copy(device atomic_uint* check [[buffer(0)]], device uint* table [[buffer(1)]],
                          device const uint* canonical [[buffer(2)]], constant Params& params [[buffer(3)]],
                          uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint t = gid.x + gid.y * nwg.x * WG;
    if (t >= params.n) {
        return;
    }
    uint a = canonical[t];
    if (a < BB_P) {
        table[t] = bb_mul(a, BB_R2);
    } else {
        table[t] = a;
        atomic_fetch_min_explicit(&check[params.check_at], params.base + t, memory_order_relaxed);
    }
}
