"""The C source of the host's Poseidon2 (``native/permute.py`` builds and binds it): the table layout every entry
point reads, the kernels and the entry points.

Two C paths, the same results:
- fast: Montgomery arithmetic on 64-bit lanes holding 32-bit residues, the external matrix in its O(width) form,
  reductions only where a bound requires one, 4 or 8 states per SIMD block; compiled for widths 16 and 24 with
  S-box degrees 7 and 3 (BabyBear and KoalaBear as Plonky3 defines them), any odd prime 2^16 < p < 2^31, and
  Plonky3's external matrix (checked in Python). On x86-64 the lane kernel is compiled for SSE2, AVX2 and AVX-512
  in the same library (function target attributes) and picked at run time from the CPU, so a cache copied to
  another x86 machine stays valid; on arm64 it uses NEON; elsewhere GCC/Clang vectors; the single state runs the
  same kernel on scalars.
- generic: the reference's arithmetic as written (dense matrix, a remainder after each step), for any other
  instance the Python API accepts (other widths, a matrix that is not Plonky3's structured one), and for C
  compilers without GCC/Clang vectors (lanes then run one state at a time).
"""

from __future__ import annotations

# The table every call gets (one uint64 buffer): a header, the canonical constants and matrix (generic path), then
# the Montgomery-form constants (fast path). Header slots, in this order (the C enum below repeats them):
HEADER = ("fast", "p", "width", "degree", "half", "rounds", "neg_p_inv", "r2", "mu")
MAX_WIDTH = 32
# The (width, S-box degree) pairs the fast path is compiled for: Plonky3's BabyBear (7) and KoalaBear (3) at 16, 24.
SPECIALISED = ((16, 7), (16, 3), (24, 7), (24, 3))

_COMMON = r"""
#include <stdint.h>
#include <string.h>
#if (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32)
#define P2_THREADS 1
#include <pthread.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define P2_INLINE static inline __attribute__((always_inline))
#pragma GCC diagnostic ignored "-Wpsabi"
#else
#define P2_INLINE static inline
#endif
#define P2_M32 0xffffffffULL
#define P2_MAX_W 32

/* The table's header slots (native_permute.HEADER), then: canonical rc_init (half * w), rc_term (half * w),
   rc_int (rounds), diag (w), matrix (w * w); then the same four constant tables in Montgomery form (R = 2^32). */
enum { T_FAST, T_P, T_W, T_DEG, T_HALF, T_ROUNDS, T_NPINV, T_R2, T_MU, T_HEADER };

/* Generic path: ref/poseidon2.permute_ints step by step, for p < 2^31 and matrix entries and a diagonal small
   enough that every sum of products fits 64 bits (the reference's own uint64 arithmetic needs the same). */
static uint64_t gen_sbox(uint64_t x, uint64_t p, int degree) {
    uint64_t r = 1;
    for (int i = 0; i < degree; i++) r = r * x % p;
    return r;
}
static void gen_matrix(uint64_t *s, uint64_t *t, int w, const uint64_t *m) {
    for (int i = 0; i < w; i++) { uint64_t a = 0; for (int j = 0; j < w; j++) a += m[i * w + j] * s[j]; t[i] = a; }
}
static void gen_permute(uint64_t *s, const uint64_t *tab) {
    const uint64_t p = tab[T_P];
    const int w = (int)tab[T_W], degree = (int)tab[T_DEG], half = (int)tab[T_HALF], rounds = (int)tab[T_ROUNDS];
    const uint64_t *rc_init = tab + T_HEADER, *rc_term = rc_init + half * w, *rc_int = rc_term + half * w;
    const uint64_t *diag = rc_int + rounds, *m = diag + w;
    uint64_t t[P2_MAX_W];
    gen_matrix(s, t, w, m);
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < w; i++) s[i] = gen_sbox((t[i] + rc_init[r * w + i]) % p, p, degree);
        gen_matrix(s, t, w, m);
    }
    for (int i = 0; i < w; i++) s[i] = t[i] % p;
    for (int r = 0; r < rounds; r++) {
        s[0] = gen_sbox((s[0] + rc_int[r]) % p, p, degree);
        uint64_t sum = 0;
        for (int i = 0; i < w; i++) sum += s[i];
        for (int i = 0; i < w; i++) s[i] = (sum + diag[i] * s[i]) % p;
    }
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < w; i++) s[i] = gen_sbox((s[i] + rc_term[r * w + i]) % p, p, degree);
        gen_matrix(s, t, w, m);
        for (int i = 0; i < w; i++) s[i] = t[i];
    }
    for (int i = 0; i < w; i++) s[i] = s[i] % p;
}
"""

