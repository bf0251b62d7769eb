/* sim: the discrete-event simulator (see sim.h).
 *
 * What is simulated, item by item and epoch by epoch:
 * - each stream (a job instance under partitioned prep; all instances on the
 *   same servers under coordinated prep) draws a fresh uniform permutation
 *   each epoch; a data-parallel job's GPU r gets positions r, r+G, r+2G, ...
 *   (DistributedSampler without padding), so global batch k is the contiguous
 *   slice [kM, (k+1)M) of the permutation, M = GPUs x batch_per_gpu;
 * - the loader may start batch k once the GPUs have started batch k - its
 *   window (prefetch_batches, or the loader kind's: loader_staged_batches);
 *   the batch's reads are issued then, in order, or, for a loader whose
 *   workers read synchronously (loader_pytorch.c), each when the worker's
 *   previous item is done (its clock);
 * - each read is looked up in its server's cache (the cache policy's kind,
 *   sim/kinds/cache_*.c); a hit costs nothing; a miss is read from storage as
 *   the storage kind says (storage_fixed.c: a queue_depth slot, latency_ms,
 *   then size/bandwidth on one FIFO channel); under CoorDL's partitioned
 *   caching an item another server holds comes over both servers' NICs
 *   (each direction of a NIC a FIFO link of its own: the owner's out-link
 *   and this server's in-link each carry it when free of earlier items);
 * - the loader kind prepares each item once fetched (loader_pool.c: on the
 *   earliest-free core of the stream's pool on that server, in issue order),
 *   for decode_ms_per_mb x size + decode_ms_per_item (+ augment_ms unless
 *   augment runs on the GPU);
 * - a batch is ready when the loader kind says (the pool: its last item
 *   prepped); each consuming job starts the iteration when the batch is ready
 *   and its previous iteration is done, and spends the loader's training-
 *   process CPU (iter_cpu_s) and then the batch's compute time; an epoch ends with its last
 *   iteration and the next epoch's loader starts then (a fresh iterator).
 * Streams that share a cache, storage or NIC are merged in issue-time order,
 * one batch at a time (a batch's reads share one issue time, so this is the
 * order a FIFO device would serve them in; synchronous readers' reads are not
 * in time order, and the storage serves them by calendar: storage.h).
 * The differential runs of DS-Analyzer come from the same pass: a second
 * timeline per stream with every item in memory (T_prep), and the sum of
 * compute times (T_gpu, GPUs fed instantly).
 * Not simulated: CPU contention between prep and other work (but for the
 * pytorch kind's own workers and training processes, and the training
 * processes' jobs.N.train_cpu_ms and coordinated prep's hand-off copies on
 * the pool's cores), GPU-to-GPU communication, stragglers, write traffic,
 * and the partial-batch padding of DistributedSampler. A page cache
 * (cache_ops_t.pages) reads whole pages in readahead windows; the readers
 * here read whole items, so none is read ahead of its use, but streamed
 * shards (loader.reader: stream), which each worker reads through a lane of
 * its `stream` (stream_paged), read ahead and re-read what reclaim took.
 * A read's own CPU (the syscall and copy of a file or a page-cache hit, a
 * GET's TCP and client work) is charged to the reader's core with the
 * item's prep where server.storage.cpu_us_*, server.cache_cpu_us_* or
 * server.tier.cpu_us_* say (read_cpu_s; none by default), on T_prep too:
 * DS-Analyzer's every-item-in-memory run still reads through the page cache. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hugemem.h"
#include "kinds.h"
#include "memory.h"
#include "perm.h"
#include "rng.h"
#include "server_sample.h"
#include "shards.h"
#include "sim.h"
#include "startup.h"
#include "checkpoint.h"

typedef struct {
    double in_free, out_free;
} nic_t;

/* A stream: one order of the items per epoch, fetched and prepared by one
 * loader, consumed by one or more job instances. Each time has a twin
 * suffixed _mem on the T_prep timeline (every item already in memory). */
typedef struct {
    int ninst;
    int *inst;
    int first_server, ns, gps;
    int64_t G, M, ahead, nbatches;
    uint32_t n_used; /* items each epoch reads: all, or whole batches under drop_last */
    uint32_t *perm, *perm_next, *pos_next;
    gsl_rng *rng;
    prep_t prep;                        /* the loader's prep stage (both timelines) */
    double decode_per_byte, prep_fixed; /* the stream's pipeline: s per byte, s per item */
    /* A pipeline whose items differ in CPU beyond their bytes (pipeline_kind.h:
     * item_dev_ms; NULL: none) and its decoder engines on each rank's GPU (0:
     * none): when each engine is free, [2][G][engines], and the batch's last
     * decode's end on each timeline. Such a stream takes batch_items' general path. */
    double (*item_dev_ms)(const scenario_t *s, uint32_t x);
    int engines;
    double *eng_free;
    double eng_ready[2];
    double *started, *started_mem; /* [ahead]: when the last consumer started batch k, by k % ahead:
                                    * batch k + ahead may be issued then (its buffer is free) */
    double *end, *end_mem;         /* [ninst]: each consumer's last iteration end */
    double *t_full, *t_last, *t_gpu; /* [ninst] */
    double *train_s;                 /* [ninst]: each consumer's training CPU per iteration */
    double *handoff_s; /* [ninst]: of train_s, receiving the shared batch (prep, not T_gpu) */
    double *g_full, *g_last, *g_prep; /* [ninst]: of t_full and t_last, the GPU's prep; its sum */
    double *consumed;                 /* [ninst]: items each consumer trained on this epoch */
    double *ck_s;                     /* [ninst]: each consumer's checkpoint waits this epoch */
    double *ck_free; /* [2 x ninst]: when each consumer's async drain ends, on each timeline */
    uint16_t *rank_server; /* [G]: which of the stream's servers GPU rank r is on */
    int staged_peak;       /* most batches prepared ahead at once this epoch */
    int epoch, done;
    int64_t batch;
    double ep_start, ep_start_mem;
    /* this epoch's counters */
    double hits, remote_hits, read_bytes, net_bytes, prep_busy, net_busy;
    double tier_hits; /* items served by the tier */
    io_acct_t tier_io;
    io_acct_t io;
    double io_end; /* when the epoch's last shard read ends (its bytes may outlast the epoch) */
    double prepped;
    /* Record shards (dataset.shard_items > 1): the order and read state, and
     * this epoch's sum of distinct shards per batch over its batches. */
    shards_t shards;
    uint32_t shard_lanes;
    int shard_per_rank;
    uint32_t lane0; /* streamed through a page cache: its lanes' first in each cache's */
    double mix, mixed;
    /* Shuffle buffer (loader.shuffle_buffer): output batches lag the reads
     * by lag slices; the latest read's readiness so far (both timelines);
     * the output order, for the shard mix. */
    int64_t lag;
    int buffered; /* record shards through a shuffle buffer: the mix is out_order's */
    double buf_ready, buf_ready_mem;
    uint32_t *out_order;
} stream_t;

typedef struct {
    const scenario_t *s;
    const topology_t *t;
    uint32_t n;
    uint32_t *size;
    perm_gen_t pg;
    int nservers, nstreams;
    server_metrics_t *srv; /* [server * epochs + epoch], accumulated by each stream's epoch */
    cache_t *cache;        /* [nservers] (local caching) */
    uint16_t *owner;       /* partitioned caching: server + 1 holding the item, 0 = none */
    uint64_t *owned;       /* partitioned caching: bytes held per server */
    storage_t *storage;    /* [nservers], or one when shared */
    nic_t *nic;
    stream_t *st;
    const loader_ops_t *loader;
    double nic_bw, nic_lat;
    double mean_bytes;  /* item_offset's item size */
    double cache_bytes; /* each server's cache (memory_cache_bytes) */
    int clairvoyant;    /* the cache policy needs each access's next use */
    /* Record shards: items a shard (0: loose items) and each shard's bytes
     * (the cache's entries then). */
    uint32_t S;
    uint32_t *shard_size;
    /* Streamed shards (loader.reader: stream): the readahead window's bytes
     * (0: none), and the reads of storage the last item's fetch issued
     * (their CPU is the item's reader's). */
    int stream;
    double ra;
    double stream_reads;
    /* ... through a page cache's lanes (cache_ops_t.stream; stream_paged):
     * 1, and the lanes given out to the streams so far. */
    int paged;
    uint32_t lanes;
    /* The tier (server.tier; tier.h): per server a second cache over the
     * DRAM cache's misses and its device. tier.sv NULL: none. */
    tier_t tier;
    /* A server-sampled run (server_sample.h; weight NULL: every server):
     * each server's weight, and per server and epoch the sum over its items
     * of the time from issue to prepared (the bound's figure). */
    server_sample_t smp;
    double *lat;       /* [server * epochs + epoch] */
    double *last_prep; /* [server]: its latest item prepared in the batch being run */
    double *strag;     /* [epoch]: the straggler term of the bound, seconds (sample_straggle) */
    const sim_observer_t *obs; /* NULL: none */
    double *ckpt;              /* [2 x ninst]: one checkpoint's write (async: drain) time of each
                                  instance, then its staging (async; else 0) */
    /* Each instance's checkpoint writes replayed on the run's devices,
     * beside the epochs' reads (checkpoint.h); NULL for an instance with
     * none, or too many requests to replay (then ckpt's time, alone). */
    burst_replay_t **ck_replay; /* [ninst] */
    burst_plan_t *ck_plan;      /* [ninst x ninst]: instance i's plan at i x ninst */
    burst_who_t *ck_who;        /* [ninst x ninst] */
    char *ck_draining;          /* [ninst]: its async drain's replay is under way */
    storage_t *ck_tier;         /* [nservers]: the tiers' devices side by side (checkpoint.to
                                   tier; copies sharing their state), else NULL */
    /* A read costs its reader CPU (server.storage.cpu_us_*, server.tier.
     * cpu_us_*: storage_cpu_on): the hot loop adds it to the item's core
     * time only when set. */
    int read_cpu;
} world_t;

/* Whether server v is simulated: every server, or a sampled one. */
static inline int simulated(const world_t *w, int v) {
    return !w->smp.weight || w->smp.weight[v] > 0;
}

/* Zeroed; the per-item arrays on huge pages (hugemem.h). */
static void *xcalloc(size_t n, size_t sz, int *fail) {
    void *p = hugemem_calloc(n, sz);
    if (!p) *fail = 1;
    return p;
}

/* The tier's caches (entries as the DRAM cache's: items or whole shards)
 * and devices, one each per simulated server: 0, or -1 without memory. */
static int tier_init(world_t *w) {
    uint32_t entries = w->S ? (uint32_t)(((uint64_t)w->n + w->S - 1) / w->S) : w->n;
    const uint32_t *sizes = w->S ? w->shard_size : w->size;
    return tier_open(&w->tier, w->s, w->nservers, w->smp.weight, sizes, entries,
                     w->loader->sync_reads);
}

