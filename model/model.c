/* model: see model.h. */
#include "model.h"

#include <math.h>
#include <string.h>

#include "kinds.h"
#include "memory.h"

double model_hit_epoch(int kind, double f, double p, int k, int e, int *exact) {
    int ex;
    double h = cache_kind(kind)->hit_epoch(f, p, k, e, &ex);
    if (exact) *exact = ex;
    return h;
}

double model_hit_at(int kind, double f, double p, int k, int e, double u) {
    const cache_ops_t *c = cache_kind(kind);
    if (c->hit_at) return c->hit_at(f, p, k, e, u);
    return model_hit_epoch(kind, f, p, k, e, NULL);
}

double model_hit_steady(int kind, double f, int *exact) {
    /* Two epochs suffice: with p = 1 every policy is in steady state by then. */
    return model_hit_epoch(kind, f, 1, 1, 2, exact);
}

double model_pipeline_s(double n, double p, double t_gpu, double m, double t_last) {
    if (!(p < INFINITY)) return t_gpu;
    double load = n / p;
    return load > t_gpu ? load + t_last : (m < n ? m : n) / p + t_gpu;
}

/* The loader's cost per item varies along the epoch's order (the hit rate
 * does: a cold LRU misses early, a spread one late, belady hits first), so
 * the order is cut into FLUID_STEPS slices of constant cost. */
enum { FLUID_STEPS = MODEL_STEPS, STEPS_MAX = 4096 };

/* Batch-level pipeline of one stream and its consumers, a fluid version of
 * the simulator's: the loader works through batches in order, batch k may
 * start once every consumer has started batch k - ahead (its buffer is free),
 * and each consumer starts a batch when it is loaded and its previous one is
 * done, so the slowest consumer gates the rest (lock-step). Writes each
 * consumer's epoch end. With constant cost it gives model_pipeline_s's two
 * cases exactly. Beyond STEPS_MAX batches, runs of q batches move as one. */
static void batch_pipeline(double n, double m, const double *cost, int64_t ahead, int nc,
                           const double *t_batch, const double *t_last, double *end) {
    int64_t nb = (int64_t)ceil(n / m), q = (nb + STEPS_MAX - 1) / STEPS_MAX;
    int64_t steps = (nb + q - 1) / q, window = ahead / q > 1 ? ahead / q : 1;
    double started[STEPS_MAX]; /* when the last consumer started step k, by k % window */
    double loaded = 0;
    for (int c = 0; c < nc; c++)
        end[c] = 0;
    for (int64_t k = 0; k < steps; k++) {
        int last = k == steps - 1;
        double first_item = (double)k * q * m;
        double items = last ? n - first_item : q * m;
        int64_t batches = last ? nb - k * q : q;
        int j = (int)((first_item + items / 2) / n * FLUID_STEPS);
        double free_at = k >= window ? started[k % window] : 0;
        loaded = (loaded > free_at ? loaded : free_at) +
                 items * cost[j < FLUID_STEPS ? j : FLUID_STEPS - 1];
        double latest = 0;
        for (int c = 0; c < nc; c++) {
            double start = end[c] > loaded ? end[c] : loaded;
            end[c] = start + (double)(batches - 1) * t_batch[c] + (last ? t_last[c] : t_batch[c]);
            if (start > latest) latest = start;
        }
        started[k % window] = latest;
    }
}

/* Whether instances a and b run identical streams (same rates, so they stay
 * in step and the shared-cache closed forms are exact). */
static int same_stream(const scenario_t *s, const instance_t *a, const instance_t *b) {
    const job_t *x = &s->jobs[a->job], *y = &s->jobs[b->job];
    return a->nservers == b->nservers && a->cpus == b->cpus && x->gpus == y->gpus &&
           x->batch_per_gpu == y->batch_per_gpu &&
           scenario_job_compute_s(s, x, 1) == scenario_job_compute_s(s, y, 1) &&
           scenario_job_prep_s(s, x, 1e5) == scenario_job_prep_s(s, y, 1e5);
}

static int on_server(const instance_t *in, int k) {
    return k >= in->first_server && k < in->first_server + in->nservers;
}

/* How the cache that instance i reads through is shared: k streams in step,
 * each touching an item with probability p per epoch; exact when identical. */
