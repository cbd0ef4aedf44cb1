// requires: challenger bb_ext4
// A program of extension-field operations on words of the scratch and proof regions (kernels/ef_program.py): the
// host's arithmetic between a hiding proof's transcript steps, done where its operands already are.
// The program is n_slots <= 512 4-word slots in scratch from word params.table (written by the host before the
// launch, never by an op; read once into workgroup memory), each op (code, dst, a, b) followed by its more slots.
// An operand is a word offset in scratch, or in proof with bit 31 set; an EF value is 4 consecutive words; a
// vector's entries are EF values `stride` EF values apart (a stride of 0 repeats one value). An op sees what every
// earlier op wrote (the levels below).
//   1 LINEAR  (n, s, sa, sb)         dst[i] = s * a[i sa] + b[i sb], i < n; b = 0xffffffff: no b term; dst may
//                                    alias a or b element for element (strides 1)
//   2 DOT     (n, m, sa, sb)         dst[j] = sum_{i < n} a[i sa + j ja] * b[i sb + j jb], j < m (0 for n = 0);
//             (ja, jb, 0, 0)         dst must not overlap a or b when m > 1
//   3 INV     -                      dst = a^-1 through the norm (field_np.ef_inv); 0 maps to 0
//   4 EQ      -                      dst[j] = prod_t (bit t of j ? a[t] : 1 - a[t]) for j < 2^b, a[0] the most
//                                    significant bit (ref.multilinear.eq_table); dst must not overlap a
//   5 POWERS  (n, m, sa, 0)          dst[j n + i] = b a[j sa]^i, i < n, j < max(m, 1); b = 0xffffffff: 1
//   6 SQUARES (n, reverse, m, sa)    dst[j n + i] = a[j sa]^(2^i), i < n, j < max(m, 1) (reverse != 0: the n
//                                    entries of each j in reverse order)
//   7 LIFT    (n, sa, 0, 0)          dst[i] = (a[i sa], 0, 0, 0): base words as EF values; dst must not overlap a
// The table lists the ops level by level, EF_LEVEL_END set in the code word of each level's last op: the ops of a
// level touch nothing another of them writes (kernels/ef_program.py `levels`), so they run together, their outputs
// (LINEAR's i, DOT's j, EQ's entries, POWERS' and SQUARES' j, LIFT's i; INV's one) counted in op order and output
// g on thread g mod EF_WG, with one storage barrier after the level.
// Then the transcript program params.ops[0 .. n_ops) runs as the epilogue (challenger.wgsl; its proof offsets
// relative to proof word params.window), so the transcript steps after a run of algebra need no launch of their own.
// Bindings: 0 scratch, 1 proof (both whole), 2 points (whole), 3 p2_rc, 4 params. Launch: one workgroup of EF_WG
// threads. Words Montgomery in [0, P).

const EF_LINEAR: u32 = 1u;
const EF_DOT: u32 = 2u;
const EF_INV: u32 = 3u;
const EF_EQ: u32 = 4u;
const EF_POWERS: u32 = 5u;
const EF_SQUARES: u32 = 6u;
const EF_LIFT: u32 = 7u;
const EF_LEVEL_END: u32 = 0x100u;
const EF_CODE: u32 = 0xffu;
const IN_PROOF: u32 = 0x80000000u;
const EF_WG: u32 = 256u;
const NO_OPERAND: u32 = 0xffffffffu;

struct Params { n_slots: u32, table: u32, window: u32, _pad0: u32, n_ops: u32, _t0: u32, _t1: u32, _t2: u32,
                ops: array<vec4<u32>, 11> }

@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> proof: array<u32>;
@group(0) @binding(2) var<storage, read_write> points: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> p2_rc: array<vec4<u32>, P2_RC_VEC4S>;
@group(0) @binding(4) var<uniform> params: Params;

fn scratch_get(i: u32) -> u32 { return scratch[i]; }
fn scratch_set(i: u32, v: u32) { scratch[i] = v; }
fn proof_get(i: u32) -> u32 { return proof[params.window + i]; }
fn proof_set(i: u32, v: u32) { proof[params.window + i] = v; }
fn point_set(i: u32, v: vec4<u32>) { points[i] = v; }