void sim_item_sizes(const scenario_t *s, gsl_rng *r, uint32_t n, uint32_t *size) {
    double mean = scenario_item_bytes_mean(s), cv = s->dataset.item_kb_cv;
    double sigma = sqrt(log1p(cv * cv)), zeta = log(mean) - sigma * sigma / 2;
    for (uint32_t i = 0; i < n; i++) {
        double b = cv > 0 ? exp(zeta + gsl_ran_gaussian_ziggurat(r, sigma)) : mean;
        /* Validation refuses distributions that reach past this with any weight.
         * llround(b) for 1 <= b <= 4e9 is (uint32_t)(b + 0.5) exactly (b and
         * 0.5 are multiples of b's ulp; where the sum rounds, into the next
         * power of two, both give that power), without a libm call. */
        size[i] = b < 1 ? 1 : b > SCN_ITEM_BYTES_MAX ? 4000000000u : (uint32_t)(b + 0.5);
    }
}

static void draw_sizes(world_t *w, gsl_rng *r) {
    w->mean_bytes = scenario_item_bytes_mean(w->s);
    sim_item_sizes(w->s, r, w->n, w->size);
}

/* The order a shuffle buffer of B items gives the read order: each output a
 * uniform draw from the buffer, its place taken by the next item read; and
 * the shards each output batch then mixes. */
static void shuffle_workers(world_t *w, stream_t *st, uint32_t B);

static void shuffle_mix(world_t *w, stream_t *st) {
    uint32_t n = st->n_used, B = (uint32_t)w->s->loader.shuffle_buffer, fill = 0, next = 0;
    uint32_t *buf = st->out_order + n; /* scratch after the order */
    if (B > n) B = n;
    if (st->shard_per_rank) {
        shuffle_workers(w, st, B);
    } else {
        for (uint32_t j = 0; j < n; j++) {
            while (fill < B && next < n)
                buf[fill++] = st->perm[next++];
            uint32_t i = perm_uniform(st->rng, fill);
            st->out_order[j] = buf[i];
            buf[i] = next < n ? st->perm[next++] : buf[--fill];
        }
    }
    for (int64_t lo = 0; lo < n; lo += st->M, st->mixed++)
        st->mix += shards_in(&st->shards, st->out_order, (uint64_t)lo,
                             (uint64_t)(lo + st->M < n ? lo + st->M : n));
}

/* One worker's items in a per-worker shard order (shards_order_workers):
 * rank r's positions kM + r + iG of the batches k the worker prepares. */
typedef struct {
    const stream_t *st;
    uint32_t r, wk;
    int64_t k;
    uint64_t pos, hi;
} worker_items_t;

static int worker_next(worker_items_t *it, uint32_t *pos) {
    const stream_t *st = it->st;
    const uint32_t *bw = st->shards.batch_worker;
    uint64_t n = st->n_used, M = (uint64_t)st->M;
    while (it->pos >= it->hi) {
        do
            it->k++;
        while (it->k < st->nbatches && bw[it->k] != it->wk);
        if (it->k >= st->nbatches) return 0;
        it->pos = (uint64_t)it->k * M + it->r;
        it->hi = (uint64_t)it->k * M + M < n ? (uint64_t)it->k * M + M : n;
    }
    *pos = (uint32_t)it->pos;
    it->pos += (uint64_t)st->G;
    return 1;
}

/* PyTorch's workers each shuffle their own stream in a buffer of B, as
 * WebDataset's shuffle(B, initial=100) does inside the worker: each read
 * joins the buffer, with a second read while it holds fewer than B; once it
 * holds `initial` it yields a uniform draw, the last item taking the
 * drawn one's place; at the stream's end it drains. */
static void shuffle_workers(world_t *w, stream_t *st, uint32_t B) {
    uint32_t *buf = st->out_order + st->n_used, initial = B < 100 ? B : 100;
    for (uint32_t r = 0; r < (uint32_t)st->G; r++)
        for (uint32_t wk = 0; wk < st->shard_lanes; wk++) {
            worker_items_t rd = {st, r, wk, -1, 0, 0}, wr = rd;
            uint32_t fill = 0, p, q;
            for (;;) {
                int more = worker_next(&rd, &q);
                if (more) {
                    buf[fill++] = st->perm[q];
                    if (fill < B && worker_next(&rd, &q)) buf[fill++] = st->perm[q];
                }
                if (!fill || (more && fill < initial)) {
                    if (!more) break;
                    continue;
                }
                if (!worker_next(&wr, &p)) break;
                uint32_t i = perm_uniform(st->rng, fill);
                st->out_order[p] = buf[i];
                buf[i] = buf[--fill];
            }
        }
    (void)w;
}

static void device_begin(storage_t *d, double at) {
    if (d->ops && d->state && d->ops->epoch_begin) d->ops->epoch_begin(d, at);
}

/* The devices stream st reads, storage and its servers' tiers: no read of
 * its epoch comes before the epoch's start (storage_ops_t.epoch_begin).
 * Another stream on a shared device loses the capacity before it too: at
 * most one bucket's. */
static void storage_epoch_begin(world_t *w, const stream_t *st) {
    const int shared = w->s->server.storage.shared;
    const int lo = shared ? 0 : st->first_server, hi = shared ? 1 : st->first_server + st->ns;
    for (int k = lo; k < hi; k++)
        device_begin(&w->storage[k], st->ep_start);
    for (int k = st->first_server; w->tier.sv && k < st->first_server + st->ns; k++)
        device_begin(&tier_server(&w->tier, k)->dev, st->ep_start);
}

/* A streaming worker's shuffle buffer (PyTorch's: one in each worker, as
 * WebDataset's shuffle(B, initial=100) keeps it) holds at its peak
 * stream_buffer_peak items read ahead of their decode: the worker reads
 * them before decoding any, each of its first shards read ahead of its own
 * first item up to the peak's bytes; what it has read then decodes with no
 * read to wait on, so its reads and decodes add up to the epoch's as the
 * real buffer's growth and final drain do (each read without its decode
 * beside it). */
static void stream_fills(world_t *w, stream_t *st) {
    shards_t *sh = &st->shards;
    memset(sh->fill, 0, sh->nshards * sizeof *sh->fill);
    const double B = (double)w->s->loader.shuffle_buffer;
    if (!st->shard_per_rank || B <= 0) return;
    const uint32_t Q = sh->nstreams, S = w->S;
    for (uint32_t q = 0; q < Q && q < sh->nshards; q++) {
        double items = 0; /* the worker's items this epoch */
        for (uint32_t i = q; i < sh->nshards; i += Q) {
            const uint32_t h = sh->order[i];
            items += (h + 1) * (double)S <= w->n ? S : w->n - (double)h * S;
        }
        double left = loader_buffer_peak(w->s, items) * w->mean_bytes;
        for (uint32_t i = q; i < sh->nshards && left > 0; i += Q) {
            const uint32_t h = sh->order[i];
            sh->fill[h] = left;
            left -= w->shard_size[h];
        }
    }
}

static void start_epoch(world_t *w, stream_t *st) {
    if (st->epoch > 0) storage_epoch_begin(w, st);
    if (w->clairvoyant) {
        /* Belady needs the next epoch's order: generate one ahead. */
        if (st->epoch == 0) perm_generate(&w->pg, st->rng, st->perm_next);
        uint32_t *t = st->perm;
        st->perm = st->perm_next;
        st->perm_next = t;
        if (st->epoch + 1 < w->s->epochs) {
            perm_generate(&w->pg, st->rng, st->perm_next);
            for (uint32_t i = 0; i < w->n; i++)
                st->pos_next[st->perm_next[i]] = i;
        }
    } else if (w->S) {
        if (st->shard_per_rank)
            shards_order_workers(&st->shards, st->rng, (uint32_t)st->G, st->shard_lanes,
                                 (uint64_t)st->M, st->n_used, st->perm);
        else
            shards_order_lanes(&st->shards, st->rng, st->shard_lanes, st->perm);
    } else {
        perm_generate(&w->pg, st->rng, st->perm);
    }
    if (w->stream) stream_fills(w, st);
    st->mix = st->mixed = 0;
    st->buf_ready = st->buf_ready_mem = 0;
    if (st->buffered) shuffle_mix(w, st);
    st->batch = 0;
    st->hits = st->remote_hits = st->read_bytes = st->net_bytes = st->tier_hits = 0;
    st->tier_io = (io_acct_t){0};
    st->prep_busy = st->net_busy = 0;
    st->io = (io_acct_t){0};
    st->io_end = 0;
    st->prepped = 0;
    st->staged_peak = 0;
    for (int c = 0; c < st->ninst; c++)
        st->t_gpu[c] = st->consumed[c] = st->g_prep[c] = st->ck_s[c] = 0;
}

/* The lanes a page cache gives streaming readers: each stream's workers
 * (ranks x workers) or lanes, at most one stream an instance. */
static uint32_t stream_lanes(const world_t *w) {
    int per_rank = 0;
    const uint32_t lanes = w->loader->shard_lanes(w->s, &per_rank);
    uint64_t n = 0;
    for (int i = 0; i < w->t->ninst; i++)
        n += per_rank ? (uint64_t)w->s->jobs[w->t->inst[i].job].gpus * lanes : lanes;
    return n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
}

/* Each server's cache (or the partitioned caches' owners; record shards
 * cached whole, as entries of their own), storage and tier. */
static int build_servers(world_t *w) {
    const scenario_t *s = w->s;
    int fail = 0;
    int partitioned_dist = s->loader.dist_cache == DIST_SHARDED;
    w->cache = xcalloc((size_t)w->nservers, sizeof *w->cache, &fail);
    w->nic = xcalloc((size_t)w->nservers, sizeof *w->nic, &fail);
    int nstor = s->server.storage.shared ? 1 : w->nservers;
    w->storage = xcalloc((size_t)nstor, sizeof *w->storage, &fail);
    w->srv = xcalloc((size_t)w->nservers * (size_t)s->epochs, sizeof *w->srv, &fail);
    if (fail) return -1;
    if (partitioned_dist) {
        w->owner = xcalloc(w->n, sizeof *w->owner, &fail);
        w->owned = xcalloc((size_t)w->nservers, sizeof *w->owned, &fail);
    } else {
        /* Record shards are cached whole: the cache's entries are the shards. */
        uint32_t entries = w->n;
        const uint32_t *sizes = w->size;
        if (s->dataset.shard_items > 1) {
            w->S = (uint32_t)s->dataset.shard_items;
            entries = (uint32_t)(((uint64_t)w->n + w->S - 1) / w->S);
            w->shard_size = xcalloc(entries, sizeof *w->shard_size, &fail);
            for (uint32_t i = 0; !fail && i < w->n; i++) {
                uint64_t b = (uint64_t)w->shard_size[i / w->S] + w->size[i];
                w->shard_size[i / w->S] = b > 4000000000u ? 4000000000u : (uint32_t)b;
            }
            sizes = w->shard_size;
        }
        /* A page cache reads whole pages and the device's readahead window
         * (whole pages of it, as the kernel's ra_pages is read_ahead_kb /
         * 4); a streaming reader's workers or lanes each a lane of it. */
        const uint32_t ra = (uint32_t)((s->server.storage.read_ahead_kb << 10) / CACHE_PAGE_BYTES *
                                       CACHE_PAGE_BYTES);
        const uint32_t lanes = w->paged ? stream_lanes(w) : 0;
        for (int k = 0; k < w->nservers && !fail; k++)
            fail = simulated(w, k) &&
                   cache_init_pages(&w->cache[k], scenario_cache(s), entries, sizes,
                                    (uint64_t)w->cache_bytes, CACHE_PAGE_BYTES, ra, lanes) != 0;
    }
    for (int k = 0; k < nstor && !fail; k++) {
        if (nstor > 1 && !simulated(w, k)) continue;
        w->storage[k].ops = scenario_storage(s);
        w->storage[k].unordered = w->loader->sync_reads;
        fail = w->storage[k].ops->init(&w->storage[k], s) != 0;
    }
    if (!fail && tier_on(s) && tier_init(w) != 0) fail = 1;
    return fail ? -1 : 0;
}