# The fast kernel, instantiated once per instruction set: every "_X" below becomes that set's suffix, V its vector
# (or scalar) type of 64-bit lanes, and the prelude before it defines V_X, splat_X (a scalar in every lane), mul_X
# (the full 64-bit products of the lanes' low 32 bits, what x86's pmuludq does) and csub_X (u - p when u >= p, for
# u < p + 2^32). Values are Montgomery residues (x R mod p, R = 2^32); the comments give each value's bound, which
# is what lets a step skip a reduction.
_KERNEL = r"""
/* t / 2^32 mod p, in [0, 2p), for t < p 2^32: (t + m p) is a multiple of 2^32 below 2^33 p < 2^64. */
P2_INLINE V_X redc_X(V_X t, V_X p, V_X npinv) { return (t + mul_X(mul_X(t, npinv), p)) >> 32; }

/* x mod p for x < 2^38 (Barrett: q = floor(x / 64) floor(2^38 / p) / 2^32 is floor(x / p) or up to 2 less). */
P2_INLINE V_X barrett_X(V_X x, V_X p, V_X mu) {
    V_X q = mul_X(x >> 6, mu) >> 32;
    return csub_X(csub_X(x - mul_X(q, p), p), p);
}

/* x^degree for x < p, result < 2p: a product of one factor < 2p and one < p stays below p 2^32. */
P2_INLINE V_X sbox_X(V_X x, int degree, V_X p, V_X n) {
    V_X x2 = csub_X(redc_X(mul_X(x, x), p, n), p);
    if (degree == 3) return redc_X(mul_X(x2, x), p, n);
    V_X x3 = csub_X(redc_X(mul_X(x2, x), p, n), p), x4 = redc_X(mul_X(x2, x2), p, n);
    return redc_X(mul_X(x3, x4), p, n);
}

/* The external matrix circ(2 M4, M4, ...): M4 on each block of 4, then each word plus the sum of its position's
   words over all blocks. Inputs < 2p give outputs < 14 (w / 4 + 1) p <= 98 p < 2^38 for w <= 24. */
P2_INLINE void matrix_X(V_X *x, int w) {
    V_X s0 = splat_X(0), s1 = s0, s2 = s0, s3 = s0;
    for (int c = 0; c < w; c += 4) {
        V_X a = x[c], b = x[c + 1], cc = x[c + 2], d = x[c + 3];
        V_X ab = a + b, cd = cc + d, all = ab + cd;
        x[c] = all + ab + b;            /* 2a + 3b + c + d */
        x[c + 1] = all + b + cc + cc;   /* a + 2b + 3c + d */
        x[c + 2] = all + cd + d;        /* a + b + 2c + 3d */
        x[c + 3] = all + a + a + d;     /* 3a + b + c + 2d */
        s0 += x[c]; s1 += x[c + 1]; s2 += x[c + 2]; s3 += x[c + 3];
    }
    for (int c = 0; c < w; c += 4) { x[c] += s0; x[c + 1] += s1; x[c + 2] += s2; x[c + 3] += s3; }
}

/* One block of states, word i in x[i] (canonical values < p in, canonical out), as ref/poseidon2 computes it. */
P2_INLINE void block_X(V_X *x, int w, int degree, const uint64_t *tab) {
    const V_X p = splat_X(tab[T_P]), n = splat_X(tab[T_NPINV]), r2 = splat_X(tab[T_R2]), mu = splat_X(tab[T_MU]);
    const int half = (int)tab[T_HALF], rounds = (int)tab[T_ROUNDS];
    const uint64_t *rc_init = tab + T_HEADER + 2 * half * w + rounds + w + w * w;
    const uint64_t *rc_term = rc_init + half * w, *rc_int = rc_term + half * w, *diag = rc_int + rounds;
    for (int i = 0; i < w; i++) x[i] = redc_X(mul_X(x[i], r2), p, n);  /* into Montgomery form, < 2p */
    matrix_X(x, w);
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < w; i++) x[i] = sbox_X(barrett_X(x[i] + splat_X(rc_init[r * w + i]), p, mu), degree, p, n);
        matrix_X(x, w);
    }
    for (int i = 0; i < w; i++) x[i] = barrett_X(x[i], p, mu);
    /* Internal rounds keep every word < 2p: the sum reduced below p plus a product reduced below p. */
    for (int r = 0; r < rounds; r++) {
        /* Word 0's S-box is the round's latency chain: the other words' sum is formed beside it. */
        V_X rest = x[1];
        for (int i = 2; i < w; i++) rest += x[i];
        x[0] = sbox_X(csub_X(csub_X(x[0] + splat_X(rc_int[r]), p), p), degree, p, n);
        V_X sum = barrett_X(rest + x[0], p, mu);
        for (int i = 0; i < w; i++) x[i] = sum + csub_X(redc_X(mul_X(x[i], splat_X(diag[i])), p, n), p);
    }
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < w; i++) x[i] = sbox_X(barrett_X(x[i] + splat_X(rc_term[r * w + i]), p, mu), degree, p, n);
        matrix_X(x, w);
    }
    for (int i = 0; i < w; i++) x[i] = csub_X(redc_X(x[i], p, n), p);  /* out of Montgomery form, < p */
}
"""

