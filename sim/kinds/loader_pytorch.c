/* loader_pytorch: torch.utils.data.DataLoader as PyTorch 1.13-2.x runs it
 * (torch/utils/data/dataloader.py, _MultiProcessingDataLoaderIter), one per
 * training process, one training process per GPU (DDP):
 * - num_workers = 0: the training process reads, decodes and transforms each
 *   item of a batch, collates it, then computes; nothing overlaps;
 * - otherwise batch k of an epoch goes to worker k % num_workers. A worker
 *   works through its batches one after another, and through a batch's items
 *   one after another: each read is issued when the previous item is done
 *   (a synchronous read), then the item is decoded and transformed; the
 *   worker then collates the batch into shared memory and queues it
 *   (loader.collate_ms_per_item + loader.share_ms_per_item per item; the
 *   training process collates without sharing under num_workers = 0);
 * - at most prefetch_factor x num_workers batches are outstanding: batch k is
 *   handed to its worker when the training loop takes batch k - that many;
 *   batches are taken in order, so a slow batch holds back the ones behind;
 * - the training process receives each batch (unpickling the shared-memory
 *   handles) and runs its step: loader.transfer_ms_per_item and
 *   loader.step_ms of CPU per iteration, serial with the GPU's compute (as a
 *   training loop around a sleeping GPU, or a step that synchronises);
 * - pin_memory: a thread of the training process copies each batch, in
 *   order, before the loop can take it;
 * - workers are forked one after another when an epoch's iterator is
 *   created (loader.worker_start_ms each, the training process's), unless
 *   persistent_workers keeps them from the first epoch; iter() returns,
 *   and the loop takes its first batch, once the last is forked; each
 *   worker then runs its own start on a core (loader.worker_init_ms)
 *   before its first item, and its first items cost more CPU than they do
 *   once it is warm (loader.worker_warmup_ms, charged with the start
 *   of each worker the epoch gives a batch);
 * - the epoch's last next() shuts the workers down, unless
 *   persistent_workers keeps them, and joins them before it raises
 *   StopIteration: every worker exits at once, each with its exit's CPU on
 *   a core (loader.worker_exit_ms: finalizers, the kernel freeing its
 *   pages), and the next epoch starts when the last is reaped;
 * CPU: every rank's workers, pin-memory threads and training process on a
 * server share the stream's cores there, event by event. Each server has a
 * calendar of its cores (calendar.h) per timeline: an item's prep, a batch's
 * collate and hand-over, a pin copy and each iteration's training-process
 * CPU hold one core for their CPU time, taking what the others left, and
 * a worker waiting for a read (DRAM hit, tier, store, whichever epoch)
 * holds no core. The engine walks batch after batch, so the calendar alone
 * would serve them in that order (worker 0's batch done first, the rest
 * one batch-time apart); the scheduler instead shares the cores among the
 * runnable processes, and more workers than cores finish their batches
 * together (measured: VALIDATION.md, "PyTorch past the cores"). So a
 * worker's item and collate also run no faster than its share of the cores
 * among the workers runnable then (share_steps, ps_end; their starts and
 * warm-ups: spawn_share). The calendar's capacity is the
 * effective cores with every core busy: the cores x loader.core_efficiency
 * (SMT siblings, memory bandwidth, the kernel's work, which the probe
 * measures with one worker per core), or a measured curve's (prep.scaling)
 * or the memory-bandwidth bound's effective cores (server.mem_gbps,
 * prep.mem_mb_per_item) x the efficiency; one process runs at most at the
 * speed it has alone. The model solves the same sharing in closed form for
 * each slice of each epoch (cpu_share below): the slowdown that makes the
 * CPU the processes ask for at their rates fit the capacity. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "kinds.h"
#include "loader.h"
#include "memory.h"

#include "calendar.h"

/* The pytorch loader kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t num_workers;
    int64_t prefetch_factor;
    int persistent_workers;
    int pin_memory;
    int drop_last;
    double collate_ms_per_item;
    double share_ms_per_item;
    double transfer_ms_per_item;
    double pin_ms_per_item;
    double copy_ms_per_mb;    /* a worker's hand-over per MB of the batch, beyond share's */
    double receive_ms_per_mb; /* the training process's per MB received, beyond transfer's */
    double step_ms;
    double receive_wait_ms; /* the training process's wait a batch, beside its CPU */
    double worker_start_ms;
    double worker_init_ms;
    double worker_warmup_ms;        /* a fresh worker's first items' CPU past their steady cost */
    double worker_exit_ms;          /* a worker's CPU to exit when the iterator shuts it down */
    double worker_mem_mb;           /* a worker's private memory before its items (MiB) */
    double worker_mem_mb_per_kitem; /* and its growth per 1000 items it reads */
    double process_mem_mb; /* the training process's own memory, as the probe measured it */
    double core_efficiency;
    char oversub[SCN_STR]; /* "PER_CORE:EFFICIENCY, ..."; "" = none */
} torch_opts_t;
SCN_KIND_OPTS_FITS(torch_opts_t);

static const torch_opts_t *torch_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_LOADER, s->loader.kind);
}

/* A change in the number of runnable workers (share_steps). */
typedef struct step {
    double at, d, q; /* when; the runnable share walked (d) and workers at this batch's (q) */
} step_t;

typedef struct {
    int W, G, ns, persistent;
    int warmed;              /* workers that warm up: those the epoch gives a batch */
    double start_s, init_s;  /* a worker's fork (the iterator's), its own start */
    double warm_s;           /* a fresh worker's warm-up, before its first item */
    double exit_s;           /* a worker's exit at the epoch's end (0: none) */
    double collate_s, pin_s; /* per item of a batch */
    double recv_s;           /* the training process's wait to receive a batch */
    double open[2];          /* when the epoch's iterator is made, per timeline */
    int64_t k;               /* the batch's worker */
    double *wfree;           /* [2][G][W]: when each worker is free */
    double *pin_free;        /* [2][G]: when each rank's pin thread is free */
    double *clk;             /* [2][G]: each rank's batch so far; clk[0..G) is p->clock */
    int *items;              /* [G]: items of the batch on each rank */
    uint16_t *rank_sv;       /* [G]: the server of each rank, as the engine places them */
    int rps;                 /* ranks a server (a server's ranks are in a row) */
    int shares;              /* more workers a server than its cores give: ps_end can bind */
    /* The cores shared among the runnable workers (share_steps, ps_end): */
    double ep_issue[2]; /* when the epoch's first batches are issued, per timeline */
    double *frac;       /* [2][G][W]: the share of its last batch each worker was runnable */
    double *wfrom;      /* [2][G][W]: when each worker's last batch (or its start) began */
    double *b0;         /* [2][G]: when each rank's batch began */
    double *run;        /* [2][G]: its runnable seconds so far (each hold, ready to done) */
    double *ncur;       /* [2][G][2]: runnable processes at each rank's last hold (ps_end) */
    int *ptr;           /* [2][G]: the first of its server's steps after that hold */
    double *n0;         /* [2][ns][2]: the same when the server's batch began */
    int *nsteps;        /* [2][ns]: its steps after that */
    size_t maxsteps;    /* 3 x rps x W a server */
    double *qi;         /* [W]: when each worker's next batch is issued (INFINITY: not known) */
    step_t *steps;      /* [2][ns][maxsteps]: in time order */
    double *scratch;    /* [rps x W]: spawn_share's */
    calendar_t *cpu;    /* [2][ns]: each server's cores on each timeline */
    /* torch_item's: T_prep's calendars (cpu + ns) and clocks (clk + G) */
    calendar_t *cpu_mem;
    double *clk_mem;
} torch_t;

/* The CPU calendars remember 2^CPU_LOG2 buckets (2 x ns of them a stream). */
enum { CPU_LOG2 = 13 };

static double ms(double v) {
    return v / 1e3;
}

/* MB one item of job j hands over: its batch's bytes in shared memory. */
static double item_mb(const scenario_t *s, const job_t *j) {
    return scenario_job_out_item_bytes(s, j) / 1e6;
}

/* Seconds per item to collate a batch, and hand it over from a worker: a
 * fixed part per item and, from a worker, one per MB of the item's bytes
 * (fresh /dev/shm pages faulted and filled: a video clip's float32 frames
 * cost 4x its uint8's), so a figure measured on one item's size carries
 * to another's. */