static void cache_sharing(const scenario_t *s, const topology_t *t, int i, int servers_used, int *k,
                          double *p, int *exact) {
    const instance_t *in = &t->inst[i];
    int dist = s->loader.dist_cache == DIST_SHARDED;
    *k = 0;
    *exact = 1;
    for (int o = 0; o < t->ninst; o++) {
        const instance_t *q = &t->inst[o];
        if (t->inst[o].lead != o || !(dist || on_server(q, in->first_server))) continue;
        ++*k;
        *exact &= same_stream(s, &t->inst[t->inst[i].lead], q);
        if (dist) *exact &= q->first_server == 0 && q->nservers == servers_used;
    }
    /* The partitioned caches act as one cache that sees every access. */
    *p = dist ? 1 : 1.0 / in->nservers;
}

static void run_with(const scenario_t *s, const topology_t *t, model_hits_fn hits, void *ctx,
                     run_metrics_t *out, int first);

void model_run(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    run_with(s, t, NULL, NULL, out, 0);
}

void model_run_from(const scenario_t *s, const topology_t *t, run_metrics_t *out, int first) {
    run_with(s, t, NULL, NULL, out, first);
}

void model_run_hits(const scenario_t *s, const topology_t *t, model_hits_fn hits, void *ctx,
                    run_metrics_t *out) {
    run_with(s, t, hits, ctx, out, 0);
}

/* Partitioned caching in lock-step batches (a window of one batch): a batch
 * is done when the most loaded NIC direction has carried its share, not the
 * mean one. A server's in-link carries its m = M / ns items' remote ones
 * (each with probability q = h (ns-1)/ns); owner j's out-link carries the
 * items the others read that j holds (each of their M - m with probability
 * h / ns). Loads as independent normals (sizes lognormal, cv), the expected
 * maximum over the links by quadrature; with two servers one's in-link is
 * the other's out-link, so the in-links alone. Returns the batch's expected
 * time over the mean link's (>= 1); measured against network namespaces
 * (scripts/validate_net.py). A window of 2+ batches keeps every link's queue
 * fed across the batch boundary and the simulator shows no such excess. */
static double net_lockstep_factor(double M, int ns, double h, double cv) {
    const double m = M / ns, q = h * (ns - 1) / ns, p = h / ns, e2 = 1 + cv * cv;
    const double mu = m * q; /* in item sizes; the same for in- and out-links */
    if (ns < 2 || mu <= 0) return 1;
    const double s_in = sqrt(m * (q * e2 - q * q));
    const double s_out = ns > 2 ? sqrt((M - m) * (p * e2 - p * p)) : 0;
    const double hi = 8 * (s_in > s_out ? s_in : s_out);
    if (!(hi > 0)) return 1;
    /* E[max] - mu = int_0^inf (1 - F) - int_-inf^0 F, F the product of CDFs. */
    const int steps = 800;
    double excess = 0, dx = 2 * hi / steps;
    for (int k = 0; k < steps; k++) {
        double x = -hi + (k + 0.5) * dx, F = pow(0.5 * erfc(-x / (s_in * M_SQRT2)), ns);
        if (s_out > 0) F *= pow(0.5 * erfc(-x / (s_out * M_SQRT2)), ns);
        excess += (x > 0 ? 1 - F : -F) * dx;
    }
    return 1 + excess / mu;
}

