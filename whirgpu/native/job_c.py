"""The C source of the host worker (``native/permute.py`` binds it, ``native/layout.py`` its layout): a thread
started before its call's arguments exist, spinning until they are handed to it, so a proof's thread hands off a
compiled call in well under a microsecond and goes on with its own Python meanwhile (a sleeping thread's wake-up,
and the interpreter lock a Python worker must take first, cost 0.1-0.4 ms on a GPU machine's host).

Job states (one int, atomics): WAITING (the thread spins), CALLED (the arguments are in; the thread runs the call),
DONE (the result is in), GAVE_UP (nobody called within the spin budget, or the owner cancelled: the thread has
left or is leaving). WAITING -> CALLED and WAITING -> GAVE_UP are compare-and-swaps, so exactly one of the owner's
call and the thread's give-up wins. Appended after ``sponge_c.SOURCE`` (it calls ``p2_absorb_grind_draw``), with
that call's entry for words in Montgomery form (``p2_absorb_grind_draw_monty``: converted and range-checked in C,
on the worker's thread when there is one), and what a hiding proof's second session then takes of the draws
(``p2_layout_prune``: the position sets sorted into their layout and their multiproofs pruned; a job does it after
its call where ``p2_job_layout`` asked).
"""

SOURCE = r"""
#include <stdlib.h>
/* The challenger's observe_many of nwords words in Montgomery form (uint32, as the device keeps them), then the
   input buffer a proof-of-work candidate meets, as p2_absorb_grind_draw sets them up: each word converted (REDC:
   canonical = word / 2^32 mod p), the whole runs absorbed into s, the rest (< 8 words) left in the rate (with a tag:
   the rest of the rate zeroed and s[8] += ntail + 1). Returns ntail (the witness's word), or -3 with s untouched
   when a word is not below p, -4 when out of memory. */
static long p2_absorb_monty(uint64_t *s, const uint32_t *mont, long nwords, uint64_t tag, const uint64_t *t,
                            int single_isa) {
    const uint64_t p = t[T_P], npinv = t[T_NPINV];
    for (long i = 0; i < nwords; i++)
        if (mont[i] >= p) return -3;
    uint64_t *canonical = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(nwords > 0 ? nwords : 1));
    if (!canonical) return -4;
    for (long i = 0; i < nwords; i++) {
        uint64_t m = ((uint64_t)mont[i] * npinv) & P2_M32, u = ((uint64_t)mont[i] + m * p) >> 32;
        canonical[i] = u >= p ? u - p : u;
    }
    const long runs = nwords / 8, ntail = nwords - 8 * runs;
    p2_absorb(s, canonical, runs, t, tag, single_isa);
    for (long i = 0; i < ntail; i++) s[i] = canonical[8 * runs + i];
    free(canonical);
    if (tag) {
        for (long i = ntail + 1; i < 8; i++) s[i] = 0;
        s[8] = (s[8] + (uint64_t)ntail + 1) % p;
    }
    return ntail;
}

/* p2_absorb_grind_draw on nwords words in Montgomery form (p2_absorb_monty, then p2_grind_draw with the witness at
   word ntail): its result, or p2_absorb_monty's -3 / -4 with nothing done. */
long p2_absorb_grind_draw_monty(uint64_t *s, const uint32_t *mont, long nwords, uint64_t tag, uint64_t mask,
                                long count, const uint64_t *t, int lane_isa, int threads, long sets,
                                const int64_t *bits, const int64_t *targets, const uint64_t *bounds, uint64_t *draws,
                                int single_isa, long *used) {
    long ntail = p2_absorb_monty(s, mont, nwords, tag, t, single_isa);
    if (ntail < 0) return ntail;
    return p2_grind_draw(s, (int)ntail, mask, count, t, lane_isa, threads, sets, bits, targets, bounds, draws,
                         single_isa, used);
}

/* A hiding proof's position sets laid out for its second session, and their pruned multiproofs: set k's counts[k]
   draws (draws: the sets one after another, each set's values distinct) sorted ascending into out from word
   starts[k] (the words between sets untouched); then per request r, (set reqs[2 r], depth reqs[2 r + 1]), the ids
   rank * depth + level of the boundary digests of that set's sorted positions in a tree of 2^depth leaves
   (ref/merkle_pruned's order: level by level from the leaves, ascending node within a level; rank: the first
   position below the node), request after request into kept (room for the sum of count * depth), kept_counts[r]
   each. Returns the ids written, or -1 (out and kept partly written) when a set is longer than P2_MAX_SET or holds
   a value twice, a request names no set or a depth outside [0, 32), or a position lies outside its tree. */
#define P2_MAX_SET 4096
static int p2_ascending(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}
long p2_layout_prune(const uint64_t *draws, const int64_t *counts, long nsets, const int64_t *starts, uint32_t *out,
                     const int64_t *reqs, long nreqs, int64_t *kept, int64_t *kept_counts) {
    uint64_t sorted[P2_MAX_SET];
    long at = 0, written = 0;
    for (long k = 0; k < nsets; k++) {
        const long n = (long)counts[k];
        if (n < 0 || n > P2_MAX_SET) return -1;
        memcpy(sorted, draws + at, (size_t)n * sizeof(uint64_t));
        qsort(sorted, (size_t)n, sizeof(uint64_t), p2_ascending);
        for (long i = 0; i < n; i++) {
            if ((i && sorted[i] == sorted[i - 1]) || sorted[i] >> 32) return -1;
            out[starts[k] + i] = (uint32_t)sorted[i];
        }
        at += n;
    }
    for (long r = 0; r < nreqs; r++) {
        const long k = (long)reqs[2 * r], depth = (long)reqs[2 * r + 1];
        if (k < 0 || k >= nsets || depth < 0 || depth >= 32) return -1;
        const long q = (long)counts[k], before = written;
        const uint32_t *pos = out + starts[k];
        if (q && ((uint64_t)pos[q - 1] >> depth)) return -1;
#define P2_POSITION(i) pos[i]
#define P2_KEEP(i, l) kept[written++] = (i) * depth + (l)
        P2_BOUNDARY_WALK(P2_POSITION, q, depth, P2_KEEP)
#undef P2_POSITION
#undef P2_KEEP
        kept_counts[r] = written - before;
    }
    return written;
}

#if defined(P2_THREADS)
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#define P2_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define P2_RELAX() __asm__ __volatile__("yield")
#else
#define P2_RELAX() do {} while (0)
#endif
enum { JOB_WAITING, JOB_CALLED, JOB_DONE, JOB_GAVE_UP };
#define P2_MAX_HELPERS 8

typedef struct {
    int state;
    long spin_ns, result;
    pthread_t thread;
    /* p2_absorb_grind_draw_monty's arguments, in its order */
    uint64_t *s; const uint32_t *mont; long nwords; uint64_t tag; uint64_t mask; long count; const uint64_t *t;
    int lane_isa, threads; long sets; const int64_t *bits, *targets; const uint64_t *bounds; uint64_t *draws;
    int single_isa; long *used;
    p2_search *search;  /* the call's proof-of-work search while it runs (its blocks open to p2_job_finish) */
    int helpers;        /* threads inside that search besides the job's */
    /* p2_job_layout's: p2_layout_prune's arguments after a found witness (layout_out 0: none), its result */
    const int64_t *layout_starts, *layout_reqs; uint32_t *layout_out; long layout_nreqs; int64_t *layout_kept,
        *layout_kept_counts; long *layout_result;
    int nhelpers;       /* search helpers started with the job (p2_job_helper) */
    pthread_t helper[P2_MAX_HELPERS];
} p2_job;

static long p2_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* p2_absorb_grind_draw_monty's steps on one search thread, that search published in job->search while it runs so
   that the owner, waiting in p2_job_finish, searches its blocks too (the least witness is the answer either way:
   p2_search_blocks claims blocks in order). The search is withdrawn, and its helpers waited for, before it ends. */
static long p2_job_call(p2_job *job) {
    const uint64_t *t = job->t;
    uint64_t *s = job->s;
    const long ntail = p2_absorb_monty(s, job->mont, job->nwords, job->tag, t, job->single_isa);
    if (ntail < 0) return ntail;
    p2_search search = {s, t, (int)ntail, job->lane_isa, job->mask, 0, job->count, 0, -1};
    __atomic_store_n(&job->search, &search, __ATOMIC_SEQ_CST);
    p2_search_blocks(&search);
    __atomic_store_n(&job->search, (p2_search *)0, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&job->helpers, __ATOMIC_SEQ_CST)) P2_RELAX();
    long k = __atomic_load_n(&search.best, __ATOMIC_SEQ_CST);
    if (k < 0) return -1;
    s[ntail] = (uint64_t)k;  /* then as p2_grind_draw after its search */
    p2_one_state one = 0;
    if (t[T_FAST] && t[T_W] == 16) one = pick_single16((int)t[T_DEG], job->single_isa);
    if (one) one(s, t); else p2_permute(s, t);
    uint64_t buffered[7];
    for (int i = 0; i < 7; i++) buffered[i] = s[6 - i];
    *job->used = p2_distinct(s, buffered, 7, job->sets, job->bits, job->targets, job->bounds, job->draws, t,
                             job->single_isa);
    return k;
}

static void *p2_job_thread(void *arg) {
    p2_job *job = (p2_job *)arg;
    long until = p2_now_ns() + job->spin_ns;
    for (long i = 0;; i++) {
        int state = __atomic_load_n(&job->state, __ATOMIC_ACQUIRE);
        if (state == JOB_CALLED) break;
        if (state == JOB_GAVE_UP) return 0;
        P2_RELAX();
        if ((i & 255) == 255 && p2_now_ns() > until) {
            int waiting = JOB_WAITING;
            if (__atomic_compare_exchange_n(&job->state, &waiting, JOB_GAVE_UP, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) return 0;
        }
    }
    job->result = job->threads > 1 ? p2_absorb_grind_draw_monty(job->s, job->mont, job->nwords, job->tag, job->mask,
                                                                 job->count, job->t, job->lane_isa, job->threads,
                                                                 job->sets, job->bits, job->targets, job->bounds,
                                                                 job->draws, job->single_isa, job->used)
                                   : p2_job_call(job);
    if (job->result >= 0 && job->layout_out)
        *job->layout_result = p2_layout_prune(job->draws, job->targets, job->sets, job->layout_starts, job->layout_out,
                                              job->layout_reqs, job->layout_nreqs, job->layout_kept,
                                              job->layout_kept_counts);
    __atomic_store_n(&job->state, JOB_DONE, __ATOMIC_RELEASE);
    return 0;
}

/* A search helper: spins until the job's call publishes its proof-of-work search, searches its blocks once (as the
   waiting owner does in p2_job_finish, counted in helpers first, so the call waits for it before it ends), and
   leaves; or leaves when the job is done or given up without one. */
static void *p2_job_helper(void *arg) {
    p2_job *job = (p2_job *)arg;
    for (;;) {
        int state = __atomic_load_n(&job->state, __ATOMIC_ACQUIRE);
        if (state == JOB_DONE || state == JOB_GAVE_UP) return 0;
        p2_search *search = __atomic_load_n(&job->search, __ATOMIC_SEQ_CST);
        if (search) {
            __atomic_fetch_add(&job->helpers, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&job->search, __ATOMIC_SEQ_CST) == search) p2_search_blocks(search);
            __atomic_fetch_sub(&job->helpers, 1, __ATOMIC_SEQ_CST);
            return 0;
        }
        P2_RELAX();
    }
}

/* A job whose thread spins for its call up to spin_ns; NULL when the thread could not be started. */
void *p2_job_start(long spin_ns) {
    p2_job *job = (p2_job *)calloc(1, sizeof(p2_job));
    if (!job) return 0;
    job->state = JOB_WAITING;
    job->spin_ns = spin_ns;
    if (pthread_create(&job->thread, 0, p2_job_thread, job) != 0) { free(job); return 0; }
    return job;
}

/* Start up to helpers search helpers (p2_job_helper) beside the job, P2_MAX_HELPERS in all: the number started.
   The owner's thread calls it (after handing the call over: they are made while the call absorbs), before
   p2_job_finish, which joins them. */
int p2_job_help(void *handle, int helpers) {
    p2_job *job = (p2_job *)handle;
    int started = 0;
    while (started < helpers && job->nhelpers < P2_MAX_HELPERS &&
           pthread_create(&job->helper[job->nhelpers], 0, p2_job_helper, job) == 0) {
        job->nhelpers++;
        started++;
    }
    return started;
}

/* Hand p2_absorb_grind_draw_monty's arguments to the job's thread: 1 when it takes them, 0 when it gave up (the
   caller then makes the call itself). The buffers must stay alive until p2_job_finish returns. */
int p2_job_absorb_grind_draw_monty(void *handle, uint64_t *s, const uint32_t *mont, long nwords, uint64_t tag,
                                   uint64_t mask, long count, const uint64_t *t, int lane_isa, int threads, long sets,
                                   const int64_t *bits, const int64_t *targets, const uint64_t *bounds,
                                   uint64_t *draws, int single_isa, long *used) {
    p2_job *job = (p2_job *)handle;
    job->s = s; job->mont = mont; job->nwords = nwords; job->tag = tag; job->mask = mask; job->count = count;
    job->t = t; job->lane_isa = lane_isa; job->threads = threads; job->sets = sets; job->bits = bits;
    job->targets = targets; job->bounds = bounds; job->draws = draws; job->single_isa = single_isa; job->used = used;
    int waiting = JOB_WAITING;
    return __atomic_compare_exchange_n(&job->state, &waiting, JOB_CALLED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* After a witness is found, the job's thread also lays its draws out and prunes them: p2_layout_prune(draws, targets,
   sets, starts, out, reqs, nreqs, kept, kept_counts) into *result (untouched when no witness was found). Call it
   before p2_job_absorb_grind_draw_monty; the buffers must stay alive until p2_job_finish returns. */
void p2_job_layout(void *handle, const int64_t *starts, uint32_t *out, const int64_t *reqs, long nreqs,
                   int64_t *kept, int64_t *kept_counts, long *result) {
    p2_job *job = (p2_job *)handle;
    job->layout_starts = starts; job->layout_out = out; job->layout_reqs = reqs; job->layout_nreqs = nreqs;
    job->layout_kept = kept; job->layout_kept_counts = kept_counts; job->layout_result = result;
}

/* Wait for the job (spinning: its call is short; searching its proof-of-work blocks with it once they are open),
   join its thread and free it: the call's result, or -2 when it was never called (a job still waiting is
   cancelled). */
long p2_job_finish(void *handle) {
    p2_job *job = (p2_job *)handle;
    int waiting = JOB_WAITING, helped = 0;
    __atomic_compare_exchange_n(&job->state, &waiting, JOB_GAVE_UP, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    while (__atomic_load_n(&job->state, __ATOMIC_ACQUIRE) == JOB_CALLED) {
        p2_search *search = __atomic_load_n(&job->search, __ATOMIC_SEQ_CST);
        if (search && !helped) {  /* searched with the job's thread: counted in first, so it waits before ending */
            __atomic_fetch_add(&job->helpers, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&job->search, __ATOMIC_SEQ_CST) == search) p2_search_blocks(search);
            __atomic_fetch_sub(&job->helpers, 1, __ATOMIC_SEQ_CST);
            helped = 1;
        }
        P2_RELAX();
    }
    long result = __atomic_load_n(&job->state, __ATOMIC_ACQUIRE) == JOB_DONE ? job->result : -2;
    pthread_join(job->thread, 0);
    for (int i = 0; i < job->nhelpers; i++) pthread_join(job->helper[i], 0);
    free(job);
    return result;
}
int p2_job_state(void *handle) { return __atomic_load_n(&((p2_job *)handle)->state, __ATOMIC_ACQUIRE); }
int p2_job_threads(void) { return 1; }
#else
void *p2_job_start(long spin_ns) { (void)spin_ns; return 0; }
int p2_job_help(void *handle, int helpers) { (void)handle, (void)helpers; return 0; }
int p2_job_absorb_grind_draw_monty(void *handle, uint64_t *s, const uint32_t *mont, long nwords, uint64_t tag,
                                   uint64_t mask, long count, const uint64_t *t, int lane_isa, int threads, long sets,
                                   const int64_t *bits, const int64_t *targets, const uint64_t *bounds,
                                   uint64_t *draws, int single_isa, long *used) {
    (void)handle, (void)s, (void)mont, (void)nwords, (void)tag, (void)mask, (void)count, (void)t, (void)lane_isa;
    (void)threads, (void)sets, (void)bits, (void)targets, (void)bounds, (void)draws, (void)single_isa, (void)used;
    return 0;
}
void p2_job_layout(void *handle, const int64_t *starts, uint32_t *out, const int64_t *reqs, long nreqs,
                   int64_t *kept, int64_t *kept_counts, long *result) {
    (void)handle, (void)starts, (void)out, (void)reqs, (void)nreqs, (void)kept, (void)kept_counts, (void)result;
}
long p2_job_finish(void *handle) { (void)handle; return -2; }
int p2_job_state(void *handle) { (void)handle; return 3; }
int p2_job_threads(void) { return 0; }
#endif
"""

_MONTY_ARGS = ("void *s, void *mont, long nwords, uint64_t tag, uint64_t mask, long count, void *t, int lane_isa, "
               "int threads, long sets, void *bits, void *targets, void *bounds, void *draws, int single_isa, "
               "void *used")
CDEF = (f"long p2_absorb_grind_draw_monty({_MONTY_ARGS});"
        "void *p2_job_start(long spin_ns);"
        "int p2_job_help(void *job, int helpers);"
        f"int p2_job_absorb_grind_draw_monty(void *job, {_MONTY_ARGS});"
        "void p2_job_layout(void *job, void *starts, void *out, void *reqs, long nreqs, void *kept, "
        "void *kept_counts, void *result);"
        "long p2_layout_prune(void *draws, void *counts, long nsets, void *starts, void *out, void *reqs, long nreqs, "
        "void *kept, void *kept_counts);"
        "long p2_job_finish(void *job);"
        "int p2_job_state(void *job);"
        "int p2_job_threads(void);")
