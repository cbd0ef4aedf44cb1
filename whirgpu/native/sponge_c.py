"""The C source of the host's width-16 duplex sponge (``native/permute.py`` binds it), appended to
``permute_c.SOURCE``, whose single-state and lane kernels it calls: the absorb of whole runs, the distinct uniform
draws, the proof-of-work search on threads, and the search followed by the draws (with the absorb before them) in
one call, so no Python runs between the transcript's steps. ``job_c.SOURCE`` comes after it.
"""

SOURCE = r"""
/* The instruction set (a bit of p2_isa_mask) whose 4-lane kernel permutes one width-16 state here: AVX2 on x86,
   the portable one on arm64 and with GCC/Clang vectors; 0 when none does (SSE2 and AVX-512 blocks are 8 lanes). */
int p2_single_isa(void) {
    int mask = p2_isa_mask();
#if defined(P2_X86)
    return mask & 2;
#else
    return mask & 1;
#endif
}

typedef void (*p2_one_state)(uint64_t *, const uint64_t *);
static p2_one_state pick_single16(int degree, int isa) {
    (void)degree, (void)isa;
#if defined(P2_VEC_GENERIC)
    if (isa == 1) return degree == 3 ? single16_vec_3 : degree == 7 ? single16_vec_7 : 0;
#endif
#if defined(P2_X86)
    if (isa == 2) return degree == 3 ? single16_avx2_3 : degree == 7 ? single16_avx2_7 : 0;
#endif
#if defined(P2_NEON)
    if (isa == 1) return degree == 3 ? single16_neon_3 : degree == 7 ? single16_neon_7 : 0;
#endif
    return 0;
}

/* A width-16, rate-8 duplex sponge absorbing whole runs: per run the 8 canonical words overwrite s[0..8), s[8]
   gains the length tag (mod p; 0: none), then one permutation in place, on the 4-lane kernel of instruction set
   isa (p2_single_isa's, or 0 for the scalar one; -1: p2_single_isa's) where the table is the fast one. */
void p2_absorb(uint64_t *s, const uint64_t *words, long runs, const uint64_t *t, uint64_t tag, int isa) {
    const uint64_t p = t[T_P];
    p2_one_state one = 0;
    if (t[T_FAST] && t[T_W] == 16) one = pick_single16((int)t[T_DEG], isa < 0 ? p2_single_isa() : isa);
    for (long r = 0; r < runs; r++) {
        for (int i = 0; i < 8; i++) s[i] = words[8 * r + i];
        if (tag) s[8] = (s[8] + tag) % p;
        if (one) one(s, t); else p2_permute(s, t);
    }
}

/* Distinct uniform draws, as the challenger's distinct_uniform_bits, for sets draw sets one after another: the
   samples are the nbuf canonical words of buffered (in the order they pop), then, per permutation of s in place (16
   canonical words), its words 7, 6, ..., 0; set k takes samples until targets[k] distinct values of bits[k] bits
   (1 <= bits[k] <= 16, targets[k] <= 2^bits[k]) are kept, a sample below bounds[k] giving its low bits, and writes
   them in the order kept to draws (the sets' draws one after another). s is left at the last permutation a used
   sample came from. Returns the number of samples used. */
long p2_distinct(uint64_t *s, const uint64_t *buffered, long nbuf, long sets, const int64_t *bits,
                 const int64_t *targets, const uint64_t *bounds, uint64_t *draws, const uint64_t *t, int isa) {
    uint8_t seen[(1 << 16) / 8];
    long used = 0, out = 0;
    p2_one_state one = 0;
    if (t[T_FAST] && t[T_W] == 16) one = pick_single16((int)t[T_DEG], isa < 0 ? p2_single_isa() : isa);
    for (long k = 0; k < sets; k++) {
        const uint64_t mask = (1ULL << bits[k]) - 1;
        long kept = 0;
        memset(seen, 0, sizeof seen);
        while (kept < targets[k]) {
            uint64_t v;
            if (used < nbuf) v = buffered[used];
            else {
                int at = (int)((used - nbuf) % 8);
                if (at == 0) { if (one) one(s, t); else p2_permute(s, t); }
                v = s[7 - at];
            }
            used++;
            if (v < bounds[k]) {
                uint64_t d = v & mask;
                if (!((seen[d >> 3] >> (d & 7)) & 1)) {
                    seen[d >> 3] |= (uint8_t)(1u << (d & 7));
                    draws[out++] = d;
                    kept++;
                }
            }
        }
    }
    return used;
}

/* A width-16 proof-of-work search: the least k in [0, count) such that base (16 canonical words) with word index
   set to start + k, permuted, has (word 7 & mask) == 0; -1 when none. Candidates go 64 at a time through the lane
   kernel of instruction set isa (a bit of p2_isa_mask, 0 for the per-state loop), on threads threads (POSIX; one
   elsewhere) that claim blocks in order and stop past the least hit found, so the answer is the one-thread
   answer; start + count <= p. */
typedef struct {
    const uint64_t *base, *t;
    int index, isa;
    uint64_t mask, start;
    long count, next, best;
} p2_search;

static void *p2_search_blocks(void *arg) {
    enum { B = 64 };
    p2_search *job = (p2_search *)arg;
    uint64_t in[16 * B], out[16 * B];
    for (;;) {
        long first = __atomic_fetch_add(&job->next, B, __ATOMIC_RELAXED);
        long best = __atomic_load_n(&job->best, __ATOMIC_RELAXED);
        if (first >= job->count || (best >= 0 && first > best)) return 0;
        long n = job->count - first < B ? job->count - first : B;
        for (int i = 0; i < 16; i++)
            for (long k = 0; k < n; k++) in[i * n + k] = job->base[i];
        for (long k = 0; k < n; k++) in[job->index * n + k] = job->start + (uint64_t)(first + k);
        p2_permute_lanes(in, out, n, job->t, job->isa);
        for (long k = 0; k < n; k++) {
            if ((out[7 * n + k] & job->mask) == 0) {
                long hit = first + k, seen = __atomic_load_n(&job->best, __ATOMIC_RELAXED);
                while ((seen < 0 || hit < seen) &&
                       !__atomic_compare_exchange_n(&job->best, &seen, hit, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
                break;
            }
        }
    }
}

long p2_grind(const uint64_t *base, int index, uint64_t mask, uint64_t start, long count, const uint64_t *t, int isa,
              int threads) {
    p2_search job = {base, t, index, isa, mask, start, count, 0, -1};
#if defined(P2_THREADS)
    pthread_t pool[64];
    int started = 0;
    if (threads > 64) threads = 64;
    for (int i = 1; i < threads; i++)
        if (pthread_create(&pool[started], 0, p2_search_blocks, &job) == 0) started++;
    p2_search_blocks(&job);
    for (int i = 0; i < started; i++) pthread_join(pool[i], 0);
#else
    (void)threads;
    p2_search_blocks(&job);
#endif
    return job.best;
}

/* p2_grind from s (16 canonical words: the state a candidate meets, as pow_base_state gives it) over [0, count), then
   the challenger's check_witness (s permuted with the witness at index: its word 7 popped) and p2_distinct's sets
   from the rest of that output (words 6 .. 0) on: the witness, or -1 when none (s untouched); s left at the last
   permutation, *used the samples the sets used. One call, so no Python runs between the search and the draws. */
long p2_grind_draw(uint64_t *s, int index, uint64_t mask, long count, const uint64_t *t, int lane_isa, int threads,
                   long sets, const int64_t *bits, const int64_t *targets, const uint64_t *bounds, uint64_t *draws,
                   int single_isa, long *used) {
    long k = p2_grind(s, index, mask, 0, count, t, lane_isa, threads);
    if (k < 0) return -1;
    s[index] = (uint64_t)k;
    p2_one_state one = 0;
    if (t[T_FAST] && t[T_W] == 16) one = pick_single16((int)t[T_DEG], single_isa);
    if (one) one(s, t); else p2_permute(s, t);
    uint64_t buffered[7];
    for (int i = 0; i < 7; i++) buffered[i] = s[6 - i];
    *used = p2_distinct(s, buffered, 7, sets, bits, targets, bounds, draws, t, single_isa);
    return k;
}

/* p2_absorb of runs whole runs of words (tag: its length tag, 0 for none), then the ntail < 8 words of tail put in
   the rate as the input buffer a candidate meets (with a tag: the rest of the rate zeroed and s[8] += ntail + 1, as
   pow_base_state does), then p2_grind_draw with the witness at word ntail: the challenger's observe_many, grind and
   draws with no Python between them. */
long p2_absorb_grind_draw(uint64_t *s, const uint64_t *words, long runs, uint64_t tag, const uint64_t *tail, int ntail,
                          uint64_t mask, long count, const uint64_t *t, int lane_isa, int threads, long sets,
                          const int64_t *bits, const int64_t *targets, const uint64_t *bounds, uint64_t *draws,
                          int single_isa, long *used) {
    p2_absorb(s, words, runs, t, tag, single_isa);
    for (int i = 0; i < ntail; i++) s[i] = tail[i];
    if (tag) {
        for (int i = ntail + 1; i < 8; i++) s[i] = 0;
        s[8] = (s[8] + (uint64_t)ntail + 1) % t[T_P];
    }
    return p2_grind_draw(s, ntail, mask, count, t, lane_isa, threads, sets, bits, targets, bounds, draws, single_isa,
                         used);
}
"""