static double collate_item(const scenario_t *s, const job_t *j) {
    const torch_opts_t *o = torch_opts(s);
    const double c = ms(o->collate_ms_per_item);
    return o->num_workers > 0 ? c + ms(o->share_ms_per_item) + ms(o->copy_ms_per_mb) * item_mb(s, j)
                              : c;
}

/* Seconds of training-process CPU per iteration, alone on a core. */
static double iter_cpu(const scenario_t *s, const job_t *j) {
    const torch_opts_t *o = torch_opts(s);
    double t = ms(o->step_ms);
    if (o->num_workers > 0)
        t += (ms(o->transfer_ms_per_item) + ms(o->receive_ms_per_mb) * item_mb(s, j)) *
             (double)j->batch_per_gpu;
    return t;
}

/* Seconds the training process waits per iteration to receive a batch
 * from a worker, holding no core: under PyTorch's default file_descriptor
 * sharing it fetches each tensor's descriptor from the worker's
 * resource-sharer thread, which waits for the worker's GIL while a
 * pure-Python __getitem__ holds it (VALIDATION.md, "PyTorch past the
 * cores"). Charged where the batch's worker has another batch this epoch
 * (worker_busy): one done with its last holds no GIL. */
static double receive_wait(const scenario_t *s) {
    return torch_opts(s)->num_workers > 0 ? ms(torch_opts(s)->receive_wait_ms) : 0;
}

/* Seconds of CPU a freshly forked worker spends on its first items past
 * what they cost once it is warm (the heap it grows for a batch, the
 * parent's pages it copies on write, cold caches and TLBs), one lump on a
 * core before its first item: a cost per worker start, not per item, so 16
 * workers a core over an epoch of 2 batches each pay it 16 times over the
 * same items. */
static double worker_warm_cpu(const scenario_t *s) {
    return ms(torch_opts(s)->worker_warmup_ms);
}

static double pin_item(const scenario_t *s) {
    return torch_opts(s)->pin_memory ? ms(torch_opts(s)->pin_ms_per_item) : 0;
}

/* A server's `cores` as a measured curve or the memory-bandwidth bound makes them. */
static double effective_cores(const scenario_t *s, double cores) {
    return scenario_prep_cores_shaped(s) ? scenario_prep_cores(s, cores, NULL) : cores;
}

/* Core-seconds per second a server's `cores` give with every core busy,
 * with gps ranks' workers on them. */
static double cpu_capacity(const scenario_t *s, double cores, double gps) {
    double x = cores > 0 ? gps * (double)torch_opts(s)->num_workers / cores : 0;
    return effective_cores(s, cores) * torch_opts(s)->core_efficiency *
           loader_curve_at(torch_opts(s)->oversub, x);
}

/* What the processes of one server ask of its cores in a slice of an epoch:
 * per item, a worker's CPU (c) and its wait for the read (w); per iteration
 * the training process's CPU and the GPUs' compute; gps ranks of W workers;
 * the storage's least seconds per item of the whole stream (floor, G ranks). */
typedef struct {
    double c, w, pin, cpu, gpu, b, W, gps, G, floor;
} demand_t;

/* Core-seconds per second the server's processes use when each CPU second
 * takes sg seconds: a rank's items flow at the slowest of its workers'
 * cycles (W items per sg c + w), its training loop's and the storage's. */
static double cpu_used(const demand_t *d, double sg) {
    double x;
    if (d->W > 0) {
        const double loop = sg * d->cpu + d->gpu; /* 0: no loop yet (first_round_share) */
        double xw = d->W / (sg * d->c + d->w), xg = loop > 0 ? d->b / loop : INFINITY;
        x = xw < xg ? xw : xg;
    } else {
        x = d->b / (sg * (d->b * d->c + d->cpu) + d->b * d->w + d->gpu);
    }
    if (d->floor > 0 && x > 1 / (d->floor * d->G)) x = 1 / (d->floor * d->G);
    return d->gps * x * (d->c + d->pin + d->cpu / d->b);
}

/* The slowdown (>= 1) at which what the processes use fits the capacity:
 * the simulator's calendars share the cores this way, as a fluid. */
