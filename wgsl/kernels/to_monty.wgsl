// requires: bb_field
// Canonical words -> Montgomery words (a -> a R mod P, as bb_mul(a, R^2 mod P)) with a range check, over one window
// of a table: word t < n (global index base + t) is converted when it is below P; a word >= P is left as it is,
// and the smallest global index of such a word is kept in check[check_at] (atomic min over launches: the caller
// sets it to 0xffffffff first). to_monty_inplace converts table in place; to_monty_copy reads canonical (a buffer
// the caller owns, never written) into table. Bindings: 0 check, 1 table, 2 canonical (copy only), then params
// (params_inplace, at 2, for to_monty_inplace). Launch: one thread per word on a 2-D grid, once per window.

struct Params { n: u32, base: u32, check_at: u32, _pad0: u32 }

const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read_write> check: array<atomic<u32>>;
@group(0) @binding(1) var<storage, read_write> table: array<u32>;
@group(0) @binding(2) var<storage, read> canonical: array<u32>;
@group(0) @binding(2) var<uniform> params_inplace: Params;
@group(0) @binding(3) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn to_monty_inplace(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t < params_inplace.n) {
        let a = table[t];
        if (a < BB_P) {
            table[t] = bb_mul(a, BB_R2);
        } else {
            atomicMin(&check[params_inplace.check_at], params_inplace.base + t);
        }
    }
}

@compute @workgroup_size(WG)
fn to_monty_copy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * WG;
    if (t < params.n) {
        let a = canonical[t];
        if (a < BB_P) {
            table[t] = bb_mul(a, BB_R2);
        } else {
            table[t] = a;
            atomicMin(&check[params.check_at], params.base + t);
        }
    }
}
