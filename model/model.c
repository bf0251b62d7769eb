/* model: see model.h. */
#include "model.h"

#include <math.h>
#include <string.h>

double model_lru_steady(double f) {
    if (f <= 0) return 0;
    if (f >= 1) return 1;
    return f + (1 - f) * log(1 - f);
}

/* FIFO never refreshes a hit, so an item stays for a fixed window of
 * W = K / m accesses after its miss (m = miss fraction). With per-epoch
 * reshuffles the n-th later access of an item comes n + (U' - U) epochs later
 * (positions U, U' uniform), so it hits while that is below w = W / N. The
 * expected hits per insertion E[H] = sum_n F(w - n), F the triangular CDF on
 * (-1, 1), and m = 1 / (1 + E[H]) closes the fixed point w = f (1 + E[H]). */
static double tri_cdf(double x) {
    if (x <= -1) return 0;
    if (x >= 1) return 1;
    return x <= 0 ? (1 + x) * (1 + x) / 2 : 1 - (1 - x) * (1 - x) / 2;
}

double model_fifo_steady(double f) {
    if (f <= 0) return 0;
    if (f >= 1) return 1;
    double w = f;
    for (int it = 0; it < 200; it++) {
        double eh = 0;
        for (int n = 1; n < w + 2; n++)
            eh += tri_cdf(w - n);
        double next = f * (1 + eh);
        if (fabs(next - w) < 1e-12) break;
        w = next;
    }
    return 1 - f / w;
}

/* The clairvoyant optimum can do no better than MinIO under per-epoch
 * reshuffles: an item's reuse interval runs from its access in one epoch to
 * its access in the next, so every interval contains the epoch boundary, and
 * at that instant the cache holds at most C bytes of the items it will hit.
 * Hence at most C/D of the accesses hit, and furthest-next-use reaches it. */
double model_belady_steady(double f) {
    return f < 1 ? (f > 0 ? f : 0) : 1;
}

/* Shared-cache transients and steady states (LRU and MinIO).
 *
 * k streams share one cache and advance in step (identical jobs started
 * together); each reshuffles every epoch and touches a given item in an epoch
 * with probability p at a uniform time u in [0, 1) (p = 1 for a job on one
 * server; 1/S for one server's share of a job spread over S). Che's
 * characteristic-time argument: an LRU cache of K = f N items holds exactly
 * the items touched in the last T, where T makes the expected number of
 * distinct items touched in the window equal K. With window probabilities
 * P(untouched by one stream) = 1 - p tau within an epoch, the window either
 * still lies in the history (not yet full), or crosses into earlier epochs,
 * or fits in the current one; g = (1-f)^(1/k), q = (1-p)^e give
 *   not full (u < u_fill):  hit = 1 - q^k (1 - p u)^(k-1)
 *   window reaches back:    hit = 1 - (1 - f) / (1 - p u)
 *   window in this epoch:   hit = 1 - g^(k-1)              (u >= u_zero)
 * with (1 - p u_fill) q = g and u_zero = (1 - g) / p. k = p = 1 gives the
 * classic f + (1-f) ln(1-f); in general the steady state is
 * f + (1-f) ln(1-f) / k for p = 1. MinIO keeps the first K distinct items, so
 * after it fills every access hits with probability f. */
typedef struct {
    double f, p, g, q;
    int k;
} share_t;

static share_t share_init(double f, double p, int k, int e) {
    share_t s = {f, p, pow(1 - f, 1.0 / k), pow(1 - p, e), k};
    return s;
}

/* Integral over [0, a] of the not-yet-full hit probability. */
static double fill_part(const share_t *s, double a) {
    if (a <= 0) return 0;
    double qk = pow(s->q, s->k);
    return a - qk * (1 - pow(1 - s->p * a, s->k)) / (s->p * s->k);
}

