/* model: see model.h. */
#include "model.h"

#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "memory.h"
#include "startup.h"
#include "checkpoint.h"

double model_hit_epoch(int kind, double f, double p, int k, int e, int *exact) {
    int ex;
    double h = cache_kind(kind)->hit_epoch(f, p, k, e, &ex);
    if (exact) *exact = ex;
    return h;
}

double model_hit_at(int kind, double f, double p, int k, int e, double u) {
    return cache_hit_at(kind, f, p, k, e, u);
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
/* The mean cost of the items in [u0, u1) of the order (fractions): each
 * slice weighed by how much of it the span covers, so the steps' costs add
 * up to the whole profile's however the batches fall on the slices (a
 * step's middle slice alone over- or under-counted a slice that no step's
 * middle, or two, landed in: semfuzz, an epoch 0.14 % under its storage's
 * transfers). */
static double span_cost(const double *cost, double u0, double u1) {
    double a = u0 * FLUID_STEPS, b = u1 * FLUID_STEPS, sum = 0;
    if (!(b > a)) {
        int j = (int)a;
        return cost[j < FLUID_STEPS ? j : FLUID_STEPS - 1];
    }
    for (int j = (int)a; j < FLUID_STEPS && j < b; j++) {
        double lo = a > j ? a : j, hi = b < j + 1 ? b : j + 1;
        sum += (hi - lo) * cost[j];
    }
    return sum / (b - a);
}

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
        double free_at = k >= window ? started[k % window] : 0;
        loaded = (loaded > free_at ? loaded : free_at) +
                 items * span_cost(cost, first_item / n, (first_item + items) / n);
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

/* What every instance of a run shares: the cluster's figures, computed once. */
typedef struct {
    const scenario_t *s;
    const topology_t *t;
    double N, mean, D, C;
    double dev_mean; /* bytes a miss of one item reads from the device (cache_read_bytes_mean) */
    int dist, servers_used, units;
    const storage_ops_t *storage;
    tier_model_t tier; /* the tier (server.tier; tier.h): tier.on when there is one */
    int per_server[SCN_MAX_SERVERS];
} run_ctx_t;

/* One instance's figures, the same every epoch. */
typedef struct {
    int i, ns, nc, me, latency_bound, shard_guess, k, exact_share;
    const instance_t *in;
    const job_t *jb;
    const loader_ops_t *loader;
    double G, b, M, tprep, n_used, nb_full, rem, Du, t_batch, t_last, t_gpu, gpu_prep;
    double Ddev, req_dev; /* the epoch's and a request's bytes as the device reads them */
    double share, train_item, eff_cpus, eff_util, r_prep, S, req, B, buf_lag, cap, cap_inst, nic;
    double p, f, tier_cap, staged;
    double engine_s; /* seconds per item the GPUs' decoder engines allow (0: none) */
    int64_t ahead;
    double tb[TOPO_MAX_INSTANCES], tl[TOPO_MAX_INSTANCES]; /* the consumers' batch times */
} inst_ctx_t;

/* One epoch's hits: the epoch's rates and their profile along its order. */
typedef struct {
    int exact;
    double h, th, share_remote, remote, miss, net_f, net_lat;
    double hu[FLUID_STEPS], tu[FLUID_STEPS];
    double rc[FLUID_STEPS], rc_mean; /* the reader's CPU per item (read_cpu_steps) */
} epoch_hits_t;

static void run_setup(run_ctx_t *r, const scenario_t *s, const topology_t *t) {
    r->s = s;
    r->t = t;
    r->N = (double)s->dataset.items;
    r->mean = scenario_item_bytes_mean(s);
    r->D = scenario_dataset_bytes(s);
    r->C = memory_cache_bytes(s, t);
    r->dev_mean = cache_read_bytes_mean(s, scenario_items_per_read(s));
    r->dist = s->loader.dist_cache == DIST_SHARDED;
    r->storage = scenario_storage(s);
    /* The tier (server.tier): a second cache over the DRAM cache's misses on
     * each server's own device; tier.c has its share of the reads. */
    tier_model_open(&r->tier, s);
    r->servers_used = 0;
    for (int i = 0; i < t->ninst; i++) {
        int last = t->inst[i].first_server + t->inst[i].nservers;
        if (last > r->servers_used) r->servers_used = last;
    }
    /* Streams reading each server's device, for its share of storage. */
    memset(r->per_server, 0, sizeof r->per_server);
    r->units = 0;
    for (int i = 0; i < t->ninst; i++)
        if (t->inst[i].lead == i)
            for (int k = 0; k < t->inst[i].nservers; k++)
                r->per_server[t->inst[i].first_server + k]++, r->units++;
}

/* The cores prepare as the measured curve's effective cores (prep.scaling,
 * the memory-bandwidth bound). A pool's window keeps at most its items and
 * the server's training processes busy: cores past them are idle and slow
 * nothing (the simulator's pool, loader_pool.c, dilates each item by the
 * cores busy as it starts: the same where its window keeps them busy);
 * eff_util is what the busy cores' dilated seconds fill of all of them. A
 * kind with its own model shares its cores its own way. */
static void inst_cores(inst_ctx_t *c, const scenario_t *s) {
    const double per = c->in->cpus / c->ns, nb = ceil(c->n_used / c->M);
    double ahead = fmin((double)loader_staged_batches(s, c->jb), nb);
    if (s->loader.shuffle_buffer > 0)
        ahead +=
            fmin((double)loader_buffer_slices(s, c->jb, (int64_t)c->n_used, (int64_t)c->M), nb);
    const double busy = loader_busy_max(s, ahead, c->M / c->ns);
    const double use = c->loader->model_epoch ? per : loader_cores_in_use(s, per, busy);
    c->eff_cpus = use < per ? c->ns * scenario_prep_cores(s, use, NULL)
                            : scenario_prep_cores_total(s, c->in->cpus, c->ns);
    c->eff_util = use < per ? c->eff_cpus * per / use : c->eff_cpus;
}

/* The instance's batch times: its GPUs', its consumers' and its loader's. */
static void inst_times(inst_ctx_t *c, const run_ctx_t *r, int i) {
    const scenario_t *s = r->s;
    const topology_t *t = r->t;
    const instance_t *in = c->in = &t->inst[i];
    const job_t *jb = c->jb = &s->jobs[in->job];
    c->i = i;
    const double G = c->G = (double)jb->gpus, b = c->b = (double)jb->batch_per_gpu;
    c->M = G * b;
    const int ns = c->ns = in->nservers;
    /* The job's own pipeline (coordinated jobs share one). */
    c->tprep = scenario_job_prep_s(s, jb, r->mean);
    const loader_ops_t *loader = c->loader = scenario_loader(s);
    /* Data-parallel: every iteration waits for all GPUs; a partial last
     * batch is split evenly, so its GPUs compute ceil(rem / G) items. */
    /* Under drop_last an epoch reads only whole batches. */
    c->n_used =
        loader->epoch_items ? (double)loader->epoch_items(s, (int64_t)r->N, (int64_t)c->M) : r->N;
    c->nb_full = floor(c->n_used / c->M);
    const double rem = c->rem = c->n_used - c->nb_full * c->M;
    /* An epoch under drop_last reads, moves and prepares n_used items. */
    c->Du = r->N > 0 ? r->D * c->n_used / r->N : 0;
    /* (a ratio of exactly 1 where the device reads the items' own bytes) */
    c->Ddev = r->mean > 0 ? c->Du * (r->dev_mean / r->mean) : c->Du;
    c->t_batch = scenario_job_compute_s(s, jb, b);
    c->t_last = rem > 0 ? scenario_job_compute_s(s, jb, ceil(rem / G)) : c->t_batch;
    c->t_gpu = c->nb_full * c->t_batch + (rem > 0 ? c->t_last : 0);
    /* The consumers of this instance's stream (itself alone unless coordinated). */
    c->nc = 0, c->me = 0;
    /* The training processes' CPU beside their GPUs (jobs.N.train_cpu_ms):
     * an iteration lasts at least that long alone, and every consumer's
     * ranks take it from the stream's cores once a batch. */
    const double share = c->share = loader->train_share ? loader->train_share(in->cpus / ns) : 1;
    c->train_item = 0;
    /* A shared stream's batch handed to each consumer (CoorDL): copied
     * by every rank as part of its own CPU, counted as prep. */
    int consumers = 0;
    for (int o = 0; o < t->ninst; o++)
        consumers += t->inst[o].lead == t->inst[i].lead;
    const int readers = consumers * in->gpus_per_server;
    for (int o = 0; o < t->ninst; o++) {
        if (t->inst[o].lead != t->inst[i].lead) continue;
        const job_t *qj = &s->jobs[t->inst[o].job];
        if (o == i) c->me = c->nc;
        const double hand = loader->handoff_s ? loader->handoff_s(s, qj, consumers, readers) : 0;
        const double alone = (qj->train_cpu_ms / 1e3 + hand) * share;
        c->tb[c->nc] = fmax(scenario_job_compute_s(s, qj, b), alone);
        c->tl[c->nc] =
            rem > 0 ? fmax(scenario_job_compute_s(s, qj, ceil(rem / G)), alone) : c->tb[c->nc];
        c->train_item += (qj->train_cpu_ms / 1e3 + hand) / b;
        c->nc++;
    }
    /* The GPU's own prep (nvJPEG, augment on the GPU) is not T_gpu. */
    const double g_full = scenario_job_gpu_prep_s(s, jb, b);
    const double g_last = rem > 0 ? scenario_job_gpu_prep_s(s, jb, ceil(rem / G)) : g_full;
    const double alone = jb->train_cpu_ms / 1e3 * share;
    /* (the hand-off in tb is prep: T_gpu is the compute and the CPU alone) */
    c->t_gpu = c->nb_full * fmax(c->t_batch - g_full, alone) +
               (rem > 0 ? fmax(c->t_last - g_last, alone) : 0);
    c->gpu_prep = c->nb_full * g_full + (rem > 0 ? g_last : 0);
    inst_cores(c, s);
    c->r_prep = loader->items_s(c->eff_cpus, c->tprep);
    const double dec = pipeline_engine_items_s(s, jb);
    c->engine_s = isfinite(dec) && dec > 0 ? 1 / dec : 0;
}

/* A window of a bytes read ahead from a point uniform along a shard whose
 * bytes past the point's chunk are `left` at most: its mean within the
 * shard (readahead stops at a file's end), (a left - a^2 / 2) / left or
 * left / 2. */
static double past_end(double a, double left) {
    if (!(left > 0)) return 0;
    return a < left ? a - a * a / (2 * left) : left / 2;
}

/* The bytes a page cache's reader reads ahead when a read of len misses
 * within a window of at most R in chunks of g (cache_linux.c's enter: the
 * kernel's first window past the chunk read, and the next one with it where
 * the first is no larger than the read), within a shard (past_end). */
static double miss_ahead(double len, double R, double g, double left) {
    if (!(R > 0)) return 0;
    double p = CACHE_PAGE_BYTES;
    while (p < len)
        p *= 2;
    const double win = p <= R / 32 ? 4 * p : p <= R / 4 ? 2 * p : R;
    const double next = win < R / 16 ? 4 * win : win <= R / 2 ? 2 * win : R;
    double a = ceil(fmax(win - g, 0) / g) * g;
    if (win <= ceil(len / g) * g) a += ceil(next / g) * g;
    return isinf(left) ? a : past_end(a, left);
}

/* The mean bytes an item re-reads the chunks of where reclaim takes what
 * its reader leaves (miss_ahead's window with each miss, nonlinear in the
 * read: the mean over the sizes' lognormal, as the simulator draws them, at
 * 32 quantiles): each chunk it enters with its window (`every`), else its
 * own bytes, the chunk it began in and one window. */
static double miss_reads(const scenario_t *s, double R, double g, double left, int every) {
    const double mean = scenario_item_bytes_mean(s), cv = s->dataset.item_kb_cv;
    const double sigma = cv > 0 ? sqrt(log1p(cv * cv)) : 0, zeta = log(mean) - sigma * sigma / 2;
    const int K = cv > 0 ? 32 : 1;
    double sum = 0;
    for (int k = 0; k < K; k++) {
        const double len =
            cv > 0 ? exp(zeta + sigma * gsl_cdf_ugaussian_Pinv((k + 0.5) / K)) : mean;
        const double a = miss_ahead(len, R, g, left);
        sum += every ? (1 + len / g) * (g + a) : len + g + a;
    }
    return sum / K;
}

/* Streamed shards through a page cache (its `stream` lanes, sim.c's
 * stream_paged): the device's bytes over the epoch's, for the windows read
 * ahead and reclaimed before use. Its chunks of g (cache_chunk_bytes) are
 * at most a shard's; a miss reads the chunk and a window ahead (A1,
 * miss_ahead). A cache that cannot hold the two (C < g + A1) loses each
 * window before its reader gets there: each chunk an item enters (1 + m /
 * g of them) is read with a window ahead. One that holds them for one
 * reader, but not for the L readers that interleave item by item (a pool's
 * lanes, a batch's ranks), keeps an item's own chunks while it reads them
 * but loses what each leaves behind: an item re-reads the chunk it began in
 * and its window read ahead is lost (miss_reads). A pool's shard whose
 * items alternate over its servers is read by each, in the chunks their
 * items touch.
 * Else a worker reads a turn of its shard (a batch's items; a pool's lane,
 * one item: T bytes) and leaves read ahead Pend: a miss's window, the next
 * one's growth where the turn crossed into it, and, older, the rest of the
 * chunk it is in (none where items are whole chunks), at most what is left
 * of the shard (past_end); the cache's other lanes then read a turn each,
 * T bytes and their windows again, which evict the oldest first, and
 * what does not fit is read again when its next turn continues its shard
 * (from a cold start, where every lane has just read its windows, the
 * lanes settle there). */
static double stream_reread(const run_ctx_t *r, const inst_ctx_t *c) {
    const scenario_t *s = r->s;
    if (s->loader.reader != READER_STREAM || s->dataset.shard_items <= 1 || r->dist ||
        !scenario_cache(s)->stream || !(r->dev_mean > 0))
        return 1;
    const double P = CACHE_PAGE_BYTES, R = floor(scenario_read_ahead_bytes(s) / P) * P;
    const double m = r->dev_mean, Sb = scenario_shard_items(s) * m, C = r->C;
    const double g = fmin((double)cache_chunk_bytes((uint64_t)R), Sb);
    const double left = fmax(Sb - g, 0), A1 = miss_ahead(m, R, g, left);
    int per_rank = 0;
    const double lanes = c->loader->shard_lanes(s, &per_rank);
    const double streams = r->per_server[c->in->first_server];
    const double turn = per_rank ? c->b : 1;
    const double L = (per_rank ? c->in->gpus_per_server : lanes) * streams;
    const double Q = (per_rank ? lanes * c->in->gpus_per_server : lanes) * streams;
    if (C < g + A1 || C < L * (g + A1)) return miss_reads(s, R, g, left, C < g + A1) / m;
    /* (a lane's items go to rank (lane + k x lanes) mod G: over the servers
     * unless G divides the lanes; each server then reads the chunks its
     * items touch: every one where they are small beside a chunk, else its
     * items' and one more each) */
    if (!per_rank && c->ns > 1 && fmod(lanes, c->G) != 0) return fmin(c->ns, (m + g) / m);
    const double item = floor(r->mean + 0.5);
    const int whole = !(s->dataset.item_kb_cv > 0) && fmod(item, g) == 0;
    const double a = miss_ahead(m, R, g, INFINITY), T = turn * m;
    const double ramp = T > g ? fmax(fmin(2 * a, R) - a, 0) : 0;
    const double Pend = past_end(a + ramp + (whole ? 0 : g), left + (whole ? 0 : g));
    /* (from a cold start, every lane's windows just read: each lane that
     * has a shard then reads its turn and its windows again each turn) */
    const double Qs = fmin(Q, ceil(r->N / scenario_shard_items(s)));
    const double lost = fmin(fmax((Qs - 1) * (T + Pend) + Pend - C, 0), Pend);
    const double turns = fmax(1 / turn - 1 / scenario_shard_items(s), 0);
    return 1 + lost * turns / m;
}

/* The instance's storage: the items a second its share of the device gives.
 * A local device serves the streams of its server; a shared one every
 * stream of the cluster. */
static void inst_storage(inst_ctx_t *c, const run_ctx_t *r) {
    const scenario_t *s = r->s;
    const storage_ops_t *storage = r->storage;
    const double M = c->M;
    /* Record shards: one request a shard, S items of it. */
    const double S = c->S = scenario_items_per_read(s);
    /* (a streamed shard's windows read again, in its every request) */
    const double reread = stream_reread(r, c);
    c->Ddev *= reread;
    const double req = c->req_dev = S * r->dev_mean * reread;
    c->req = S * r->mean; /* the reader's copy: its CPU */
    /* A shuffle buffer of B items: reads run ceil(B / M) batches further
     * (a worker's own: loader_buffer_slices). */
    c->B = (double)s->loader.shuffle_buffer;
    c->buf_lag = (double)loader_buffer_slices(s, c->jb, (int64_t)r->N, (int64_t)M);
    double cap = storage->items_s(s, req, &c->latency_bound) * S;
    int lanes_per_rank = 0;
    c->shard_guess = 0;
    if (S > 1) {
        double lanes = c->loader->shard_lanes(s, &lanes_per_rank);
        if (!lanes_per_rank) {
            /* The pool's lanes each read a shard; a lane's next shard is
             * asked for when the loader's window reaches its first item,
             * so the window adds about ahead x M / S requests in flight.
             * The simulator has the lanes' real timing: the model's
             * figure is marked approximate. */
            /* (A shuffle buffer's read-ahead opened few more shards in
             * the simulator while it is small beside the data: left out.) */
            double w_ahead = (double)loader_staged_batches(s, c->jb);
            double inflight = lanes + w_ahead * M / S - 1;
            if (inflight < 1) inflight = 1;
            double by_lanes = inflight * S / storage->service_s(s, req);
            if (by_lanes < cap) cap = by_lanes, c->latency_bound = 1;
            c->shard_guess = 1;
        } else {
            /* Workers with a shard more than the others finish the epoch
             * alone (the simulator has it; the model's batches do not). */
            double streams = lanes * c->G, nsh = ceil(r->N / scenario_shard_items(s));
            if (fmod(nsh, streams) != 0) c->shard_guess = 1;
        }
    } else if (!c->loader->sync_reads) {
        /* A loader that issues a batch's reads at once has at most its
         * window's items in flight, however many slots the device has:
         * with a deep object-store pool and a short window the window
         * binds (the simulator's batches refill it in steps: marked
         * approximate). */
        double window = ((double)loader_staged_batches(s, c->jb) + c->buf_lag) * M;
        double by_window = window / storage->service_s(s, req);
        if (by_window < cap) cap = by_window, c->latency_bound = 1, c->shard_guess = 1;
    }
    c->cap = cap;
    c->cap_inst = s->server.storage.shared ? cap * c->ns / r->units
                                           : cap * c->ns / r->per_server[c->in->first_server];
    /* A shared store's connections are each server's own (client_items_s):
     * a stream takes at most its servers' connections' rate, with the
     * streams on its server. */
    if (storage_clients_apart(s, storage, c->loader->sync_reads)) {
        double own =
            storage->client_items_s(s, req) * S * c->ns / r->per_server[c->in->first_server];
        if (own < c->cap_inst) c->cap_inst = own, c->latency_bound = 1;
    }
    c->nic = s->server.network.gbit_s * 1e9 / 8;
}

/* The instance's cache: how it is shared, its fractions of the data, the
 * tier's device and the loader's window. */
static void inst_cache(inst_ctx_t *c, const run_ctx_t *r) {
    const scenario_t *s = r->s;
    cache_sharing(s, r->t, c->i, r->servers_used, &c->k, &c->p, &c->exact_share);
    double f = r->D > 0 ? r->C / (r->dev_mean * r->N) : 1;
    if (r->dist) f = f * r->servers_used < 1 ? f * r->servers_used : 1;
    c->f = f;
    c->tier_cap = r->tier.on ? tier_items_s(&r->tier, c->req_dev) * c->S * c->ns /
                                   r->per_server[c->in->first_server]
                             : 1;
    int64_t ahead = loader_staged_batches(s, c->jb);
    if ((double)ahead > ceil(r->N / c->M)) ahead = (int64_t)ceil(r->N / c->M);
    c->ahead = ahead;
    /* At most the epoch's items are staged: a data set smaller than the
     * window is not a window of full batches. */
    c->staged = fmin((double)loader_staged_batches(s, c->jb) * c->M, c->n_used) *
                scenario_job_out_item_bytes(s, c->jb);
}

/* The reader's CPU seconds per item along epoch e's order, as the
 * simulator charges it beside the item's prep (sim.c: read_cpu_s): the
 * misses' reads from storage, the tier's from its device, the local hits'
 * read() from the page cache (storage_hit_cpu_s), a remote hit its request
 * and receive (remote_hit_cpu_s); a
 * record shard's read spread over its S items. Returns the epoch's mean. */
static double read_cpu_steps(const run_ctx_t *r, const inst_ctx_t *c, epoch_hits_t *eh) {
    const scenario_t *s = r->s;
    double sum = 0, *rc = eh->rc;
    if (!storage_cpu_on(s)) {
        memset(rc, 0, FLUID_STEPS * sizeof *rc);
        return 0;
    }
    const double store = storage_cpu_s(s, c->req) / c->S;
    const double tier = r->tier.on ? tier_model_cpu_s(&r->tier, c->req) / c->S : 0;
    const double hit = storage_hit_cpu_s(s, c->req) / c->S * (1 - eh->share_remote) +
                       remote_hit_cpu_s(s, c->req) / c->S * eh->share_remote;
    for (int j = 0; j < FLUID_STEPS; j++) {
        const double hu = eh->hu[j], tu = eh->tu[j];
        rc[j] = (1 - hu - tu) * store + tu * tier + hu * hit;
        sum += rc[j];
    }
    return sum / FLUID_STEPS;
}

/* The slices' misses scaled so that their mean is the epoch's: the closed
 * forms' hit at each slice's middle integrates to the epoch's hit rate only
 * up to the midpoint rule's error, and the pipeline would then read more or
 * fewer bytes than the epoch's figures say (semfuzz: storage_util 1.0014,
 * an epoch shorter than its own transfers). */
static void fluid_match_miss(epoch_hits_t *eh) {
    double fm = 0;
    for (int j = 0; j < FLUID_STEPS; j++)
        fm += 1 - eh->hu[j] - eh->tu[j];
    fm /= FLUID_STEPS;
    if (!(fm > 0) || fm == eh->miss) return;
    const double f = eh->miss / fm;
    for (int j = 0; j < FLUID_STEPS; j++) {
        double room = 1 - eh->tu[j], m = (1 - eh->hu[j] - eh->tu[j]) * f;
        eh->hu[j] = room - (m < room ? m : room);
    }
}

/* Epoch e's hits: a given hit profile (a replayed curve) or the closed form. */
static void epoch_hits(epoch_hits_t *eh, const run_ctx_t *r, const inst_ctx_t *c, int e,
                       model_hits_fn hits, void *ctx) {
    const scenario_t *s = r->s;
    const int k = c->k;
    const double f = c->f, p = c->p;
    double *hu = eh->hu, *tu = eh->tu;
    double h = hits ? (eh->exact = 1, hits(ctx, c->i, e, hu))
                    : model_hit_epoch(s->loader.cache, f, p, k, e, &eh->exact);
    eh->h = h;
    /* A partitioned item is local on one of the servers: 1/S of the hits. */
    eh->share_remote = r->dist ? (double)(r->servers_used - 1) / r->servers_used : 0;
    eh->remote = h * eh->share_remote;
    eh->miss = 1 - h;
    /* Lock-step: the fullest link's batch, and the request's latency once a batch. */
    const int lockstep = r->dist && c->ahead == 1;
    eh->net_f = lockstep ? net_lockstep_factor(c->M, r->servers_used, h, s->dataset.item_kb_cv) : 1;
    eh->net_lat = lockstep ? s->server.network.latency_us / 1e6 / c->M : 0;
    /* The hit probability along the epoch's order. The tier's share is
     * the mean of its positions' (the tier's hit less the DRAM cache's,
     * where more): the two levels do not hit the same part of the order,
     * so the epochs' difference undercounts it (semfuzz seed 5: a FIFO tier
     * under the page cache, 0.053 for the simulator's 0.094-0.105 and the
     * positions' 0.095, and the storage more than 100 % busy). */
    double th = 0;
    for (int j = 0; j < FLUID_STEPS; j++) {
        const double u = (j + 0.5) / FLUID_STEPS;
        if (!hits) hu[j] = model_hit_at(s->loader.cache, f, p, k, e, u);
        tu[j] = tier_model_at(&r->tier, f, hu[j], p, k, e, u);
        th += tu[j];
    }
    /* (at most the DRAM cache's misses: the positions' hits and the
     * epoch's differ by the midpoint rule's error) */
    eh->th = fmin(th / FLUID_STEPS, 1 - h);
    eh->miss -= eh->th;
    fluid_match_miss(eh);
    eh->rc_mean = read_cpu_steps(r, c, eh);
}

/* A worker's wait per item for its reads from storage. Shards read whole:
 * each shard's request once, spread over its S items. Streamed (loader.
 * reader: stream): the item's reads (c->req is a readahead window of c->S
 * items) less what the window read ahead of it overlaps with the worker's
 * decode of the item before, at most that decode and at most one window's
 * service (its whole item's: none without readahead), but for a shard's
 * first window, which waits with nothing before it; a worker's buffer
 * fill of B items (a per-worker kind's) reads them with no decode between,
 * losing that overlap on each, spread over the worker's items, and its
 * drain's decodes come after the last read (*drain: seconds an item added
 * to the storage floor). */
static double stream_wait_s(const run_ctx_t *r, const inst_ctx_t *c, const epoch_hits_t *eh,
                            double *drain) {
    const scenario_t *s = r->s;
    const double t_r = r->storage->service_s(s, c->req_dev) / c->S;
    *drain = 0;
    if (s->loader.reader != READER_STREAM || s->dataset.shard_items <= 1) return t_r;
    const double ra = scenario_read_ahead_bytes(s), p = c->tprep + eh->rc_mean;
    const double ahead = ra > 0 ? r->storage->service_s(s, ra) * fmin(1, r->mean / ra) : 0;
    const double o = fmin(p, fmin(ahead, t_r));
    /* A shard's first window has nothing before it to overlap: the kernel
     * reads ahead within a file, and each shard is one. */
    const double S = scenario_shard_items(s);
    /* (its first item waits for the windows up to the one that holds its
     * last byte: the kernel's ramp from a small first window) */
    double first = 0;
    for (double win = 0; ra > 0 && first < r->mean;)
        first += win = scenario_ra_window(s, win);
    double wait = fmax(t_r - o, t_r * fmin(first / r->mean, S) / S);
    int per_rank = 0;
    const double lanes = c->loader->shard_lanes(s, &per_rank);
    if (per_rank && s->loader.shuffle_buffer > 0) {
        const double n_w = c->n_used / (lanes * c->G);
        const double fill = loader_buffer_peak(s, n_w);
        if (n_w > 0) wait += fill * o / n_w;
        /* The buffer drains with no read left to wait on: its decodes end
         * the epoch after the device's last byte, spread over the items as
         * the storage floor is. */
        if (c->n_used > 0) *drain = fill * p / c->n_used;
    }
    return wait;
}

/* Epoch e's ends, each consumer's: T, the loader at the cost profile, and
 * T_prep, every item in memory (ends_p). */
static void epoch_ends(const run_ctx_t *r, const inst_ctx_t *c, const epoch_hits_t *eh, int e,
                       double *ends, double *ends_p, double *first) {
    const scenario_t *s = r->s;
    const double *hu = eh->hu, *tu = eh->tu;
    const int me = c->me;
    const double *rc = eh->rc;
    if (c->loader->model_epoch) {
        /* The kind's own pipeline: a worker waits for each miss. */
        double wait[FLUID_STEPS], floor_s[FLUID_STEPS];
        /* A worker waits for each of its shards' requests once, and
         * the shard's items then stream: per item, 1 / S of it. */
        double drain;
        double service = stream_wait_s(r, c, eh, &drain);
        double tier_service = r->tier.on ? tier_service_s(&r->tier, c->req_dev) / c->S : 0;
        for (int j = 0; j < FLUID_STEPS; j++) {
            double from_store = 1 - hu[j] - tu[j];
            wait[j] = from_store * service + tu[j] * tier_service;
            floor_s[j] = from_store / c->cap_inst + from_store * drain;
            if (tu[j] / c->tier_cap > floor_s[j]) floor_s[j] = tu[j] / c->tier_cap;
        }
        loader_model_t lm = {s,
                             c->jb,
                             c->n_used,
                             c->in->cpus / c->ns,
                             c->ns,
                             e,
                             c->tprep + eh->rc_mean,
                             wait,
                             floor_s,
                             c->engine_s,
                             FLUID_STEPS,
                             c->t_batch,
                             c->t_last,
                             first};
        c->loader->model_epoch(&lm, &ends[me], &ends_p[me]);
        return;
    }
    /* Per-item loader cost along the order: the slowest of prep,
     * storage for the misses and the network for remote hits. */
    double cost[FLUID_STEPS], cost_p[FLUID_STEPS];
    for (int j = 0; j < FLUID_STEPS; j++) {
        const double r_prep =
            rc[j] > 0 ? c->loader->items_s(c->eff_cpus, c->tprep + rc[j]) : c->r_prep;
        double cc = (isfinite(r_prep) ? 1 / r_prep : 0) + c->train_item / c->in->cpus;
        /* The GPUs' decoder engines serve the stream beside its cores. */
        if (c->engine_s > cc) cc = c->engine_s;
        cost_p[j] = cc;
        double c_store = (1 - hu[j] - tu[j]) / c->cap_inst;
        if (tu[j] / c->tier_cap > c_store) c_store = tu[j] / c->tier_cap;
        double c_net = r->dist ? hu[j] * eh->share_remote * r->mean / (c->nic * c->ns) * eh->net_f +
                                     eh->net_lat
                               : 0;
        if (c_store > cc) cc = c_store;
        if (c_net > cc) cc = c_net;
        cost[j] = cc;
    }
    batch_pipeline(r->N, c->M, cost, c->ahead, c->nc, c->tb, c->tl, ends);
    batch_pipeline(r->N, c->M, cost_p, c->ahead, c->nc, c->tb, c->tl, ends_p);
    /* The first batch: its items at the pipeline's first cost, and the
     * shuffle buffer filled before it. */
    *first = fmin(c->M, r->N) * cost[0];
    if (c->buf_lag > 0) {
        /* The GPUs first wait for the buffer to fill (B items
         * read), or, loader-bound, drain its last lag batches
         * after the last read: the lesser of the two is added. */
        const double B = c->B, N = r->N;
        double fill = (B < N ? B : N) * cost[0], drain = c->buf_lag * c->tb[me];
        double fill_p = (B < N ? B : N) * cost_p[0];
        ends[me] += fill < drain ? fill : drain;
        *first += fill;
        ends_p[me] += fill_p < drain ? fill_p : drain;
    }
}

/* Epoch e's metrics of the instance, given its hits and its ends. */
static void epoch_fill(epoch_metrics_t *m, const run_ctx_t *r, const inst_ctx_t *c,
                       const epoch_hits_t *eh, int e, double end, double end_p) {
    const scenario_t *s = r->s;
    const storage_ops_t *storage = r->storage;
    const double n_used = c->n_used, Du = c->Du, S = c->S, miss = eh->miss, remote = eh->remote;
    m->t_gpu_s = c->t_gpu;
    m->gpu_prep_s = c->gpu_prep;
    m->t_prep_s = end_p;
    m->epoch_s = end;
    if (m->epoch_s < m->t_prep_s) m->epoch_s = m->t_prep_s;
    m->hit_rate = eh->h;
    m->tier_hit_rate = eh->th;
    m->remote_hit_rate = remote;
    m->storage_read_bytes = miss * c->Ddev;
    m->network_bytes = remote * Du;
    /* Requests: one a shard, or an object's ranged parts. */
    const double parts = storage->requests ? storage->requests(s, c->req_dev) : 1;
    m->storage_reads = miss * n_used / S * parts;
    m->storage_heads = storage->heads ? miss * n_used / S * storage->heads(s) : 0;
    m->storage_lists = storage->lists ? storage->lists(s, e) : 0;
    m->items_prepped = n_used;
    m->items_consumed = n_used;
    m->staged_bytes = c->staged;
    m->cpu_util =
        c->eff_util > 0 ? n_used * (c->tprep + eh->rc_mean) / (c->eff_util * m->epoch_s) : 0;
    m->cpu_util += c->train_item * n_used / (c->in->cpus * m->epoch_s);
    /* A stream's transfers over the devices it reads: its servers' own,
     * or the one device every server shares. */
    double devices = s->server.storage.shared ? 1 : c->ns;
    m->storage_util = storage->xfer_s(s, miss * c->Ddev) / devices / m->epoch_s;
    m->slot_util =
        miss * n_used / S * parts * storage->service_s(s, c->req_dev) /
        (storage_slots_of(s, storage, c->ns, devices, c->loader->sync_reads) * m->epoch_s);
    /* A request-rate cap binds before the slots do: its share of the
     * requests the device admits. */
    double admitted = miss * n_used / (c->cap_inst * m->epoch_s);
    if (c->latency_bound && admitted > m->slot_util) m->slot_util = admitted;
    m->network_util = remote * Du / (c->nic * c->ns * m->epoch_s);
    metrics_derive(m, n_used);
    m->approximate = !eh->exact || !c->exact_share || c->shard_guess || c->buf_lag > 0 ||
                     !pipeline_model_exact(s, c->jb) || r->tier.on || eh->net_f > 1 ||
                     (storage->model_exact && !storage->model_exact(s));
}

/* Each stream's reads spread evenly over its servers. */
static void epoch_spread(run_metrics_t *out, const inst_ctx_t *c, const epoch_hits_t *eh, int e) {
    const double n_used = c->n_used, Du = c->Du, ns = c->ns, S = c->S;
    const double h = eh->h, remote = eh->remote, miss = eh->miss, th = eh->th;
    for (int v = c->in->first_server; v < c->in->first_server + c->ns; v++) {
        server_metrics_t *sv = server_at(out, v, e);
        sv->accesses += n_used / ns;
        sv->local_hits += (h - remote) * n_used / ns;
        sv->remote_hits += remote * n_used / ns;
        sv->tier_hits += th * n_used / ns;
        sv->storage_reads += miss * n_used / S / ns; /* reads, as the simulator counts them */
        sv->storage_read_bytes += miss * c->Ddev / ns;
        sv->net_in_bytes += remote * Du / ns;
        sv->net_out_bytes += remote * Du / ns;
        sv->staged_bytes += c->staged / ns;
    }
}

/* Epoch e's checkpoints, each `each` seconds with the GPUs waiting: on
 * both timelines. An asynchronous one's wait is its staging, and where its
 * drain outlasts the steps to the next, the rest of the drain: the steady
 * state's (the run's first checkpoint has no drain before it). */
static void checkpoint_waits(const inst_ctx_t *c, int e, double each, double stage, double *ends,
                             double *ends_p, double *total) {
    const double nb = ceil(c->n_used / c->M);
    if (checkpoint_async(c->jb)) {
        const double step = fmax(ends[c->me], ends_p[c->me]) / nb;
        each = stage + fmax(0, each - (double)c->jb->checkpoint.every_steps * step);
    }
    *total = each * checkpoint_count(c->jb, (double)e * nb, nb);
    ends[c->me] += *total, ends_p[c->me] += *total;
}

/* Epoch e's checkpoint writes share the devices with its reads: the epoch
 * lasts at least both transfers on one device's channel (the simulator
 * replays the writes beside the reads). The writes' channel seconds on
 * one device. */
static double checkpoint_shared(const run_ctx_t *r, const inst_ctx_t *c, const epoch_hits_t *eh,
                                int e, double *ends) {
    const scenario_t *s = r->s;
    const storage_ops_t *ops = r->storage;
    const double nb = ceil(c->n_used / c->M);
    const double count = checkpoint_count(c->jb, (double)e * nb, nb);
    /* (on the tier's device: beside its hits, not storage's reads) */
    if (!(count > 0) || checkpoint_to_tier(s, c->jb)) return 0;
    const double devices = s->server.storage.shared ? 1 : c->ns;
    const double bytes = c->jb->checkpoint.gb * 1e9 / devices;
    const double w =
        count * (ops->write_channel_s ? ops->write_channel_s(s, bytes) : ops->xfer_s(s, bytes));
    const double reads = ops->xfer_s(s, eh->miss * c->Ddev) / devices;
    if (reads + w > ends[c->me]) ends[c->me] = reads + w;
    return w;
}

/* The start-up phase's closed form, into the first epoch. */
static void model_startup(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    startup_t st[TOPO_MAX_INSTANCES];
    startup_model(s, t, st);
    startup_into(out, st);
    if (s->startup.resume_by != RESUME_SKIP || !(s->startup.resume_at > 0)) return;
    scenario_t *skip = malloc(sizeof *skip);
    run_metrics_t r = {0};
    if (skip && startup_resume_scenario(s, skip) && !metrics_alloc(&r, t->ninst, 1)) {
        model_run(skip, t, &r);
        startup_resume_into(out, &r);
    }
    metrics_free(&r);
    free(skip);
}

/* The run: per instance its figures, then per epoch its hits, ends and
 * metrics. On the stack, not static: sweeps run the model on threads. */
static void run_with(const scenario_t *s, const topology_t *t, model_hits_fn hits, void *ctx,
                     run_metrics_t *out, int first) {
    run_ctx_t r;
    inst_ctx_t c;
    double ckpt[TOPO_MAX_INSTANCES], stage[TOPO_MAX_INSTANCES];
    checkpoint_model(s, t, ckpt);
    checkpoint_stage(s, t, stage);
    run_setup(&r, s, t);
    if (out->srv)
        memset(out->srv, 0, sizeof *out->srv * (size_t)out->nservers * (size_t)out->nepochs);
    for (int i = 0; i < t->ninst; i++) {
        inst_times(&c, &r, i);
        inst_storage(&c, &r);
        inst_cache(&c, &r);
        for (int e = first; e < s->epochs; e++) {
            epoch_metrics_t *m = metrics_at(out, i, e);
            memset(m, 0, sizeof *m);
            epoch_hits_t eh;
            epoch_hits(&eh, &r, &c, e, hits, ctx);
            double ends[TOPO_MAX_INSTANCES], ends_p[TOPO_MAX_INSTANCES], first = 0;
            epoch_ends(&r, &c, &eh, e, ends, ends_p, &first);
            checkpoint_waits(&c, e, ckpt[i], stage[i], ends, ends_p, &m->checkpoint_s);
            m->checkpoint_write_s = ckpt[i];
            const double writes = checkpoint_shared(&r, &c, &eh, e, ends);
            epoch_fill(m, &r, &c, &eh, e, ends[c.me], ends_p[c.me]);
            m->storage_util += writes / m->epoch_s;
            m->first_batch_s = fmin(first, m->epoch_s);
            /* A stalled loader catches up while the GPUs wait on a
             * checkpoint: the simulator's epoch is then shorter. */
            if (m->checkpoint_s > 0 && m->prep_stall_s + m->fetch_stall_s > 0.01 * m->epoch_s)
                m->approximate = 1;
            /* An async drain's writes interleave with the reads: the
             * shared channel's floor, and waits of the steady state's. */
            if (m->checkpoint_s > 0 && checkpoint_async(c.jb)) m->approximate = 1;
            if (t->inst[i].lead != i || !out->srv) continue;
            epoch_spread(out, &c, &eh, e);
        }
    }
    if (first == 0) model_startup(s, t, out);
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