static double cpu_share(const demand_t *d, double capacity) {
    if (!(capacity > 0)) return 1;
    if (cpu_used(d, 1) <= capacity) return 1;
    double lo = 1, hi = 2;
    for (int i = 0; i < 64 && cpu_used(d, hi) > capacity; i++)
        lo = hi, hi *= 2;
    for (int i = 0; i < 60 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (cpu_used(d, mid) > capacity)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/* A server's calendar: buckets of about two items' CPU, reaching back
 * over a worker's batch at a few times its cost (the engine walks batch
 * after batch, so a worker's items come that far out of time order). */
static double cpu_bucket_s(const scenario_t *s, const job_t *j) {
    double c = scenario_job_prep_s(s, j, scenario_item_bytes_mean(s)) + collate_item(s, j);
    double wait = scenario_storage(s)->service_s(s, scenario_item_bytes_mean(s));
    double reach = 4 * (double)j->batch_per_gpu * (c + wait);
    if (reach < CALENDAR_REACH_S) reach = CALENDAR_REACH_S;
    double dt = 2 * c, least = reach / (double)(1 << CPU_LOG2);
    return dt > least ? dt : least;
}

/* The share of a batch a worker is runnable before its first: a mean
 * item's CPU at the share of the cap that the server's workers runnable
 * that much leave it, over that and its read (all-CPU on T_prep). */
static double first_frac(const prep_t *p, double cap) {
    const scenario_t *s = p->s;
    const double c =
        scenario_job_prep_s(s, p->job, scenario_item_bytes_mean(s)) + collate_item(s, p->job);
    const double w = scenario_storage(s)->service_s(s, scenario_item_bytes_mean(s));
    const double n =
        (double)torch_opts(s)->num_workers * (p->ranks_per_server > 0 ? p->ranks_per_server : 1);
    double f = c > 0 ? c / (c + w) : 1;
    /* f rises with the slowdown it makes: to its fixed point */
    for (int i = 0; i < 64 && c > 0; i++) {
        const double sg = n * f > cap ? n * f / cap : 1;
        f = sg * c / (sg * c + w);
    }
    return f;
}

static int torch_init(prep_t *p) {
    const scenario_t *s = p->s;
    torch_t *t = calloc(1, sizeof *t);
    p->state = t;
    if (!t) return -1;
    t->W = (int)torch_opts(s)->num_workers;
    t->G = p->ranks;
    t->ns = p->ns;
    t->persistent = torch_opts(s)->persistent_workers;
    /* The calendars share the cores: an item's CPU is its own time. */
    p->slowdown = 1;
    p->cpu_slots = effective_cores(s, p->cores);
    p->iter_cpu_s = iter_cpu(s, p->job);
    t->recv_s = receive_wait(s);
    t->start_s = ms(torch_opts(s)->worker_start_ms);
    t->init_s = ms(torch_opts(s)->worker_init_ms);
    t->warm_s = worker_warm_cpu(s);
    /* Record shards read per worker hand batches out by the shards' turns
     * (p->batch_worker): every worker is taken to have one. */
    t->warmed = p->batch_worker || p->batches <= 0 || p->batches >= t->W ? t->W : (int)p->batches;
    t->exit_s = t->W > 0 && !t->persistent ? ms(torch_opts(s)->worker_exit_ms) : 0;
    t->collate_s = collate_item(s, p->job);
    t->pin_s = pin_item(s);
    size_t G = (size_t)t->G, W = t->W > 0 ? (size_t)t->W : 1, C = 2 * (size_t)p->ns;
    t->wfree = calloc(2 * G * W, sizeof *t->wfree);
    t->pin_free = calloc(2 * G, sizeof *t->pin_free);
    t->clk = calloc(2 * G, sizeof *t->clk);
    t->items = calloc(G, sizeof *t->items);
    t->rank_sv = calloc(G, sizeof *t->rank_sv);
    t->frac = malloc(2 * G * W * sizeof *t->frac);
    t->wfrom = calloc(2 * G * W, sizeof *t->wfrom);
    t->b0 = calloc(2 * G, sizeof *t->b0);
    t->run = calloc(2 * G, sizeof *t->run);
    t->ncur = calloc(4 * G, sizeof *t->ncur);
    t->ptr = calloc(2 * G, sizeof *t->ptr);
    t->n0 = calloc(2 * C, sizeof *t->n0);
    t->nsteps = calloc(C, sizeof *t->nsteps);
    t->qi = calloc(W, sizeof *t->qi);
    t->rps = p->ranks_per_server > 0 ? p->ranks_per_server : 1;
    t->maxsteps = 3 * (size_t)t->rps * W;
    t->steps = malloc(C * t->maxsteps * sizeof *t->steps);
    t->scratch = malloc((size_t)t->rps * W * sizeof *t->scratch);
    t->cpu = calloc(C, sizeof *t->cpu);
    double cap = cpu_capacity(s, p->cores, t->rps), dt = cpu_bucket_s(s, p->job);
    if (!t->wfree || !t->pin_free || !t->clk || !t->items || !t->rank_sv || !t->cpu || !t->frac ||
        !t->wfrom || !t->b0 || !t->run || !t->ncur || !t->ptr || !t->n0 || !t->nsteps || !t->qi ||
        !t->steps || !t->scratch)
        return -1;
    const double f0 = first_frac(p, cap);
    t->shares = t->W > 0 && (double)t->rps * t->W > cap;
    for (size_t i = 0; i < 2 * G * W; i++)
        t->frac[i] = i < G * W ? f0 : 1;
    for (int r = 0; r < t->G; r++) /* as the engine places ranks: a server's in a row */
        t->rank_sv[r] = (uint16_t)(r / t->rps);
    for (size_t i = 0; i < C; i++)
        if (calendar_init(&t->cpu[i], dt, cap, CPU_LOG2) != 0) return -1;
    p->clock = t->clk;
    t->cpu_mem = t->cpu + p->ns;
    t->clk_mem = t->clk + G;
    return 0;
}

/* One core of server sv on timeline tl for dur seconds from t on: when done. */
static inline double on_core(torch_t *t, int tl, int sv, double at, double dur) {
    double end;
    calendar_hold(&t->cpu[tl * t->ns + sv], at, dur, &end);
    return end;
}

/* An epoch that forks its workers: the iterator forks them one after
 * another and returns when the last is forked (the training loop takes no
 * batch before); each worker runs its own start (imports, the Dataset's
 * pages touched) on a core once forked, then waits: the iterator puts the
 * first indices in the workers' queues only once the last is forked
 * (_MultiProcessingDataLoaderIter.__init__ calls _reset after the forks),
 * so no item starts before. Its warm-up then comes before its first item.
 * Every worker starts, whether the epoch has a batch for it or not; only
 * those it has one for warm up (workers take batches in turn: 32 workers
 * over 19 batches, 13 had paid about 40 ms of CPU each for nothing, twice
 * an epoch on 2 cores). */
static int step_cmp(const void *a, const void *b) {
    const double x = ((const step_t *)a)->at, y = ((const step_t *)b)->at;
    return (x > y) - (x < y);
}

/* n jobs of `work` seconds each, sorted by start (j[i].at), sharing cap
 * cores equally, at most one each: their ends in end[], in that order
 * (equal jobs end in the order they start; end[] holds each one's service
 * so far until it ends). */
static void ps_equal(const step_t *j, int n, double work, double cap, double *end) {
    double now = n > 0 ? j[0].at : 0, v = 0; /* v: the service each active job got */
    for (int ia = 0, id = 0; id < n;) {
        while (ia < n && j[ia].at <= now)
            end[ia++] = v; /* its service so far when it came */
        const int na = ia - id;
        if (na == 0) {
            now = j[ia].at;
            continue;
        }
        const double r = na > cap ? cap / na : 1, arr = ia < n ? j[ia].at : INFINITY;
        const double dep = now + (end[id] + work - v) / r;
        if (dep <= arr) {
            v = end[id] + work;
            now = dep;
            end[id++] = now;
        } else {
            v += (arr - now) * r;
            now = arr;
        }
    }
}

/* Server sv's workers' starts (work: worker_init_ms) or warm-ups (each
 * worker given a batch), of the first nk workers of each rank from when
 * each may start it (wfree, then its end), at their share of the cores, as
 * the scheduler runs them: 32 workers' on 2 cores all end together, where
 * the calendar alone served them one after another and let the first start
 * its batch at 1/16 of the time. */
static void spawn_share(torch_t *t, int tl, int sv, double work, int nk) {
    const int G = t->G, W = t->W, q0 = sv * t->rps, q1 = q0 + t->rps < G ? q0 + t->rps : G;
    step_t *const j = t->steps + ((size_t)tl * t->ns + sv) * t->maxsteps;
    double *const end = t->scratch;
    int n = 0;
    for (int q = q0; q < q1; q++)
        for (int k = 0; k < nk; k++)
            j[n++] =
                (step_t){t->wfree[((size_t)tl * G + q) * W + k], (double)((q - q0) * W + k), 0};
    qsort(j, (size_t)n, sizeof *j, step_cmp);
    ps_equal(j, n, work, t->cpu[tl * t->ns + sv].rate, end);
    for (int i = 0; i < n; i++) {
        const int x = (int)j[i].d;
        double *wf = &t->wfree[((size_t)tl * G + q0 + x / W) * W + x % W];
        const double fcfs = on_core(t, tl, sv, *wf, work);
        *wf = fcfs > end[i] ? fcfs : end[i];
    }
}

static void torch_spawn(torch_t *t, const double issue[2]) {
    const int G = t->G, W = t->W;
    for (int tl = 0; tl < 2; tl++) {
        t->open[tl] = issue[tl] + t->start_s * (double)W;
        for (int r = 0; r < G; r++)
            for (int k = 0; k < W; k++) {
                double *wf = &t->wfree[((size_t)tl * G + r) * W + k];
                *wf = issue[tl] + t->start_s * (double)(k + 1);
                t->wfrom[((size_t)tl * G + r) * W + k] = *wf; /* forked: runnable from here */
            }
        for (int sv = 0; sv < t->ns && sv * t->rps < G; sv++) {
            if (t->init_s > 0) spawn_share(t, tl, sv, t->init_s, W);
            for (int r = sv * t->rps; r < G && r < (sv + 1) * t->rps; r++)
                for (int k = 0; k < W; k++) {
                    double *wf = &t->wfree[((size_t)tl * G + r) * W + k];
                    if (*wf < t->open[tl]) *wf = t->open[tl];
                }
            if (t->warm_s > 0) spawn_share(t, tl, sv, t->warm_s, t->warmed);
        }
    }
}

/* When each worker's next batch is issued, for the batches after b the
 * epoch has issued by the last take the engine knows (t->qi; INFINITY:
 * none known, or none left). */
static void queued_issue(torch_t *t, const prep_t *p, int tl, int64_t b) {
    const int W = t->W;
    for (int k = 0; k < W; k++)
        t->qi[k] = INFINITY;
    const int64_t A = p->ahead, end = b + A < p->batches ? b + A : p->batches;
    for (int64_t j = b + 1; j < end; j++) {
        double at = t->ep_issue[tl];
        if (j >= A) {
            if (p->taken > b || j - A >= p->taken) break;
            at = p->started[tl][j % A];
        }
        const int k = p->batch_worker ? (int)p->batch_worker[j] : (int)(j % W);
        if (at < t->qi[k]) t->qi[k] = at;
    }
}

/* The runnable processes of server sv on timeline tl from its batch's
 * start b0 on, as n0 and the steps after it. The scheduler gives every
 * runnable process an equal share of the cores (pinned to one core, 8 warm
 * workers' batches all came out together: VALIDATION.md, "PyTorch past the
 * cores"). Runnable: each worker of the server's ranks from its last
 * batch's start (or its fork) to that batch's end, for the share of that
 * batch it was runnable (a worker waiting for a read holds no core), and
 * each on a batch not walked yet (this one, on every rank, and any issued
 * by then), at the share ps_end takes for it. W workers runnable a share f
 * of the time are W x f at once on average: counting the batch's own as
 * one (it is, while it holds a core) stretched 8 workers on 2 cores that
 * each wait 2 ms for a 2 ms item 7 % too long. */
static void share_steps(torch_t *t, int tl, int sv, double b0) {
    const int G = t->G, W = t->W, q0 = sv * t->rps, q1 = q0 + t->rps < G ? q0 + t->rps : G;
    step_t *const st = t->steps + ((size_t)tl * t->ns + sv) * t->maxsteps;
    double n = 0, nq = 0; /* walked shares; workers on a batch not walked yet */
    int m = 0;
    for (int q = q0; q < q1; q++) {
        const size_t row = ((size_t)tl * G + q) * W;
        for (int k = 0; k < W; k++) {
            const double f = t->frac[row + k], wf = t->wfree[row + k], qi = t->qi[k];
            const double from = t->wfrom[row + k], back = qi > wf ? qi : wf;
            if (k == t->k) { /* this batch's worker on each rank, at this batch's share */
                nq += 1;
                continue;
            }
            if (from > b0 && from < wf) { /* forked after b0 */
                st[m++] = (step_t){from, f, 0};
                n -= f;
            }
            if (wf > b0) { /* on its last batch, then on to the next or idle */
                n += f;
                if (back > wf) st[m++] = (step_t){wf, -f, 0};
                if (back > wf && back < INFINITY)
                    st[m++] = (step_t){back, 0, 1};
                else if (back == wf)
                    st[m++] = (step_t){wf, -f, 1};
            } else if (back <= b0) {
                nq += 1;
            } else if (back < INFINITY) {
                st[m++] = (step_t){back, 0, 1};
            }
        }
    }
    qsort(st, (size_t)m, sizeof *st, step_cmp);
    t->n0[2 * (tl * t->ns + sv)] = n;
    t->n0[2 * (tl * t->ns + sv) + 1] = nq;
    t->nsteps[tl * t->ns + sv] = m;
}

/* When a hold of dur seconds of CPU from `at` on ends for rank r's worker
 * at its share: cap / runnable a second, at most 1. A rank's holds come in
 * time order, so each starts from where its last left the steps. The
 * engine walks batch after batch, so the batches walked later cannot take
 * their share back from this one's holds: the share stretches the holds,
 * and the calendar still bounds the whole. */
static inline double ps_end(torch_t *t, int tl, int r, double at, double dur) {
    const int sv = t->rank_sv[r], m = t->nsteps[tl * t->ns + sv];
    const step_t *const st = t->steps + ((size_t)tl * t->ns + sv) * t->maxsteps;
    const double cap = t->cpu[tl * t->ns + sv].rate;
    const size_t ri = (size_t)tl * t->G + r;
    /* A batch not walked yet is taken at this one's share so far, this
     * hold's CPU in (the last batch's would be the last epoch's for the
     * first: its misses' waits, where this one hits). */
    const double span = at - t->b0[ri] + dur, run = t->run[ri] + dur;
    const double fq = span > 0 && run < span ? run / span : 1;
    int i = t->ptr[ri];
    double n = t->ncur[2 * ri], nq = t->ncur[2 * ri + 1];
    while (i < m && st[i].at <= at)
        n += st[i].d, nq += st[i++].q;
    t->ptr[ri] = i, t->ncur[2 * ri] = n, t->ncur[2 * ri + 1] = nq;
    if (i == m && n + nq * fq <= cap) return at + dur;
    for (double x = at, left = dur;; i++) {
        const double all = n + nq * fq, rate = all > cap ? cap / all : 1;
        const double until = i < m ? st[i].at : INFINITY;
        if (x + left / rate <= until) return x + left / rate;
        left -= (until - x) * rate;
        x = until;
        n += st[i].d, nq += st[i].q;
    }
}

/* Each rank's batch: its start, and the server's runnable processes. */
static void share_begin(prep_t *p, int64_t batch) {
    torch_t *t = p->state;
    const int G = t->G;
    for (int tl = 0; tl < 2; tl++) {
        queued_issue(t, p, tl, batch);
        for (int sv = 0; sv < t->ns && sv * t->rps < G; sv++)
            share_steps(t, tl, sv, t->clk[tl * G + sv * t->rps]);
        for (int r = 0; r < G; r++) {
            t->b0[tl * G + r] = t->clk[tl * G + r];
            t->run[tl * G + r] = 0;
            t->ptr[tl * G + r] = 0;
            t->ncur[2 * (tl * G + r)] = t->n0[2 * (tl * t->ns + t->rank_sv[r])];
            t->ncur[2 * (tl * G + r) + 1] = t->n0[2 * (tl * t->ns + t->rank_sv[r]) + 1];
        }
    }
}

static void torch_begin_batch(prep_t *p, int epoch, int64_t batch, const double issue[2],
                              const double idle[2]) {
    torch_t *t = p->state;
    int G = t->G, W = t->W;
    t->k = W > 0 ? (p->batch_worker ? (int64_t)p->batch_worker[batch] : batch % W) : 0;
    if (batch == 0) {
        t->open[0] = t->open[1] = 0;
        t->ep_issue[0] = issue[0], t->ep_issue[1] = issue[1];
        if (W > 0 && (epoch == 0 || !t->persistent)) torch_spawn(t, issue);
    }
    for (int tl = 0; tl < 2; tl++) {
        for (int r = 0; r < G; r++) {
            double at = issue[tl];
            if (W == 0) {
                if (idle[tl] > at) at = idle[tl];
            } else {
                double wf = t->wfree[((size_t)tl * G + r) * W + t->k];
                if (wf > at) at = wf;
            }
            t->clk[tl * G + r] = at;
        }
    }
    memset(t->items, 0, sizeof *t->items * (size_t)G);
    if (t->shares) share_begin(p, batch);
}

static prep_end_t torch_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                             double dur) {
    (void)ready_mem;
    torch_t *t = p->state;
    double *const clk_mem = t->clk_mem;
    /* ready: the read issued at clk[rank] is done; the worker then needs a
     * core. Each item holds one on both timelines, in the engine's order
     * (ranks in turn): a rank's batch held at once on T_prep took the cores
     * ahead of the other ranks' and made T_prep slower than T. */
    prep_end_t e;
    const double at_mem = clk_mem[rank];
    calendar_hold(&t->cpu[sv], ready, dur, &e.t);
    calendar_hold(&t->cpu_mem[sv], at_mem, dur, &e.mem);
    if (t->shares) { /* more workers than cores: no faster than a worker's share */
        const double ps = ps_end(t, 0, rank, ready, dur);
        const double ps_mem = ps_end(t, 1, rank, at_mem, dur);
        if (ps > e.t) e.t = ps;
        if (ps_mem > e.mem) e.mem = ps_mem;
        /* Runnable at its share, not while the calendar's order kept it
         * waiting: counting that too, 4 workers that just fill 2 cores (2
         * ms reads, 2 ms items) read more runnable workers, stretched
         * their items and left the cores idle (3.28 s for 3.2). */
        t->run[rank] += ps - ready;
        t->run[t->G + rank] += ps_mem - at_mem;
    }
    t->clk[rank] = e.t;
    clk_mem[rank] = e.mem;
    t->items[rank]++;
    return e;
}

/* Rank r's worker is free at done, and (where the workers share the
 * cores) was runnable for that share of its batch: its holds' shares,
 * ps_end's, from their starts. */
static void share_end(torch_t *t, int tl, int r, double done) {
    const size_t i = ((size_t)tl * t->G + r) * t->W + t->k;
    t->wfree[i] = done;
    if (!t->shares) return; /* b0 and run are share_begin's and torch_item's */
    const double span = done - t->b0[tl * t->G + r], run = t->run[tl * t->G + r];
    t->wfrom[i] = t->b0[tl * t->G + r];
    t->frac[i] = span > 0 && run < span ? run / span : 1;
}

static double torch_batch_ready(prep_t *p, int tl, double last_item) {
    (void)last_item;
    torch_t *t = p->state;
    int G = t->G, W = t->W;
    double ready = 0;
    for (int r = 0; r < G; r++) {
        int sv = t->rank_sv[r];
        double done = t->clk[tl * G + r];
        double cpu = t->collate_s * t->items[r];
        if (cpu > 0) {
            const double from = done, ps = t->shares ? ps_end(t, tl, r, from, cpu) : 0;
            done = on_core(t, tl, sv, from, cpu);
            if (ps > done) done = ps;
            t->run[tl * G + r] += ps - from;
        }
        if (W > 0) share_end(t, tl, r, done);
        if (t->pin_s > 0) {
            double *pf = &t->pin_free[tl * G + r];
            done = on_core(t, tl, sv, done > *pf ? done : *pf, t->pin_s * t->items[r]);
            *pf = done;
        }
        if (done > ready) ready = done;
    }
    return ready > t->open[tl] ? ready : t->open[tl];
}

/* Every rank's training process takes its step's CPU on its server's cores
 * from `start` on; the iteration's compute starts when the last is done. */
/* Whether the worker of batch k has a batch after it this epoch: the
 * loop's wait for a batch's descriptors is for its worker's GIL
 * (receive_wait), which a worker done with its last batch does not hold,
 * as none does while the loop drains a round that came out together (16
 * ImageFolder workers on 2 cores: the last round drained at 17 ms a batch,
 * 10 of them the GPU's, where the probe's 8.7 ms wait would make 24). A
 * worker between batches is taken as busy: without the wait there the text
 * Dataset's rows at 2, 4 and 8 workers on 2 cores went from -3.2, -9.6 and
 * -10.1 % to -9.3, -14.2 and -12.5 % (run 16's probes). */
static int worker_busy(const torch_t *t, const prep_t *p, int64_t k) {
    return t->W > 0 && k + t->W < p->batches;
}

static double torch_iter_cpu(prep_t *p, int tl, double start) {
    torch_t *t = p->state;
    (void)tl;
    if (worker_busy(t, p, p->taken)) start += t->recv_s;
    if (p->iter_cpu_s <= 0) return start;
    double end = start;
    for (int r = 0; r < t->G; r++) {
        double e = on_core(t, tl, t->rank_sv[r], start, p->iter_cpu_s);
        if (e > end) end = e;
    }
    return end;
}

/* The epoch's last next() raises StopIteration once the iterator has shut
 * its workers down (persistent_workers keeps them): every rank's workers
 * exit at once, each taking its exit's CPU on its server's cores, and the
 * iterator joins them all before the loop goes on to the next epoch. */
static double torch_epoch_end(prep_t *p, int tl, double end) {
    torch_t *t = p->state;
    if (t->exit_s <= 0) return end;
    double done = end;
    for (int r = 0; r < t->G; r++)
        for (int k = 0; k < t->W; k++) {
            double e = on_core(t, tl, t->rank_sv[r], end, t->exit_s);
            if (e > done) done = e;
        }
    return done;
}

static void torch_destroy(prep_t *p) {
    torch_t *t = p->state;
    if (t) {
        for (int i = 0; t->cpu && i < 2 * t->ns; i++)
            calendar_destroy(&t->cpu[i]);
        free(t->wfree), free(t->pin_free), free(t->clk), free(t->items), free(t->rank_sv);
        free(t->frac), free(t->wfrom), free(t->b0), free(t->run), free(t->qi);
        free(t->ncur), free(t->ptr), free(t->n0), free(t->nsteps), free(t->steps);
        free(t->scratch);
        free(t->cpu);
    }
    free(t);
    p->state = NULL;
    p->clock = NULL;
}

static int torch_check(const scenario_t *s) {
    int bad = 0;
    const int train_row = schema_find(SCOPE_JOB, "train_cpu_ms");
    for (int j = 0; j < s->njobs; j++)
        if (s->jobs[j].train_cpu_ms > 0) {
            diag_error(s->jobs[j].origin[train_row],
                       "jobs.%d.train_cpu_ms: the pytorch kind takes the training process's CPU "
                       "from the probe's loader.torch.step_ms (and transfer_ms_per_item): leave "
                       "it out",
                       j);
            bad = 1;
        }
    if (s->loader.prep == PREP_COORDINATED) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "loader.prep")],
                   "loader.prep: coordinated is CoorDL's shared loader; loader.kind: pytorch has "
                   "one DataLoader per training process (use partitioned)");
        bad = 1;
    }
    if (s->loader.dist_cache == DIST_SHARDED) {
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "loader.dist_cache")],
                   "loader.dist_cache: partitioned is CoorDL's; loader.kind: pytorch reads through "
                   "each server's own cache (use local)");
        bad = 1;
    }
    /* The Huffman share on the CPU and the rest on the training GPU, with
     * prefetch_batches decoded batches staged there, is DALI's mixed decoder:
     * a DataLoader's forked workers cannot use CUDA, and a decode in the
     * training process is not what this kind replays. */
    if (s->prep.decode == DECODE_GPU) {
        diag_error(
            s->origin[schema_find(SCOPE_SCENARIO, "prep.decode")],
            "prep.decode: gpu is DALI's mixed decoder (loader.kind: dali or pool); loader.kind: "
            "pytorch decodes in its workers on the CPU (use prep.decode: cpu)");
        bad = 1;
    }
    bad |= loader_curve_check(s, "loader.oversub", torch_opts(s)->oversub, "worker processes");
    int pf = schema_find(SCOPE_JOB, "prefetch_batches");
    for (int i = 0; i < s->njobs; i++) {
        if (!s->jobs[i].origin[pf].file) continue;
        diag_error(s->jobs[i].origin[pf],
                   "jobs.%d.prefetch_batches is the pool loader's window; loader.kind: pytorch "
                   "keeps loader.prefetch_factor x loader.num_workers batches outstanding",
                   i);
        bad = 1;
    }
    if (torch_opts(s)->drop_last) {
        for (int i = 0; i < s->njobs; i++) {
            const job_t *j = &s->jobs[i];
            if (s->dataset.items < j->gpus * j->batch_per_gpu) {
                diag_error(s->origin[schema_find(SCOPE_SCENARIO, "loader.drop_last")],
                           "loader.drop_last: job '%s' would train on nothing: its batch of %lld "
                           "items (gpus x batch_per_gpu) is larger than dataset.items = %lld",
                           j->name, (long long)(j->gpus * j->batch_per_gpu),
                           (long long)s->dataset.items);
                bad = 1;
            }
        }
    }
    return bad ? EXIT_INPUT : 0;
}