# The lane loop around block_X for a vector type of LANES_X lanes: whole blocks read and written in place in the
# lane-major arrays, the last partial block through a zero-padded copy.
_LANES = r"""
P2_INLINE void lanes_X(const uint64_t *in, uint64_t *out, long n, const uint64_t *tab, int w, int degree) {
    V_X x[P2_MAX_W];
    long base = 0;
    for (; base + LANES_X <= n; base += LANES_X) {
        for (int i = 0; i < w; i++) memcpy(&x[i], in + i * n + base, sizeof(V_X));
        block_X(x, w, degree, tab);
        for (int i = 0; i < w; i++) memcpy(out + i * n + base, &x[i], sizeof(V_X));
    }
    if (base < n) {
        uint64_t pad[P2_MAX_W][LANES_X];
        memset(pad, 0, sizeof pad);
        for (int i = 0; i < w; i++) memcpy(pad[i], in + i * n + base, (size_t)(n - base) * sizeof(uint64_t));
        for (int i = 0; i < w; i++) memcpy(&x[i], pad[i], sizeof(V_X));
        block_X(x, w, degree, tab);
        for (int i = 0; i < w; i++) memcpy(out + i * n + base, &x[i], (size_t)(n - base) * sizeof(uint64_t));
    }
}
"""

