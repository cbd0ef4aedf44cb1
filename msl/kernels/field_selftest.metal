// requires: bb_ext4
// Differential-test kernel for the field library: out[i] = op(a[i], b[i]) elementwise.
// Thread i (2-D grid, row = threadgroups_per_grid.x * 64) handles element i. Bindings: 0 a, 1 b, 2 out, 3 params.
// op: 0 add, 1 sub, 2 mul, 3 ext mul (elements are uint4 = 4 words), 4 ext add.

struct Params { uint n; uint op; uint _pad0; uint _pad1; };

kernel void field_selftest(device const uint* a [[buffer(0)]], device const uint* b [[buffer(1)]],
                           device uint* out [[buffer(2)]], constant Params& params [[buffer(3)]],
                           uint3 gid [[thread_position_in_grid]], uint3 nwg [[threadgroups_per_grid]]) {
    uint i = gid.x + gid.y * nwg.x * 64u;
    if (i >= params.n) {
        return;
    }
    switch (params.op) {
        case 0u: out[i] = bb_add(a[i], b[i]); break;
        case 1u: out[i] = bb_sub(a[i], b[i]); break;
        case 2u: out[i] = bb_mul(a[i], b[i]); break;
        case 3u:
        case 4u: {
            uint4 x = uint4(a[4u * i], a[4u * i + 1u], a[4u * i + 2u], a[4u * i + 3u]);
            uint4 y = uint4(b[4u * i], b[4u * i + 1u], b[4u * i + 2u], b[4u * i + 3u]);
            uint4 z = params.op == 3u ? ef_mul(x, y) : ef_add(x, y);
            out[4u * i] = z.x; out[4u * i + 1u] = z.y; out[4u * i + 2u] = z.z; out[4u * i + 3u] = z.w;
            break;
        }
        default: break;
    }
}