static int64_t torch_staged(const scenario_t *s, const job_t *j) {
    (void)j;
    int64_t w = torch_opts(s)->num_workers;
    return w > 0 ? w * torch_opts(s)->prefetch_factor : 1;
}

static int64_t torch_epoch_items(const scenario_t *s, int64_t n, int64_t m) {
    return torch_opts(s)->drop_last ? n / m * m : n;
}

static double torch_items_s(double cores, double item_s) {
    return item_s > 0 ? cores / item_s : INFINITY;
}

/* The model's ranks on a server (at least one). */
static int model_gps(const loader_model_t *m) {
    const int gps = (int)(m->job->gpus / m->ns);
    return gps > 0 ? gps : 1;
}

/* What one server's processes ask of its cores in slice `at` of the epoch
 * on timeline tl with W workers a rank busy. */
static demand_t slice_demand(const loader_model_t *m, int tl, int at, double W) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    return (demand_t){
        .c = m->prep_s + collate_item(s, j),
        .w = tl == 0 ? m->wait_s[at] : 0,
        .pin = pin_item(s),
        .cpu = iter_cpu(s, j),
        .gpu = m->t_batch + receive_wait(s), /* the loop's time off the cores */
        .b = (double)j->batch_per_gpu,
        .W = W,
        .gps = model_gps(m),
        .G = (double)j->gpus,
        .floor = fmax(tl == 0 ? m->floor_s[at] : 0, m->engine_s),
    };
}

