/* mrc: see mrc.h. */
#include "mrc.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "perm.h"
#include "sim.h"

const char *mrc_inexact(const scenario_t *s, const topology_t *t) {
    if (scenario_cache(s)->curve == CACHE_CURVE_NONE)
        return "the cache policy has no exact curve (a stack policy, or admit while there is "
               "room and never evict, has one)";
    if (s->loader.dist_cache == DIST_SHARDED)
        return "partitioned caching: a server's admissions depend on the others'";
    if (s->dataset.shard_items > 1) return "record shards: not replayed by the curve";
    if (tier_opts(s)->cache_gb > 0) return "a tier: not replayed by the curve";
    /* Streams that share a server's cache interleave by the simulator's
     * timing, which the cache size changes. */
    int streams_on[SCN_MAX_SERVERS] = {0};
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        if (in->lead != i) continue;
        for (int v = in->first_server; v < in->first_server + in->nservers; v++)
            if (++streams_on[v] > 1)
                return "several streams share a server's cache (their order depends on timing)";
    }
    return NULL;
}

/* ---- LRU: byte stack distances over last-use slots ---- */

/* Each live item's bytes sit at the slot of its last use; a use's distance
 * is the bytes at later slots. Slots come in blocks of 64: the bytes after a
 * slot are the rest of its block (one contiguous scan, prefetched ahead)
 * plus the blocks after it, from a Fenwick tree over the blocks (1/64 of the
 * slots: it stays in cache where a tree over every slot would miss at each
 * level). */
enum { BLOCK_LOG2 = 6, BLOCK = 1 << BLOCK_LOG2 };

typedef struct {
    uint32_t *last; /* [n]: slot + 1 of the item's last use, 0: never used */
    uint32_t *who;  /* [T]: the item used at each slot */
    uint32_t *at;   /* [T]: bytes of the live item at each slot, 0: none */
    uint64_t *fen;  /* [nb + 1], 1-based over blocks: their bytes */
    uint32_t T, nb, now;
} stack_t;

static int stack_init(stack_t *k, uint32_t n) {
    memset(k, 0, sizeof *k);
    /* Half again the items: a compaction (O(T)) every n/2 uses or more. */
    k->T = (n + n / 2 + 2 * BLOCK) & ~(uint32_t)(BLOCK - 1);
    k->nb = k->T >> BLOCK_LOG2;
    k->last = calloc(n ? n : 1, sizeof *k->last);
    k->who = malloc((size_t)k->T * sizeof *k->who);
    k->at = calloc((size_t)k->T, sizeof *k->at);
    k->fen = calloc((size_t)k->nb + 1, sizeof *k->fen);
    return k->last && k->who && k->at && k->fen ? 0 : -1;
}

static void stack_free(stack_t *k) {
    free(k->last), free(k->who), free(k->at), free(k->fen);
}

static inline void fen_add(uint64_t *f, uint32_t n, uint32_t i, uint64_t v) {
    for (; i <= n; i += i & -i)
        f[i] += v;
}

static inline uint64_t fen_prefix(const uint64_t *f, uint32_t i) {
    uint64_t s = 0;
    for (; i; i &= i - 1)
        s += f[i];
    return s;
}

/* Live slots renumbered in order from 0; blocks and tree rebuilt in O(T). */
static void stack_compact(stack_t *k) {
    uint32_t out = 0;
    for (uint32_t p = 0; p < k->now; p++) {
        uint32_t x = k->who[p];
        if (k->last[x] == p + 1) {
            k->who[out] = x;
            k->at[out] = k->at[p];
            k->last[x] = ++out;
        }
    }
    memset(k->at + out, 0, (size_t)(k->T - out) * sizeof *k->at);
    memset(k->fen, 0, ((size_t)k->nb + 1) * sizeof *k->fen);
    for (uint32_t p = 0; p < out; p++)
        k->fen[(p >> BLOCK_LOG2) + 1] += k->at[p];
    for (uint32_t i = 1; i <= k->nb; i++) {
        uint32_t j = i + (i & -i);
        if (j <= k->nb) k->fen[j] += k->fen[i];
    }
    k->now = out;
}

/* The byte stack distance of a use of x (UINT64_MAX on its first use), and
 * x becomes the most recent. */