fn word(at: u32) -> u32 {
    if ((at & IN_PROOF) != 0u) {
        return proof[at & ~IN_PROOF];
    }
    return scratch[at];
}

// An EF value's words: one branch on the buffer, then four loads issued together (a branch a word kept each load
// waiting on the one before).
fn get_ef(at: u32, i: u32) -> vec4<u32> {
    let base = (at & ~IN_PROOF) + 4u * i;
    if ((at & IN_PROOF) != 0u) {
        return vec4<u32>(proof[base], proof[base + 1u], proof[base + 2u], proof[base + 3u]);
    }
    return vec4<u32>(scratch[base], scratch[base + 1u], scratch[base + 2u], scratch[base + 3u]);
}

fn set_ef(at: u32, i: u32, v: vec4<u32>) {
    let base = (at & ~IN_PROOF) + 4u * i;
    if ((at & IN_PROOF) != 0u) {
        proof[base] = v.x;
        proof[base + 1u] = v.y;
        proof[base + 2u] = v.z;
        proof[base + 3u] = v.w;
    } else {
        scratch[base] = v.x;
        scratch[base + 1u] = v.y;
        scratch[base + 2u] = v.z;
        scratch[base + 3u] = v.w;
    }
}

// c_i X^i -> c_i z^i X^i with z = W^((P-1)/4): a^P.
fn frobenius(a: vec4<u32>, z: u32, z2: u32, z3: u32) -> vec4<u32> {
    return vec4<u32>(a.x, bb_mul(a.y, z), bb_mul(a.z, z2), bb_mul(a.w, z3));
}

fn ef_inverse(a: vec4<u32>) -> vec4<u32> {
    let z = bb_pow(BB_W_MONTY, (BB_P - 1u) / 4u);
    let z2 = bb_mul(z, z);
    let z3 = bb_mul(z2, z);
    let f1 = frobenius(a, z, z2, z3);
    let f2 = frobenius(f1, z, z2, z3);
    let f3 = frobenius(f2, z, z2, z3);
    let conj = ef_mul(ef_mul(f1, f2), f3);
    let norm = ef_mul(a, conj).x;  // the norm lies in the base field
    return ef_mul_base(conj, bb_pow(norm, BB_P - 2u));
}

const MAX_SLOTS: u32 = 512u;             // a launch's table, kept in workgroup memory (8 KiB)
var<workgroup> table: array<vec4<u32>, 512>;
var<workgroup> level_end: u32;  // the slot after the current level, made uniform

// Output i of the op at slot k (LINEAR's, LIFT's and EQ's entry i; DOT's, POWERS' and SQUARES' j = i; INV's one).
fn exec_output(k: u32, i: u32) {
    let op = table[k];
    let more = table[min(k + 1u, MAX_SLOTS - 1u)];
    switch op.x & EF_CODE {
        case EF_LINEAR: {
            var v = ef_mul(get_ef(more.y, 0u), get_ef(op.z, i * more.z));
            if (op.w != NO_OPERAND) {
                v = ef_add(v, get_ef(op.w, i * more.w));
            }
            set_ef(op.y, i, v);
        }
        case EF_DOT: {
            let step = table[min(k + 2u, MAX_SLOTS - 1u)];
            let a0 = op.z + 4u * i * step.x;
            let b0 = op.w + 4u * i * step.y;
            var acc = vec4<u32>(0u);
            var t = 0u;
            for (; t + 4u <= more.x; t += 4u) {  // four terms' loads in flight at once (sums are exact)
                let t0 = ef_mul(get_ef(a0, t * more.z), get_ef(b0, t * more.w));
                let t1 = ef_mul(get_ef(a0, (t + 1u) * more.z), get_ef(b0, (t + 1u) * more.w));
                let t2 = ef_mul(get_ef(a0, (t + 2u) * more.z), get_ef(b0, (t + 2u) * more.w));
                let t3 = ef_mul(get_ef(a0, (t + 3u) * more.z), get_ef(b0, (t + 3u) * more.w));
                acc = ef_add(acc, ef_add(ef_add(t0, t1), ef_add(t2, t3)));
            }
            for (; t < more.x; t++) {
                acc = ef_add(acc, ef_mul(get_ef(a0, t * more.z), get_ef(b0, t * more.w)));
            }
            set_ef(op.y, i, acc);
        }
        case EF_INV: {
            set_ef(op.y, 0u, ef_inverse(get_ef(op.z, 0u)));
        }
        case EF_EQ: {
            // entry i = prod_t (bit t of i, from the top ? a[t] : 1 - a[t])
            let one = vec4<u32>(BB_R, 0u, 0u, 0u);
            var acc = one;
            for (var t = 0u; t < op.w; t++) {
                let p = get_ef(op.z, t);
                if (((i >> (op.w - 1u - t)) & 1u) != 0u) {
                    acc = ef_mul(acc, p);
                } else {
                    acc = ef_mul(acc, ef_sub(one, p));
                }
            }
            set_ef(op.y, i, acc);
        }
        case EF_POWERS: {
            var acc = vec4<u32>(BB_R, 0u, 0u, 0u);
            if (op.w != NO_OPERAND) {
                acc = get_ef(op.w, 0u);
            }
            let x = get_ef(op.z, i * more.z);
            for (var t = 0u; t < more.x; t++) {
                set_ef(op.y, i * more.x + t, acc);
                acc = ef_mul(acc, x);
            }
        }
        case EF_SQUARES: {
            var acc = get_ef(op.z, i * more.w);
            for (var t = 0u; t < more.x; t++) {
                var at = t;
                if (more.y != 0u) {
                    at = more.x - 1u - t;
                }
                set_ef(op.y, i * more.x + at, acc);
                acc = ef_mul(acc, acc);
            }
        }
        case EF_LIFT: {
            set_ef(op.y, i, vec4<u32>(word(op.z + i * more.y), 0u, 0u, 0u));
        }
        default: {}
    }
}

