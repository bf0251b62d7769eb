/* loader_pool: each item of a batch, in issue order, is prepared on the
 * earliest-free core of a shared pool on its server, as DALI's CPU stage and
 * CoorDL's loaders do; the batch is ready when its last item is.
 *
 * Small pools (the common case: a few dozen cores) are a sorted array
 * updated without branches, which beats a heap whose data-dependent
 * branches mispredict; large pools keep a min-heap. A fractional share of
 * cores (24 over 5 jobs) becomes ceil(cores) cores each cores/ceil(cores) as
 * fast, keeping the aggregate rate. A measured scaling curve (prep.scaling,
 * or the memory-bandwidth bound) slows each item by the cores busy as it
 * starts: k busy cores prepare as the curve's effective cores at k.
 *
 * Which of several equally free cores takes an item changes nothing: the
 * pool is a multiset of free times (a minimum out, the item's end in), so
 * any structure that yields the minimum gives the same times. */
#include <math.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "diag.h"
#include "kinds.h"
#include "loader.h"

/* The pool kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t open_shards; /* record shards read at once */
    /* Coordinated prep: each training process's CPU per MB to copy a batch
     * out of the shared stream's staging memory, alone and added per
     * further reader. */
    double handoff_ms_per_mb, handoff_ms_per_mb_per_reader;
} pool_opts_t;
SCN_KIND_OPTS_FITS(pool_opts_t);

static const pool_opts_t *pool_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_LOADER, s->loader.kind);
}

typedef struct {
    double *t; /* free time of each core */
    int n;
    int wide;          /* small pools: the AVX2 pass */
    const double *dil; /* [k]: an item's dilation with k cores busy (NULL: none) */
} pool_t;

enum { POOL_SCAN_MAX = 48 };

/* Small pools are kept sorted, padded with +inf to a multiple of 4 plus 4:
 * the earliest-free core is t[0], and the item's end replaces it by one
 * branch-free pass (the cores freeing before the end move down one place,
 * the end takes the gap). A scan for the minimum is a dependency chain as
 * long as the pool per item, twice per item the simulator's hottest loop;
 * the pass's steps are independent. (An insertion step from the back of a
 * sorted ring was slower: prep times vary, so the new end lands anywhere.) */
static inline int pool_padded(int n) {
    return (n + 3) / 4 * 4 + 4;
}

#if defined(__SSE2__)
/* Pairs are loaded where the last pass stored them (the next item's pass
 * reads them at once: a load across two stores would miss store
 * forwarding); each core's successor is shuffled in from the next pair. */