static inline uint64_t stack_use(stack_t *k, uint32_t x, const uint32_t *size, uint64_t *total) {
    if (k->now == k->T) stack_compact(k);
    uint32_t p = k->last[x];
    uint64_t d = UINT64_MAX, sz = size[x];
    if (p) {
        uint32_t s0 = p - 1, b = s0 >> BLOCK_LOG2, end = (b + 1) << BLOCK_LOG2;
        uint64_t within = 0;
        for (uint32_t j = s0 + 1; j < end; j++)
            within += k->at[j];
        d = sz + within + (*total - fen_prefix(k->fen, b + 1));
        k->at[s0] = 0;
        fen_add(k->fen, k->nb, b + 1, (uint64_t)0 - sz);
    } else {
        *total += sz;
    }
    uint32_t s1 = k->now++;
    k->who[s1] = x;
    k->at[s1] = (uint32_t)sz;
    k->last[x] = s1 + 1;
    fen_add(k->fen, k->nb, (s1 >> BLOCK_LOG2) + 1, sz);
    return d;
}

/* The block of x's last use, a few uses ahead. */
static inline void stack_prefetch(const stack_t *k, uint32_t x) {
    uint32_t p = k->last[x];
    if (!p) return;
    const uint32_t *blk = &k->at[(p - 1) & ~(uint32_t)(BLOCK - 1)];
    for (int l = 0; l < BLOCK * 4 / 64; l++)
        __builtin_prefetch(blk + l * 16, 1);
}

/* ---- the replay ---- */

typedef struct {
    const scenario_t *s;
    int lru;
    const uint64_t *caps;
    int ncap;
    int *order;       /* capacity indices, smallest first */
    uint64_t *sorted; /* caps in that order */
    uint32_t n;       /* items replayed: all, or the sample's */
    uint32_t *size;   /* [n] */
    uint64_t N;       /* items of the dataset (positions of an epoch's order) */
    int sampled;
    double *cum;  /* sampled: [n] scratch for the positions' spacings */
    uint32_t *at; /* sampled: [n] each replayed access's position in the full order */
} replay_t;