# One width-16 state on a 4-lane vector type (the sponge's duplexes, one after another, can only be fast inside a
# permutation): v[i] lane c holds word 4c + i (block c, position i), so M4 runs across the four vectors and the
# matrix's block sums are sums of a vector's lanes. The same steps and bounds as block_X on one state.
_SINGLE4 = r"""
P2_INLINE V_X hsum_X(V_X y) { return splat_X(y[0] + y[1] + y[2] + y[3]); }
P2_INLINE V_X column_X(const uint64_t *row, int i) { V_X r = {row[i], row[4 + i], row[8 + i], row[12 + i]}; return r; }

P2_INLINE void matrix16_X(V_X *v) {
    V_X a = v[0], b = v[1], c = v[2], d = v[3];
    V_X ab = a + b, cd = c + d, all = ab + cd;
    V_X y0 = all + ab + b, y1 = all + b + c + c, y2 = all + cd + d, y3 = all + a + a + d;
    v[0] = y0 + hsum_X(y0); v[1] = y1 + hsum_X(y1); v[2] = y2 + hsum_X(y2); v[3] = y3 + hsum_X(y3);
}

/* s: 16 canonical words in place. */
P2_INLINE void single16_X(uint64_t *s, int degree, const uint64_t *tab) {
    const V_X p = splat_X(tab[T_P]), n = splat_X(tab[T_NPINV]), r2 = splat_X(tab[T_R2]), mu = splat_X(tab[T_MU]);
    const int w = 16, half = (int)tab[T_HALF], rounds = (int)tab[T_ROUNDS];
    const uint64_t *rc_init = tab + T_HEADER + 2 * half * w + rounds + w + w * w;
    const uint64_t *rc_term = rc_init + half * w, *rc_int = rc_term + half * w, *diag = rc_int + rounds;
    V_X v[4], dg[4];
    for (int i = 0; i < 4; i++) {
        v[i] = redc_X(mul_X(column_X(s, i), r2), p, n);
        dg[i] = column_X(diag, i);
    }
    matrix16_X(v);
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < 4; i++) v[i] = sbox_X(barrett_X(v[i] + column_X(rc_init + r * w, i), p, mu), degree, p, n);
        matrix16_X(v);
    }
    for (int i = 0; i < 4; i++) v[i] = barrett_X(v[i], p, mu);
    /* The internal rounds, word 0's chain in scalars: z (word 0 plus the round constant, < p) -> its S-box y (< 2p)
       and y d0 (< p) -> the next z = y + y d0 + (rest + the next constant). The rest (the other words' sum) comes
       from the vectors beside it: rest' = 15 sum + T, T = sum of d_i s_i over i >= 1, and sum = y + rest, so
       neither a horizontal sum nor a Barrett reduction lies on the chain. Every word stays < 2p as before. */
    const uint64_t ps = tab[T_P], ns = tab[T_NPINV], mus = tab[T_MU], d0 = diag[0];
    V_X all = v[0] + v[1] + v[2] + v[3];
    uint64_t rest = barrett_scalar(all[0] + all[1] + all[2] + all[3] - v[0][0], ps, mus);  /* < p */
    uint64_t z = csub_scalar(csub_scalar(v[0][0] + rc_int[0], ps), ps), word0 = v[0][0];
    dg[0][0] = 0;  /* word 0 in word0 until the end: a lane store reloaded as a vector stalled every round */
    for (int r = 0; r < rounds; r++) {
        V_X prod[4];
        for (int i = 0; i < 4; i++) prod[i] = csub_X(redc_X(mul_X(v[i], dg[i]), p, n), p);
        V_X tsum = prod[0] + prod[1] + prod[2] + prod[3];
        uint64_t t = tsum[0] + tsum[1] + tsum[2] + tsum[3];  /* < 15p */
        uint64_t y, yd;
        sbox_times_scalar(z, d0, degree, ps, ns, &y, &yd);
        uint64_t sum = csub_scalar(csub_scalar(y + rest, ps), ps);  /* < p */
        uint64_t next = r + 1 < rounds ? rc_int[r + 1] : 0;
        uint64_t ahead = csub_scalar(rest + next, ps);  /* rest + the next constant, < p */
        z = csub_scalar(csub_scalar(y + yd + ahead, 2 * ps), ps);
        rest = barrett_scalar(15 * sum + t, ps, mus);
        V_X at = splat_X(sum);
        for (int i = 0; i < 4; i++) v[i] = at + prod[i];
        word0 = sum + yd;
    }
    v[0][0] = word0;
    for (int r = 0; r < half; r++) {
        for (int i = 0; i < 4; i++) v[i] = sbox_X(barrett_X(v[i] + column_X(rc_term + r * w, i), p, mu), degree, p, n);
        matrix16_X(v);
    }
    for (int i = 0; i < 4; i++) {
        V_X out = csub_X(redc_X(v[i], p, n), p);
        for (int c = 0; c < 4; c++) s[4 * c + i] = out[c];
    }
}
"""