/* The slowdown in slice `at` of the epoch on timeline tl with W workers a
 * rank busy: the sharing of the server's cores at that slice's waits. */
static double share_at(const loader_model_t *m, int tl, int at, double W) {
    const demand_t d = slice_demand(m, tl, at, W);
    return cpu_share(&d, cpu_capacity(m->s, m->cores, d.gps));
}

/* The slowdown of an epoch's first round on timeline tl, slice `at`: its W
 * workers a rank each take their first batch at once, before the loop has
 * one to keep the GPU busy, so the GPU does not thin them out (4 ranks of 8
 * workers on 2 cores, GPU-bound: their first batches at 1/16 of a core
 * each, as the simulator's share_steps). */
static double first_round_share(const loader_model_t *m, int tl, int at, double W) {
    demand_t d = slice_demand(m, tl, at, W);
    d.cpu = 0, d.gpu = 0; /* the loop waits for its first batch */
    return cpu_share(&d, cpu_capacity(m->s, m->cores, d.gps));
}

/* Seconds from the last iteration's end until the iterator has joined its
 * workers: every rank's W workers on a server exit at once, each with its
 * exit's CPU, the cores shared as a fluid (torch_epoch_end's calendar). */
static double exit_wall(const loader_model_t *m) {
    const scenario_t *s = m->s;
    const double W = (double)torch_opts(s)->num_workers, x = ms(torch_opts(s)->worker_exit_ms);
    if (W <= 0 || torch_opts(s)->persistent_workers || x <= 0) return 0;
    const int gps = model_gps(m);
    const double all = gps * W * x / cpu_capacity(s, m->cores, gps);
    return all > x ? all : x;
}