/* Index into sorted of the smallest capacity >= d (ncap: none). */
static inline int first_fit(const replay_t *r, uint64_t d) {
    int lo = 0, hi = r->ncap;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (r->sorted[mid] >= d)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

enum { AHEAD_FAR = 16, AHEAD_NEAR = 6 };

/* Stream k's epochs through its servers' caches. cnt[(e * MRC_STEPS + j) *
 * (ncap + 1) + q]: LRU uses whose distance first fits sorted capacity q;
 * hit[(e * MRC_STEPS + j) * ncap + c]: MinIO hits at capacity c. */
/* Sampled: the sample's order in the full order is a uniform permutation of
 * it, at positions that are a uniform random subset of [0, N): sorted
 * uniform positions from normalised sums of exponential spacings (order
 * statistics), paired with the permutation. */
static void sample_positions(const replay_t *r, gsl_rng *rng) {
    double acc = 0;
    for (uint32_t k = 0; k < r->n; k++) {
        acc -= log(gsl_rng_uniform_pos(rng));
        r->cum[k] = acc;
    }
    double scale = (double)r->N / (acc - log(gsl_rng_uniform_pos(rng)));
    for (uint32_t k = 0; k < r->n; k++) {
        double p = floor(r->cum[k] * scale);
        r->at[k] = p < (double)r->N ? (uint32_t)p : (uint32_t)(r->N - 1);
    }
}

static int replay_stream(const replay_t *r, const topology_t *t, const instance_t *in, gsl_rng *rng,
                         perm_gen_t *pg, uint32_t *perm, uint64_t n_used, double *cnt,
                         double *items, double *reads) {
    const scenario_t *s = r->s;
    const int ns = in->nservers, gps = in->gpus_per_server;
    const int64_t G = s->jobs[in->job].gpus;
    const int ncap = r->ncap;
    int rc = 0;
    stack_t *st = NULL;
    uint64_t *total = calloc((size_t)ns, sizeof *total);
    uint64_t **mask = NULL, *used = NULL;
    (void)t;
    if (!total) return -1;
    if (r->lru) {
        st = calloc((size_t)ns, sizeof *st);
        for (int v = 0; st && v < ns && !rc; v++)
            rc = stack_init(&st[v], r->n);
        if (!st) rc = -1;
    } else {
        mask = calloc((size_t)ns, sizeof *mask);
        used = calloc((size_t)ns * (size_t)ncap, sizeof *used);
        for (int v = 0; mask && v < ns && !rc; v++)
            if (!(mask[v] = calloc(r->n, sizeof **mask))) rc = -1;
        if (!mask || !used) rc = -1;
    }
    uint16_t *server = calloc((size_t)G, sizeof *server);
    if (!server) rc = -1;
    for (int64_t g = 0; server && g < G; g++)
        server[g] = (uint16_t)(g / gps);
    const uint32_t len = r->sampled ? r->n : (uint32_t)n_used;
    for (int e = 0; e < s->epochs && !rc; e++) {
        perm_generate(pg, rng, perm);
        if (r->sampled) sample_positions(r, rng);
        int64_t rank = 0;
        for (uint32_t idx = 0; idx < len; idx++) {
            uint32_t x = perm[idx];
            uint64_t pos = idx;
            if (r->sampled) {
                pos = r->at[idx];
                if (pos >= n_used) continue; /* beyond drop_last's whole batches */
                rank = (int64_t)(pos % (uint64_t)G);
            }
            int v = ns > 1 ? server[rank] : 0;
            if (++rank == G) rank = 0;
            size_t slice = (size_t)e * MRC_STEPS + (size_t)(pos * MRC_STEPS / n_used);
            items[slice]++;
            reads[e]++;
            if (r->lru) {
                if (idx + AHEAD_FAR < len) {
                    uint32_t y = perm[idx + AHEAD_FAR];
                    __builtin_prefetch(&r->size[y]);
                    for (int w = 0; w < ns; w++)
                        __builtin_prefetch(&st[w].last[y]);
                }
                if (idx + AHEAD_NEAR < len && ns == 1)
                    stack_prefetch(&st[0], perm[idx + AHEAD_NEAR]);
                uint64_t d = stack_use(&st[v], x, r->size, &total[v]);
                if (d != UINT64_MAX) cnt[slice * (size_t)(ncap + 1) + (size_t)first_fit(r, d)]++;
            } else {
                uint64_t m = mask[v][x], sz = r->size[x];
                double *h = &cnt[slice * (size_t)ncap];
                for (uint64_t b = m; b; b &= b - 1)
                    h[__builtin_ctzll(b)]++;
                uint64_t *u = &used[(size_t)v * (size_t)ncap];
                uint64_t miss = ~m & (ncap == 64 ? UINT64_MAX : (((uint64_t)1 << ncap) - 1));
                for (uint64_t b = miss; b; b &= b - 1) {
                    int c = __builtin_ctzll(b);
                    if (u[c] + sz <= r->caps[c]) u[c] += sz, m |= (uint64_t)1 << c;
                }
                mask[v][x] = m;
            }
        }
    }
    for (int v = 0; st && v < ns; v++)
        stack_free(&st[v]);
    for (int v = 0; mask && v < ns; v++)
        free(mask[v]);
    free(st), free(mask), free(used), free(total), free(server);
    return rc;
}

static int replay(replay_t *r, const topology_t *t, mrc_t *m, int c0) {
    const scenario_t *s = r->s;
    int rc = 0;
    gsl_rng *master = gsl_rng_alloc(gsl_rng_mt19937);
    uint32_t *perm = malloc((size_t)r->n * sizeof *perm);
    perm_gen_t pg;
    memset(&pg, 0, sizeof pg);
    if (!master || !perm || perm_gen_init(&pg, r->n)) rc = -1;
    if (!rc) {
        gsl_rng_set(master, (unsigned long)s->seed);
        /* The simulator's sizes, drawn first from the master (a sample's
         * were drawn with it: run_curve). */
        if (!r->sampled) sim_item_sizes(s, master, r->n, r->size);
    }
    /* Per stream, in the simulator's order: a generator seeded from the master. */
    unsigned long seeds[TOPO_MAX_INSTANCES];
    for (int k = 0; !rc && k < m->nstreams; k++)
        seeds[k] = gsl_rng_get(master);
    const size_t per_e = (size_t)MRC_STEPS * (size_t)(r->lru ? r->ncap + 1 : r->ncap);
    double *cnt = rc ? NULL : malloc((size_t)s->epochs * per_e * sizeof *cnt);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!cnt || !rng) rc = -1;
    const loader_ops_t *loader = scenario_loader(s);
    for (int i = 0; i < t->ninst && !rc; i++) {
        const instance_t *in = &t->inst[i];
        if (in->lead != i) continue;
        const job_t *jb = &s->jobs[in->job];
        int k = in->stream;
        uint64_t n_used = r->N;
        if (loader->epoch_items)
            n_used = (uint64_t)loader->epoch_items(s, (int64_t)r->N, jb->gpus * jb->batch_per_gpu);
        double *items = &m->items[(size_t)k * (size_t)m->epochs * MRC_STEPS];
        double *reads = &m->reads[(size_t)k * (size_t)m->epochs];
        memset(items, 0, (size_t)m->epochs * MRC_STEPS * sizeof *items);
        memset(reads, 0, (size_t)m->epochs * sizeof *reads);
        gsl_rng_set(rng, seeds[k]);
        memset(cnt, 0, (size_t)s->epochs * per_e * sizeof *cnt);
        rc = replay_stream(r, t, in, rng, &pg, perm, n_used, cnt, items, reads);
        for (int e = 0; e < s->epochs && !rc; e++)
            for (int j = 0; j < MRC_STEPS; j++) {
                const double *row = &cnt[((size_t)e * MRC_STEPS + (size_t)j) * (per_e / MRC_STEPS)];
                if (r->lru) {
                    /* A use that fits sorted capacity q hits every larger one too. */
                    double acc = 0;
                    for (int q = 0; q < r->ncap; q++) {
                        acc += row[q];
                        int c = r->order[q];
                        m->hits[(((size_t)(c0 + c) * (size_t)m->nstreams + (size_t)k) *
                                     (size_t)m->epochs +
                                 (size_t)e) *
                                    MRC_STEPS +
                                (size_t)j] = acc;
                    }
                } else {
                    for (int c = 0; c < r->ncap; c++)
                        m->hits[(((size_t)(c0 + c) * (size_t)m->nstreams + (size_t)k) *
                                     (size_t)m->epochs +
                                 (size_t)e) *
                                    MRC_STEPS +
                                (size_t)j] = row[c];
                }
            }
    }
    free(cnt), free(perm);
    perm_gen_free(&pg);
    if (rng) gsl_rng_free(rng);
    if (master) gsl_rng_free(master);
    return rc;
}