static double clamp01(double x) {
    return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* When in the epoch the cache fills (0: full at its start; 1: not this epoch). */
static double fill_time(const share_t *s) {
    if (s->q <= s->g) return 0;
    return clamp01((1 - s->g / s->q) / s->p);
}

double model_lru_epoch(double f, double p, int k, int e) {
    if (f <= 0 || p <= 0) return 0;
    share_t s = share_init(f < 1 ? f : 1, p, k, e);
    if (f >= 1) return fill_part(&s, 1);
    double a = fill_time(&s);
    double z = clamp01((1 - s.g) / p);
    if (z < a) z = a;
    double reach = (z - a) + (1 - f) / p * log((1 - p * z) / (1 - p * a));
    return fill_part(&s, a) + reach + (1 - pow(s.g, k - 1)) * (1 - z);
}

double model_minio_epoch(double f, double p, int k, int e) {
    if (f <= 0 || p <= 0) return 0;
    share_t s = share_init(f < 1 ? f : 1, p, k, e);
    if (f >= 1) return fill_part(&s, 1);
    if (s.q <= s.g) return f;
    double a = fill_time(&s);
    return fill_part(&s, a) + (1 - a) * (1 - pow(s.g, k - 1) * s.q);
}

/* The same hit probabilities at position u of the epoch's order. */
static double lru_at(double f, double p, int k, int e, double u) {
    if (f <= 0 || p <= 0) return 0;
    share_t s = share_init(f < 1 ? f : 1, p, k, e);
    double a = f >= 1 ? 1 : fill_time(&s);
    if (u < a) return 1 - pow(s.q, k) * pow(1 - p * u, k - 1);
    double z = clamp01((1 - s.g) / p);
    if (u < z) return 1 - (1 - f) / (1 - p * u);
    return 1 - pow(s.g, k - 1);
}

static double minio_at(double f, double p, int k, int e, double u) {
    if (f <= 0 || p <= 0) return 0;
    share_t s = share_init(f < 1 ? f : 1, p, k, e);
    if (f < 1 && s.q <= s.g) return f;
    double a = f >= 1 ? 1 : fill_time(&s);
    if (u < a) return 1 - pow(s.q, k) * pow(1 - p * u, k - 1);
    return 1 - pow(s.g, k - 1) * s.q;
}

/* Per-policy hit rate of epoch e (0-based); exact says whether the formula is
 * exact for that policy and sharing. Indexed by cache_kind_t. */
typedef double (*epoch_hit_fn)(double f, double p, int k, int e, int *exact);
typedef double (*hit_at_fn)(double f, double p, int k, int e, double u);

static double none_epoch(double f, double p, int k, int e, int *exact) {
    (void)f, (void)p, (void)k, (void)e;
    *exact = 1;
    return 0;
}
static double lru_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 1;
    return model_lru_epoch(f, p, k, e);
}
static double minio_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 1;
    return model_minio_epoch(f, p, k, e);
}
/* FIFO has no closed form; one stream has the fixed point above, shared or
 * spread caches borrow LRU's transient, the nearest policy. */
static double fifo_epoch(double f, double p, int k, int e, int *exact) {
    *exact = 0;
    if (k == 1 && p >= 1) return e == 0 ? 0 : model_fifo_steady(f);
    return model_lru_epoch(f, p, k, e);
}
/* The scenario checks refuse belady for a cache that sees more than one
 * stream or a share of one, where a single next-use order does not exist. */
static double belady_epoch(double f, double p, int k, int e, int *exact) {
    (void)p, (void)k;
    *exact = 1;
    return e == 0 ? 0 : model_belady_steady(f);
}

/* Policies without a known profile over the epoch get a flat one (at = NULL). */
static const struct {
    epoch_hit_fn epoch;
    hit_at_fn at;
} policy_models[CACHE__COUNT] = {
    [CACHE_NONE] = {none_epoch, NULL},       [CACHE_LRU] = {lru_epoch, lru_at},
    [CACHE_MINIO] = {minio_epoch, minio_at}, [CACHE_FIFO] = {fifo_epoch, NULL},
    [CACHE_BELADY] = {belady_epoch, NULL},
};

double model_hit_epoch(int kind, double f, double p, int k, int e, int *exact) {
    int ex;
    double h = policy_models[kind].epoch(f, p, k, e, &ex);
    if (exact) *exact = ex;
    return h;
}

double model_hit_at(int kind, double f, double p, int k, int e, double u) {
    if (policy_models[kind].at) return policy_models[kind].at(f, p, k, e, u);
    return model_hit_epoch(kind, f, p, k, e, NULL);
}