# One word's S-box beside its product by a constant, in scalars: the single-state kernels' latency chain.
_SBOX_TIMES_SCALAR = r"""
/* *y = x^degree (< 2p) and *yd = x^degree d (< p), for x < p and d < p: d meets x in a product beside x^2. */
P2_INLINE uint64_t mont_scalar(uint64_t a, uint64_t b, uint64_t p, uint64_t n) {  /* < p, for a, b < 2p */
    return csub_scalar(redc_scalar(mul_scalar(a, b), p, n), p);
}
P2_INLINE void sbox_times_scalar(uint64_t x, uint64_t d, int degree, uint64_t p, uint64_t n, uint64_t *y,
                                 uint64_t *yd) {
    uint64_t x2 = mont_scalar(x, x, p, n), xd = mont_scalar(x, d, p, n);
    uint64_t base = degree == 3 ? x : mont_scalar(x2, x, p, n), based = degree == 3 ? xd : mont_scalar(x2, xd, p, n);
    uint64_t top = degree == 3 ? x2 : mont_scalar(x2, x2, p, n);  /* x^3 = x2 x; x^7 = x3 x4 */
    *y = redc_scalar(mul_scalar(base, top), p, n);
    *yd = mont_scalar(based, top, p, n);
}
"""

_SCALAR_PRELUDE = r"""
typedef uint64_t V_scalar;
P2_INLINE V_scalar splat_scalar(uint64_t a) { return a; }
P2_INLINE V_scalar mul_scalar(V_scalar a, V_scalar b) { return (a & P2_M32) * (b & P2_M32); }
P2_INLINE V_scalar csub_scalar(V_scalar u, V_scalar p) { return u >= p ? u - p : u; }
"""

# Lane kernels: (guard macro, suffix, function attribute, lanes per block, native vector type, its lanes, its widening
# multiplication, its unsigned 64-bit minimum or None). GCC and Clang vectors carry the arithmetic; the
# multiplication goes through the native instruction (x86 pmuludq, arm64 umull) because compilers do not all see
# that masked operands need only that. Lanes per block: one native vector where registers are 256 or 512 bits
# (wider blocks spill and measured slower on x86), several SSE2 or NEON vectors (measured no slower with SSE2).
_ISAS = [
    ("P2_VEC_GENERIC", "vec", "", 4, None, 0, None, None),
    ("P2_X86", "sse2", "", 8, "__m128i", 2, "_mm_mul_epu32", None),
    ("P2_X86", "avx2", '__attribute__((target("avx2")))', 4, "__m256i", 4, "_mm256_mul_epu32", None),
    ("P2_X86", "avx512", '__attribute__((target("avx512f")))', 8, "__m512i", 8, "_mm512_mul_epu32",
     "_mm512_min_epu64"),
    ("P2_NEON", "neon", "", 4, "uint64x2_t", 2, "p2_umull", None),
]