/* Streams: one per instance, or one per server group under coordinated
 * prep; the lead instance sets its batch sizes and the batches ahead. */
static int build_streams(world_t *w) {
    const scenario_t *s = w->s;
    const topology_t *t = w->t;
    int fail = 0;
    w->st = xcalloc((size_t)t->ninst, sizeof *w->st, &fail);
    if (fail) return -1;
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i];
        stream_t *st = &w->st[in->stream];
        if (in->lead == i) {
            w->nstreams++;
            const job_t *jb = &s->jobs[in->job];
            st->first_server = in->first_server;
            st->ns = in->nservers;
            st->gps = in->gpus_per_server;
            st->G = jb->gpus;
            st->M = jb->gpus * jb->batch_per_gpu;
            st->nbatches = ((int64_t)w->n + st->M - 1) / st->M;
            st->n_used = w->n;
            if (w->loader->epoch_items) {
                st->n_used = (uint32_t)w->loader->epoch_items(s, w->n, st->M);
                st->nbatches = ((int64_t)st->n_used + st->M - 1) / st->M;
            }
            /* A fresh iterator each epoch: no loader runs further ahead than one epoch. */
            st->ahead = loader_staged_batches(s, jb);
            if (st->ahead > st->nbatches) st->ahead = st->nbatches;
            /* A shuffle buffer reads B items further ahead: its slices join
             * the window. */
            if (s->loader.shuffle_buffer > 0) {
                st->lag = loader_buffer_slices(s, jb, (int64_t)st->n_used, st->M);
                if (st->lag > st->nbatches) st->lag = st->nbatches;
                st->ahead += st->lag;
            }
            st->inst = xcalloc((size_t)t->ninst, sizeof *st->inst, &fail);
        }
        if (fail) return -1;
        st->inst[st->ninst++] = i;
    }
    return 0;
}

/* Stream st's generator (seeded from master, in stream order), orders,
 * shards, loader state and per-instance step times; its first epoch begun. */
static int build_stream(world_t *w, stream_t *st, gsl_rng *master) {
    const scenario_t *s = w->s;
    const topology_t *t = w->t;
    int fail = 0;
    /* Each stream its own generator, seeded in stream order: its orders do
     * not depend on how the merge interleaves the streams. */
    st->rng = gsl_rng_alloc(rng_mt19937);
    if (!st->rng) return -1;
    gsl_rng_set(st->rng, gsl_rng_get(master));
    st->perm = xcalloc(w->n, sizeof *st->perm, &fail);
    if (w->clairvoyant) {
        st->perm_next = xcalloc(w->n, sizeof *st->perm_next, &fail);
        st->pos_next = xcalloc(w->n, sizeof *st->pos_next, &fail);
    }
    if (w->S) {
        st->shard_lanes = w->loader->shard_lanes(s, &st->shard_per_rank);
        uint32_t streams = st->shard_per_rank ? (uint32_t)st->G * st->shard_lanes : st->shard_lanes;
        if (shards_init(&st->shards, w->n, w->S, streams, (uint64_t)st->M)) return -1;
        if (w->stream && shards_stream_init(&st->shards)) return -1;
        st->lane0 = w->lanes, w->lanes += streams;
        st->buffered = s->loader.shuffle_buffer > 0;
        if (st->buffered) {
            /* the output order and the buffer's scratch */
            int64_t B = s->loader.shuffle_buffer < w->n ? s->loader.shuffle_buffer : w->n;
            st->out_order = xcalloc((size_t)w->n + (size_t)B + 1, sizeof *st->out_order, &fail);
            if (fail) return -1;
        }
        if (st->shard_per_rank) st->prep.batch_worker = st->shards.batch_worker;
    }
    st->prep.s = s;
    st->prep.job = &s->jobs[t->inst[st->inst[0]].job];
    /* Coordinated jobs share one pipeline (scenario.c): the first's. */
    st->decode_per_byte = scenario_job_prep_per_byte(s, st->prep.job);
    st->prep_fixed = scenario_job_prep_s(s, st->prep.job, 0);
    st->item_dev_ms = job_pipeline(st->prep.job)->item_dev_ms;
    st->engines = pipeline_engines(s, st->prep.job);
    if (st->engines > 0) {
        st->eng_free =
            xcalloc(2 * (size_t)st->G * (size_t)st->engines, sizeof *st->eng_free, &fail);
        if (fail) return -1;
    }
    st->prep.ns = st->ns;
    st->prep.cores = t->inst[st->inst[0]].cpus / st->ns;
    st->prep.ranks = (int)st->G;
    st->prep.ranks_per_server = st->gps;
    st->prep.train_share = w->loader->train_share ? w->loader->train_share(st->prep.cores) : 1;
    st->prep.busy_max = loader_busy_max(s, (double)st->ahead, (double)st->M / st->ns);
    st->prep.batches = st->nbatches;
    st->prep.ahead = st->ahead;
    st->prep.dilation = 1;
    if (w->loader->init(&st->prep)) return -1;
    st->started = xcalloc((size_t)st->ahead, sizeof *st->started, &fail);
    st->started_mem = xcalloc((size_t)st->ahead, sizeof *st->started_mem, &fail);
    st->prep.started[0] = st->started, st->prep.started[1] = st->started_mem;
    st->end = xcalloc((size_t)st->ninst, sizeof *st->end, &fail);
    st->end_mem = xcalloc((size_t)st->ninst, sizeof *st->end_mem, &fail);
    st->t_full = xcalloc((size_t)st->ninst, sizeof *st->t_full, &fail);
    st->t_last = xcalloc((size_t)st->ninst, sizeof *st->t_last, &fail);
    st->t_gpu = xcalloc((size_t)st->ninst, sizeof *st->t_gpu, &fail);
    st->train_s = xcalloc((size_t)st->ninst, sizeof *st->train_s, &fail);
    st->handoff_s = xcalloc((size_t)st->ninst, sizeof *st->handoff_s, &fail);
    st->g_full = xcalloc((size_t)st->ninst, sizeof *st->g_full, &fail);
    st->g_last = xcalloc((size_t)st->ninst, sizeof *st->g_last, &fail);
    st->g_prep = xcalloc((size_t)st->ninst, sizeof *st->g_prep, &fail);
    st->consumed = xcalloc((size_t)st->ninst, sizeof *st->consumed, &fail);
    st->ck_s = xcalloc((size_t)st->ninst, sizeof *st->ck_s, &fail);
    st->ck_free = xcalloc(2 * (size_t)st->ninst, sizeof *st->ck_free, &fail);
    st->rank_server = xcalloc((size_t)st->G, sizeof *st->rank_server, &fail);
    if (fail) return -1;
    for (int64_t r = 0; r < st->G; r++)
        st->rank_server[r] = (uint16_t)(r / st->gps);
    int64_t rem = (int64_t)st->n_used % st->M;
    for (int c = 0; c < st->ninst; c++) {
        const job_t *jb = &s->jobs[t->inst[st->inst[c]].job];
        st->t_full[c] = scenario_job_compute_s(s, jb, (double)jb->batch_per_gpu);
        st->handoff_s[c] =
            w->loader->handoff_s ? w->loader->handoff_s(s, jb, st->ninst, st->ninst * st->gps) : 0;
        st->train_s[c] = jb->train_cpu_ms / 1e3 + st->handoff_s[c];
        st->g_full[c] = scenario_job_gpu_prep_s(s, jb, (double)jb->batch_per_gpu);
        st->g_last[c] = rem ? scenario_job_gpu_prep_s(s, jb, (double)((rem + st->G - 1) / st->G))
                            : st->g_full[c];
        st->t_last[c] = rem ? scenario_job_compute_s(s, jb, (double)((rem + st->G - 1) / st->G))
                            : st->t_full[c];
    }
    start_epoch(w, st);
    return 0;
}

static int build(world_t *w, gsl_rng *master) {
    const scenario_t *s = w->s;
    int fail = 0;
    w->n = (uint32_t)s->dataset.items;
    w->nservers = (int)s->server.count;
    if (s->sampling.servers_sampled > 0) {
        if (server_sample_init(&w->smp, w->nservers, s->sampling.servers_sampled)) return -1;
        w->lat = xcalloc((size_t)w->nservers * (size_t)s->epochs, sizeof *w->lat, &fail);
        w->last_prep = xcalloc((size_t)w->nservers, sizeof *w->last_prep, &fail);
        w->strag = xcalloc((size_t)s->epochs, sizeof *w->strag, &fail);
        if (fail) return -1;
    }
    w->size = xcalloc(w->n, sizeof *w->size, &fail);
    if (fail || perm_gen_init(&w->pg, w->n)) return -1;
    draw_sizes(w, master);
    w->nic_bw = s->server.network.gbit_s * 1e9 / 8;
    w->nic_lat = s->server.network.latency_us / 1e6;
    w->clairvoyant = scenario_cache(s)->needs_future;
    w->loader = scenario_loader(s);
    w->read_cpu = storage_cpu_on(s);
    w->stream = s->dataset.shard_items > 1 && s->loader.reader == READER_STREAM;
    w->ra = scenario_read_ahead_bytes(s);
    w->paged = w->stream && s->loader.dist_cache != DIST_SHARDED && scenario_cache(s)->stream;

    if (build_servers(w) || build_streams(w)) return -1;
    for (int k = 0; k < w->nstreams; k++)
        if (build_stream(w, &w->st[k], master)) return -1;
    return 0;
}

static void destroy(world_t *w) {
    free(w->ckpt);
    w->ckpt = NULL;
    for (int i = 0; w->ck_replay && i < w->t->ninst; i++)
        burst_replay_close(w->ck_replay[i]);
    free(w->ck_replay), free(w->ck_plan), free(w->ck_who), free(w->ck_draining), free(w->ck_tier);
    for (int k = 0; w->st && k < w->nstreams; k++) {
        stream_t *st = &w->st[k];
        if (st->rng) gsl_rng_free(st->rng);
        w->loader->destroy(&st->prep);
        free(st->inst), free(st->perm), free(st->perm_next), free(st->pos_next);
        free(st->started), free(st->started_mem);
        free(st->end), free(st->end_mem), free(st->t_full), free(st->t_last), free(st->t_gpu);
        free(st->train_s), free(st->handoff_s), free(st->g_full), free(st->g_last),
            free(st->g_prep);
        free(st->consumed), free(st->rank_server), free(st->ck_s);
        free(st->ck_free), free(st->eng_free);
        if (w->S) shards_free(&st->shards);
        free(st->out_order);
    }
    for (int k = 0; w->cache && k < w->nservers; k++)
        cache_destroy(&w->cache[k]);
    int nstor = w->s->server.storage.shared ? 1 : w->nservers;
    for (int k = 0; w->storage && k < nstor; k++)
        if (w->storage[k].ops) w->storage[k].ops->destroy(&w->storage[k]);
    tier_close(&w->tier);
    free(w->st), free(w->cache), free(w->storage), free(w->nic), free(w->owner), free(w->owned);
    free(w->size), free(w->srv), free(w->shard_size), free(w->lat), free(w->last_prep),
        free(w->strag);
    server_sample_free(&w->smp);
    perm_gen_free(&w->pg);
}

