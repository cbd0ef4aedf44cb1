// requires: challenger bb_ext4
// A program of extension-field operations on words of the scratch and proof regions (ef_program.wgsl's twin: the
// same ops, the same words; kernels/ef_program.py): the host's arithmetic between a hiding proof's transcript
// steps, done where its operands already are. The program is n_slots <= 512 4-word slots in scratch from word
// params.table (written by the host before the launch, never by an op; read once into threadgroup memory), each op
// (code, dst, a, b) followed by its more slots; an operand is a word offset in scratch, or in proof with bit 31 set; a vector's entries are EF
// values `stride` EF values apart (0 repeats one value).
//   1 LINEAR  (n, s, sa, sb)         dst[i] = s * a[i sa] + b[i sb], i < n; b = 0xffffffff: no b term
//   2 DOT     (n, m, sa, sb)         dst[j] = sum_{i < n} a[i sa + j ja] * b[i sb + j jb], j < m
//             (ja, jb, 0, 0)
//   3 INV     -                      dst = a^-1 through the norm; 0 maps to 0
//   4 EQ      -                      dst[j] = prod_t (bit t of j ? a[t] : 1 - a[t]) for j < 2^b, a[0] the most
//                                    significant bit
//   5 POWERS  (n, m, sa, 0)          dst[j n + i] = b a[j sa]^i, i < n, j < max(m, 1); b = 0xffffffff: 1
//   6 SQUARES (n, reverse, m, sa)    dst[j n + i] = a[j sa]^(2^i), i < n, j < max(m, 1) (reverse != 0: the n
//                                    entries of each j in reverse order)
//   7 LIFT    (n, sa, 0, 0)          dst[i] = (a[i sa], 0, 0, 0): base words as EF values
// The table lists the ops level by level, EF_LEVEL_END set in the code word of each level's last op: the ops of a
// level touch nothing another of them writes, so they run together, their outputs counted in op order and output g
// on thread g mod EF_WG, with one device-memory barrier after the level.
// Then the transcript program params.ops[0 .. n_ops) runs as the epilogue (challenger.metal; its proof offsets
// relative to proof word params.window), so the transcript steps after a run of algebra need no launch of their own.
// Bindings: 0 scratch, 1 proof (both whole), 2 points (whole), 3 p2_rc, 4 params. Launch: one threadgroup of EF_WG
// threads. Words Montgomery in [0, P).

constant constexpr uint EF_LINEAR = 1u;
constant constexpr uint EF_DOT = 2u;
constant constexpr uint EF_INV = 3u;
constant constexpr uint EF_EQ = 4u;
constant constexpr uint EF_POWERS = 5u;
constant constexpr uint EF_SQUARES = 6u;
constant constexpr uint EF_LIFT = 7u;
constant constexpr uint EF_LEVEL_END = 0x100u;
constant constexpr uint EF_CODE = 0xffu;
constant constexpr uint IN_PROOF = 0x80000000u;
constant constexpr uint EF_WG = 256u;
constant constexpr uint NO_OPERAND = 0xffffffffu;

struct Params { uint n_slots; uint table; uint window; uint _pad0; uint n_ops; uint _t0; uint _t1; uint _t2;
                uint4 ops[11]; };

constant constexpr uint MAX_SLOTS = 512u;  // a launch's table, kept in threadgroup memory (8 KiB)

struct Regions {
    device uint* scratch;
    device uint* proof;
};

static uint word(thread const Regions& r, uint at) {
    return (at & IN_PROOF) != 0u ? r.proof[at & ~IN_PROOF] : r.scratch[at];
}

// An EF value's words: the buffer chosen once, then four loads issued together.
static uint4 get_ef(thread const Regions& r, uint at, uint i) {
    device uint* words = (at & IN_PROOF) != 0u ? r.proof : r.scratch;
    uint base = (at & ~IN_PROOF) + 4u * i;
    return uint4(words[base], words[base + 1u], words[base + 2u], words[base + 3u]);
}