def _prelude(lanes: int, native: str | None, native_lanes: int, multiply: str | None, minimum: str | None) -> str:
    """The definitions the kernel template expects of one instruction set (see ``_KERNEL``)."""
    lines = [f"#define LANES_X {lanes}",
             "typedef uint64_t V_X __attribute__((vector_size(8 * LANES_X)));",
             "P2_INLINE V_X splat_X(uint64_t a) { V_X v = {" + ", ".join(["a"] * lanes) + "}; return v; }"]
    if native is None:
        lines.append("P2_INLINE V_X mul_X(V_X a, V_X b) { return (a & P2_M32) * (b & P2_M32); }")
    else:
        parts = lanes // native_lanes
        lines += [f"typedef union {{ V_X v; {native} h[{parts}]; }} U_X;",
                  "P2_INLINE V_X mul_X(V_X a, V_X b) {",
                  "    U_X x = {a}, y = {b}, r;",
                  f"    for (int i = 0; i < {parts}; i++) r.h[i] = {multiply}(x.h[i], y.h[i]);",
                  "    return r.v;", "}"]
    if minimum is not None:
        # min(u, u - p) is u - p exactly when u >= p (u - p wraps above u otherwise): two instructions.
        lines += ["P2_INLINE V_X csub_X(V_X u, V_X p) {",
                  "    U_X x = {u}, y = {u - p}, r;",
                  f"    for (int i = 0; i < {lanes // native_lanes}; i++) r.h[i] = {minimum}(x.h[i], y.h[i]);",
                  "    return r.v;", "}"]
    else:
        lines.append("P2_INLINE V_X csub_X(V_X u, V_X p) { V_X r = u - p; return r + ((r >> 32) & p); }")
    return "\n".join(lines) + "\n"


_ENTRY = r"""
/* The instruction sets this library has a lane kernel for and this CPU runs, as a bit mask: 1 the portable one
   (GCC/Clang vectors, or SSE2 or NEON), 2 AVX2, 4 AVX-512; 0 when only the per-state loops exist. */
int p2_isa_mask(void) {
    int mask = 0;
#if defined(P2_VEC_GENERIC) || defined(P2_X86) || defined(P2_NEON)
    mask |= 1;
#endif
#if defined(P2_X86)
    /* cpuid for the instructions, xgetbv for the operating system saving their registers (YMM: XCR0 bits 1-2;
       ZMM and mask registers: bits 5-7 as well); no libgcc or compiler-rt helper needed. */
    unsigned a, b, c, d;
    if (__get_cpuid_max(0, 0) < 7) return mask;
    __cpuid_count(1, 0, a, b, c, d);
    if (!(c & (1u << 27))) return mask;
    unsigned xcr0, xcr0_high;
    __asm__ volatile("xgetbv" : "=a"(xcr0), "=d"(xcr0_high) : "c"(0));
    (void)xcr0_high;
    __cpuid_count(7, 0, a, b, c, d);
    if ((xcr0 & 0x6u) == 0x6u && (b & (1u << 5))) mask |= 2;
    if ((xcr0 & 0xe6u) == 0xe6u && (b & (1u << 16))) mask |= 4;
#endif
    return mask;
}

/* n states, lane-major (word i of state k at [i * n + k]), from in to out (the same array or disjoint ones),
   through the lane kernel of instruction set isa (one bit of p2_isa_mask, 0 for none), else per state. */
void p2_permute_lanes(const uint64_t *in, uint64_t *out, long n, const uint64_t *t, int isa) {
    int w = (int)t[T_W], degree = (int)t[T_DEG];
    void (*kernel)(const uint64_t *, uint64_t *, long, const uint64_t *) = 0;
    (void)degree, (void)isa;  /* unused where no lane kernel is compiled */
    if (t[T_FAST]) {
#if defined(P2_VEC_GENERIC)
        if (isa == 1) kernel = pick_vec(w, degree);
#endif
#if defined(P2_X86)
        if (isa == 1) kernel = pick_sse2(w, degree);
        if (isa == 2) kernel = pick_avx2(w, degree);
        if (isa == 4) kernel = pick_avx512(w, degree);
#endif
#if defined(P2_NEON)
        if (isa == 1) kernel = pick_neon(w, degree);
#endif
    }
    if (kernel) { kernel(in, out, n, t); return; }
    uint64_t s[P2_MAX_W];
    for (long k = 0; k < n; k++) {
        for (int i = 0; i < w; i++) s[i] = in[i * n + k];
        p2_permute(s, t);
        for (int i = 0; i < w; i++) out[i * n + k] = s[i];
    }
}
"""