/* Where item x starts on its device: the dataset laid out in item order
 * (how a copy or an untar writes it), each item its mean size, so the
 * distance between two reads (what a disk's seek depends on) needs no
 * per-item array. A shard's first item is where the shard starts. */
static inline double item_offset(const world_t *w, uint32_t x) {
    return (double)x * w->mean_bytes;
}

static inline double next_issue(const stream_t *st, const double *started, double ep_start) {
    return st->batch < st->ahead ? ep_start : started[st->batch % st->ahead];
}

/* CoorDL partitioned caching: returns when the item is local (after a hit,
 * a remote read or a storage read); counts where it came from, and says it
 * in *src (SIM_FROM_CACHE, _REMOTE or _STORAGE). */
static inline double fetch_partitioned(world_t *w, stream_t *st, int sv, uint32_t x, double issue,
                                       storage_t *d, double *hits, double *read_bytes, int *src) {
    double bytes = w->size[x];
    uint16_t o = w->owner[x];
    server_metrics_t *here = &w->srv[sv * w->s->epochs + st->epoch];
    if (o == sv + 1) {
        ++*hits;
        here->local_hits++;
        *src = SIM_FROM_CACHE;
        return issue;
    }
    if (o) {
        /* Each direction of each NIC is a link of its own that carries
         * whatever is queued on it without a pause (TCP flows share a link;
         * none waits for another server's link to be free): the item is
         * here when both the owner's out-link and this server's in-link
         * have carried it. Reserving both at once, as a circuit would,
         * leaves a link idle while the other is busy, and 3+ servers then
         * ran at about a third of the NICs' rate (issue 29: measured in
         * network namespaces, scripts/validate_net.py). */
        nic_t *in = &w->nic[sv], *out = &w->nic[o - 1];
        double xfer = bytes / w->nic_bw, ready = issue + w->nic_lat;
        in->in_free = (ready > in->in_free ? ready : in->in_free) + xfer;
        out->out_free = (ready > out->out_free ? ready : out->out_free) + xfer;
        double end = in->in_free > out->out_free ? in->in_free : out->out_free;
        ++*hits, st->remote_hits++;
        st->net_bytes += bytes;
        st->net_busy += bytes / w->nic_bw;
        here->remote_hits++;
        here->net_in_bytes += bytes;
        w->srv[(o - 1) * w->s->epochs + st->epoch].net_out_bytes += bytes;
        *src = SIM_FROM_REMOTE;
        return end;
    }
    if (w->owned[sv] + w->size[x] <= (uint64_t)w->cache_bytes) {
        w->owner[x] = (uint16_t)(sv + 1);
        w->owned[sv] += w->size[x];
    }
    *read_bytes += bytes;
    here->storage_reads++;
    here->storage_read_bytes += bytes;
    *src = SIM_FROM_STORAGE;
    return d->ops->read(d, issue, bytes, item_offset(w, x), sv, &st->io);
}

/* A sampled batch is ready when the last of K servers is, the full run's
 * when the last of N is: the sample's is the earlier by about (E[max of N] -
 * E[max of K]) standard deviations of the servers' readiness (normal order
 * statistics, Blom's approximation). Summed over the batches the GPUs wait
 * for (ready past their last iteration's end), it bounds how much shorter
 * the sample's epoch may be. Resets the servers' readiness for the next. */
static void sample_straggle(world_t *w, stream_t *st, double issue, double ready) {
    const int k = w->smp.k, n = w->nservers;
    double sum = 0, ss = 0, idle = 0;
    for (int v = 0; v < n; v++)
        if (w->smp.weight[v] > 0) sum += w->last_prep[v] > issue ? w->last_prep[v] - issue : 0;
    const double mean = sum / k;
    for (int v = 0; v < n; v++)
        if (w->smp.weight[v] > 0) {
            double d = (w->last_prep[v] > issue ? w->last_prep[v] - issue : 0) - mean;
            ss += d * d;
            w->last_prep[v] = 0;
        }
    for (int c = 0; c < st->ninst; c++)
        if (st->end[c] > idle) idle = st->end[c];
    if (ready <= idle || k < 2) return;
    const double cn = gsl_cdf_ugaussian_Pinv((n - 0.375) / (n + 0.25));
    const double ck = gsl_cdf_ugaussian_Pinv((k - 0.375) / (k + 0.25));
    double gap = (cn - ck) * sqrt(ss / (k - 1));
    /* The batch cannot wait longer than the GPUs waited for it. */
    w->strag[st->epoch] += gap < ready - idle ? gap : ready - idle;
}

/* What fetch_local needs of a server: its cache and the policy's access,
 * its tier (NULL: none), its storage (or the shared one)
 * and the storage kind's read. Made once a batch on one server: the
 * kinds' calls could change the world's fields, as far as the compiler
 * knows, and it would read them again at every item. */
typedef struct {
    cache_t *cache;
    tier_server_t *tier;
    int (*access)(cache_t *, uint32_t, uint64_t);
    storage_t *storage;
    double (*read)(storage_t *, double, double, double, int, io_acct_t *);
    int shared, client; /* the shared device's client: the server */
    int pages;          /* a page cache: a miss reads the pages it sets in cache->fetched */
    double mean_bytes;  /* item_offset's */
} local_t;

/* Server `server`'s local_t (a simulated one). */
static inline local_t local_of(world_t *w, int server) {
    const int shared = w->s->server.storage.shared;
    storage_t *d = &w->storage[shared ? 0 : server];
    return (local_t){
        .cache = &w->cache[server],
        .tier = w->tier.sv ? tier_server(&w->tier, server) : NULL,
        .access = w->cache[server].ops->access,
        .storage = d,
        .read = d->ops->read,
        .shared = shared,
        .client = server,
        .pages = w->cache[server].ops->pages,
        .mean_bytes = w->mean_bytes,
    };
}

/* Loose items through a server's own cache (and tier), l: returns when
 * item x is local, *src where it came from (SIM_FROM_CACHE, _TIER or
 * _STORAGE), *bytes what a miss read: the item, or the pages a page cache
 * read of it (its last page whole, only those not resident). wt is the
 * servers a sampled one stands for: a read of a shared
 * store is followed by the wt - 1 reads of the group's other servers (the
 * same bytes, at the same time), so the store's queues and caps see every
 * server's load. */
static inline double fetch_local(const local_t *l, stream_t *st, uint32_t x, uint64_t next_use,
                                 double at, double *bytes_io, double wt, int *src) {
    if (l->access(l->cache, x, next_use)) {
        *src = SIM_FROM_CACHE;
        return at;
    }
    if (l->pages) *bytes_io = (double)l->cache->fetched;
    const double bytes = *bytes_io;
    const double off = (double)x * l->mean_bytes; /* item_offset */
    double end;
    if (l->tier && tier_read(l->tier, x, at, bytes, off, wt, &st->tier_io, &end)) {
        *src = SIM_FROM_TIER;
        return end;
    }
    *src = SIM_FROM_STORAGE;
    storage_t *d = l->storage;
    if (!l->shared && wt != 1) return storage_read_wt(d, at, bytes, off, &st->io, wt);
    end = l->read(d, at, bytes, off, l->client, &st->io);
    /* (a sampled server stands for the servers after it up to the next
     * sampled one: server_sample_init's groups, each its own client) */
    for (int g = 1; l->shared && g < wt; g++)
        l->read(d, at, bytes, off, l->client + g, &st->io);
    return end;
}

enum { SHARD_FROM_TIER = 2 }; /* shards_t.hit: 1 in DRAM, 2 read from the tier */

/* The CPU seconds `bytes` read from src cost the reader (src as the fetch
 * said): a read from storage or the tier's device as their kind says
 * (storage.h: cpu_s), a hit in the page cache its read()
 * (storage_hit_cpu_s), a remote hit its request and TCP receive
 * (remote_hit_cpu_s; the owner's send is not charged). A later item of a
 * shard read from storage (SIM_FROM_SHARD) is that read's. */
static double src_cpu_s(const world_t *w, double bytes, int src) {
    switch (src) {
    case SIM_FROM_CACHE:
        return storage_hit_cpu_s(w->s, bytes);
    case SIM_FROM_TIER:
        return tier_cpu_s(&w->tier, bytes);
    case SIM_FROM_STORAGE:
    case SIM_FROM_SHARD:
        return storage_cpu_s(w->s, bytes);
    case SIM_FROM_REMOTE:
        return remote_hit_cpu_s(w->s, bytes);
    default:
        return 0;
    }
}

/* The CPU seconds item x's read costs the reader that issued it. A record
 * shard's read costs its request once, on its first item, and its bytes as
 * they arrive: each item its own bytes' share (the costs are affine in the
 * bytes, so the shard's total is its one read's). All of it on the first
 * item put a 227 MB shard's 0.64 s of copying on one core ahead of the
 * shard's items, 2.1 s at a pool's slowdown, one shard after another: the
 * simulator 2.7 x the model (semfuzz seed 53). */
static double read_cpu_s(const world_t *w, uint32_t x, double bytes, int src) {
    const double cpu = src_cpu_s(w, bytes, src);
    /* A streamed shard's item costs the reads its fetch issued (0 or more). */
    if (w->stream && (src == SIM_FROM_STORAGE || src == SIM_FROM_SHARD))
        return cpu + (w->stream_reads - 1) * src_cpu_s(w, 0, src);
    return w->S && x % w->S ? cpu - src_cpu_s(w, 0, src) : cpu;
}

/* Items in the batches staged at the epoch's peak: at most the epoch's own
 * (a data set smaller than the window is not a window of full batches). */
static double staged_items(const stream_t *st) {
    double items = (double)st->staged_peak * (double)st->M;
    return items < (double)st->n_used ? items : (double)st->n_used;
}

static void checkpoint_drain(world_t *w, stream_t *st, int c, double until);