static void set_ef(thread const Regions& r, uint at, uint i, uint4 v) {
    device uint* words = (at & IN_PROOF) != 0u ? r.proof : r.scratch;
    uint base = (at & ~IN_PROOF) + 4u * i;
    words[base] = v.x;
    words[base + 1u] = v.y;
    words[base + 2u] = v.z;
    words[base + 3u] = v.w;
}

// c_i X^i -> c_i z^i X^i with z = W^((P-1)/4): a^P.
static uint4 frobenius(uint4 a, uint z, uint z2, uint z3) {
    return uint4(a.x, bb_mul(a.y, z), bb_mul(a.z, z2), bb_mul(a.w, z3));
}

static uint4 ef_inverse(uint4 a) {
    uint z = bb_pow(BB_W_MONTY, (BB_P - 1u) / 4u);
    uint z2 = bb_mul(z, z);
    uint z3 = bb_mul(z2, z);
    uint4 f1 = frobenius(a, z, z2, z3);
    uint4 f2 = frobenius(f1, z, z2, z3);
    uint4 f3 = frobenius(f2, z, z2, z3);
    uint4 conj = ef_mul(ef_mul(f1, f2), f3);
    uint norm = ef_mul(a, conj).x;  // the norm lies in the base field
    return ef_mul_base(conj, bb_pow(norm, BB_P - 2u));
}

// Output i of the op at slot k (LINEAR's, LIFT's and EQ's entry i; DOT's, POWERS' and SQUARES' j = i; INV's one).
static void exec_output(thread const Regions& r, threadgroup uint4* table, uint k, uint i) {
    uint4 op = table[k];
    uint4 more = table[min(k + 1u, MAX_SLOTS - 1u)];
    switch (op.x & EF_CODE) {
        case EF_LINEAR: {
            uint4 v = ef_mul(get_ef(r, more.y, 0u), get_ef(r, op.z, i * more.z));
            if (op.w != NO_OPERAND) {
                v = ef_add(v, get_ef(r, op.w, i * more.w));
            }
            set_ef(r, op.y, i, v);
            break;
        }
        case EF_DOT: {
            uint4 step = table[min(k + 2u, MAX_SLOTS - 1u)];
            uint a0 = op.z + 4u * i * step.x;
            uint b0 = op.w + 4u * i * step.y;
            uint4 acc = uint4(0u);
            uint t = 0u;
            for (; t + 4u <= more.x; t += 4u) {  // four terms' loads in flight at once (sums are exact)
                uint4 t0 = ef_mul(get_ef(r, a0, t * more.z), get_ef(r, b0, t * more.w));
                uint4 t1 = ef_mul(get_ef(r, a0, (t + 1u) * more.z), get_ef(r, b0, (t + 1u) * more.w));
                uint4 t2 = ef_mul(get_ef(r, a0, (t + 2u) * more.z), get_ef(r, b0, (t + 2u) * more.w));
                uint4 t3 = ef_mul(get_ef(r, a0, (t + 3u) * more.z), get_ef(r, b0, (t + 3u) * more.w));
                acc = ef_add(acc, ef_add(ef_add(t0, t1), ef_add(t2, t3)));
            }
            for (; t < more.x; t++) {
                acc = ef_add(acc, ef_mul(get_ef(r, a0, t * more.z), get_ef(r, b0, t * more.w)));
            }
            set_ef(r, op.y, i, acc);
            break;
        }
        case EF_INV:
            set_ef(r, op.y, 0u, ef_inverse(get_ef(r, op.z, 0u)));
            break;
        case EF_EQ: {
            // entry i = prod_t (bit t of i, from the top ? a[t] : 1 - a[t])
            uint4 one = uint4(BB_R, 0u, 0u, 0u);
            uint4 acc = one;
            for (uint t = 0u; t < op.w; t++) {
                uint4 p = get_ef(r, op.z, t);
                acc = ef_mul(acc, ((i >> (op.w - 1u - t)) & 1u) != 0u ? p : ef_sub(one, p));
            }
            set_ef(r, op.y, i, acc);
            break;
        }
        case EF_POWERS: {
            uint4 acc = op.w != NO_OPERAND ? get_ef(r, op.w, 0u) : uint4(BB_R, 0u, 0u, 0u);
            uint4 x = get_ef(r, op.z, i * more.z);
            for (uint t = 0u; t < more.x; t++) {
                set_ef(r, op.y, i * more.x + t, acc);
                acc = ef_mul(acc, x);
            }
            break;
        }
        case EF_SQUARES: {
            uint4 acc = get_ef(r, op.z, i * more.w);
            for (uint t = 0u; t < more.x; t++) {
                set_ef(r, op.y, i * more.x + (more.y != 0u ? more.x - 1u - t : t), acc);
                acc = ef_mul(acc, acc);
            }
            break;
        }
        case EF_LIFT:
            set_ef(r, op.y, i, uint4(word(r, op.z + i * more.y), 0u, 0u, 0u));
            break;
        default:
            break;
    }
}