/* The slowdown of the training loops' CPU once every worker is done: the
 * server's ranks' loops alone on its cores (no item, no read). */
static double loop_alone(const loader_model_t *m) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    demand_t d = {
        .cpu = iter_cpu(s, j),
        .gpu = m->t_batch,
        .b = (double)j->batch_per_gpu,
        .gps = model_gps(m),
        .G = (double)j->gpus,
    };
    return cpu_share(&d, cpu_capacity(s, m->cores, d.gps));
}

/* The epoch's end once the loop drains the batches made after the last
 * worker finished, from the pass's own end: those iterations ran with
 * the workers' share of the cores, but no worker is busy then, and the
 * loop has the cores to itself (the simulator's calendar gives it them).
 * The last min(P, nb) iterations' starts are still in the ring `go`;
 * `last_done` is when the last batch was made. Without it, 32 workers on
 * one core drained their last round 8 batches at 33 x the loop's CPU, and
 * a GPU twice as fast made the model's epoch 5.7 % longer (semfuzz seed
 * 31). */
static double drain_end(const loader_model_t *m, const double *go, int64_t P, int64_t nb,
                        double last_done, double end) {
    int64_t k0 = nb;
    for (int64_t k = nb - 1; k >= 0 && k >= nb - P && go[k % P] >= last_done; k--)
        k0 = k;
    if (k0 == nb) return end;
    /* (no wait for a worker's GIL: every worker is done) */
    const double step = iter_cpu(m->s, m->job) * loop_alone(m);
    double e = go[k0 % P];
    for (int64_t k = k0; k < nb; k++)
        e += step + (k == nb - 1 ? m->t_last : m->t_batch);
    return e < end ? e : end;
}

/* The simulator's batch pipeline at the mean costs, batch by batch, each
 * CPU second taking its slice's share of the cores. */
static void torch_model_epoch(const loader_model_t *m, double *epoch_s, double *t_prep_s) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    const int W = (int)torch_opts(s)->num_workers;
    const int64_t P = torch_staged(s, j);
    const double b = (double)j->batch_per_gpu, M = b * (double)j->gpus;
    const double cpu = iter_cpu(s, j), start = ms(torch_opts(s)->worker_start_ms),
                 init = ms(torch_opts(s)->worker_init_ms), warm = worker_warm_cpu(s);
    const double collate = collate_item(s, j), pin = pin_item(s), recv = receive_wait(s);
    const int drop = torch_opts(s)->drop_last;
    const int64_t nb = drop ? (int64_t)floor(m->items / M) : (int64_t)ceil(m->items / M);
    const int spawn = W > 0 && (m->epoch == 0 || !torch_opts(s)->persistent_workers);
    const int gps = model_gps(m);
    /* a worker's own start and warm-up CPU over the cores, for each of a
     * server's ranks */
    const double per_cpu = gps / cpu_capacity(s, m->cores, gps);
    const double warm_all = warm * per_cpu, init_all = init * per_cpu;
    double *wfree = calloc((size_t)(W > 0 ? W : 1), sizeof *wfree);
    double *started = calloc((size_t)P, sizeof *started);
    /* Each slice's share of the cores on each timeline (sg[tl * steps + at]);
     * the last round of batches has only its own workers busy. */
    double *sg = malloc(2 * (size_t)m->steps * sizeof *sg);
    for (int i = 0; sg && i < 2 * m->steps; i++)
        sg[i] = share_at(m, i / m->steps, i % m->steps, W);
    const int64_t last_round = W > 0 ? (nb - 1) / W * W : nb;
    const double tail_workers = (double)(nb - last_round);
    for (int tl = 0; tl < 2; tl++) {
        double end = 0, pin_free = 0, io_free = 0, last_done = 0;
        /* The iterator forks every worker, and only then hands out
         * indices; each worker's own start takes the first slice's share
         * of a core, and its warm-up too where the epoch gives it a batch
         * (nb < W: only nb workers warm up, sharing the cores as nb); the
         * warm-ups of all the server's ranks at once take at least their
         * CPU over the cores (as torch_spawn's calendar: 8 ranks of 8
         * workers at 87 ms on half a core had come out 3x too fast). */
        const double open = spawn ? start * W : 0, sg0 = sg ? sg[tl * m->steps] : 1;
        const double Ww = nb < W ? (double)nb : W;
        const double sgw = sg && nb < W ? share_at(m, tl, 0, Ww) : sg0;
        const double warm_s = fmax(warm * sgw, warm_all * Ww);
        /* (every rank's workers start at once: their own starts too take
         * at least their CPU over the cores; semfuzz seed 11, 4 ranks on one
         * core at 35 % with 86 ms starts: 0.13 s where the simulator had
         * 1.34 s, and a GPU twice as fast came out 11 % slower) */
        const double init_s = fmax(init * sg0, init_all * W);
        for (int w = 0; wfree && sg && w < W; w++)
            wfree[w] = spawn ? fmax(start * (w + 1) + init_s, open) + warm_s : 0;
        for (int64_t k = 0; wfree && started && sg && k < nb; k++) {
            int last = k == nb - 1;
            double items = last && !drop ? (m->items - (double)k * M) : M;
            double per_rank = ceil(items / (double)j->gpus);
            int at = (int)(((double)k * M + items / 2) / m->items * m->steps);
            if (at >= m->steps) at = m->steps - 1;
            const double i0 = (double)k * M, i1 = i0 + items;
            double wait = tl == 0 ? loader_model_span(m, m->wait_s, i0, i1) : 0;
            double floor_s =
                fmax(tl == 0 ? loader_model_span(m, m->floor_s, i0, i1) : 0, m->engine_s);
            double slow = k >= last_round && tail_workers < W ? share_at(m, tl, at, tail_workers)
                                                              : sg[tl * m->steps + at];
            if (k < W) slow = fmax(slow, first_round_share(m, tl, at, nb < W ? (double)nb : W));
            double issue = k < P ? 0 : started[k % P];
            double begin = issue;
            if (W == 0) {
                if (end > begin) begin = end;
            } else if (wfree[k % W] > begin) {
                begin = wfree[k % W];
            }
            double done = begin + per_rank * ((m->prep_s + collate) * slow + wait);
            /* The stream's storage serves at most one item per floor_s. */
            io_free = (io_free > begin ? io_free : begin) + items * floor_s;
            if (io_free > done) done = io_free;
            if (W > 0) wfree[k % W] = done;
            if (pin > 0)
                done = pin_free = (done > pin_free ? done : pin_free) + pin * slow * per_rank;
            if (done > last_done) last_done = done;
            double go = done > end ? done : end;
            if (go < open) go = open;
            /* The wait for the worker's GIL: none in the last round
             * (worker_busy) */
            end = go + (k + W < nb ? recv : 0) + cpu * slow + (last ? m->t_last : m->t_batch);
            started[k % P] = go;
            if (k == 0 && tl == 0 && m->first_go) *m->first_go = go;
        }
        if (W > 0 && started) end = drain_end(m, started, P, nb, last_done, end);
        end += exit_wall(m);
        if (tl == 0)
            *epoch_s = end;
        else
            *t_prep_s = end;
    }
    free(wfree), free(started), free(sg);
}

static double torch_bytes(const scenario_t *s, const job_t *j, double cores, int ns) {
    (void)cores;
    double G = (double)j->gpus, W = torch_opts(s)->num_workers > 0 ? torch_opts(s)->num_workers : 1;
    const double rps = ns > 0 && G / ns > 1 ? ceil(G / ns) : 1;
    return 8 * (6 * G * W + 14 * G + W + 5 * ns) + (2 * ns * 72 + 8) * rps * W + 6 * G + 64 +
           2 * ns * (calendar_bytes(CPU_LOG2) + 64);
}

/* A tensor in shared memory is a segment of whole pages. */
static double pages(double bytes) {
    return ceil(bytes / 4096) * 4096;
}