static void finish_epoch(world_t *w, stream_t *st, run_metrics_t *out) {
    const scenario_t *s = w->s;
    /* the run's last drains, their writes counted in its last epoch */
    for (int c = 0; st->epoch + 1 == s->epochs && c < st->ninst; c++)
        checkpoint_drain(w, st, c, INFINITY);
    double n = (double)st->n_used;
    double next = st->ep_start, next_mem = st->ep_start_mem;
    /* The cores' busy time is the stream's, every consumer's training CPU
     * included: over the stream's span, to its last consumer's end (over
     * an earlier consumer's epoch it came out above 1: semfuzz seed 11). */
    double span = 0;
    for (int c = 0; c < st->ninst; c++)
        if (st->end[c] - st->ep_start > span) span = st->end[c] - st->ep_start;
    for (int c = 0; c < st->ninst; c++) {
        epoch_metrics_t *m = metrics_at(out, st->inst[c], st->epoch);
        m->epoch_s = st->end[c] - st->ep_start;
        m->t_prep_s = st->end_mem[c] - st->ep_start_mem;
        /* Every item in memory never costs a fetch stall: where a loader's
         * cores serve in another order on T_prep (the pytorch kind's
         * calendar serves in the simulator's order, not evenly), an epoch a
         * few ms longer there is a scheduling anomaly, as in list
         * scheduling, and DS-Analyzer's fetch stall is then 0. */
        if (m->t_prep_s > m->epoch_s) m->t_prep_s = m->epoch_s;
        m->t_gpu_s = st->t_gpu[c];
        m->gpu_prep_s = st->g_prep[c];
        m->checkpoint_s = st->ck_s[c];
        m->checkpoint_write_s = w->ckpt[st->inst[c]];
        m->hit_rate = st->hits / n;
        m->tier_hit_rate = st->tier_hits / n;
        m->remote_hit_rate = st->remote_hits / n;
        m->storage_read_bytes = st->read_bytes;
        m->network_bytes = st->net_bytes;
        m->items_prepped = st->prepped;
        m->storage_reads = st->io.reads;
        m->storage_heads = st->io.heads;
        m->storage_retries = st->io.retries;
        m->storage_lists = w->storage->ops->lists ? w->storage->ops->lists(s, st->epoch) : 0;
        m->shards_per_batch = st->mixed > 0 ? st->mix / st->mixed : 0;
        m->items_consumed = st->consumed[c];
        m->staged_bytes = staged_items(st) * scenario_job_out_item_bytes(s, st->prep.job);
        m->cpu_util = st->prep_busy / (st->prep.cpu_slots * st->ns * span);
        /* The devices this stream reads: its servers' own, or the one they
         * share; busy over the epoch, or to its last shard's last byte where
         * that comes later (drop_last trains on none of the last shard's
         * tail, which is read all the same: 1.00002 busy, semfuzz seed 23). */
        double devices = s->server.storage.shared ? 1 : st->ns;
        const double busy_s = fmax(m->epoch_s, st->io_end - st->ep_start);
        m->storage_util = st->io.xfer_busy / (devices * busy_s);
        m->slot_util =
            st->io.slot_busy /
            (storage_slots_of(s, w->storage->ops, st->ns, devices, w->loader->sync_reads) * busy_s);
        m->network_util = st->net_busy / (st->ns * m->epoch_s);
        metrics_derive(m, n);
        if (st->end[c] > next) next = st->end[c];
        if (st->end_mem[c] > next_mem) next_mem = st->end_mem[c];
    }
    double staged = staged_items(st) * scenario_job_out_item_bytes(s, st->prep.job) / st->ns;
    for (int v = st->first_server; v < st->first_server + st->ns; v++)
        w->srv[v * s->epochs + st->epoch].staged_bytes += staged;
    st->ep_start = next;
    st->ep_start_mem = next_mem;
    if (++st->epoch == s->epochs)
        st->done = 1;
    else
        start_epoch(w, st);
}

enum { PREFETCH = 16, PREFETCH_NEAR = 4 };

/* ---- the observer's view (sim.h); none of this runs without one ---- */

static void observe_batch(world_t *w, stream_t *st, double issue, int staged) {
    sim_batch_t b = {
        .stream = (int)(st - w->st),
        .epoch = st->epoch,
        .batch = st->batch,
        .issue = issue,
        .staged = staged,
        .worker = st->prep.batch_worker ? (int)st->prep.batch_worker[st->batch] : -1,
        .first_server = st->first_server,
        .servers = st->ns,
        .inst = st->inst,
        .ninst = st->ninst,
    };
    w->obs->batch(w->obs->ctx, &b);
    for (int v = st->first_server; v < st->first_server + st->ns; v++) {
        if (!simulated(w, v)) continue;
        const cache_t *c = w->owner ? NULL : &w->cache[v];
        w->obs->cache(w->obs->ctx, v, issue, c ? (double)c->used : (double)w->owned[v],
                      c ? (double)c->capacity : w->cache_bytes);
    }
}

/* The item as it was fetched (src: sim_source_t, as the fetch said) and prepared. */
static void observe_item(world_t *w, stream_t *st, uint32_t x, int sv, int rank, double at,
                         double fetched, double prep_end, double prep, int src) {
    int server = st->first_server + sv;
    int shard_head = w->S && x % w->S == 0;
    sim_item_t it = {
        .stream = (int)(st - w->st),
        .epoch = st->epoch,
        .batch = st->batch,
        .server = server,
        .rank = rank,
        .bytes = w->size[x],
        .issue = at,
        .fetched = fetched,
        .prep_s = prep,
        .prep_end = prep_end,
        .source = src,
    };
    if (src == SIM_FROM_REMOTE) {
        it.req_end = fetched;
    } else if (src == SIM_FROM_TIER) {
        it.device = server;
        if (!w->S) it.req_end = fetched;
    } else if (src == SIM_FROM_STORAGE) {
        it.req_end = fetched;
        it.device = w->s->server.storage.shared ? 0 : server;
    }
    if (shard_head && !w->stream && (it.source == SIM_FROM_TIER || it.source == SIM_FROM_STORAGE)) {
        uint32_t h = x / w->S;
        it.req_end = st->shards.first[h] + st->shards.span[h];
        it.bytes = w->shard_size[h];
    }
    w->obs->item(w->obs->ctx, &it);
}

/* at: the step's start and its CPU's end, on T and on T_prep. */
static void observe_iteration(world_t *w, stream_t *st, int c, int64_t k, const double at[4],
                              double tb, double items, int last) {
    const double start = at[0], start_mem = at[1];
    sim_iter_t it = {
        .stream = (int)(st - w->st),
        .inst = st->inst[c],
        .epoch = st->epoch,
        .batch = k,
        .items = items,
        .idle = st->end[c] > st->ep_start ? st->end[c] : st->ep_start,
        .start = start,
        .cpu_s = at[2] - start,
        .cpu_mem_s = at[3] - start_mem,
        .compute_s = tb,
        .ep_start = st->ep_start,
        .idle_mem = st->end_mem[c] > st->ep_start_mem ? st->end_mem[c] : st->ep_start_mem,
        .start_mem = start_mem,
        .ep_start_mem = st->ep_start_mem,
        .last = last,
    };
    w->obs->iteration(w->obs->ctx, &it);
}

static void consume(world_t *w, stream_t *st, run_metrics_t *out, int64_t k, double ready,
                    double ready_mem);

/* The batch's start: the loader told when it is issued and when its
 * consumers went idle, and the batches staged ahead of it counted. */
static void begin_batch(world_t *w, stream_t *st, double issue, double issue_mem) {
    if (w->loader->begin_batch) {
        double at[2] = {issue, issue_mem}, idle[2] = {0, 0};
        for (int c = 0; c < st->ninst; c++) {
            if (st->end[c] > idle[0]) idle[0] = st->end[c];
            if (st->end_mem[c] > idle[1]) idle[1] = st->end_mem[c];
        }
        w->loader->begin_batch(&st->prep, st->epoch, st->batch, at, idle);
    }
    /* Batches prepared ahead when this one is issued: those not yet started by every consumer. */
    int staged = 1;
    for (int64_t j = 0; j < st->ahead; j++)
        staged += st->started[j] > issue;
    if (staged > st->staged_peak) st->staged_peak = staged;
    if (w->obs) observe_batch(w, st, issue, staged);
}

/* The hot loop's helpers below are always inlined: the sums they add to
 * are run_batch's locals (pointers into its frame), which inlining keeps in
 * registers as when the code stood in the loop. */
#define HOT static inline __attribute__((always_inline))

/* Record shard x / S's DRAM miss through the server's tier: 1 when it is
 * read from the tier's device, streamed as from storage (its first byte's
 * and its span's times set), or 0. Out of the hot loop: once a shard, and
 * inlined it cost every item of a run without a tier an instruction. */
static __attribute__((noinline)) int shard_from_tier(world_t *w, stream_t *st, uint32_t x,
                                                     int server, double at) {
    shards_t *sh = &st->shards;
    const uint32_t h = x / w->S;
    double end;
    if (!tier_read(tier_server(&w->tier, server), h, at, w->shard_size[h], item_offset(w, x), 1,
                   &st->tier_io, &end))
        return 0;
    sh->span[h] = tier_span(&w->tier, w->shard_size[h]);
    sh->first[h] = end - sh->span[h];
    return 1;
}

/* A streamed shard's item x (loader.reader: stream): the worker reading the
 * shard in order asks, at `at`, for its bytes up to the item's end (or its
 * buffer's fill). With readahead the kernel reads window after window (from
 * a small first one up to ra bytes: scenario_ra_window) and keeps one past
 * the one the reader is in: a read reaching into the last window asked for
 * starts the next, issued then, and the item waits for the window holding
 * its last byte (the one before the last, or the last). Without readahead
 * the item's own bytes are read when asked. Returns when the item is here;
 * the reads it issued are counted in read_bytes, reqs and m (when count)
 * and left in w->stream_reads. Out of line: once an item of a streamed run
 * only. */
static __attribute__((noinline)) double stream_fetch(world_t *w, stream_t *st, uint32_t x,
                                                     int server, double at, double bytes,
                                                     storage_t *d, server_metrics_t *m, int count,
                                                     double *read_bytes, double *reqs) {
    shards_t *sh = &st->shards;
    const uint32_t h = x / w->S;
    const double size = w->shard_size[h], ra = w->ra, off = item_offset(w, h * w->S);
    double e = sh->cum[h] += bytes;
    if (sh->fill[h] > e) e = sh->fill[h];
    if (e > size) e = size;
    double issued = 0;
    while (ra > 0 ? sh->req_lo[h] < e && sh->req_to[h] < size : sh->req_to[h] < e) {
        const double from = sh->req_to[h];
        const double len =
            ra > 0 ? fmin(scenario_ra_window(w->s, from - sh->req_lo[h]), size - from) : e - from;
        const double end = d->ops->read(d, at, len, off + from, server, &st->io);
        if (end > st->io_end) st->io_end = end;
        sh->span[h] = sh->first[h]; /* the window before the last: when it ended */
        sh->req_lo[h] = from, sh->req_to[h] = from + len, sh->first[h] = end;
        issued++;
        *read_bytes += len;
        if (count) m->storage_reads++, m->storage_read_bytes += len;
    }
    *reqs += issued;
    w->stream_reads = issued;
    const double fetched = ra > 0 && e <= sh->req_lo[h] ? sh->span[h] : sh->first[h];
    return fetched < at ? at : fetched;
}

/* A streamed shard's item x through the page cache (w->paged): the
 * worker's lane (cache_ops_t.stream, the kernel's file_ra_state) reads the
 * shard's bytes up to the item's end (or its buffer's fill) as they are
 * asked, the pages it lacks and the windows the kernel reads ahead meanwhile
 * one request to the device, from which its pages enter the cache: a
 * window read ahead and reclaimed before the reader gets to it is read
 * again. The item waits for the read its own bytes missed in, else for the
 * read that brought them: where each of the lane's last two reads reached
 * (req_lo, reach: its window's end, cache_t.reach) and when each ended
 * (first, span), or this one where it read them; bytes
 * past all three were in the cache before (a hit, here at once). req_to:
 * the bytes asked so far. */