// Outputs of the op at slot k, each made by one thread.
static uint outputs(threadgroup uint4* table, uint k) {
    uint4 op = table[k];
    uint4 more = table[min(k + 1u, MAX_SLOTS - 1u)];
    switch (op.x & EF_CODE) {
        case EF_LINEAR:
        case EF_LIFT:
            return more.x;
        case EF_DOT:
            return more.y;
        case EF_EQ:
            return 1u << op.w;
        case EF_POWERS:
            return max(more.y, 1u);
        case EF_SQUARES:
            return max(more.z, 1u);
        default:
            return 1u;
    }
}

static uint slots(uint code) {
    code &= EF_CODE;
    return code == EF_DOT ? 3u : (code == EF_LINEAR || code == EF_POWERS || code == EF_SQUARES || code == EF_LIFT) ? 2u
                                                                                                                : 1u;
}

kernel void ef_program(device uint* scratch [[buffer(0)]], device uint* proof [[buffer(1)]],
                       device uint4* points [[buffer(2)]], constant uint4* p2_rc [[buffer(3)]],
                       constant Params& params [[buffer(4)]], uint lid [[thread_index_in_threadgroup]]) {
    threadgroup uint ch_next[1];
    threadgroup atomic_uint ch_distinct[1];
    Regions r = {scratch, proof};
    threadgroup uint4 table[512];
    uint n = min(params.n_slots, MAX_SLOTS);
    for (uint i = lid; i < n; i += EF_WG) {  // the table read once, together
        uint at = params.table + 4u * i;
        table[i] = uint4(scratch[at], scratch[at + 1u], scratch[at + 2u], scratch[at + 3u]);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint k = 0u;
    while (k < n) {
        uint end = k;  // every thread reads the same table: the same level
        bool last = false;
        while (!last && end < n) {
            last = (table[end].x & EF_LEVEL_END) != 0u;
            end += slots(table[end].x);
        }
        // Output g of the level (its ops' outputs counted in order) on thread g mod EF_WG: each thread walks the
        // level's ops once, to the op of each of its outputs in turn, so the lanes of a SIMD group make outputs of
        // different ops at the same time.
        uint stop = min(end, n);
        uint j = k;  // the op of output g
        uint first = 0u;  // the level's outputs before op j
        uint count = outputs(table, j);
        for (uint g = lid;; g += EF_WG) {
            while (j < stop && g >= first + count) {
                first += count;
                j += slots(table[j].x);
                count = outputs(table, min(j, MAX_SLOTS - 1u));
            }
            if (j >= stop) {
                break;
            }
            exec_output(r, table, j, g - first);
        }
        k = end;
        threadgroup_barrier(mem_flags::mem_device);  // the next level may read what this one wrote, in any thread
    }
    threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);
    ChIo io = {scratch, nullptr, proof + params.window, points, p2_rc, params.ops, params.n_ops};
    transcript_run(lid, EF_WG, io, ch_next, ch_distinct);
}