// Outputs of the op at slot k, each made by one thread.
fn outputs(k: u32) -> u32 {
    let op = table[k];
    let more = table[min(k + 1u, MAX_SLOTS - 1u)];
    switch op.x & EF_CODE {
        case EF_LINEAR, EF_LIFT: {
            return more.x;
        }
        case EF_DOT: {
            return more.y;
        }
        case EF_EQ: {
            return 1u << op.w;
        }
        case EF_POWERS: {
            return max(more.y, 1u);
        }
        case EF_SQUARES: {
            return max(more.z, 1u);
        }
        default: {
            return 1u;
        }
    }
}

fn slots(code: u32) -> u32 {
    switch code & EF_CODE {
        case EF_DOT: {
            return 3u;
        }
        case EF_LINEAR, EF_POWERS, EF_SQUARES, EF_LIFT: {
            return 2u;
        }
        default: {
            return 1u;
        }
    }
}

@compute @workgroup_size(256)
fn ef_program(@builtin(local_invocation_index) lid: u32) {
    let n = min(params.n_slots, MAX_SLOTS);
    for (var i = lid; i < n; i += EF_WG) {  // the table read once, together
        let at = params.table + 4u * i;
        table[i] = vec4<u32>(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
    }
    workgroupBarrier();
    var k = 0u;
    loop {
        if (k >= n) {
            break;
        }
        if (lid == 0u) {
            var end = k;
            loop {
                let code = table[end].x;
                end += slots(code);
                if ((code & EF_LEVEL_END) != 0u || end >= n) {
                    break;
                }
            }
            level_end = end;
        }
        let end = workgroupUniformLoad(&level_end);
        // Output g of the level (its ops' outputs counted in order) on thread g mod EF_WG: each thread walks the
        // level's ops once, to the op of each of its outputs in turn, so the lanes of a warp make outputs of
        // different ops at the same time (one op after another, a warp of one-output ops ran one lane at a time).
        let stop = min(end, n);
        var j = k;          // the op of output g
        var first = 0u;     // the level's outputs before op j
        var count = outputs(j);
        var g = lid;
        loop {
            loop {
                if (j >= stop || g < first + count) {
                    break;
                }
                first += count;
                j += slots(table[j].x);
                count = outputs(min(j, MAX_SLOTS - 1u));
            }
            if (j >= stop) {
                break;
            }
            exec_output(j, g - first);
            g += EF_WG;
        }
        k = end;
        storageBarrier();  // the next level may read what this one wrote, in any thread
    }
    workgroupBarrier();
    transcript_run(lid, EF_WG);
}