/* SHARDS' spatial sampling: item x is replayed iff a hash of it falls
 * below rate x 2^24 (items are labels and orders uniform, so any fixed
 * share would do; the hash keeps it fixed across epochs and streams). */
#define SAMPLE_BITS 24
static inline int sampled_item(uint64_t x, uint64_t below) {
    uint64_t z = x + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return (z >> (64 - SAMPLE_BITS)) < below;
}

static int run_curve(const scenario_t *s, const topology_t *t, const uint64_t *caps_in, int ncap,
                     double rate, mrc_t *m) {
    memset(m, 0, sizeof *m);
    m->ncap = ncap;
    m->epochs = (int)s->epochs;
    m->nstreams = t->nstreams;
    m->rate = 1;
    size_t cells = (size_t)ncap * (size_t)m->nstreams * (size_t)m->epochs * MRC_STEPS;
    m->hits = calloc(cells ? cells : 1, sizeof *m->hits);
    m->items = calloc((size_t)m->nstreams * (size_t)m->epochs * MRC_STEPS, sizeof *m->items);
    m->reads = calloc((size_t)m->nstreams * (size_t)m->epochs, sizeof *m->reads);
    replay_t r = {.s = s, .lru = scenario_cache(s)->curve == CACHE_CURVE_STACK};
    r.N = (uint64_t)s->dataset.items;
    r.n = (uint32_t)r.N;
    uint64_t *caps = malloc((size_t)(ncap ? ncap : 1) * sizeof *caps);
    if (caps) memcpy(caps, caps_in, (size_t)ncap * sizeof *caps);
    if (rate < 1) {
        uint64_t below = (uint64_t)llround(rate * (double)(1 << SAMPLE_BITS)), count = 0;
        if (below < 1) below = 1;
        for (uint64_t x = 0; x < r.N; x++)
            count += (uint64_t)sampled_item(x, below);
        r.n = (uint32_t)count;
        r.sampled = 1;
        m->rate = (double)count / (double)r.N;
        r.cum = malloc((size_t)(r.n ? r.n : 1) * sizeof *r.cum);
        r.at = malloc((size_t)(r.n ? r.n : 1) * sizeof *r.at);
    }
    r.size = malloc((size_t)(r.n ? r.n : 1) * sizeof *r.size);
    gsl_rng *g = r.sampled ? gsl_rng_alloc(gsl_rng_mt19937) : NULL;
    if (g && r.size) {
        /* The sample's sizes from a generator of its own (the simulator's
         * distribution), and the caches scaled by the sample's share of the
         * dataset's bytes: a share of the items alone would carry the
         * sample's mean size's error into every cache. */
        gsl_rng_set(g, (unsigned long)s->seed ^ 0x5a4d504cUL);
        sim_item_sizes(s, g, r.n, r.size);
        double bytes = 0;
        for (uint32_t i = 0; i < r.n; i++)
            bytes += r.size[i];
        double share = bytes / scenario_dataset_bytes(s);
        for (int c = 0; caps && c < ncap; c++)
            caps[c] = (uint64_t)llround((double)caps_in[c] * share);
    }
    if (g) gsl_rng_free(g);
    if (r.sampled && !g) r.sampled = -1; /* no generator: fails below */
    r.order = malloc((size_t)(ncap ? ncap : 1) * sizeof *r.order);
    r.sorted = malloc((size_t)(ncap ? ncap : 1) * sizeof *r.sorted);
    int rc = m->hits && m->items && m->reads && caps && r.size && r.order && r.sorted &&
                     (!r.sampled || (r.sampled > 0 && r.cum && r.at))
                 ? 0
                 : -1;
    /* LRU answers every capacity in one pass; MinIO 64 at a time. */
    int chunk = r.lru ? ncap : 64;
    for (int c0 = 0; c0 < ncap && !rc; c0 += chunk) {
        r.caps = caps + c0;
        r.ncap = ncap - c0 < chunk ? ncap - c0 : chunk;
        /* Insertion sort: a few dozen capacities, and no global for qsort. */
        for (int c = 0; c < r.ncap; c++) {
            int q = c;
            for (; q > 0 && r.caps[r.order[q - 1]] > r.caps[c]; q--)
                r.order[q] = r.order[q - 1];
            r.order[q] = c;
        }
        for (int q = 0; q < r.ncap; q++)
            r.sorted[q] = r.caps[r.order[q]];
        rc = replay(&r, t, m, c0);
    }
    free(r.size), free(r.order), free(r.sorted), free(r.cum), free(r.at), free(caps);
    if (rc) mrc_free(m);
    return rc;
}