static __attribute__((noinline)) double stream_paged(world_t *w, stream_t *st, uint32_t x,
                                                     int server, double at, double bytes,
                                                     storage_t *d, server_metrics_t *m, int count,
                                                     double *hits, double *read_bytes, double *reqs,
                                                     int *src) {
    shards_t *sh = &st->shards;
    cache_t *c = &w->cache[server];
    const uint32_t h = x / w->S;
    if (x == h * w->S) {
        sh->cum[h] = sh->req_to[h] = sh->req_lo[h] = sh->reach[h] = 0;
        sh->first[h] = sh->span[h] = at;
    }
    const double from = sh->req_to[h], size = w->shard_size[h];
    double e = sh->cum[h] += bytes;
    if (sh->fill[h] > e) e = sh->fill[h];
    if (e > size) e = size;
    /* (its own last byte's read, of those before this item's) */
    const double last = sh->cum[h] < size ? sh->cum[h] : size;
    double ready = last <= sh->reach[h] ? sh->span[h] : last <= sh->req_lo[h] ? sh->first[h] : at;
    const int cached = last > sh->req_lo[h];
    uint64_t wait = 0, ahead = 0;
    if (e > from) {
        wait = c->ops->stream(c, st->lane0 + sh->lane[h], h, (uint64_t)from, (uint64_t)(e - from),
                              &ahead);
        sh->req_to[h] = e;
    }
    w->stream_reads = 0;
    if (wait + ahead > 0) {
        const double got = (double)(wait + ahead);
        const double end =
            d->ops->read(d, at, got, item_offset(w, h * w->S) + from, server, &st->io);
        if (end > st->io_end) st->io_end = end;
        /* (bytes of its own past what the lane had read came in this one) */
        if (wait || cached) ready = end > ready ? end : ready;
        sh->span[h] = sh->first[h], sh->first[h] = end;
        sh->reach[h] = sh->req_lo[h], sh->req_lo[h] = (double)c->reach;
        w->stream_reads = 1;
        *read_bytes += got;
        (*reqs)++;
        if (count) m->storage_reads++, m->storage_read_bytes += got;
    } else if (cached) {
        (*hits)++;
        if (count) m->local_hits++;
        *src = SIM_FROM_CACHE;
        return at;
    }
    *src = w->stream_reads ? SIM_FROM_STORAGE : SIM_FROM_SHARD;
    return ready < at ? at : ready;
}

/* Record shards: a shard is looked up and read whole when its first item
 * comes (from the cache, the tier's device or storage); its items then
 * arrive in turn from that one request. Returns when item x is here, *src
 * where it came from (SIM_FROM_CACHE, _TIER, _STORAGE for the shard's first
 * item and _SHARD for the others); m is the server's counters this epoch,
 * counted when `count` (several servers). */
HOT double fetch_shard(world_t *w, stream_t *st, uint32_t x, int server, double at, double bytes,
                       storage_t *d, server_metrics_t *m, int count, double *hits,
                       double *tier_hits, double *read_bytes, double *reqs, int *src) {
    if (w->paged)
        return stream_paged(w, st, x, server, at, bytes, d, m, count, hits, read_bytes, reqs, src);
    shards_t *sh = &st->shards;
    const uint32_t S = w->S, h = x / S;
    *src = SIM_FROM_SHARD;
    if (x == h * S) {
        cache_t *c = &w->cache[server];
        sh->hit[h] = (unsigned char)c->ops->access(c, h, CACHE_NEVER);
        sh->cum[h] = 0;
        if (sh->hit[h]) {
            sh->first[h] = at;
        } else if (w->tier.sv && shard_from_tier(w, st, x, server, at)) {
            sh->hit[h] = SHARD_FROM_TIER;
        } else if (w->stream) {
            /* read as its items ask (stream_fetch) */
            sh->req_to[h] = sh->req_lo[h] = 0;
            sh->first[h] = sh->span[h] = at;
            *src = SIM_FROM_STORAGE;
        } else {
            /* The read's own transfer, as the kind times it (ranged
             * parts in parallel): the shard's bytes arrive over it (a page
             * cache's: the pages it read of the shard). */
            double sb = c->ops->pages ? (double)c->fetched : w->shard_size[h];
            sh->span[h] = d->ops->service_s(w->s, sb) - d->ops->service_s(w->s, 0);
            const double end = d->ops->read(d, at, sb, item_offset(w, x), server, &st->io);
            if (end > st->io_end) st->io_end = end;
            sh->first[h] = end - sh->span[h];
            *read_bytes += sb;
            *src = SIM_FROM_STORAGE;
            (*reqs)++;
            if (count) {
                m->storage_reads++;
                m->storage_read_bytes += sb;
            }
        }
    }
    if (sh->hit[h] == 1) {
        (*hits)++;
        if (count) m->local_hits++;
        *src = SIM_FROM_CACHE;
        return at;
    }
    if (sh->hit[h] == SHARD_FROM_TIER) {
        (*tier_hits)++;
        if (count) m->tier_hits++;
        *src = SIM_FROM_TIER;
    } else if (w->stream) {
        return stream_fetch(w, st, x, server, at, bytes, d, m, count, read_bytes, reqs);
    }
    sh->cum[h] += bytes;
    double fetched = sh->first[h] + sh->span[h] * sh->cum[h] / w->shard_size[h];
    return fetched < at ? at : fetched;
}

/* A loose item's source (fetch_local's src) added to the batch's sums, with
 * weight wt (the servers a sampled one stands for), and to the server's
 * counters m when `count`. */
HOT void count_local(int src, double bytes, double wt, server_metrics_t *m, int count, double *hits,
                     double *tier_hits, double *read_bytes) {
    if (src == SIM_FROM_CACHE) {
        *hits += wt;
        if (count) m->local_hits++;
    } else if (src == SIM_FROM_TIER) {
        *tier_hits += wt;
        if (count) m->tier_hits++;
    } else {
        *read_bytes += bytes * wt;
        if (count) m->storage_reads++, m->storage_read_bytes += bytes;
    }
}

/* The item's size, cache entry or owner are random accesses into arrays
 * of N entries: start them early enough to hide the misses. at: the
 * batch's order from the current item on, `left` items of it; rank_server
 * NULL on one server; the far and near ranks of the items PREFETCH and
 * PREFETCH_NEAR ahead. A policy with a size_view keeps all of an item's
 * state on that line (cache.h): it is prefetched there, for writing, with
 * no call to the policy (two calls an item cost 4 % of a run). */
HOT void prefetch_ahead(const uint32_t *at, int64_t left, const uint32_t *size,
                        const uint16_t *owner, const cache_t *caches, const uint32_t *view0,
                        int sized, size_t stride, int prefetch, const uint16_t *rank_server,
                        int64_t rank_far, int64_t rank_near) {
    if (PREFETCH < left) {
        uint32_t ahead = at[PREFETCH];
        if (!sized) __builtin_prefetch(&size[ahead]);
        if (owner) __builtin_prefetch(&owner[ahead]);
        if (prefetch) {
            const cache_t *c = &caches[rank_server ? rank_server[rank_far] : 0];
            if (sized) {
                const uint32_t *v = rank_server ? c->size_view : view0;
                if (v) __builtin_prefetch(&v[ahead * stride], 1);
            } else if (c->ops) {
                c->ops->prefetch(c, ahead, 0); /* NULL: a server not sampled */
            }
        }
    }
    if (prefetch && !sized && PREFETCH_NEAR < left) {
        const cache_t *c = &caches[rank_server ? rank_server[rank_near] : 0];
        if (c->ops) c->ops->prefetch(c, at[PREFETCH_NEAR], 1);
    }
}

/* A stream on one server adds a batch's counts to its server's once
 * (integers in doubles: exact sums): reqs the record shards' storage
 * requests, or -1 for loose items, each miss one read of the batch's n. */
static void count_server(server_metrics_t *m, double hits, double tier_hits, double read_bytes,
                         double reqs, double n) {
    m->local_hits += hits;
    m->tier_hits += tier_hits;
    m->storage_reads += reqs >= 0 ? reqs : n - hits - tier_hits;
    m->storage_read_bytes += read_bytes;
}

/* The batch's end: ready once the loader says so (on both timelines), then
 * consumed, or, behind a shuffle buffer of B items, output batch k leaves it
 * once the reads have gone lag = ceil(B / M) slices further (the buffer
 * refilled). */
static void end_batch(world_t *w, stream_t *st, run_metrics_t *out, double issue, double ready,
                      double ready_mem) {
    ready = w->loader->batch_ready(&st->prep, 0, ready);
    ready_mem = w->loader->batch_ready(&st->prep, 1, ready_mem);
    /* The engines decode beside the loader's cores: the batch waits for its
     * last clip's decode too. */
    if (st->eng_ready[0] > ready) ready = st->eng_ready[0];
    if (st->eng_ready[1] > ready_mem) ready_mem = st->eng_ready[1];
    if (w->smp.weight) sample_straggle(w, st, issue, ready);
    int64_t slice = st->batch++;
    if (!st->lag) {
        consume(w, st, out, slice, ready, ready_mem);
        return;
    }
    if (ready > st->buf_ready) st->buf_ready = ready;
    if (ready_mem > st->buf_ready_mem) st->buf_ready_mem = ready_mem;
    int64_t k0 = slice >= st->lag ? slice - st->lag : -1;
    int64_t k1 = slice + 1 == st->nbatches ? st->nbatches - 1 : k0;
    double r = st->buf_ready, rm = st->buf_ready_mem;
    for (int64_t k = k0 < 0 ? 0 : k0; k <= k1 && k >= 0; k++)
        consume(w, st, out, k, r, rm);
}

/* What a batch's items add up to (run_batch's sums, kept in registers). */
typedef struct {
    double ready, ready_mem, hits, read_bytes, prep_busy, tier_hits, prepped, reqs;
} batch_sums_t;

/* Item x, its CPU done at `e` on each timeline, decoded on the earliest
 * free of its rank's GPU's engines (a clip holds one for its session and
 * frames: pipeline_engine_s), in issue order; the batch's last decode kept. */
static __attribute__((noinline)) void engine_decode(const world_t *w, stream_t *st, int r,
                                                    uint32_t x, prep_end_t e) {
    const int E = st->engines;
    const double d = pipeline_engine_s(w->s, st->prep.job, x);
    for (int tl = 0; tl < 2; tl++) {
        double *f = st->eng_free + ((size_t)tl * (size_t)st->G + (size_t)r) * (size_t)E;
        int k = 0;
        for (int i = 1; i < E; i++)
            if (f[i] < f[k]) k = i;
        const double ready = tl ? e.mem : e.t;
        f[k] = (f[k] > ready ? f[k] : ready) + d;
        if (f[k] > st->eng_ready[tl]) st->eng_ready[tl] = f[k];
    }
}

/* Items [lo, hi) of the stream's order, each fetched and prepared. `plain`
 * (a constant where it is inlined): loose items, no partitioned caching, no
 * clairvoyant policy, every server simulated and no observer, the common
 * case, for which the compiler drops those branches; otherwise any. `one`
 * (a constant, plain only): the stream is on one server, whose local_t and
 * sizes are then read once. */