static inline void pool_insert(double *h, int n, double end) {
    const __m128d e = _mm_set1_pd(end);
    __m128d cur = _mm_loadu_pd(h);
    for (int i = 0; i < n; i += 2) {
        __m128d nxt = _mm_loadu_pd(h + i + 2);
        __m128d up = _mm_shuffle_pd(cur, nxt, 1);
        __m128d lt = _mm_cmplt_pd(up, e);
        __m128d v = _mm_or_pd(_mm_and_pd(lt, up), _mm_andnot_pd(lt, _mm_max_pd(cur, e)));
        _mm_storeu_pd(h + i, v);
        cur = nxt;
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define POOL_AVX2 1
/* The same pass four cores a step, where the CPU has AVX2 (pool_init asks). */
__attribute__((target("avx2"))) static void pool_insert4(double *h, int n, double end) {
    const __m256d e = _mm256_set1_pd(end);
    __m256d cur = _mm256_loadu_pd(h);
    for (int i = 0; i < n; i += 4) {
        __m256d nxt = _mm256_loadu_pd(h + i + 4);
        __m256d up = _mm256_permute4x64_pd(_mm256_blend_pd(cur, nxt, 1), 0x39);
        __m256d lt = _mm256_cmp_pd(up, e, _CMP_LT_OQ);
        _mm256_storeu_pd(h + i, _mm256_blendv_pd(_mm256_max_pd(cur, e), up, lt));
        cur = nxt;
    }
}
#endif
#else
static inline void pool_insert(double *h, int n, double end) {
    for (int i = 0; i < n; i++)
        h[i] = h[i + 1] < end ? h[i + 1] : h[i] > end ? h[i] : end;
}
#endif

/* The cores busy at `start` beside the one taking the item (h[0], the
 * earliest free): in a small pool, sorted, the cores past the last free at
 * start (a binary search); in a heap, a count. */
static inline int pool_busy(const double *h, int n, double start) {
    if (n <= POOL_SCAN_MAX) {
        if (n < 2 || h[1] > start) return n - 1; /* a pool kept busy: every other core */
        int lo = 2, hi = n; /* the first of h[2..n) past start is in [lo, hi] */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (h[mid] > start)
                hi = mid;
            else
                lo = mid + 1;
        }
        return n - lo;
    }
    int k = 0;
    for (int i = 1; i < n; i++)
        k += h[i] > start;
    return k;
}

/* An item ready at `ready` dilates by the cores busy as it starts under a
 * measured curve (dil), so cores the window leaves idle then slow nothing;
 * 1 without a curve. */
static inline double pool_dilation_at(const pool_t *p, double ready) {
    const double *h = p->t;
    return p->dil ? p->dil[1 + pool_busy(h, p->n, h[0] > ready ? h[0] : ready)] : 1;
}

static inline double pool_run(pool_t *p, double ready, double dur) {
    double *h = p->t;
    int n = p->n;
    if (n <= POOL_SCAN_MAX) {
        double end = (h[0] > ready ? h[0] : ready) + dur;
#ifdef POOL_AVX2
        if (p->wide) {
            pool_insert4(h, n, end);
            return end;
        }
#endif
        pool_insert(h, n, end);
        return end;
    }
    double start = h[0] > ready ? h[0] : ready;
    double end = start + dur;
    int i = 0;
    for (;;) {
        int l = 2 * i + 1;
        if (l >= n) break;
        int m = (l + 1 < n && h[l + 1] < h[l]) ? l + 1 : l;
        if (h[m] >= end) break;
        h[i] = h[m];
        i = m;
    }
    h[i] = end;
    return end;
}

static int pool_cores(double cores) {
    return cores > 1 ? (int)ceil(cores) : 1;
}

/* An item's dilation with k of the n cores busy, k = 1..n: k cores (a
 * fractional share's last one as the share) prepare as the measured
 * curve's effective cores (prep.scaling, the memory-bandwidth bound). */
static double *pool_dilation(const prep_t *p, int n) {
    double *dil = malloc((size_t)(n + 1) * sizeof *dil);
    if (!dil) return NULL;
    dil[0] = 1;
    for (int k = 1; k <= n; k++)
        dil[k] = k / scenario_prep_cores(p->s, k < p->cores ? k : p->cores, NULL);
    return dil;
}

/* pools[tl * ns + server] */
static int pool_init(prep_t *p) {
    int n = pool_cores(p->cores), total = PREP_TIMELINES * p->ns;
    pool_t *pools = calloc((size_t)total, sizeof *pools);
    p->state = pools;
    if (!pools) return -1;
    /* A measured curve slows each item by the cores busy as it starts
     * (pool_run): cores the window leaves idle then slow nothing. Linear,
     * a fractional share's ceil(cores) cores run cores/ceil(cores) as fast. */
    double *dil = NULL;
    if (scenario_prep_cores_shaped(p->s) && !(dil = pool_dilation(p, n))) return -1;
    p->slowdown = dil ? 1 : n / scenario_prep_cores(p->s, p->cores, NULL);
    p->cpu_slots = n;
    for (int k = 0; k < total; k++) {
        pools[k].n = n;
        pools[k].dil = dil;
#ifdef POOL_AVX2
        pools[k].wide = __builtin_cpu_supports("avx2");
#endif
        int padded = n <= POOL_SCAN_MAX ? pool_padded(n) : n;
        pools[k].t = calloc((size_t)padded, sizeof *pools[k].t);
        if (!pools[k].t) return -1;
        for (int i = n; i < padded; i++)
            pools[k].t[i] = INFINITY; /* the pad: after every core */
    }
    return 0;
}

static prep_end_t pool_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                            double dur) {
    (void)rank;
    pool_t *pools = p->state;
    pool_t *const on = &pools[sv], *const mem = &pools[p->ns + sv];
    p->dilation = pool_dilation_at(on, ready);
    prep_end_t e = {pool_run(on, ready, dur * p->dilation),
                    pool_run(mem, ready_mem, dur * pool_dilation_at(mem, ready_mem))};
    return e;
}

/* Each rank's training process takes a core of its server's pool beside
 * its GPU's compute, as the earliest-free core: the prep threads and the
 * training processes share the server's cores (CoorDL's jobs, DALI). */
static double pool_train_cpu(prep_t *p, int tl, double start, double dur) {
    pool_t *pools = p->state;
    const int per = p->ranks_per_server > 0 ? p->ranks_per_server : 1;
    double end = start;
    for (int r = 0; r < p->ranks; r++) {
        int sv = r / per < p->ns ? r / per : p->ns - 1;
        double e = pool_run(&pools[tl * p->ns + sv], start, dur * p->train_share);
        if (e > end) end = e;
    }
    return end;
}

/* A training process is time-shared like the pool's threads (ceil(cores)
 * cores for a fractional share), but apart from prep.scaling's curve: that
 * is the scaling of the loader's own threads. */
