// requires: bb_ext4
// Workgroup sums of EF pairs: reduce_pair(lid, a, b) leaves the sums of a and of b over the RED_WG threads of a
// workgroup in red_a[0], red_b[0] (every thread must call it).

const RED_WG: u32 = 256u;

var<workgroup> red_a: array<vec4<u32>, RED_WG>;
var<workgroup> red_b: array<vec4<u32>, RED_WG>;

// Sums a and b over the workgroup into red_a[0], red_b[0]; every thread must call it.
fn reduce_pair(lid: u32, a: vec4<u32>, b: vec4<u32>) {
    red_a[lid] = a;
    red_b[lid] = b;
    workgroupBarrier();
    for (var span = RED_WG / 2u; span > 0u; span >>= 1u) {
        if (lid < span) {
            red_a[lid] = ef_add(red_a[lid], red_a[lid + span]);
            red_b[lid] = ef_add(red_b[lid], red_b[lid + span]);
        }
        workgroupBarrier();
    }
}