double model_hit_steady(int kind, double f, int *exact) {
    /* Two epochs suffice: with p = 1 every policy is in steady state by then. */
    return model_hit_epoch(kind, f, 1, 1, 2, exact);
}

double model_storage_items_s(double read_mb_s, double latency_ms, double qd, double bytes,
                             int *latency_bound) {
    double bw = read_mb_s * 1e6;
    double by_bw = bw / bytes;
    double by_lat = qd / (latency_ms / 1e3 + bytes / bw);
    if (latency_bound) *latency_bound = by_lat < by_bw;
    return by_lat < by_bw ? by_lat : by_bw;
}

double model_pipeline_s(double n, double p, double t_gpu, double m, double t_last) {
    if (!(p < INFINITY)) return t_gpu;
    double load = n / p;
    return load > t_gpu ? load + t_last : (m < n ? m : n) / p + t_gpu;
}

/* Epoch time of a loader whose cost per item varies along the epoch's order
 * (the hit rate does: a cold LRU misses early, a spread one late). The
 * order is cut into FLUID_STEPS slices; the loader spends cost[j] seconds per
 * item in slice j. Every iteration waits for its batch, so the epoch ends at
 * max over slice boundaries u of (time to load up to u) + (compute left
 * after u); u = m/N and u = 1 give model_pipeline_s's two cases exactly. */
enum { FLUID_STEPS = 256 };

static double fluid_epoch_s(double n, const double *cost, double t_gpu, double m, double t_last) {
    double first = m < n ? m / n : 1, load = 0, worst = 0;
    double per_item_gpu = n > m ? (t_gpu - t_last) / (n - m) : 0; /* full batches */
    for (int j = 0; j < FLUID_STEPS; j++) {
        double lo = (double)j / FLUID_STEPS, hi = (double)(j + 1) / FLUID_STEPS;
        if (first > lo && first <= hi) {
            double at = load + n * (first - lo) * cost[j];
            if (at + t_gpu > worst) worst = at + t_gpu;
        }
        load += n * (hi - lo) * cost[j];
        if (hi > first && hi < 1) {
            double left = t_last + per_item_gpu * n * (1 - hi);
            if (load + left > worst) worst = load + left;
        }
    }
    if (load + t_last > worst) worst = load + t_last;
    return worst;
}

/* Whether instances a and b run identical streams (same rates, so they stay
 * in step and the shared-cache closed forms are exact). */
static int same_stream(const scenario_t *s, const instance_t *a, const instance_t *b) {
    const job_t *x = &s->jobs[a->job], *y = &s->jobs[b->job];
    return a->nservers == b->nservers && a->cpus == b->cpus && x->gpus == y->gpus &&
           x->batch_per_gpu == y->batch_per_gpu &&
           scenario_job_compute_s(s, x, 1) == scenario_job_compute_s(s, y, 1);
}

static int on_server(const instance_t *in, int k) {
    return k >= in->first_server && k < in->first_server + in->nservers;
}

/* The fetch+prep streams of a scenario: one per instance, or under
 * coordinated prep one per group of instances on the same servers. */
typedef struct {
    int lead[TOPO_MAX_INSTANCES]; /* per instance: the first instance of its stream */
    int nstreams;
} streams_t;

static void find_streams(const scenario_t *s, const topology_t *t, streams_t *g) {
    g->nstreams = 0;
    for (int i = 0; i < t->ninst; i++) {
        g->lead[i] = i;
        if (s->loader.prep == PREP_COORDINATED)
            for (int o = 0; o < i && g->lead[i] == i; o++)
                if (t->inst[o].first_server == t->inst[i].first_server) g->lead[i] = g->lead[o];
        g->nstreams += g->lead[i] == i;
    }
}

/* How the cache that instance i reads through is shared: k streams in step,
 * each touching an item with probability p per epoch; exact when identical. */