HOT void batch_items(world_t *w, stream_t *st, int64_t lo, int64_t hi, double issue,
                     double issue_mem, batch_sums_t *sum, const int plain, const int one) {
    const int partitioned = !plain && w->owner != NULL;
    const uint64_t clock_next = (uint64_t)(st->epoch + 1) * w->n;
    const int last_epoch = st->epoch + 1 == w->s->epochs;
    prep_end_t (*const item)(prep_t *, int, int, double, double, double) = w->loader->item;
    /* A loader whose workers read synchronously issues each read when its
     * previous item is done. */
    const double *const clock = st->prep.clock;
    const sim_observer_t *const obs = plain ? NULL : w->obs;
    /* Rank of each position in the batch (lo is a multiple of G), kept by
     * counting: a division per item costs more than the rest of the lookup. */
    const int64_t G = st->G;
    int64_t rank = 0, rank_far = PREFETCH % G, rank_near = PREFETCH_NEAR % G;
    const cache_t *caches = &w->cache[st->first_server];
    const int prefetch = !partitioned && !w->S && caches->ops->prefetch;
    /* Loose items in a policy that keeps their sizes beside its state: each
     * item's size and state are then one random cache line, not two. */
    const int sized = prefetch && caches->size_view;
    const size_t stride = sized ? caches->size_stride : 1;
    const uint32_t S = plain ? 0 : w->S;
    /* The loop calls through the kinds' function pointers, so the compiler
     * must assume they change memory: what it reads and adds to per item is
     * kept in locals (same order of additions, same sums). */
    const uint32_t *const perm = st->perm, *const size = w->size;
    const uint16_t *const rank_server = st->rank_server;
    const int ns = one ? 1 : st->ns, first = st->first_server, epochs = (int)w->s->epochs;
    const int shared = w->s->server.storage.shared, read_cpu = w->read_cpu;
    const uint32_t *const view0 = sized ? caches->size_view : NULL;
    const local_t local0 = one ? local_of(w, first) : (local_t){0};
    const double decode_per_byte = st->decode_per_byte, prep_fixed = st->prep_fixed;
    const double slowdown = st->prep.slowdown;
    batch_sums_t b = *sum;
    /* This epoch's per-server counters; a stream on one server adds the
     * batch's counts once at the end (integers in doubles: exact sums). */
    server_metrics_t *const srv_here = &w->srv[first * epochs + st->epoch];
    const double *const weight = plain ? NULL : w->smp.weight;
    for (int64_t idx = lo; idx < hi; idx++) {
        prefetch_ahead(perm + idx, hi - idx, size, partitioned ? w->owner : NULL, caches, view0,
                       sized, stride, prefetch, ns > 1 ? rank_server : NULL, rank_far, rank_near);
        uint32_t x = perm[idx];
        int sv = ns > 1 ? rank_server[rank] : 0;
        const int r = (int)rank;
        const double at = clock ? clock[r] : issue;
        if (++rank == G) rank = 0;
        if (++rank_far == G) rank_far = 0;
        if (++rank_near == G) rank_near = 0;
        int server = first + sv;
        /* Sampled: the servers it stands for (0: not sampled, skipped). */
        const double wt = weight ? weight[server] : 1;
        if (wt == 0) continue;
        storage_t *d = &w->storage[shared ? 0 : server];
        double bytes = sized ? (ns > 1 ? caches[sv].size_view : view0)[x * stride] : size[x];
        double prep = (decode_per_byte * bytes + prep_fixed) * slowdown;
        double fetched;
        int src; /* sim_source_t */
        if (partitioned) {
            fetched = fetch_partitioned(w, st, sv + first, x, at, d, &b.hits, &b.read_bytes, &src);
        } else if (S) {
            fetched = fetch_shard(w, st, x, server, at, bytes, d, &srv_here[sv * epochs], ns > 1,
                                  &b.hits, &b.tier_hits, &b.read_bytes, &b.reqs, &src);
        } else {
            uint64_t next_use = !plain && w->clairvoyant && !last_epoch
                                    ? clock_next + st->pos_next[x]
                                    : CACHE_NEVER;
            const local_t l = one ? local0 : local_of(w, server);
            double moved = bytes;
            fetched = fetch_local(&l, st, x, next_use, at, &moved, wt, &src);
            count_local(src, moved, wt, &srv_here[sv * epochs], ns > 1, &b.hits, &b.tier_hits,
                        &b.read_bytes);
        }
        if (read_cpu) prep += slowdown * read_cpu_s(w, x, bytes, src); /* at the slowdown */
        if (!plain && st->item_dev_ms) prep += st->item_dev_ms(w->s, x) / 1e3 * slowdown;
        prep_end_t end = item(&st->prep, sv, r, fetched, issue_mem, prep);
        if (!plain && st->engines > 0) engine_decode(w, st, r, x, end);
        if (end.t > b.ready) b.ready = end.t;
        if (end.mem > b.ready_mem) b.ready_mem = end.mem;
        prep *= st->prep.dilation; /* the seconds it held its core */
        b.prep_busy += prep * wt;
        b.prepped += wt;
        if (weight) {
            w->lat[server * epochs + st->epoch] += end.t - at;
            if (end.t > w->last_prep[server]) w->last_prep[server] = end.t;
        }
        if (obs) observe_item(w, st, x, sv, r, at, fetched, end.t, prep, src);
    }
    *sum = b;
}

static void run_batch(world_t *w, stream_t *st, run_metrics_t *out) {
    const int64_t lo = st->batch * st->M;
    const int64_t n_used = st->n_used;
    const int64_t hi = lo + st->M < n_used ? lo + st->M : n_used;
    const double issue = next_issue(st, st->started, st->ep_start);
    const double issue_mem = next_issue(st, st->started_mem, st->ep_start_mem);
    const int partitioned = w->owner != NULL;
    begin_batch(w, st, issue, issue_mem);
    batch_sums_t sum = {issue,         issue_mem,     st->hits,    st->read_bytes,
                        st->prep_busy, st->tier_hits, st->prepped, 0};
    const batch_sums_t sum0 = sum;
    st->eng_ready[0] = st->eng_ready[1] = 0;
    if (partitioned || w->S || w->clairvoyant || w->smp.weight || w->obs || st->item_dev_ms ||
        st->engines > 0)
        batch_items(w, st, lo, hi, issue, issue_mem, &sum, 0, 0);
    else if (st->ns == 1)
        batch_items(w, st, lo, hi, issue, issue_mem, &sum, 1, 1);
    else
        batch_items(w, st, lo, hi, issue, issue_mem, &sum, 1, 0);
    /* This epoch's per-server counters: a stream on one server adds the
     * batch's counts once (integers in doubles: exact sums). */
    server_metrics_t *const srv_here = &w->srv[st->first_server * (int)w->s->epochs + st->epoch];
    if (st->ns == 1 && !partitioned)
        count_server(srv_here, sum.hits - sum0.hits, sum.tier_hits - sum0.tier_hits,
                     sum.read_bytes - sum0.read_bytes, w->S ? sum.reqs : -1, (double)(hi - lo));
    st->hits = sum.hits, st->read_bytes = sum.read_bytes, st->prep_busy = sum.prep_busy;
    st->tier_hits = sum.tier_hits;
    if (w->S && !st->buffered)
        st->mix += shards_in(&st->shards, st->perm, (uint64_t)lo, (uint64_t)hi), st->mixed++;
    st->prepped = sum.prepped;
    end_batch(w, st, out, issue, sum.ready, sum.ready_mem);
}

/* Each rank's training process spends dur seconds of CPU beside its GPU's
 * compute from `cpu` on, on the loader's cores where it shares them: the
 * iteration ends when both are done. Counted as the cores' busy time. */
static void train_beside(world_t *w, stream_t *st, double dur, double cpu, double cpu_mem,
                         double *end, double *end_mem) {
    double (*const f)(prep_t *, int, double, double) = w->loader->train_cpu;
    double share = st->prep.train_share;
    double t = f ? f(&st->prep, 0, cpu, dur) : cpu + dur * share;
    double tm = f ? f(&st->prep, 1, cpu_mem, dur) : cpu_mem + dur * share;
    if (t > *end) *end = t;
    if (tm > *end_mem) *end_mem = tm;
    st->prep_busy += dur * share * (double)st->G;
}

/* Output batch k of the stream's epoch: every consumer starts the iteration
 * when the batch is ready and its GPUs are free; the buffer frees when the
 * last consumer has started it. The epoch ends with its last batch
 * (and the loader's teardown after it, where the kind has one). */
/* Instance i's checkpoint writes in the stream's device time: storage's
 * (the stream's retries are its GETs' 503s: a PUT's are left out of them),
 * or the tier's. */
static void checkpoint_io(const world_t *w, stream_t *st, int i, const io_acct_t *io, double end) {
    const int tier = checkpoint_to_tier(w->s, &w->s->jobs[w->t->inst[i].job]);
    io_acct_t *into = tier ? &st->tier_io : &st->io;
    into->writes += io->writes;
    into->xfer_busy += io->xfer_busy, into->slot_busy += io->slot_busy;
    if (!tier && end > st->io_end) st->io_end = end;
}

/* The tiers' devices as one array a burst indexes by server (a server
 * without a tier, unsimulated, has none: its ranks send nothing). */
static int checkpoint_tier_devices(world_t *w) {
    w->ck_tier = calloc((size_t)w->nservers, sizeof *w->ck_tier);
    if (!w->ck_tier) return -1;
    for (int k = 0; k < w->nservers; k++)
        if (simulated(w, k)) w->ck_tier[k] = tier_server(&w->tier, k)->dev;
    return 0;
}

/* Each checkpointing instance's replay on the run's devices (a server
 * sample's unsimulated servers write on devices of their own, not
 * simulated: their ranks send nothing); 0, or -1 without memory. */
static int checkpoint_open(world_t *w) {
    const int n = w->t->ninst;
    int fail = 0;
    w->ck_replay = xcalloc((size_t)n, sizeof *w->ck_replay, &fail);
    w->ck_plan = xcalloc((size_t)n * (size_t)n, sizeof *w->ck_plan, &fail);
    w->ck_who = xcalloc((size_t)n * (size_t)n, sizeof *w->ck_who, &fail);
    w->ck_draining = xcalloc((size_t)n, 1, &fail);
    for (int i = 0; !fail && i < n; i++) {
        if (!(w->ckpt[i] > 0)) continue;
        burst_plan_t *p = &w->ck_plan[(size_t)i * (size_t)n];
        burst_who_t *who = &w->ck_who[(size_t)i * (size_t)n];
        const scenario_t *to = w->s;
        storage_t *dev = w->storage;
        if (checkpoint_to_tier(w->s, &w->s->jobs[w->t->inst[i].job])) {
            if (!w->ck_tier && checkpoint_tier_devices(w)) return -1;
            to = w->tier.s, dev = w->ck_tier;
        }
        checkpoint_plan(to, w->t, i, &p[i], &who[i]);
        /* NULL past the replay's size: the write alone, as before */
        w->ck_replay[i] = burst_replay_open(to, w->t, p, who, dev);
    }
    return fail ? -1 : 0;
}

/* Instance i's checkpoint writes from `at` on the run's devices, the reads
 * of every stream beside them (the T_prep timeline's, every item in memory,
 * take ckpt's time alone): seconds to its last answer. */
static double checkpoint_write(world_t *w, stream_t *st, int i, double at) {
    burst_replay_t *b = w->ck_replay ? w->ck_replay[i] : NULL;
    if (!b) return w->ckpt[i];
    io_acct_t io = {0};
    const double end = burst_replay_run(b, at, &io);
    checkpoint_io(w, st, i, &io, end);
    return end - at;
}

