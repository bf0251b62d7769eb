/* loader_pool: each item of a batch, in issue order, is prepared on the
 * earliest-free core of a shared pool on its server, as DALI's CPU stage and
 * CoorDL's loaders do; the batch is ready when its last item is.
 *
 * Small pools (the common case: a few dozen cores) scan with conditional
 * moves, which beats a heap whose data-dependent branches mispredict; large
 * pools keep a min-heap. A fractional share of cores (24 over 5 jobs) becomes
 * ceil(cores) cores each cores/ceil(cores) as fast, keeping the aggregate
 * rate.
 *
 * Which of several equally free cores takes an item changes nothing: the
 * pool is a multiset of free times (a minimum out, the item's end in), so
 * any scan that finds the minimum gives the same times. */
#include <math.h>
#include <stdlib.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "diag.h"
#include "loader.h"

typedef struct {
    double *t; /* free time of each core */
    int n;
} pool_t;

enum { POOL_SCAN_MAX = 48 };

/* Scanned pools are padded with +inf to a multiple of POOL_LANE cores. */
enum { POOL_LANE = 8 };

#if defined(__SSE2__)
/* The earliest-free core of a padded pool of ng groups of 8: the minimum by
 * four independent chains of minpd (a serial scan is a 24-deep dependency
 * chain per item, the simulator's hottest loop), then the first core equal
 * to it from a bit mask. The times are finite, so minpd is the exact
 * minimum. */
static inline int pool_argmin(const double *h, int ng, double *best) {
    __m128d a = _mm_loadu_pd(h), b = _mm_loadu_pd(h + 2), c = _mm_loadu_pd(h + 4),
            d = _mm_loadu_pd(h + 6);
    for (int g = 1; g < ng; g++) {
        const double *q = h + POOL_LANE * g;
        a = _mm_min_pd(a, _mm_loadu_pd(q));
        b = _mm_min_pd(b, _mm_loadu_pd(q + 2));
        c = _mm_min_pd(c, _mm_loadu_pd(q + 4));
        d = _mm_min_pd(d, _mm_loadu_pd(q + 6));
    }
    __m128d v = _mm_min_pd(_mm_min_pd(a, b), _mm_min_pd(c, d));
    v = _mm_min_pd(v, _mm_unpackhi_pd(v, v));
    v = _mm_unpacklo_pd(v, v);
    uint64_t mask = 0;
    for (int g = 0; g < ng; g++) {
        const double *q = h + POOL_LANE * g;
        unsigned m = (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(q), v)) |
                     (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(q + 2), v)) << 2 |
                     (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(q + 4), v)) << 4 |
                     (unsigned)_mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(q + 6), v)) << 6;
        mask |= (uint64_t)m << (POOL_LANE * g);
    }
    *best = _mm_cvtsd_f64(v);
    return __builtin_ctzll(mask);
}
#else
static inline int pool_argmin(const double *h, int ng, double *best) {
    int at = 0;
    double b = h[0];
    for (int i = 1; i < POOL_LANE * ng; i++) {
        int less = h[i] < b;
        b = less ? h[i] : b;
        at = less ? i : at;
    }
    *best = b;
    return at;
}
#endif

static inline double pool_run(pool_t *p, double ready, double dur) {
    double *h = p->t;
    int n = p->n;
    if (n <= POOL_SCAN_MAX) {
        double best;
        int at = pool_argmin(h, (n + POOL_LANE - 1) / POOL_LANE, &best);
        double end = (best > ready ? best : ready) + dur;
        h[at] = end;
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

/* pools[tl * ns + server] */
static int pool_init(prep_t *p) {
    int n = pool_cores(p->cores), total = PREP_TIMELINES * p->ns;
    pool_t *pools = calloc((size_t)total, sizeof *pools);
    p->state = pools;
    p->slowdown = n / p->cores;
    p->cpu_slots = n;
    if (!pools) return -1;
    for (int k = 0; k < total; k++) {
        pools[k].n = n;
        int padded = (n + POOL_LANE - 1) / POOL_LANE * POOL_LANE;
        pools[k].t = calloc((size_t)padded, sizeof *pools[k].t);
        if (!pools[k].t) return -1;
        for (int i = n; i < padded; i++)
            pools[k].t[i] = INFINITY; /* the pad: never the earliest */
    }
    return 0;
}

static prep_end_t pool_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                            double dur) {
    (void)rank;
    pool_t *pools = p->state;
    prep_end_t e = {pool_run(&pools[sv], ready, dur), pool_run(&pools[p->ns + sv], ready_mem, dur)};
    return e;
}

static double pool_batch_ready(prep_t *p, int tl, double last_item) {
    (void)p, (void)tl;
    return last_item;
}

static void pool_destroy(prep_t *p) {
    pool_t *pools = p->state;
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
    return (uint32_t)s->loader.open_shards;
}

static int pool_check(const scenario_t *s) {
    int row = schema_find(SCOPE_SCENARIO, "loader.open_shards");
    if (s->explicit_key[row] && s->dataset.shard_items <= 1) {
        diag_error(s->origin[row], "loader.open_shards reads record shards at once: set "
                                   "dataset.shard_items (> 1) too, or leave it out");
        return EXIT_INPUT;
    }
    return 0;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.open_shards", KT_INT, "shards", "1", 1, 65536, 0, NULL, SCN_FIELD(loader.open_shards), "pool, record shards: shards read at once, their items taken in turn (tf.data's interleave cycle_length; DALI's readers)"},
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
    .destroy = pool_destroy,
    .items_s = pool_items_s,
    .state_bytes = pool_bytes,
};