double mrc_memory_bytes(const scenario_t *s, const topology_t *t, double rate, int ncap) {
    double n = (double)s->dataset.items;
    if (rate < 1) n = n * rate * 1.01 + 1000;
    int ns = 1;
    for (int i = 0; i < t->ninst; i++)
        if (t->inst[i].nservers > ns) ns = t->inst[i].nservers;
    /* Per server of a stream (one stream at a time): LRU's last use (4),
     * and 1.5 slots an item of item id (4) and bytes (4); MinIO's mask (8).
     * Per item: size and order (4 each), the permutation's buckets (2), and
     * for a sample its spacings (8) and positions (4). */
    int lru = scenario_cache(s)->curve == CACHE_CURVE_STACK;
    double per_server = lru ? 4 + 1.5 * 8 : 8;
    double counts = (double)s->epochs * MRC_STEPS * (ncap + 1) * 8 * (lru ? 1 : 1 + ncap / 64);
    return n * (ns * per_server + 10 + (rate < 1 ? 12 : 0)) + counts * 2 + 64e6;
}

int mrc_run(const scenario_t *s, const topology_t *t, const uint64_t *caps, int ncap, mrc_t *m) {
    return run_curve(s, t, caps, ncap, 1, m);
}

int mrc_run_sampled(const scenario_t *s, const topology_t *t, const uint64_t *caps, int ncap,
                    double rate, mrc_t *m) {
    return run_curve(s, t, caps, ncap, rate < 1 ? rate : 1, m);
}

void mrc_free(mrc_t *m) {
    free(m->hits), free(m->items), free(m->reads);
    memset(m, 0, sizeof *m);
}

double mrc_profile(const mrc_t *m, const topology_t *t, int c, int i, int e, double *hu) {
    int k = t->inst[i].stream;
    const double *h =
        &m->hits[(((size_t)c * (size_t)m->nstreams + (size_t)k) * (size_t)m->epochs + (size_t)e) *
                 MRC_STEPS];
    const double *items = &m->items[((size_t)k * (size_t)m->epochs + (size_t)e) * MRC_STEPS];
    double sum = 0, reads = m->reads[(size_t)k * (size_t)m->epochs + (size_t)e];
    for (int j = 0; j < MRC_STEPS; j++)
        sum += h[j];
    double mean = reads > 0 ? sum / reads : 0;
    /* A slice a sample left empty: the epoch's mean. */
    for (int j = 0; j < MRC_STEPS; j++)
        hu[j] = items[j] > 0 ? h[j] / items[j] : mean;
    return mean;
}