/* A worker collates each batch into shared memory (default_collate's
 * _new_shared storage: the images, and the labels as int64), and the
 * iterator keeps prefetch_factor x num_workers batches outstanding while
 * the training loop holds the one it trains on: measured peaks of exactly
 * (p x W + 1) batches, or the epoch's batches when fewer
 * (validation/shm.py). Under pin_memory the pin thread copies each
 * batch out of shared memory and drops it (pin_memory.py's
 * _pin_memory_loop rebinds `data` to the pinned copy): the batch in
 * training is pinned, so at most the p x W outstanding are in /dev/shm. */
static double torch_shm(const scenario_t *s, const job_t *j, double budget, char *note, size_t n) {
    const int64_t W = torch_opts(s)->num_workers, pf = torch_opts(s)->prefetch_factor;
    if (W == 0) return 0;
    const double b = (double)j->batch_per_gpu;
    const double batch = pages(b * scenario_job_out_item_bytes(s, j)) + pages(b * 8);
    /* An epoch of fewer batches than that holds them all at most. */
    const double per_rank = ceil((double)s->dataset.items / (double)j->gpus / b);
    const int64_t in_training = torch_opts(s)->pin_memory ? 0 : 1;
    double held = (double)(pf * W + in_training);
    if (held > per_rank) held = per_rank;
    const double need = held * batch;
    if (note && need > budget) {
        int64_t w_fit = (int64_t)floor((budget / batch - (double)in_training) / (double)pf);
        int64_t pf_fit = (int64_t)floor((budget / batch - (double)in_training) / (double)W);
        int k =
            snprintf(note, n, "prefetch_factor %lld x %lld workers%s = %lld batches of %.1f MiB",
                     (long long)pf, (long long)W,
                     in_training ? " + the batch in training" : " (pinned: none in training)",
                     (long long)(pf * W + in_training), batch / 1048576);
        if (k > 0 && (size_t)k < n && w_fit >= 1)
            k += snprintf(note + k, n - (size_t)k, "; num_workers %lld fits", (long long)w_fit);
        if (k > 0 && (size_t)k < n && pf_fit >= 1 && pf > 1)
            snprintf(note + k, n - (size_t)k, "; prefetch_factor %lld fits", (long long)pf_fit);
    }
    return need;
}

/* Items one worker reads over the run: its share of its rank's epoch, a
 * DistributedSampler's items / gpus split over W workers batch by batch. A
 * worker forked afresh every epoch starts from the training process's pages
 * again; a persistent one keeps what it copied, and with shuffling reads a
 * new share each epoch: the distinct items it has read after E epochs. */
static double torch_items_touched(const scenario_t *s, const job_t *j) {
    const double W = (double)torch_opts(s)->num_workers;
    const double rank = (double)s->dataset.items / (double)(j->gpus > 0 ? j->gpus : 1);
    if (!torch_opts(s)->persistent_workers || s->epochs <= 1) return rank / W;
    return rank * (1 - pow(1 - 1 / W, (double)s->epochs));
}

/* Each worker is a process of its own: what a memory cgroup charges it is
 * its private pages (the training process's pages it copied on write, its
 * buffers). They grow with the samples it reads (reading a Python object
 * writes its reference count): the probe's fixed part, worker_mem_mb, and
 * worker_mem_mb_per_kitem for each 1000 items of the worker's share. The
 * pages still shared with the training process are charged once, to it. */
/* A worker's shuffle buffer (loader.shuffle_buffer: WebDataset's
 * shuffle(B) runs in the worker, over raw samples) at its peak: its encoded
 * items (loader_buffer_peak over the worker's share of the epoch). */
static double torch_buffer_bytes(const scenario_t *s, const job_t *j, int64_t W) {
    if (s->loader.shuffle_buffer <= 0 || W <= 0) return 0;
    const double mine = (double)s->dataset.items / ((double)(j->gpus > 0 ? j->gpus : 1) * W);
    return loader_buffer_peak(s, ceil(mine)) * scenario_item_bytes_mean(s);
}

static double torch_proc(const scenario_t *s, const job_t *j, char *note, size_t n) {
    const int64_t W = torch_opts(s)->num_workers;
    if (W == 0) {
        if (note) snprintf(note, n, "0 workers x %g MiB", torch_opts(s)->worker_mem_mb);
        return 0;
    }
    const double items = torch_items_touched(s, j), buf = torch_buffer_bytes(s, j, W);
    const double each =
        (torch_opts(s)->worker_mem_mb + torch_opts(s)->worker_mem_mb_per_kitem * items / 1e3) *
            MIB +
        buf;
    char extra[64] = "";
    if (buf > 0) snprintf(extra, sizeof extra, ", its shuffle buffer %.1f MiB", buf / MIB);
    if (note && torch_opts(s)->worker_mem_mb_per_kitem > 0)
        snprintf(note, n, "%lld workers x %.1f MiB (%g MiB + %.0f items read x %g MiB per 1000%s)",
                 (long long)W, each / MIB, torch_opts(s)->worker_mem_mb, items,
                 torch_opts(s)->worker_mem_mb_per_kitem, extra);
    else if (note)
        snprintf(note, n, "%lld workers x %g MiB%s", (long long)W, each / MIB, extra);
    return (double)W * each;
}

/* The caching host allocator's block for a tensor of `bytes`: rounded up
 * to a power of two, never split (aten/src/ATen/core/CachingHostAllocator.h,
 * CachingHostAllocatorImpl::allocate). */
static double pinned_block(double bytes) {
    return bytes > 1 ? exp2(ceil(log2(bytes))) : bytes;
}

/* pin_memory: the images and the labels of each batch are copied into a
 * page-locked block each (pin_memory.py: Tensor.pin_memory per tensor).
 * Batches alive at once in pinned memory: the p x W outstanding that the pin
 * thread has copied and the one in training (p x W + 1); without workers
 * the training process pins each batch itself while the loop still holds
 * the last one (2). The allocator returns a freed block to its free list of
 * that size, not to the system (only empty_cache does), so the process
 * keeps that many blocks from then on, and one more of the epoch's last,
 * smaller batch where it falls in a smaller power of two. */
static double torch_pinned(const scenario_t *s, const job_t *j, char *note, size_t n) {
    if (!torch_opts(s)->pin_memory) return 0;
    const int64_t W = torch_opts(s)->num_workers, pf = torch_opts(s)->prefetch_factor;
    const double b = (double)j->batch_per_gpu, item = scenario_job_out_item_bytes(s, j);
    const double rank = ceil((double)s->dataset.items / (double)(j->gpus > 0 ? j->gpus : 1));
    const double full = floor(rank / b), part = torch_opts(s)->drop_last ? 0 : rank - full * b;
    const double nb = full + (part > 0 ? 1 : 0);
    const double alive = fmin(W > 0 ? (double)(pf * W + 1) : 2, nb);
    const double big = pinned_block(b * item) + pinned_block(b * 8);
    const double small = part > 0 ? pinned_block(part * item) + pinned_block(part * 8) : 0;
    double bytes;
    if (part > 0 && pinned_block(part * item) < pinned_block(b * item))
        bytes = fmin(alive, full) * big + small; /* its own block */
    else
        bytes = alive * big; /* the last batch reuses a full one's */
    if (note)
        snprintf(note, n, "%.0f batches in power-of-two blocks of %.1f MiB", alive, big / MIB);
    return bytes;
}