static void run_with(const scenario_t *s, const topology_t *t, model_hits_fn hits, void *ctx,
                     run_metrics_t *out, int first) {
    const double N = (double)s->dataset.items;
    const double mean = scenario_item_bytes_mean(s);
    const double D = scenario_dataset_bytes(s);
    const double C = memory_cache_bytes(s, t);
    const int dist = s->loader.dist_cache == DIST_SHARDED;
    const storage_ops_t *storage = scenario_storage(s);
    /* The tier (server.tier): a second cache over the DRAM cache's misses on
     * each server's own device. Its items are those a cache of the tier's
     * size would hold beyond the DRAM cache's: the two levels' hit rate as
     * one cache of the larger size, marked approximate (the tier sees only
     * the misses, so its recency differs). */
    const int tier = s->server.tier.cache_gb > 0;
    scenario_t ts;
    if (tier) tier_scenario(&ts, s);
    const storage_ops_t *tier_dev = tier ? scenario_storage(&ts) : NULL;
    const double C2 = tier ? s->server.tier.cache_gb * 1e9 : 0;
    int servers_used = 0;
    for (int i = 0; i < t->ninst; i++) {
        int last = t->inst[i].first_server + t->inst[i].nservers;
        if (last > servers_used) servers_used = last;
    }
    /* Streams reading each server's device, for its share of storage. */
    int per_server[SCN_MAX_SERVERS] = {0}, units = 0;
    for (int i = 0; i < t->ninst; i++)
        if (t->inst[i].lead == i)
            for (int k = 0; k < t->inst[i].nservers; k++)
                per_server[t->inst[i].first_server + k]++, units++;
    if (out->srv)
        memset(out->srv, 0, sizeof *out->srv * (size_t)out->nservers * (size_t)out->nepochs);

    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        const job_t *jb = &s->jobs[in->job];
        const double G = (double)jb->gpus, b = (double)jb->batch_per_gpu, M = G * b;
        const int ns = in->nservers;
        /* The job's own pipeline (coordinated jobs share one). */
        const double tprep = scenario_job_prep_s(s, jb, mean);
        const loader_ops_t *loader = scenario_loader(s);
        /* Data-parallel: every iteration waits for all GPUs; a partial last
         * batch is split evenly, so its GPUs compute ceil(rem / G) items. */
        /* Under drop_last an epoch reads only whole batches. */
        const double n_used =
            loader->epoch_items ? (double)loader->epoch_items(s, (int64_t)N, (int64_t)M) : N;
        double nb_full = floor(n_used / M), rem = n_used - nb_full * M;
        /* An epoch under drop_last reads, moves and prepares n_used items. */
        const double Du = N > 0 ? D * n_used / N : 0;
        double t_batch = scenario_job_compute_s(s, jb, b);
        double t_last = rem > 0 ? scenario_job_compute_s(s, jb, ceil(rem / G)) : t_batch;
        double t_gpu = nb_full * t_batch + (rem > 0 ? t_last : 0);
        /* The consumers of this instance's stream (itself alone unless coordinated). */
        int nc = 0, me = 0;
        double tb[TOPO_MAX_INSTANCES], tl[TOPO_MAX_INSTANCES];
        /* The training processes' CPU beside their GPUs (jobs.N.train_cpu_ms):
         * an iteration lasts at least that long alone, and every consumer's
         * ranks take it from the stream's cores once a batch. */
        const double share = loader->train_share ? loader->train_share(in->cpus / ns) : 1;
        double train_item = 0;
        /* A shared stream's batch handed to each consumer (CoorDL): copied
         * by every rank as part of its own CPU, counted as prep. */
        int consumers = 0;
        for (int o = 0; o < t->ninst; o++)
            consumers += t->inst[o].lead == t->inst[i].lead;
        const int readers = consumers * in->gpus_per_server;
        for (int o = 0; o < t->ninst; o++) {
            if (t->inst[o].lead != t->inst[i].lead) continue;
            const job_t *qj = &s->jobs[t->inst[o].job];
            if (o == i) me = nc;
            const double hand =
                loader->handoff_s ? loader->handoff_s(s, qj, consumers, readers) : 0;
            const double alone = (qj->train_cpu_ms / 1e3 + hand) * share;
            tb[nc] = fmax(scenario_job_compute_s(s, qj, b), alone);
            tl[nc] = rem > 0 ? fmax(scenario_job_compute_s(s, qj, ceil(rem / G)), alone) : tb[nc];
            train_item += (qj->train_cpu_ms / 1e3 + hand) / b;
            nc++;
        }
        /* The GPU's own prep (nvJPEG, augment on the GPU) is not T_gpu. */
        const double g_full = scenario_job_gpu_prep_s(s, jb, b);
        const double g_last = rem > 0 ? scenario_job_gpu_prep_s(s, jb, ceil(rem / G)) : g_full;
        const double alone = jb->train_cpu_ms / 1e3 * share;
        /* (the hand-off in tb is prep: T_gpu is the compute and the CPU alone) */
        t_gpu =
            nb_full * fmax(t_batch - g_full, alone) + (rem > 0 ? fmax(t_last - g_last, alone) : 0);
        const double gpu_prep = nb_full * g_full + (rem > 0 ? g_last : 0);
        /* The cores prepare as the measured curve's effective cores (prep.scaling). */
        const double eff_cpus = scenario_prep_cores_total(s, in->cpus, ns);
        double r_prep = loader->items_s(eff_cpus, tprep);

        /* Storage: a local device serves the streams of its server; a shared
         * one every stream of the cluster. */
        int latency_bound;
        /* Record shards: one request a shard, S items of it. */
        const double S = scenario_items_per_read(s), req = S * mean;
        /* A shuffle buffer of B items: reads run ceil(B / M) batches further
         * (a worker's own: loader_buffer_slices). */
        const double B = (double)s->loader.shuffle_buffer;
        const double buf_lag = (double)loader_buffer_slices(s, jb, (int64_t)N, (int64_t)M);
        double cap = storage->items_s(s, req, &latency_bound) * S;
        int lanes_per_rank = 0, shard_guess = 0;
        if (S > 1) {
            double lanes = loader->shard_lanes(s, &lanes_per_rank);
            if (!lanes_per_rank) {
                /* The pool's lanes each read a shard; a lane's next shard is
                 * asked for when the loader's window reaches its first item,
                 * so the window adds about ahead x M / S requests in flight.
                 * The simulator has the lanes' real timing: the model's
                 * figure is marked approximate. */
                /* (A shuffle buffer's read-ahead opened few more shards in
                 * the simulator while it is small beside the data: left out.) */
                double w_ahead = (double)loader_staged_batches(s, jb);
                double inflight = lanes + w_ahead * M / S - 1;
                if (inflight < 1) inflight = 1;
                double by_lanes = inflight * S / storage->service_s(s, req);
                if (by_lanes < cap) cap = by_lanes, latency_bound = 1;
                shard_guess = 1;
            } else {
                /* Workers with a shard more than the others finish the epoch
                 * alone (the simulator has it; the model's batches do not). */
                double streams = lanes * G, nsh = ceil(N / S);
                if (fmod(nsh, streams) != 0) shard_guess = 1;
            }
        } else if (!loader->sync_reads) {
            /* A loader that issues a batch's reads at once has at most its
             * window's items in flight, however many slots the device has:
             * with a deep object-store pool and a short window the window
             * binds (the simulator's batches refill it in steps: marked
             * approximate). */
            double window = ((double)loader_staged_batches(s, jb) + buf_lag) * M;
            double by_window = window / storage->service_s(s, req);
            if (by_window < cap) cap = by_window, latency_bound = 1, shard_guess = 1;
        }
        double cap_inst =
            s->server.storage.shared ? cap * ns / units : cap * ns / per_server[in->first_server];
        double nic = s->server.network.gbit_s * 1e9 / 8;
        int k, exact_share;
        double p;
        cache_sharing(s, t, i, servers_used, &k, &p, &exact_share);
        double f = D > 0 ? C / D : 1;
        if (dist) f = f * servers_used < 1 ? f * servers_used : 1;
        const double f2 = D > 0 ? C2 / D : 1;
        int tier_lb;
        const double tier_cap =
            tier ? tier_dev->items_s(&ts, req, &tier_lb) * S * ns / per_server[in->first_server]
                 : 1;
        int64_t ahead = loader_staged_batches(s, jb);
        if ((double)ahead > ceil(N / M)) ahead = (int64_t)ceil(N / M);
        /* At most the epoch's items are staged: a data set smaller than the
         * window is not a window of full batches. */
        const double staged = fmin((double)loader_staged_batches(s, jb) * M, n_used) *
                              scenario_job_out_item_bytes(s, jb);

        for (int e = first; e < s->epochs; e++) {
            epoch_metrics_t *m = metrics_at(out, i, e);
            memset(m, 0, sizeof *m);
            int exact;
            double hu[FLUID_STEPS], tu[FLUID_STEPS];
            /* A given hit profile (a replayed curve) in place of the closed form. */
            double h = hits ? (exact = 1, hits(ctx, i, e, hu))
                            : model_hit_epoch(s->loader.cache, f, p, k, e, &exact);
            /* A partitioned item is local on one of the servers: 1/S of the hits. */
            double share_remote = dist ? (double)(servers_used - 1) / servers_used : 0;
            double remote = h * share_remote;
            double miss = 1 - h;
            /* Lock-step: the fullest link's batch, and the request's latency once a batch. */
            const int lockstep = dist && ahead == 1;
            const double net_f =
                lockstep ? net_lockstep_factor(M, servers_used, h, s->dataset.item_kb_cv) : 1;
            const double net_lat = lockstep ? s->server.network.latency_us / 1e6 / M : 0;
            /* The hit probability along the epoch's order. */
            for (int j = 0; j < FLUID_STEPS; j++) {
                if (!hits)
                    hu[j] = model_hit_at(s->loader.cache, f, p, k, e, (j + 0.5) / FLUID_STEPS);
                double h2 = tier && f2 > f ? model_hit_at(s->server.tier.cache, f2, p, k, e,
                                                          (j + 0.5) / FLUID_STEPS)
                                           : 0;
                tu[j] = h2 > hu[j] ? h2 - hu[j] : 0;
            }
            double th = 0;
            if (tier && f2 > f) {
                double h2 = model_hit_epoch(s->server.tier.cache, f2, p, k, e, NULL);
                th = h2 > h ? h2 - h : 0;
            }
            miss -= th;

            /* T: the loader at the cost profile; T_prep: every item in memory. */
            double ends[TOPO_MAX_INSTANCES], ends_p[TOPO_MAX_INSTANCES];
            if (loader->model_epoch) {
                /* The kind's own pipeline: a worker waits for each miss. */
                double wait[FLUID_STEPS], floor_s[FLUID_STEPS];
                /* A worker waits for each of its shards' requests once, and
                 * the shard's items then stream: per item, 1 / S of it. */
                double service = storage->service_s(s, req) / S;
                double tier_service = tier ? tier_dev->service_s(&ts, req) / S : 0;
                for (int j = 0; j < FLUID_STEPS; j++) {
                    double from_store = 1 - hu[j] - tu[j];
                    wait[j] = from_store * service + tu[j] * tier_service;
                    floor_s[j] = from_store / cap_inst;
                    if (tu[j] / tier_cap > floor_s[j]) floor_s[j] = tu[j] / tier_cap;
                }
                loader_model_t lm = {s,     jb,   n_used,  in->cpus / ns, ns,      e,
                                     tprep, wait, floor_s, FLUID_STEPS,   t_batch, t_last};
                loader->model_epoch(&lm, &ends[me], &ends_p[me]);
            } else {
                /* Per-item loader cost along the order: the slowest of prep,
                 * storage for the misses and the network for remote hits. */
                double cost[FLUID_STEPS], cost_p[FLUID_STEPS];
                for (int j = 0; j < FLUID_STEPS; j++) {
                    double c = (isfinite(r_prep) ? 1 / r_prep : 0) + train_item / in->cpus;
                    cost_p[j] = c;
                    double c_store = (1 - hu[j] - tu[j]) / cap_inst;
                    if (tu[j] / tier_cap > c_store) c_store = tu[j] / tier_cap;
                    double c_net =
                        dist ? hu[j] * share_remote * mean / (nic * ns) * net_f + net_lat : 0;
                    if (c_store > c) c = c_store;
                    if (c_net > c) c = c_net;
                    cost[j] = c;
                }
                batch_pipeline(N, M, cost, ahead, nc, tb, tl, ends);
                batch_pipeline(N, M, cost_p, ahead, nc, tb, tl, ends_p);
                if (buf_lag > 0) {
                    /* The GPUs first wait for the buffer to fill (B items
                     * read), or, loader-bound, drain its last lag batches
                     * after the last read: the lesser of the two is added. */
                    double fill = (B < N ? B : N) * cost[0], drain = buf_lag * tb[me];
                    double fill_p = (B < N ? B : N) * cost_p[0];
                    ends[me] += fill < drain ? fill : drain;
                    ends_p[me] += fill_p < drain ? fill_p : drain;
                }
            }
            m->t_gpu_s = t_gpu;
            m->gpu_prep_s = gpu_prep;
            m->t_prep_s = ends_p[me];
            m->epoch_s = ends[me];
            if (m->epoch_s < m->t_prep_s) m->epoch_s = m->t_prep_s;
            m->hit_rate = h;
            m->tier_hit_rate = th;
            m->remote_hit_rate = remote;
            m->storage_read_bytes = miss * Du;
            m->network_bytes = remote * Du;
            /* Requests: one a shard, or an object's ranged parts. */
            const double parts = storage->requests ? storage->requests(s, req) : 1;
            m->storage_reads = miss * n_used / S * parts;
            m->storage_heads = storage->heads ? miss * n_used / S * storage->heads(s) : 0;
            m->storage_lists = storage->lists ? storage->lists(s, e) : 0;
            m->items_prepped = n_used;
            m->items_consumed = n_used;
            m->staged_bytes = staged;
            m->cpu_util = eff_cpus > 0 ? n_used * tprep / (eff_cpus * m->epoch_s) : 0;
            m->cpu_util += train_item * n_used / (in->cpus * m->epoch_s);
            /* A stream's transfers over the devices it reads: its servers' own,
             * or the one device every server shares. */
            double devices = s->server.storage.shared ? 1 : ns;
            m->storage_util = storage->xfer_s(s, miss * Du) / devices / m->epoch_s;
            m->slot_util = miss * n_used / S * parts * storage->service_s(s, req) /
                           (storage->slots(s) * devices * m->epoch_s);
            /* A request-rate cap binds before the slots do: its share of the
             * requests the device admits. */
            double admitted = miss * n_used / (cap_inst * m->epoch_s);
            if (latency_bound && admitted > m->slot_util) m->slot_util = admitted;
            m->network_util = remote * Du / (nic * ns * m->epoch_s);
            metrics_derive(m, n_used);
            m->approximate = !exact || !exact_share || shard_guess || buf_lag > 0 || tier ||
                             net_f > 1 || (storage->model_exact && !storage->model_exact(s));

            /* Each stream's reads spread evenly over its servers. */
            if (t->inst[i].lead != i || !out->srv) continue;
            for (int v = in->first_server; v < in->first_server + ns; v++) {
                server_metrics_t *sv = server_at(out, v, e);
                sv->accesses += n_used / ns;
                sv->local_hits += (h - remote) * n_used / ns;
                sv->remote_hits += remote * n_used / ns;
                sv->tier_hits += th * n_used / ns;
                sv->storage_reads +=
                    miss * n_used / S / ns; /* reads, as the simulator counts them */
                sv->storage_read_bytes += miss * Du / ns;
                sv->net_in_bytes += remote * Du / ns;
                sv->net_out_bytes += remote * Du / ns;
                sv->staged_bytes += staged / ns;
            }
        }
    }
}