/* Consumer c's asynchronous drain, its writes sent up to `until` (the
 * step's end: the reads of the steps before it were sent already, so the
 * two interleave a step at a time); when the last has answered, the drain's
 * end is when the next checkpoint may start. */
static void checkpoint_drain(world_t *w, stream_t *st, int c, double until) {
    const int i = st->inst[c];
    double end;
    if (!w->ck_draining || !w->ck_draining[i]) return;
    io_acct_t io = {0};
    const int done = burst_replay_until(w->ck_replay[i], until, &io, &end);
    checkpoint_io(w, st, i, &io, end); /* (the requests sent so far end in its device time) */
    if (!done) return;
    w->ck_draining[i] = 0;
    st->ck_free[2 * c] = end;
}

/* A checkpoint after the step's end when the job's count of steps says so:
 * the GPUs wait for its writes on both timelines (the loader goes on
 * preparing into its free buffers). An asynchronous one waits for the last
 * one's drain to end, then only to stage the state; its drain follows in
 * the background. */
static void checkpoint_after(world_t *w, stream_t *st, int c, int64_t k, double *end,
                             double *end_mem) {
    const int i = st->inst[c];
    if (!(w->ckpt[i] > 0)) return;
    const double step = (double)st->epoch * (double)st->nbatches + (double)k;
    const job_t *j = &w->s->jobs[w->t->inst[i].job];
    if (checkpoint_count(j, step, 1) < 1) return;
    if (!checkpoint_async(j)) {
        const double write = checkpoint_write(w, st, i, *end);
        *end += write, *end_mem += w->ckpt[i];
        st->ck_s[c] += write;
        return;
    }
    const double stage = w->ckpt[w->t->ninst + i];
    double *free_at = &st->ck_free[2 * c];
    checkpoint_drain(w, st, c, INFINITY); /* the last one's drain, to its end */
    const double at = fmax(*end, free_at[0]), at_mem = fmax(*end_mem, free_at[1]);
    st->ck_s[c] += at + stage - *end;
    *end = at + stage, *end_mem = at_mem + stage;
    free_at[1] = *end_mem + w->ckpt[i];
    if (!w->ck_replay[i]) {
        free_at[0] = *end + w->ckpt[i];
        return;
    }
    burst_replay_begin(w->ck_replay[i], *end);
    w->ck_draining[i] = 1;
    checkpoint_drain(w, st, c, *end);
}

static void consume(world_t *w, stream_t *st, run_metrics_t *out, int64_t k, double ready,
                    double ready_mem) {
    const int64_t lo = k * st->M;
    const int64_t hi = lo + st->M < (int64_t)st->n_used ? lo + st->M : (int64_t)st->n_used;
    int last = hi == (int64_t)st->n_used;
    double wmax = 0, wmax_mem = 0;
    double (*const iter_cpu)(prep_t *, int, double) = w->loader->iter_cpu;
    st->prep.taken = k; /* the batch being taken: iter_cpu's */
    for (int c = 0; c < st->ninst; c++) {
        double tb = last ? st->t_last[c] : st->t_full[c];
        double start = st->end[c] > ready ? st->end[c] : ready;
        double start_mem = st->end_mem[c] > ready_mem ? st->end_mem[c] : ready_mem;
        /* The training processes' CPU, on the loader's cores where it shares them. */
        double cpu = iter_cpu ? iter_cpu(&st->prep, 0, start) : start + st->prep.iter_cpu_s;
        double cpu_mem =
            iter_cpu ? iter_cpu(&st->prep, 1, start_mem) : start_mem + st->prep.iter_cpu_s;
        double end = cpu + tb, end_mem = cpu_mem + tb;
        if (st->train_s[c] > 0) train_beside(w, st, st->train_s[c], cpu, cpu_mem, &end, &end_mem);
        checkpoint_after(w, st, c, k, &end, &end_mem);
        checkpoint_drain(w, st, c, end);
        if (w->obs) {
            /* A hand-off copy outlasting the GPU (and the process's own CPU)
             * is prep, as in T_gpu: the trace shows it before the compute. */
            const double own = fmax(tb, (st->train_s[c] - st->handoff_s[c]) * st->prep.train_share);
            const double over = st->handoff_s[c] > 0 && end - cpu > own ? end - cpu - own : 0;
            const double at3 = over > 0 ? end_mem - (end - cpu - over) : cpu_mem;
            observe_iteration(w, st, c, k, (double[4]){start, start_mem, cpu + over, at3},
                              end - cpu - over, (double)(hi - lo), last);
        }
        if (last && w->loader->epoch_end) {
            end = w->loader->epoch_end(&st->prep, 0, end);
            end_mem = w->loader->epoch_end(&st->prep, 1, end_mem);
        }
        st->end[c] = end;
        st->end_mem[c] = end_mem;
        /* DS-Analyzer's T_gpu is an iteration on synthetic data already on
         * the GPU: no decode or augment there (they are prep stall), and the
         * training process's own CPU, alone, bounds it too. */
        const double alone = (st->train_s[c] - st->handoff_s[c]) * st->prep.train_share;
        const double gprep = last ? st->g_last[c] : st->g_full[c];
        st->t_gpu[c] += tb - gprep > alone ? tb - gprep : alone;
        st->g_prep[c] += gprep;
        st->consumed[c] += (double)(hi - lo);
        if (k == 0) metrics_at(out, st->inst[c], st->epoch)->first_batch_s = start - st->ep_start;
        if (start > wmax) wmax = start;
        if (start_mem > wmax_mem) wmax_mem = start_mem;
    }
    st->started[k % st->ahead] = wmax;
    st->started_mem[k % st->ahead] = wmax_mem;
    st->prep.taken = k + 1;
    if (last) finish_epoch(w, st, out);
}

/* The bound of a server-sampled run, in percent, the largest over the
 * epochs of: the 95% t-intervals of two per-server figures over their
 * means, the mean time an item took from issue to prepared (what its GPUs
 * wait on) and the bytes read from storage (the load it puts there); and
 * the straggler term (sample_straggle) over the epoch's time. */
static double sample_bound(const world_t *w, const run_metrics_t *out) {
    const int k = w->smp.k, n = w->nservers, epochs = (int)w->s->epochs;
    double *x = malloc(2 * (size_t)k * sizeof *x), most = 0;
    if (!x) return INFINITY; /* no bound to state: none is claimed */
    for (int e = 0; e < epochs; e++) {
        int j = 0;
        for (int v = 0; v < n; v++) {
            if (!simulated(w, v)) continue;
            const server_metrics_t *m = &w->srv[v * epochs + e];
            x[j] = m->accesses > 0 ? w->lat[v * epochs + e] / m->accesses : 0;
            x[k + j++] = m->storage_read_bytes;
        }
        double a = server_sample_bound(x, k, n), b = server_sample_bound(x + k, k, n);
        const double ep = metrics_at(out, 0, e)->epoch_s;
        double c = ep > 0 ? 100 * w->strag[e] / ep : 0;
        if (a > most) most = a;
        if (b > most) most = b;
        if (c > most) most = c;
    }
    free(x);
    return most;
}

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The start-up phase before the first epoch, replayed on devices of its
 * own: it ends before the first epoch's first read, so they see the same
 * requests as the epochs' devices would. */
static int sim_startup(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    startup_t *st = calloc((size_t)t->ninst, sizeof *st);
    scenario_t *skip = malloc(sizeof *skip);
    run_metrics_t r = {0};
    int rc = st && skip ? startup_sim(s, t, st) : EXIT_RUNTIME;
    if (rc == 0) startup_into(out, st);
    if (rc == 0 && startup_resume_scenario(s, skip)) {
        /* the restart's skip, simulated as an epoch of its own */
        rc = metrics_alloc(&r, t->ninst, 1) ? EXIT_RUNTIME : sim_run(skip, t, &r);
        if (rc == 0) startup_resume_into(out, &r);
        metrics_free(&r);
    }
    free(st), free(skip);
    return rc;
}

int sim_run(const scenario_t *s, const topology_t *t, run_metrics_t *out) {
    return sim_run_observed(s, t, out, NULL, NULL);
}

int sim_run_observed(const scenario_t *s, const topology_t *t, run_metrics_t *out,
                     const sim_watch_t *watch, const sim_observer_t *obs) {
    world_t w;
    memset(&w, 0, sizeof w);
    w.s = s;
    w.cache_bytes = memory_cache_bytes(s, t);
    w.t = t;
    w.obs = obs;
    w.ckpt = calloc(2 * (size_t)t->ninst, sizeof *w.ckpt);
    if (w.ckpt) checkpoint_stage(s, t, w.ckpt + t->ninst);
    if (!w.ckpt || checkpoint_sim(s, t, w.ckpt)) {
        free(w.ckpt);
        return EXIT_RUNTIME;
    }
    gsl_rng *master = gsl_rng_alloc(rng_mt19937);
    if (!master) {
        free(w.ckpt);
        return EXIT_RUNTIME;
    }
    gsl_rng_set(master, (unsigned long)s->seed);
    int rc = build(&w, master) || checkpoint_open(&w) ? EXIT_RUNTIME : 0;
    gsl_rng_free(master);
    if (rc) {
        fprintf(stderr, "stallsim: cannot allocate the simulator's state for %lld items\n",
                (long long)s->dataset.items);
        destroy(&w);
        return rc;
    }
    /* The watch counts batches: the clock is read every 256 of them (every
     * one in a run of fewer than 2^16: a small data set's run never reached
     * 256 and stayed silent however long its batches took), and the
     * callback called when half a second has passed. */
    uint64_t batches = 0;
    double all = 0, next_call = watch ? wall_s() + 0.5 : 0;
    for (int k = 0; k < w.nstreams; k++)
        all += (double)w.st[k].nbatches * (double)s->epochs;
    /* Merge the streams by the issue time of their next batch (ties: stream order). */
    for (;;) {
        if (watch && ((++batches & 255) == 0 || all < 65536) && wall_s() >= next_call) {
            next_call = wall_s() + 0.5;
            double done = all > 0 && (double)batches < all ? (double)batches / all : 1;
            if (watch->progress(watch->ctx, done)) {
                destroy(&w);
                return SIM_STOPPED;
            }
        }
        stream_t *pick = NULL;
        double best = INFINITY;
        for (int k = 0; k < w.nstreams; k++) {
            stream_t *st = &w.st[k];
            if (st->done) continue;
            double when = next_issue(st, st->started, st->ep_start);
            if (when < best) best = when, pick = st;
        }
        if (!pick) break;
        run_batch(&w, pick, out);
    }
    for (int k = 0; k < w.nservers * s->epochs; k++)
        w.srv[k].accesses = w.srv[k].local_hits + w.srv[k].remote_hits + w.srv[k].tier_hits +
                            w.srv[k].storage_reads;
    if (out->srv) memcpy(out->srv, w.srv, sizeof *w.srv * (size_t)w.nservers * (size_t)s->epochs);
    out->servers_sampled = w.smp.weight ? w.smp.k : 0;
    out->servers_bound = w.smp.weight ? sample_bound(&w, out) : 0;
    destroy(&w);
    return sim_startup(s, t, out);
}