/* The training process's own memory as the probe measured it. */
static double torch_process(const scenario_t *s, const job_t *j) {
    (void)j;
    return torch_opts(s)->process_mem_mb * MIB;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.num_workers", KT_INT, "processes", "0", 0, 4096, 0, NULL, KIND_FIELD(torch_opts_t, num_workers), "pytorch: worker processes per training process (GPU); 0 = load in the training process"},
    {"loader.prefetch_factor", KT_INT, "batches", "2", 1, 1048576, 0, NULL, KIND_FIELD(torch_opts_t, prefetch_factor), "pytorch: batches each worker may have outstanding"},
    {"loader.persistent_workers", KT_BOOL, "", "false", 0, 0, 0, NULL, KIND_FIELD(torch_opts_t, persistent_workers), "pytorch: keep the workers across epochs (false: forked again at every epoch)"},
    {"loader.pin_memory", KT_BOOL, "", "false", 0, 0, 0, NULL, KIND_FIELD(torch_opts_t, pin_memory), "pytorch: a thread copies each batch into pinned memory (PyTorch does nothing without a GPU): the training process then holds prefetch_factor x num_workers + 1 batches in page-locked blocks of a power of two each (2 without workers), counted against server.mem_gb, and the batch in training is no longer in /dev/shm"},
    {"loader.drop_last", KT_BOOL, "", "false", 0, 0, 0, NULL, KIND_FIELD(torch_opts_t, drop_last), "pytorch: skip the last partial batch (its items are not read)"},
    {"loader.collate_ms_per_item", KT_REAL, "ms", "0.05", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, collate_ms_per_item), "pytorch: CPU to collate one item into its batch"},
    {"loader.share_ms_per_item", KT_REAL, "ms", "0.1", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, share_ms_per_item), "pytorch: a worker's CPU per item to hand its batch over (shared memory, the queue)"},
    {"loader.transfer_ms_per_item", KT_REAL, "ms", "0.01", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, transfer_ms_per_item), "pytorch: training-process CPU to receive one item of a batch from a worker"},
    {"loader.copy_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, copy_ms_per_mb), "pytorch, num_workers > 0: a worker's CPU per MB of an item's hand-over bytes (prep.out_kb, or a video clip's frames by loader.batch_dtype) to put its batch in shared memory, beyond loader.share_ms_per_item (fresh /dev/shm pages faulted and filled); the probe measures it over items of two sizes and takes it out of share_ms_per_item, so a figure measured on one item size carries to another"},
    {"loader.receive_ms_per_mb", KT_REAL, "ms/MB", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, receive_ms_per_mb), "pytorch, num_workers > 0: training-process CPU per MB of an item's hand-over bytes to receive its batch from a worker (mapping the shared memory, freeing the batch before), beyond loader.transfer_ms_per_item; the probe measures it as copy_ms_per_mb"},
    {"loader.pin_ms_per_item", KT_REAL, "ms", "0.05", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, pin_ms_per_item), "pytorch: pin-memory thread CPU to copy one item (with pin_memory)"},
    {"loader.receive_wait_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, receive_wait_ms), "pytorch: the training process's wait per iteration to receive a batch from a worker, beside its CPU and holding no core (under PyTorch's default file_descriptor sharing each tensor's descriptor is fetched from the worker, whose sharer thread waits for the worker's GIL while a pure-Python Dataset holds it); the probe measures it with the Dataset's workers busy; charged where the batch's worker has another batch this epoch (one done with its last holds no GIL)"},
    {"loader.step_ms", KT_REAL, "ms", "0.2", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, step_ms), "pytorch: training-process CPU per iteration, serial with the GPU's compute"},
    {"loader.core_efficiency", KT_REAL, "", "1", 0.05, 1, 0, NULL, KIND_FIELD(torch_opts_t, core_efficiency), "pytorch: each process's speed with every core busy, relative to one process alone (the probe measures it)"},
    {"loader.oversub", KT_STRING, "", "", 0, 0, 0, NULL, KIND_FIELD(torch_opts_t, oversub), "pytorch: the cost of more worker processes than cores as PER_CORE:EFFICIENCY points from 1:1 (e.g. \"1:1, 2:0.97, 4:0.93, 8:0.85, 16:0.7\"; the probe measures it with the user's Dataset): the cores give that fraction of their CPU at the workers per core of the run (all ranks' on a server), linear between points, the last point past it (\"\" = none)"},
    {"loader.worker_start_ms", KT_REAL, "ms", "10", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_start_ms), "pytorch: forking one worker when an epoch's iterator is made (the iterator forks every worker, one after another, before the loop takes a batch)"},
    {"loader.worker_init_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_init_ms), "pytorch: a forked worker's own CPU before its first item (imports, seeding, the Dataset's pages touched), on one of the cores (the probe measures it)"},
    {"loader.worker_warmup_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_warmup_ms), "pytorch: a freshly forked worker's CPU over its first items beyond their steady cost (pages copied on write, cold caches and TLBs), once per worker start that gets a batch (every epoch unless persistent_workers), on one of the cores (the probe measures it: a worker's first epoch against its second)"},
    {"loader.worker_exit_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_exit_ms), "pytorch: a worker's CPU to exit when an epoch's iterator shuts its workers down at the epoch's end (every epoch unless persistent_workers: its finalizers, the kernel freeing its pages), on one of the cores, every worker at once; the loop goes on to the next epoch once the last has exited (the probe measures it: the workers' CPU from the shutdown to their reaping)"},
    {"loader.worker_mem_mb", KT_REAL, "MiB", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_mem_mb), "pytorch: a worker process's private memory (what a memory cgroup charges it: the pages of the training process it has copied, the Python objects' reference counts touched over the Dataset's sample list, its decode and transform buffers; the probe measures it from /proc/PID/smaps_rollup): its fixed part, or the whole at its peak without worker_mem_mb_per_kitem; counted against server.mem_gb"},
    {"loader.worker_mem_mb_per_kitem", KT_REAL, "MiB", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, worker_mem_mb_per_kitem), "pytorch: a worker's private memory grows by this for each 1000 items it reads (its share of the epoch: items / gpus / num_workers, or the distinct items a persistent worker reads over the epochs); the probe fits it with worker_mem_mb over workers reading 1/8 to all of the Dataset"},
    {"loader.process_mem_mb", KT_REAL, "MiB", "0", 0, 1e9, 0, NULL, KIND_FIELD(torch_opts_t, process_mem_mb), "pytorch: each training process's own memory (the interpreter, PyTorch, the Dataset, the DataLoader's iterator; not the model or the CUDA context): the probe measures its anonymous resident pages (/proc/self/status RssAnon) at their peak over an epoch; counted against server.mem_gb for a job that does not give jobs.N.host_mem_gb (0 = not measured)"},
};
/* clang-format on */

static uint32_t torch_shard_lanes(const scenario_t *s, int *per_rank) {
    *per_rank = 1;
    return torch_opts(s)->num_workers > 0 ? (uint32_t)torch_opts(s)->num_workers : 1;
}

/* One read per worker (per training process when it loads itself): ranks x
 * workers, a server holding at most its GPUs' ranks. */
static int64_t torch_readers(const scenario_t *s) {
    int64_t w = torch_opts(s)->num_workers > 0 ? torch_opts(s)->num_workers : 1;
    return loader_ranks_a_server(s) * w;
}

/* num_workers worth trying: 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, ... up to 16
 * workers per core of a GPU's share of its server (loader.oversub's reach). */
static int torch_knob_values(const scenario_t *s, int64_t *v, int max) {
    int64_t gps = s->njobs > 0 ? s->jobs[0].gpus / (s->server.count > 0 ? s->server.count : 1) : 1;
    double top = 16 * (double)s->server.cpus / (double)(gps > 0 ? gps : 1);
    return loader_knob_ladder(v, max, 0, top);
}

static void torch_knob_set(scenario_t *s, int64_t v) {
    torch_opts_t *o = scenario_kind_opts(s, FAMILY_LOADER, s->loader.kind);
    o->num_workers = v;
}

static int64_t torch_worker_procs(const scenario_t *s) {
    return torch_opts(s)->num_workers;
}

const loader_ops_t loader_pytorch = {
    .name = "pytorch",
    .help = "torch.utils.data.DataLoader: num_workers processes per GPU, a batch each, in order",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .sync_reads = 1,
    .init = torch_init,
    .begin_batch = torch_begin_batch,
    .item = torch_item,
    .batch_ready = torch_batch_ready,
    .iter_cpu = torch_iter_cpu,
    .epoch_end = torch_epoch_end,
    .destroy = torch_destroy,
    .check = torch_check,
    .shard_lanes = torch_shard_lanes,
    .readers_in_flight = torch_readers,
    .staged_batches = torch_staged,
    .epoch_items = torch_epoch_items,
    .items_s = torch_items_s,
    .model_epoch = torch_model_epoch,
    .knob = "loader.num_workers",
    .knob_unit = "workers a GPU",
    .knob_values = torch_knob_values,
    .knob_set = torch_knob_set,
    .worker_procs = torch_worker_procs,
    .state_bytes = torch_bytes,
    .shm_bytes = torch_shm,
    .proc_bytes = torch_proc,
    .pinned_bytes = torch_pinned,
    .process_bytes = torch_process,
};