static void cache_sharing(const scenario_t *s, const topology_t *t, const streams_t *g, int i,
                          int servers_used, int *k, double *p, int *exact) {
    const instance_t *in = &t->inst[i];
    int dist = s->loader.dist_cache == DIST_PARTITIONED;
    *k = 0;
    *exact = 1;
    for (int o = 0; o < t->ninst; o++) {
        const instance_t *q = &t->inst[o];
        if (g->lead[o] != o || !(dist || on_server(q, in->first_server))) continue;
        ++*k;
        *exact &= same_stream(s, &t->inst[g->lead[i]], q);
        if (dist) *exact &= q->first_server == 0 && q->nservers == servers_used;
    }
    /* The partitioned caches act as one cache that sees every access. */
    *p = dist ? 1 : 1.0 / in->nservers;
}

void model_run(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    const double N = (double)s->dataset.items;
    const double mean = scenario_item_bytes_mean(s);
    const double D = scenario_dataset_bytes(s);
    const double C = scenario_cache_bytes(s);
    const double tprep = scenario_prep_s(s, mean);
    const int dist = s->loader.dist_cache == DIST_PARTITIONED;
    int servers_used = 0;
    for (int i = 0; i < t->ninst; i++) {
        int last = t->inst[i].first_server + t->inst[i].nservers;
        if (last > servers_used) servers_used = last;
    }
    streams_t g;
    find_streams(s, t, &g);
    /* Streams reading each server's device, for its share of storage. */
    int per_server[SCN_MAX_SERVERS] = {0}, units = 0;
    for (int i = 0; i < t->ninst; i++)
        if (g.lead[i] == i)
            for (int k = 0; k < t->inst[i].nservers; k++)
                per_server[t->inst[i].first_server + k]++, units++;
    if (out->srv)
        memset(out->srv, 0, sizeof *out->srv * (size_t)out->nservers * (size_t)out->nepochs);

    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        const job_t *jb = &s->jobs[in->job];
        const double G = (double)jb->gpus, b = (double)jb->batch_per_gpu, M = G * b;
        const int ns = in->nservers;
        /* Data-parallel: every iteration waits for all GPUs; a partial last
         * batch is split evenly, so its GPUs compute ceil(rem / G) items. */
        double nb_full = floor(N / M), rem = N - nb_full * M;
        double t_batch = scenario_job_compute_s(s, jb, b);
        double t_last = rem > 0 ? scenario_job_compute_s(s, jb, ceil(rem / G)) : t_batch;
        double t_gpu = nb_full * t_batch + (rem > 0 ? t_last : 0);
        /* Lock-step: the slowest job of a shared stream gates its pace; each
         * job still computes only its own time (the rest shows as stall). */
        double pace_batch = t_batch, pace_last = t_last, pace_gpu = t_gpu;
        for (int o = 0; o < t->ninst; o++) {
            if (g.lead[o] != g.lead[i]) continue;
            const job_t *qj = &s->jobs[t->inst[o].job];
            double qb = scenario_job_compute_s(s, qj, b);
            if (qb > pace_batch) {
                pace_batch = qb;
                pace_last = rem > 0 ? scenario_job_compute_s(s, qj, ceil(rem / G)) : qb;
                pace_gpu = nb_full * qb + (rem > 0 ? pace_last : 0);
            }
        }
        double r_gpu = M / pace_batch;
        double r_prep = tprep > 0 ? in->cpus / tprep : INFINITY;

        /* Storage: a local device serves the streams of its server; a shared
         * one every stream of the cluster. */
        int lat_bound = 0;
        double cap =
            model_storage_items_s(s->server.storage.read_mb_s, s->server.storage.latency_ms,
                                  (double)s->server.storage.queue_depth, mean, &lat_bound);
        double cap_inst =
            s->server.storage.shared ? cap * ns / units : cap * ns / per_server[in->first_server];
        double nic = s->server.network.gbit_s * 1e9 / 8;
        int k, exact_share;
        double p;
        cache_sharing(s, t, &g, i, servers_used, &k, &p, &exact_share);
        double f = D > 0 ? C / D : 1;
        if (dist) f = f * servers_used < 1 ? f * servers_used : 1;
        double ahead = (double)scenario_staged_batches(s, jb);
        if (ahead > ceil(N / M)) ahead = ceil(N / M);
        double staged = ahead * M * scenario_out_item_bytes(s);

        for (int e = 0; e < s->epochs; e++) {
            epoch_metrics_t *m = metrics_at(out, i, e);
            memset(m, 0, sizeof *m);
            int exact;
            double h = model_hit_epoch(s->loader.cache, f, p, k, e, &exact);
            /* A partitioned item is local on one of the servers: 1/S of the hits. */
            double share_remote = dist ? (double)(servers_used - 1) / servers_used : 0;
            double remote = h * share_remote;
            double miss = 1 - h;
            double r_store = miss > 0 ? cap_inst / miss : INFINITY;
            double r_net = remote > 0 ? nic * ns / (remote * mean) : INFINITY;
            /* Per-item loader cost along the order: the slowest of prep,
             * storage for the misses and the network for remote hits. */
            double cost[FLUID_STEPS];
            for (int j = 0; j < FLUID_STEPS; j++) {
                double hu = model_hit_at(s->loader.cache, f, p, k, e, (j + 0.5) / FLUID_STEPS);
                double c = isfinite(r_prep) ? 1 / r_prep : 0;
                double c_store = (1 - hu) / cap_inst;
                double c_net = dist ? hu * share_remote * mean / (nic * ns) : 0;
                if (c_store > c) c = c_store;
                if (c_net > c) c = c_net;
                cost[j] = c;
            }

            m->t_gpu_s = t_gpu;
            m->t_prep_s = model_pipeline_s(N, r_prep, t_gpu, M, t_last);
            m->epoch_s = fluid_epoch_s(N, cost, t_gpu, M, t_last);
            if (pace_batch > t_batch) {
                /* A faster job runs at most `ahead` staged batches in front of
                 * the slowest, so it starts its last batch when the slowest
                 * starts its ahead-th from last. */
                double lead = pace_last + ahead * pace_batch - t_last;
                double p_prep = model_pipeline_s(N, r_prep, pace_gpu, M, pace_last) - lead;
                double p_all = fluid_epoch_s(N, cost, pace_gpu, M, pace_last) - lead;
                if (p_prep > m->t_prep_s) m->t_prep_s = p_prep;
                if (p_all > m->epoch_s) m->epoch_s = p_all;
            }
            if (m->epoch_s < m->t_prep_s) m->epoch_s = m->t_prep_s;
            m->throughput_items_s = N / m->epoch_s;
            m->gpu_util = t_gpu / m->epoch_s;
            m->prep_stall_s = m->t_prep_s - t_gpu;
            m->fetch_stall_s = m->epoch_s - m->t_prep_s;
            m->hit_rate = h;
            m->remote_hit_rate = remote;
            m->storage_read_bytes = miss * D;
            m->network_bytes = remote * D;
            m->storage_reads = miss * N;
            m->items_prepped = N;
            m->items_consumed = N;
            m->staged_bytes = staged;
            m->cpu_util = in->cpus > 0 ? N * tprep / (in->cpus * m->epoch_s) : 0;
            m->storage_util = miss * D / (s->server.storage.read_mb_s * 1e6 * ns) / m->epoch_s;
            double r_min = r_gpu;
            m->bottleneck = BN_GPU;
            if (r_prep < r_min) r_min = r_prep, m->bottleneck = BN_PREP;
            if (r_store < r_min)
                r_min = r_store, m->bottleneck = lat_bound ? BN_STORAGE_LATENCY : BN_STORAGE_BW;
            if (r_net < r_min) m->bottleneck = BN_NETWORK;
            m->approximate = !exact || !exact_share;

            /* Each stream's reads spread evenly over its servers. */
            if (g.lead[i] != i || !out->srv) continue;
            for (int v = in->first_server; v < in->first_server + ns; v++) {
                server_metrics_t *sv = server_at(out, v, e);
                sv->accesses += N / ns;
                sv->local_hits += (h - remote) * N / ns;
                sv->remote_hits += remote * N / ns;
                sv->storage_reads += miss * N / ns;
                sv->storage_read_bytes += miss * D / ns;
                sv->net_in_bytes += remote * D / ns;
                sv->net_out_bytes += remote * D / ns;
                sv->staged_bytes += staged / ns;
            }
        }
    }
}
