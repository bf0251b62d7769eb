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

typedef struct {
    double (*steady)(double f);
    int exact;
} policy_model_t;

static double none_steady(double f) {
    (void)f;
    return 0;
}
static double minio_steady(double f) {
    return f < 1 ? f : 1;
}

/* Indexed by cache_kind_t. */
static const policy_model_t policy_models[CACHE__COUNT] = {
    [CACHE_NONE] = {none_steady, 1},           [CACHE_LRU] = {model_lru_steady, 1},
    [CACHE_MINIO] = {minio_steady, 1},         [CACHE_FIFO] = {model_fifo_steady, 0},
    [CACHE_BELADY] = {model_belady_steady, 1},
};

double model_hit_steady(int kind, double f, int *exact) {
    if (exact) *exact = policy_models[kind].exact;
    return policy_models[kind].steady(f);
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

/* Instances sharing server k (for storage and cache shares). */
static int sharing(const topology_t *t, int k) {
    int c = 0;
    for (int i = 0; i < t->ninst; i++)
        c += k >= t->inst[i].first_server && k < t->inst[i].first_server + t->inst[i].nservers;
    return c;
}

void model_run(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    const double N = (double)s->dataset.items;
    const double mean = scenario_item_bytes_mean(s);
    const double D = scenario_dataset_bytes(s);
    const double C = scenario_cache_bytes(s);
    const double tprep = scenario_prep_s(s, mean);
    int servers_used = 0;
    for (int i = 0; i < t->ninst; i++) {
        int last = t->inst[i].first_server + t->inst[i].nservers;
        if (last > servers_used) servers_used = last;
    }
    int coordinated = s->loader.prep == PREP_COORDINATED;

    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        const job_t *jb = &s->jobs[in->job];
        const double G = (double)jb->gpus, b = (double)jb->batch_per_gpu, M = G * b;
        const int ns = in->nservers;
        int k = sharing(t, in->first_server);
        /* Data-parallel: every iteration waits for all GPUs; a partial last
         * batch is split evenly, so its GPUs compute ceil(rem / G) items. */
        double nb_full = floor(N / M), rem = N - nb_full * M;
        double t_batch = scenario_job_compute_s(s, jb, b);
        double t_last = rem > 0 ? scenario_job_compute_s(s, jb, ceil(rem / G)) : t_batch;
        double t_gpu = nb_full * t_batch + (rem > 0 ? t_last : 0);
        if (coordinated) {
            /* Lock-step: the slowest job on the shared stream gates every job. */
            for (int o = 0; o < t->ninst; o++) {
                const instance_t *q = &t->inst[o];
                if (q->first_server != in->first_server) continue;
                const job_t *qj = &s->jobs[q->job];
                double qb = scenario_job_compute_s(s, qj, b);
                if (qb > t_batch) {
                    t_gpu *= qb / t_batch;
                    t_last *= qb / t_batch;
                    t_batch = qb;
                }
            }
        }
        double r_gpu = M / t_batch;
        double r_prep = tprep > 0 ? in->cpus / tprep : INFINITY;

        /* Storage capacity per server, shared by the streams that use it. */
        int lat_bound = 0;
        double cap =
            model_storage_items_s(s->server.storage.read_mb_s, s->server.storage.latency_ms,
                                  (double)s->server.storage.queue_depth, mean, &lat_bound);
        /* A shared device serves every server's streams; a local one only its own server's. */
        int streams = coordinated ? 1 : k;
        double units = 0;
        for (int o = 0; o < t->ninst; o++)
            units += t->inst[o].nservers;
        if (coordinated) units = servers_used;
        double cap_inst = s->server.storage.shared ? cap * ns / units : cap * ns / streams;
        double nic = s->server.network.gbit_s * 1e9 / 8;

        for (int e = 0; e < s->epochs; e++) {
            epoch_metrics_t *m = metrics_at(out, i, e);
            memset(m, 0, sizeof *m);
            int exact = 1;
            double f = D > 0 ? C / D : 1, h = 0, remote = 0;
            if (s->loader.dist_cache == DIST_PARTITIONED && ns > 1) {
                /* Disjoint MinIO caches: the union holds ns C, a 1/ns share of it locally. */
                double total = f * ns < 1 ? f * ns : 1;
                h = e == 0 ? 0 : total;
                remote = e == 0 ? 0 : total * (ns - 1) / ns;
            } else if (e > 0) {
                h = model_hit_steady(s->loader.cache, f, &exact);
            }
            /* k partitioned streams interleave in one cache, and servers of a
             * multi-server job each see a random share: not yet closed forms. */
            if (!coordinated && k > 1 && s->loader.cache != CACHE_NONE) exact = 0;
            if (ns > 1 && s->loader.dist_cache == DIST_LOCAL && s->loader.cache != CACHE_NONE &&
                s->loader.cache != CACHE_MINIO)
                exact = 0;
            double miss = 1 - h;
            double r_store = miss > 0 ? cap_inst / miss : INFINITY;
            double r_net = remote > 0 ? nic * ns / (remote * mean) : INFINITY;
            double r_fetch = r_store < r_net ? r_store : r_net;
            double p = r_prep < r_fetch ? r_prep : r_fetch;

            m->t_gpu_s = t_gpu;
            m->t_prep_s = model_pipeline_s(N, r_prep, t_gpu, M, t_last);
            m->epoch_s = model_pipeline_s(N, p, t_gpu, M, t_last);
            if (m->epoch_s < m->t_prep_s) m->epoch_s = m->t_prep_s;
            m->throughput_items_s = N / m->epoch_s;
            m->gpu_util = t_gpu / m->epoch_s;
            m->prep_stall_s = m->t_prep_s - t_gpu;
            m->fetch_stall_s = m->epoch_s - m->t_prep_s;
            m->hit_rate = h;
            m->remote_hit_rate = remote;
            m->storage_read_bytes = miss * D;
            m->network_bytes = remote * D;
            m->cpu_util = in->cpus > 0 ? N * tprep / (in->cpus * m->epoch_s) : 0;
            m->storage_util = miss * D / (s->server.storage.read_mb_s * 1e6 * ns) / m->epoch_s;
            double r_min = r_gpu;
            m->bottleneck = BN_GPU;
            if (r_prep < r_min) r_min = r_prep, m->bottleneck = BN_PREP;
            if (r_store < r_min)
                r_min = r_store, m->bottleneck = lat_bound ? BN_STORAGE_LATENCY : BN_STORAGE_BW;
            if (r_net < r_min) m->bottleneck = BN_NETWORK;
            m->approximate = !exact;
        }
    }
}