/* Converged when the hit rate moved less than this over the epochs after. */
#define STEADY_TOL 1e-4

static int steady_over(const scenario_t *s, const topology_t *t, int inst, int epochs,
                       epoch_metrics_t *out, int *from) {
    scenario_t c = *s;
    c.epochs = epochs;
    run_metrics_t r;
    if (metrics_alloc(&r, t->ninst, epochs)) return -1;
    model_run(&c, t, &r); /* r.srv is NULL: no per-server figures */
    double last = metrics_at(&r, inst, epochs - 1)->hit_rate;
    int e = epochs - 1;
    while (e > 0 && fabs(metrics_at(&r, inst, e - 1)->hit_rate - last) < STEADY_TOL)
        e--;
    *from = e;
    *out = *metrics_at(&r, inst, epochs - 1);
    int converged = e < epochs - 1 || epochs == 1;
    metrics_free(&r);
    return converged ? 0 : 1;
}

int model_steady(const scenario_t *s, const topology_t *t, int inst, epoch_metrics_t *out,
                 int *from) {
    /* Most caches settle within a few epochs; a share 1/S of each epoch per
     * server takes about S times as long. */
    int rc = steady_over(s, t, inst, s->epochs > 32 ? (int)s->epochs : 32, out, from);
    if (rc == 1) rc = steady_over(s, t, inst, 1000, out, from);
    return rc < 0 ? -1 : 0;
}