static double pool_train_share(double cores) {
    return cores > 0 ? pool_cores(cores) / cores : 1;
}

static double pool_batch_ready(prep_t *p, int tl, double last_item) {
    (void)p, (void)tl;
    return last_item;
}

static void pool_destroy(prep_t *p) {
    pool_t *pools = p->state;
    if (pools) free((void *)pools[0].dil); /* one table, shared by every pool */
    for (int k = 0; pools && k < PREP_TIMELINES * p->ns; k++)
        free(pools[k].t);
    free(pools);
    p->state = NULL;
}

static double pool_items_s(double cores, double item_s) {
    return item_s > 0 ? cores / item_s : INFINITY;
}

static double pool_bytes(const scenario_t *s, const job_t *j, double cores, int ns) {
    (void)s, (void)j;
    return PREP_TIMELINES * ns * (8 * (double)pool_cores(cores) + 16);
}

static uint32_t pool_shard_lanes(const scenario_t *s, int *per_rank) {
    *per_rank = 0;
    return (uint32_t)pool_opts(s)->open_shards;
}

static int pool_check(const scenario_t *s) {
    int row = schema_find(SCOPE_SCENARIO, "loader.open_shards");
    if (s->explicit_key[row] && s->dataset.shard_items <= 1) {
        diag_error(s->origin[row], "loader.open_shards reads record shards at once: set "
                                   "dataset.shard_items (> 1) too, or leave it out");
        return EXIT_INPUT;
    }
    /* Set by hand under partitioned prep it would be charged nothing, silently
     * (a host profile's figure is a default: it stays). */
    const char *const handoff[] = {"loader.handoff_ms_per_mb",
                                   "loader.handoff_ms_per_mb_per_reader"};
    for (int k = 0; k < 2; k++) {
        row = schema_find(SCOPE_SCENARIO, handoff[k]);
        if (s->explicit_key[row] && s->loader.prep != PREP_COORDINATED) {
            diag_error(s->origin[row],
                       "%s is the copy of coordinated prep's shared batches into each job; "
                       "under loader.prep: partitioned every job has its own stream and nothing "
                       "is handed over: leave it out, or set loader.prep: coordinated",
                       handoff[k]);
            return EXIT_INPUT;
        }
    }
    return 0;
}

/* CoorDL's coordinated prep stages each batch in shared memory once and
 * every job's training process copies its slice out into its own buffer
 * (calibrate's hand-off benchmark measures the copy, one writer and N
 * readers): the copy is the training process's CPU, beside its GPU, as
 * jobs.N.train_cpu_ms is. A stream of one consumer hands nothing over. */
static double pool_handoff_s(const scenario_t *s, const job_t *j, int consumers, int readers) {
    if (s->loader.prep != PREP_COORDINATED || consumers < 2) return 0;
    const double mb = (double)j->batch_per_gpu * scenario_job_out_item_bytes(s, j) / 1e6;
    const double more = readers > 1 ? (double)(readers - 1) : 0;
    return (pool_opts(s)->handoff_ms_per_mb + pool_opts(s)->handoff_ms_per_mb_per_reader * more) *
           mb / 1e3;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.open_shards", KT_INT, "shards", "1", 1, 65536, 0, NULL, KIND_FIELD(pool_opts_t, open_shards), "pool, record shards: shards read at once, their items taken in turn (tf.data's interleave cycle_length; DALI's readers)"},
    {"loader.handoff_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e6, 0, NULL, KIND_FIELD(pool_opts_t, handoff_ms_per_mb), "pool, coordinated prep: CPU each training process spends per MB of its slice of a batch copying it out of the shared staging memory (CoorDL's hand-off; calibrate measures it: one writer, N reader processes): charged as jobs.N.train_cpu_ms is, on the server's cores beside the GPU, counted as prep (0 = free)"},
    {"loader.handoff_ms_per_mb_per_reader", KT_REAL, "ms/MB", "0", 0, 1e6, 0, NULL, KIND_FIELD(pool_opts_t, handoff_ms_per_mb_per_reader), "pool, coordinated prep: what each further reader copying at once adds to loader.handoff_ms_per_mb (memory contention; calibrate's fit over 1, 2, 4, 8 readers)"},
};
/* clang-format on */

const loader_ops_t loader_pool = {
    .name = "pool",
    .help = "each item on the earliest-free core of a shared pool (DALI, CoorDL)",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .check = pool_check,
    .shard_lanes = pool_shard_lanes,
    .init = pool_init,
    .item = pool_item,
    .batch_ready = pool_batch_ready,
    .train_cpu = pool_train_cpu,
    .train_share = pool_train_share,
    .handoff_s = pool_handoff_s,
    .destroy = pool_destroy,
    .items_s = pool_items_s,
    .state_bytes = pool_bytes,
};