_GUARDS = r"""
/* P2_PORTABLE (define it to build without instruction-set code) leaves only the GCC/Clang vector kernel. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(P2_PORTABLE)
#define P2_VEC_GENERIC 1
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(_M_X64))
#define P2_X86 1
#include <cpuid.h>
#include <immintrin.h>
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__aarch64__) || defined(_M_ARM64))
#define P2_NEON 1
#include <arm_neon.h>
/* The full products of two lanes' low 32 bits (umull), what x86's pmuludq computes. */
P2_INLINE uint64x2_t p2_umull(uint64x2_t a, uint64x2_t b) { return vmull_u32(vmovn_u64(a), vmovn_u64(b)); }
#elif defined(__GNUC__) || defined(__clang__)
#define P2_VEC_GENERIC 1
#endif
"""


def _specialised(suffix: str, attribute: str, single: bool = False) -> str:
    """One instruction set's lane entry points, one per (width, degree) of ``SPECIALISED``, and its picker; with
    ``single``, its one-state width-16 entry points too (``single16_<suffix>_<degree>``)."""
    lines = []
    for degree in sorted({d for w, d in SPECIALISED if w == 16} if single else ()):
        lines.append(f"{attribute} static void single16_{suffix}_{degree}(uint64_t *s, const uint64_t *t) "
                     f"{{ single16_{suffix}(s, {degree}, t); }}")
    for w, degree in SPECIALISED:
        lines.append(f"{attribute} static void lanes_{suffix}_{w}_{degree}(const uint64_t *in, uint64_t *out, "
                     f"long n, const uint64_t *t) {{ lanes_{suffix}(in, out, n, t, {w}, {degree}); }}")
    lines.append("/* The specialisation for (w, degree), or 0 when there is none. */")
    lines.append(f"static void (*pick_{suffix}(int w, int degree))(const uint64_t *, uint64_t *, long, "
                 "const uint64_t *) {")
    for w, degree in SPECIALISED:
        lines.append(f"    if (w == {w} && degree == {degree}) return lanes_{suffix}_{w}_{degree};")
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def _single() -> str:
    """The single-state entry point: the scalar kernel per (width, degree) of ``SPECIALISED``, else generic."""
    lines = ["/* One state in place: the fast scalar kernel where the table allows it, else the generic path. */",
             "void p2_permute(uint64_t *s, const uint64_t *t) {",
             "    int w = (int)t[T_W], degree = (int)t[T_DEG];"]
    for w, degree in SPECIALISED:
        lines.append(f"    if (t[T_FAST] && w == {w} && degree == {degree}) {{ block_scalar(s, {w}, {degree}, t); "
                     "return; }")
    lines += ["    gen_permute(s, t);", "}"]
    return "\n".join(lines) + "\n"


def _source() -> str:
    """The permutation's C source: common parts, the scalar kernel, every guarded lane kernel, the entry points
    (``sponge_c.SOURCE``, the sponge's, comes after it)."""
    parts = [_COMMON, _GUARDS, _SCALAR_PRELUDE, _KERNEL.replace("_X", "_scalar"), _SBOX_TIMES_SCALAR, _single()]
    for guard, suffix, attribute, lanes, native, native_lanes, multiply, minimum in _ISAS:
        # Every function of an instruction set's kernel carries its target attribute: GCC inlines a function into
        # another only when the callee's target is a subset of the caller's.
        single = _SINGLE4 if lanes == 4 else ""
        body = _prelude(lanes, native, native_lanes, multiply, minimum) + _KERNEL + _LANES + single + "#undef LANES_X\n"
        body = body.replace("P2_INLINE", "ATTR_X P2_INLINE").replace("ATTR_X", attribute).replace("_X", "_" + suffix)
        parts.append(f"#if defined({guard})\n{body}{_specialised(suffix, attribute, lanes == 4)}#endif\n")
    parts.append(_ENTRY)
    return "\n".join(parts)


SOURCE = _source()
# Pointers are declared void * (ABI-identical to the C definitions' uint64_t *): calls then pass numpy buffers as
# ``ffi.from_buffer(array)`` and parse no C type string (a first proof parses none: tests/backend/test_cold_start).
