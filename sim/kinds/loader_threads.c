/* loader_threads: a pool of threads inside each training process (one per
 * GPU) reads, decodes and transforms the items, as SPDL, torchdata.nodes
 * (method="thread") and a concurrent.futures.ThreadPoolExecutor over a
 * Dataset do:
 * - loader.threads threads per training process; each takes the process's
 *   next item when it is free, reads it synchronously (waiting holds
 *   neither a core nor the GIL), then runs its CPU on one of the server's
 *   cores (the cores calendar every rank on the server shares, as for the
 *   pytorch kind);
 * - the GIL is one per training process (a calendar of one slot): of an
 *   item's CPU, loader.gil_read_ms (the read's Python), the share
 *   loader.gil_decode_share of the decode (libjpeg-turbo in PIL releases it
 *   for most of it) and loader.gil_transform_share of the transform
 *   (prep.augment_ms: Python-level transforms hold it) hold it; a
 *   free-threaded interpreter holds none (all three 0). Its free part runs
 *   first, then the held part, taking the GIL and a core together;
 * - the training loop's thread takes a batch once its items are done, then
 *   collates it itself (loader.threads_collate_ms_per_item an item, on a
 *   core, holding the GIL for the transform's share), serial with the step:
 *   the collate is inside the iterator's next() (a loop over
 *   ThreadPoolExecutor futures, as scripts/validate_threads.py's), so the
 *   GPU waits for it; the batch is handed over in memory: no shared-memory
 *   copy, no pickling, no worker fork or start; jobs.N.prefetch_batches
 *   batches in flight, batch k + that many submitted once the loop takes
 *   batch k (one process's memory: none in /dev/shm);
 * - a fresh training process's first epoch costs more CPU than its later
 *   ones (its first collates write into fresh pages; the pool's first items
 *   cost a little more too): loader.threads_warmup_ms, once per process, a
 *   lump on a core in the loop's thread before its first step (the pytorch
 *   kind's worker_warmup_ms is per worker start: a 2-core VM measured this
 *   one flat over 1 to 8 threads, so per process here);
 * - the training loop's thread takes its process's GIL back
 *   loader.gil_reacquires_per_batch times a step (returning from the GPU's
 *   sync, from each torch op of the collate, from a wait on a future: each
 *   releases it), serial with the step. CPython's take_gil
 *   (Python/ceval_gil.c) lets a thread running Python keep the GIL until
 *   the waiter has slept one switch interval (loader.gil_switch_ms,
 *   sys.getswitchinterval(), 5 ms by default) and asked for it: each take-
 *   back costs the interval times the share of time the pool holds the GIL
 *   while it works (validation/studies/gil_reacquire.py and gil_loop_split.py measure
 *   both; the probe writes the take-backs). The loop waits, asleep: no core.
 *   Threads whose work releases the GIL every few ms (PIL's decode, torch
 *   ops) give it up on their own first: the probe then measures near 0.
 * The model's rate is the closed form of the same sharing, per process:
 * items/s = min(threads / (CPU + read wait), cores' share / CPU, 1 / GIL
 * held), along the epoch's slices (threads_model_epoch). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "diag.h"
#include "kinds.h"
#include "loader.h"

/* The threads loader kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t threads;
    double gil_read_ms;
    double gil_decode_share;
    double gil_transform_share;
    double collate_ms_per_item;
    double gil_reacquires_per_batch; /* the loop thread's GIL take-backs a step */
    double gil_switch_ms;            /* sys.getswitchinterval() */
    double warmup_ms;                /* a pool thread's first-epoch CPU past its steady cost */
    char oversub[SCN_STR];           /* "THREADS_PER_CORE:EFFICIENCY, ..."; "" = none */
} threads_opts_t;
SCN_KIND_OPTS_FITS(threads_opts_t);

static const threads_opts_t *thr_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_LOADER, s->loader.kind);
}

typedef struct {
    int G, T, ns;
    double read_s, aug_s, gd, gt, collate_s; /* seconds; the GIL's shares */
    double reacq_s;                          /* the loop's wait for the GIL a step */
    double warm_s;                           /* the process's first-epoch warm-up */
    int warm_due[2];                         /* its first iteration is still to come */
    double *tfree;                           /* [2][G][T]: when each thread is free */
    int *amin;                               /* [2][G]: each rank's earliest-free thread */
    double *clk;                             /* [2][G]: its time; clk[0..G) is p->clock */
    double *bend;                            /* [2][G]: the batch's last item done, per rank */
    int *items;                              /* [G]: the batch's items on each rank */
    uint16_t *rank_sv;                       /* [G]: each rank's server */
    calendar_t *cpu;                         /* [2][ns]: each server's cores */
    calendar_t *gil;                         /* [2][G]: each process's GIL; NULL: none held */
} thr_t;

enum { CPU_LOG2 = 13, GIL_LOG2 = 11 };

static double ms(double v) {
    return v / 1e3;
}

/* The transform's seconds of a job's item: its CPU beyond the decode's
 * (prep.augment_ms, prep.eval_ms; a pipeline of no JPEGs, audio, is all
 * decode). */
static double transform_s(const scenario_t *s, const job_t *j) {
    if (!job_pipeline(j)->jpeg) return 0;
    double t = scenario_job_prep_s(s, j, 0) - ms(s->prep.decode_ms_per_item);
    return t > 0 ? t : 0;
}

/* GIL-held seconds of an item whose prep takes dur seconds of CPU. */
static double held_s(const thr_t *t, double dur) {
    double aug = t->aug_s < dur ? t->aug_s : dur;
    return t->gd * (dur - aug) + t->gt * aug + t->read_s;
}

static double effective_cores(const scenario_t *s, double cores) {
    return scenario_prep_cores_shaped(s) ? scenario_prep_cores(s, cores, NULL) : cores;
}

/* Core-seconds per second a server's `cores` give with every core busy and
 * gps processes' pools on them: the measured efficiency at their threads
 * per core (loader.threads_oversub). More threads than cores cost more
 * than their CPU alone: each switch between threads, and each thread that
 * comes back from a call that released the GIL and waits its turn. */
static double thr_capacity(const scenario_t *s, double cores, double gps) {
    const double x = cores > 0 ? gps * (double)thr_opts(s)->threads / cores : 0;
    return effective_cores(s, cores) * loader_curve_at(thr_opts(s)->oversub, x);
}

/* The GIL's shares of job j's items, as the scenario gives them. */
static thr_t gil_of(const scenario_t *s, const job_t *j) {
    return (thr_t){.read_s = ms(thr_opts(s)->gil_read_ms),
                   .aug_s = transform_s(s, j),
                   .gd = thr_opts(s)->gil_decode_share,
                   .gt = thr_opts(s)->gil_transform_share};
}

/* The closed form: items/s of one training process whose items take prep_s
 * seconds of CPU and whose reads wait `wait` seconds an item (0 on T_prep),
 * its share c of its server's cores (thr_capacity over the processes that
 * share them: core-seconds a second), collating at `collate`
 * seconds an item, its training step taking `train` an item (on the cores,
 * and the GIL where one is held). */
static double rank_rate(const scenario_t *s, const job_t *j, double prep_s, double c, double wait,
                        double collate, double train) {
    const thr_t t = gil_of(s, j);
    const double cpu = prep_s + t.read_s + collate + train;
    const double held =
        held_s(&t, prep_s) + t.gt * collate + (t.gt + t.gd > 0 || t.read_s > 0 ? train : 0);
    const double T = (double)thr_opts(s)->threads;
    double x = T / (prep_s + t.read_s + wait);
    if (cpu > 0 && c / cpu < x) x = c / cpu;
    if (held > 0 && 1 / held < x) x = 1 / held;
    return x;
}

/* Seconds a step of the training loop waits to take its GIL back from the
 * pool: loader.gil_reacquires_per_batch take-backs, each a switch interval
 * times the share of time the pool's threads hold the GIL while they work
 * (their items' held seconds at the closed form's rate, the items in
 * memory). The simulator and the model charge the same. */
static double reacquire_s(const scenario_t *s, const job_t *j, double prep_s, double c) {
    const double R = thr_opts(s)->gil_reacquires_per_batch;
    const thr_t t = gil_of(s, j);
    const double held = held_s(&t, prep_s);
    if (R <= 0 || held <= 0) return 0;
    const double collate = ms(thr_opts(s)->collate_ms_per_item);
    const double step = j->train_cpu_ms / 1e3 / (double)j->batch_per_gpu;
    const double busy = rank_rate(s, j, prep_s, c, 0, collate, step) * held;
    return R * ms(thr_opts(s)->gil_switch_ms) * (busy < 1 ? busy : 1);
}

/* Buckets of about two items' CPU (or GIL), reaching back over a batch at a
 * few times its cost: the engine walks batch after batch. */
static double bucket_s(const scenario_t *s, const job_t *j, double per_item, int log2) {
    double c = scenario_job_prep_s(s, j, scenario_item_bytes_mean(s));
    double wait = scenario_storage(s)->service_s(s, scenario_item_bytes_mean(s));
    double reach = 4 * (double)j->batch_per_gpu * (c + wait);
    if (reach < CALENDAR_REACH_S) reach = CALENDAR_REACH_S;
    double dt = 2 * per_item, least = reach / (double)(1 << log2);
    return dt > least ? dt : least;
}

static int thr_alloc(thr_t *t, int ns, int gil) {
    size_t G = (size_t)t->G, T = (size_t)t->T;
    t->tfree = calloc(2 * G * T, sizeof *t->tfree);
    t->amin = calloc(2 * G, sizeof *t->amin);
    t->clk = calloc(2 * G, sizeof *t->clk);
    t->bend = calloc(2 * G, sizeof *t->bend);
    t->items = calloc(G, sizeof *t->items);
    t->rank_sv = calloc(G, sizeof *t->rank_sv);
    t->cpu = calloc(2 * (size_t)ns, sizeof *t->cpu);
    if (gil) t->gil = calloc(2 * G, sizeof *t->gil);
    return !t->tfree || !t->amin || !t->clk || !t->bend || !t->items || !t->rank_sv || !t->cpu ||
                   (gil && !t->gil)
               ? -1
               : 0;
}

static int thr_init(prep_t *p) {
    const scenario_t *s = p->s;
    thr_t *t = calloc(1, sizeof *t);
    p->state = t;
    if (!t) return -1;
    t->G = p->ranks;
    t->T = (int)thr_opts(s)->threads;
    t->ns = p->ns;
    t->read_s = ms(thr_opts(s)->gil_read_ms);
    t->aug_s = transform_s(s, p->job);
    t->gd = thr_opts(s)->gil_decode_share;
    t->gt = thr_opts(s)->gil_transform_share;
    t->collate_s = ms(thr_opts(s)->collate_ms_per_item);
    t->warm_s = ms(thr_opts(s)->warmup_ms);
    const int gil = t->read_s > 0 || t->gd > 0 || t->gt > 0;
    const int per = p->ranks_per_server > 0 ? p->ranks_per_server : 1;
    const double mean = scenario_job_prep_s(s, p->job, scenario_item_bytes_mean(s));
    p->cpu_slots = thr_capacity(s, p->cores, per);
    t->reacq_s = reacquire_s(s, p->job, mean, p->cpu_slots / per);
    p->slowdown = 1;
    if (thr_alloc(t, p->ns, gil) != 0) return -1;
    for (int r = 0; r < t->G; r++)
        t->rank_sv[r] = (uint16_t)(r / per < p->ns ? r / per : p->ns - 1);
    const double dt = bucket_s(s, p->job, mean + t->read_s, CPU_LOG2);
    for (int i = 0; i < 2 * p->ns; i++)
        if (calendar_init(&t->cpu[i], dt, p->cpu_slots, CPU_LOG2) != 0) return -1;
    const double g = held_s(t, mean) + t->gt * t->collate_s;
    for (int i = 0; gil && i < 2 * t->G; i++)
        if (calendar_init(&t->gil[i], bucket_s(s, p->job, g > 0 ? g : mean, GIL_LOG2), 1,
                          GIL_LOG2) != 0)
            return -1;
    p->clock = t->clk;
    return 0;
}

/* calendar_hold, ending no sooner than the bucket it ends in has served
 * what it gave out at its rate: the slots alone let requests at a bucket's
 * start all take its capacity at once (4 items of 2 ms on 2 cores ending
 * together at 2 ms), which served more CPU than the cores have. */
static double hold(calendar_t *c, double at, double dur, double *end) {
    double start = calendar_hold(c, at, dur, end);
    const double q = *end / c->dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    if ((double)i * c->dt >= *end && i > 0) i--; /* ended on a boundary: the bucket before */
    if (i < c->top - (int64_t)c->mask) return start;
    const double fluid = (double)i * c->dt + (c->cap - *calendar_left(c, i)) / c->rate;
    if (fluid > *end) *end = fluid;
    return start;
}

/* cpu seconds on server sv's cores from `at` on, of which the last `held`
 * hold rank r's GIL too: when done. */
static double run_cpu(thr_t *t, int tl, int sv, int r, double at, double cpu, double held) {
    double end = at;
    if (cpu > held) hold(&t->cpu[tl * t->ns + sv], at, cpu - held, &end);
    if (held <= 0 || !t->gil) return end;
    double gil_end, core_end;
    double start = hold(&t->gil[tl * t->G + r], end, held, &gil_end);
    hold(&t->cpu[tl * t->ns + sv], start, held, &core_end);
    return gil_end > core_end ? gil_end : core_end;
}

/* Rank r's earliest-free thread on timeline tl, into amin and clk. */
static void thr_earliest(thr_t *t, int tl, int r) {
    const double *f = &t->tfree[((size_t)tl * t->G + r) * t->T];
    int k = 0;
    for (int i = 1; i < t->T; i++)
        if (f[i] < f[k]) k = i;
    t->amin[tl * t->G + r] = k;
    t->clk[tl * t->G + r] = f[k];
}

/* A batch's items may start once its buffer is free (issue). */
static void thr_begin_batch(prep_t *p, int epoch, int64_t batch, const double issue[2],
                            const double idle[2]) {
    (void)epoch, (void)idle;
    thr_t *t = p->state;
    for (int tl = 0; batch == 0 && tl < 2; tl++) {
        for (int i = 0; i < t->ns; i++)
            calendar_cap_before(&t->cpu[tl * t->ns + i], issue[tl]);
        for (int r = 0; t->gil && r < t->G; r++)
            calendar_cap_before(&t->gil[tl * t->G + r], issue[tl]);
    }
    if (epoch == 0 && batch == 0) t->warm_due[0] = t->warm_due[1] = t->warm_s > 0;
    for (int tl = 0; tl < 2; tl++)
        for (int r = 0; r < t->G; r++) {
            double *f = &t->tfree[((size_t)tl * t->G + r) * t->T];
            for (int i = 0; i < t->T; i++)
                if (f[i] < issue[tl]) f[i] = issue[tl];
            thr_earliest(t, tl, r);
            t->bend[tl * t->G + r] = issue[tl];
        }
    memset(t->items, 0, sizeof *t->items * (size_t)t->G);
}

static prep_end_t thr_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                           double dur) {
    (void)ready_mem;
    thr_t *t = p->state;
    const int G = t->G;
    const double cpu = dur + t->read_s, held = held_s(t, dur);
    /* T: the read issued at clk[rank] is done at ready; T_prep: in memory. */
    double start[2] = {ready, t->clk[G + rank]}, end[2];
    for (int tl = 0; tl < 2; tl++) {
        end[tl] = run_cpu(t, tl, sv, rank, start[tl], cpu, held);
        t->tfree[((size_t)tl * G + rank) * t->T + t->amin[tl * G + rank]] = end[tl];
        thr_earliest(t, tl, rank);
        double *b = &t->bend[tl * G + rank];
        if (end[tl] > *b) *b = end[tl];
    }
    t->items[rank]++;
    return (prep_end_t){end[0], end[1]};
}

/* A batch is there to take once every rank's items are done: the training
 * loop collates it itself, after taking it (thr_iter_cpu). */
static double thr_batch_ready(prep_t *p, int tl, double last_item) {
    const thr_t *t = p->state;
    double ready = last_item;
    for (int r = 0; r < t->G; r++)
        if (t->bend[tl * t->G + r] > ready) ready = t->bend[tl * t->G + r];
    return ready;
}

/* Each rank's training process runs its step's CPU (jobs.N.train_cpu_ms)
 * beside its GPU's compute, in Python: on its server's cores and holding its
 * GIL, against its own loader threads. */
static double thr_train_cpu(prep_t *p, int tl, double start, double dur) {
    thr_t *t = p->state;
    double end = start;
    for (int r = 0; r < t->G; r++) {
        double e = run_cpu(t, tl, t->rank_sv[r], r, start, dur, t->gil ? dur : 0);
        if (e > end) end = e;
    }
    return end;
}

/* The loop's thread, once it has taken the batch's items, collates them
 * (default_collate in the training loop: on a core, holding the GIL for the
 * transform's share), serial with the step as the iterator's next() is, and
 * waits for its GIL before the step (asleep: no core). The engine calls it
 * right after the same batch's batch_ready, so items[] is that batch's.
 * The process's first iteration also pays its warm-up
 * (loader.threads_warmup_ms) on a core first, outside the GIL: the fresh
 * process's first collates into new pages, measured as one lump. */
static double thr_iter_cpu(prep_t *p, int tl, double start) {
    thr_t *t = p->state;
    const double warm = t->warm_due[tl] ? t->warm_s : 0;
    t->warm_due[tl] = 0;
    double end = start;
    for (int r = 0; r < t->G; r++) {
        const double c = t->collate_s * t->items[r];
        double done = start;
        if (warm > 0) done = run_cpu(t, tl, t->rank_sv[r], r, done, warm, 0);
        if (c > 0) done = run_cpu(t, tl, t->rank_sv[r], r, done, c, c * t->gt);
        if (done > end) end = done;
    }
    return end + t->reacq_s;
}

static void thr_destroy(prep_t *p) {
    thr_t *t = p->state;
    if (t) {
        for (int i = 0; t->cpu && i < 2 * t->ns; i++)
            calendar_destroy(&t->cpu[i]);
        for (int i = 0; t->gil && i < 2 * t->G; i++)
            calendar_destroy(&t->gil[i]);
        free(t->tfree), free(t->amin), free(t->clk), free(t->bend), free(t->items);
        free(t->rank_sv), free(t->cpu), free(t->gil);
    }
    free(t);
    p->state = NULL;
    p->clock = NULL;
}

/* What the kind does not model, refused with the key that asks for it. */
static int refuse(const scenario_t *s, const char *key, int on, const char *why) {
    if (!on) return 0;
    diag_error(s->origin[schema_find(SCOPE_SCENARIO, key)], "%s: loader.kind: threads %s", key,
               why);
    return 1;
}

static int thr_check(const scenario_t *s) {
    int bad = 0;
    bad |= refuse(s, "loader.prep", s->loader.prep == PREP_COORDINATED,
                  "has a pool in each training process (use partitioned)");
    bad |= refuse(s, "loader.dist_cache", s->loader.dist_cache == DIST_SHARDED,
                  "reads through each server's own cache (use local)");
    bad |= refuse(s, "prep.decode", s->prep.decode == DECODE_GPU,
                  "decodes in its threads on the CPU (use prep.decode: cpu; DALI's mixed "
                  "decoder is loader.kind: dali or pool)");
    bad |= refuse(s, "dataset.shard_items", s->dataset.shard_items > 1,
                  "reads loose items (record shards are not modelled for it yet: use "
                  "loader.kind: pool or pytorch)");
    bad |= refuse(s, "loader.shuffle_buffer", s->loader.shuffle_buffer > 0,
                  "samples items by index (a shuffle buffer is not modelled for it: leave it "
                  "out)");
    bad |= loader_curve_check(s, "loader.threads_oversub", thr_opts(s)->oversub, "threads");
    return bad ? EXIT_INPUT : 0;
}

static double thr_items_s(double cores, double item_s) {
    return item_s > 0 ? cores / item_s : INFINITY;
}

/* Seconds the pool falls behind while the loop's thread spends `cpu`
 * seconds on a core: none while its threads (or the GIL) bind it, the
 * cores it loses at its rate x where they do (c: as rank_rate's). */
static double pool_lag(const scenario_t *s, const job_t *j, double prep_s, double c, double collate,
                       double step, double x, double cpu) {
    const thr_t t = gil_of(s, j);
    if (x < c / (prep_s + t.read_s + collate + step) * (1 - 1e-9)) return 0;
    return cpu / c;
}

/* The batch pipeline at the closed form's rate, slice by slice: the pool
 * works through the batches back to back, batch k starting once batch k -
 * prefetch_batches is taken; the storage's floor binds the whole stream. */
static void threads_model_epoch(const loader_model_t *m, double *epoch_s, double *t_prep_s) {
    const job_t *j = m->job;
    const int64_t P = loader_staged_batches(m->s, j);
    const double G = (double)j->gpus, M = (double)j->batch_per_gpu * G;
    const int64_t nb = (int64_t)ceil(m->items / M);
    const int gps_i = (int)(j->gpus / m->ns);
    const double gps = gps_i > 0 ? gps_i : 1;
    const double collate = ms(thr_opts(m->s)->collate_ms_per_item);
    /* An iteration lasts at least the training process's own CPU
     * (jobs.N.train_cpu_ms), taken beside the GPU's compute. */
    const double train = j->train_cpu_ms / 1e3, step = train / (double)j->batch_per_gpu;
    const double t_batch = fmax(m->t_batch, train), t_last = fmax(m->t_last, train);
    /* The process's share of the cores, once: the curve is a string. */
    const double c = thr_capacity(m->s, m->cores, gps) / gps;
    const double reacq = reacquire_s(m->s, j, m->prep_s, c);
    /* The first epoch's warm-up: a lump on a core before the loop's first
     * collate, serial with its steps; where the cores bind the pool, the
     * pool has it less of their time (W over its share of them). */
    const double W = m->epoch == 0 ? ms(thr_opts(m->s)->warmup_ms) : 0;
    double *started = calloc((size_t)P, sizeof *started);
    for (int tl = 0; tl < 2; tl++) {
        double end = 0, prod = 0;
        for (int64_t k = 0; started && k < nb; k++) {
            int last = k == nb - 1;
            double items = last ? m->items - (double)k * M : M;
            double per_rank = ceil(items / G);
            const double i0 = (double)k * M, i1 = i0 + items;
            double wait = tl == 0 ? loader_model_span(m, m->wait_s, i0, i1) : 0;
            double floor_s =
                fmax(tl == 0 ? loader_model_span(m, m->floor_s, i0, i1) : 0, m->engine_s);
            /* The items' rate with the collate's CPU and GIL in it, and
             * without: a batch is ready once both it and its own collate
             * after its items are done (and the step is the whole rate's). */
            double x = rank_rate(m->s, j, m->prep_s, c, wait, collate, step);
            double x0 = rank_rate(m->s, j, m->prep_s, c, wait, 0, 0);
            double cap = floor_s > 0 ? 1 / (floor_s * G) : INFINITY;
            if (cap < x) x = cap;
            if (cap < x0) x0 = cap;
            double issue = k < P ? 0 : started[k % P];
            double begin = prod > issue ? prod : issue;
            prod = begin + per_rank / x;
            /* The loop takes the batch once its items are done (the
             * collate's and the step's CPU, in the rate, come after), then
             * collates it and steps, serially. */
            double go = begin + per_rank / x0;
            const double after = (collate + step) * per_rank;
            if (go < prod - after) go = prod - after;
            if (go < end) go = end;
            const double warm = k == 0 ? W : 0;
            end = go + warm + collate * per_rank + reacq + (last ? t_last : t_batch);
            started[k % P] = go;
            if (k == 0 && tl == 0 && m->first_go) *m->first_go = go;
            if (warm > 0) prod += pool_lag(m->s, j, m->prep_s, c, collate, step, x, warm);
        }
        if (tl == 0)
            *epoch_s = end;
        else
            *t_prep_s = end;
    }
    free(started);
}

static double thr_bytes(const scenario_t *s, const job_t *j, double cores, int ns) {
    (void)cores;
    const double G = (double)j->gpus, T = (double)thr_opts(s)->threads;
    return 8 * 2 * G * T + 4 * 2 * G + 8 * 4 * G + 4 * G + 2 * G + 128 +
           2 * ns * (calendar_bytes(CPU_LOG2) + 64) + 2 * G * (calendar_bytes(GIL_LOG2) + 64);
}

/* One shard stream a process: refused by thr_check; the engine asks anyway. */
static uint32_t thr_shard_lanes(const scenario_t *s, int *per_rank) {
    (void)s;
    *per_rank = 1;
    return 1;
}

/* One read per thread: ranks x threads, a server holding at most its GPUs' ranks. */
static int64_t thr_readers(const scenario_t *s) {
    return loader_ranks_a_server(s) * thr_opts(s)->threads;
}

/* threads worth trying: 1, 2, 3, 4, 6, 8, 12, 16, ... up to 64. */
static int thr_knob_values(const scenario_t *s, int64_t *v, int max) {
    (void)s;
    return loader_knob_ladder(v, max, 1, 64);
}

static void thr_knob_set(scenario_t *s, int64_t v) {
    threads_opts_t *o = scenario_kind_opts(s, FAMILY_LOADER, s->loader.kind);
    o->threads = v;
}

/* The GIL binds a process where its threads hold it longer an item than
 * its share of the cores takes to prepare one: then neither more cores nor
 * more threads help (a job of 16 threads a GPU on ImageNet: 3.6 ms held of
 * 14 ms of CPU an item; what to change said "a prep faster than more cores
 * can make it"). */
static int thr_prep_bound(const scenario_t *s, const job_t *j, char *buf, size_t n) {
    const double prep = scenario_job_prep_s(s, j, scenario_item_bytes_mean(s));
    const thr_t t = gil_of(s, j);
    const double held = held_s(&t, prep) + t.gt * ms(thr_opts(s)->collate_ms_per_item);
    if (held <= 0) return 0;
    snprintf(buf, n,
             "worker processes (loader.kind: pytorch) or a free-threaded Python "
             "(loader.gil_decode_share and gil_transform_share 0), since the GIL holds each "
             "training process to %.0f items/s (its threads hold it %.2f ms an item) whatever its "
             "cores or threads",
             1 / held, 1e3 * held);
    return 1;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.threads", KT_INT, "threads", "8", 1, 1024, 0, NULL, KIND_FIELD(threads_opts_t, threads), "threads: the pool's threads in each training process (GPU), each reading, decoding and transforming one item at a time"},
    {"loader.gil_read_ms", KT_REAL, "ms", "0.02", 0, 1e9, 0, NULL, KIND_FIELD(threads_opts_t, gil_read_ms), "threads: CPU per item that the read's Python (open, read) spends holding the GIL, on a core (the wait for the bytes holds neither; the probe measures it)"},
    {"loader.gil_decode_share", KT_REAL, "", "0.1", 0, 1, 0, NULL, KIND_FIELD(threads_opts_t, gil_decode_share), "threads: share of the decode's CPU (prep.decode_*) holding the GIL (libjpeg-turbo in PIL releases it for most of it; 0 = a free-threaded build; the probe measures it)"},
    {"loader.gil_transform_share", KT_REAL, "", "1", 0, 1, 0, NULL, KIND_FIELD(threads_opts_t, gil_transform_share), "threads: share of the transform's CPU (prep.augment_ms, prep.eval_ms) and of the collate holding the GIL (Python-level transforms hold it; 0 = a free-threaded build; the probe measures it)"},
    {"loader.threads_collate_ms_per_item", KT_REAL, "ms", "0.05", 0, 1e9, 0, NULL, KIND_FIELD(threads_opts_t, collate_ms_per_item), "threads: the training process's CPU to collate one item into its batch, in the loop's thread once it takes the batch, serial with the step (handed over in memory: no shared-memory copy)"},
    {"loader.gil_reacquires_per_batch", KT_REAL, "", "0", 0, 1e6, 0, NULL, KIND_FIELD(threads_opts_t, gil_reacquires_per_batch), "threads: times a step the training loop's thread takes its GIL back from the pool (the GPU's sync, each torch op of the collate, each wait on a future release it); each waits loader.gil_switch_ms times the pool's share of the GIL (the probe measures it; 0: none)"},
    {"loader.threads_warmup_ms", KT_REAL, "ms", "0", 0, 1e9, 0, NULL, KIND_FIELD(threads_opts_t, warmup_ms), "threads: the training process's CPU in its first epoch beyond its steady cost (its first collates into fresh pages, the pool's first items), once per process, on a core in the loop's thread before its first step (the counterpart of pytorch's worker_warmup_ms; the probe measures it: a fresh process's first epoch against its second)"},
    {"loader.threads_oversub", KT_STRING, "", "", 0, 0, 0, NULL, KIND_FIELD(threads_opts_t, oversub), "threads: the cost of more pool threads than cores as PER_CORE:EFFICIENCY points from 1:1 (e.g. \"1:1, 2:0.9, 4:0.75\"; the probe measures it: the whole item on 1, 2, 4 and 8 x the cores' threads): the cores give that fraction of their CPU at the threads per core of the run (all processes' on a server), linear between points, the last point past it (\"\" = none)"},
    {"loader.gil_switch_ms", KT_REAL, "ms", "5", 0, 1e6, 0, NULL, KIND_FIELD(threads_opts_t, gil_switch_ms), "threads: the interpreter's switch interval (sys.getswitchinterval(): 5 ms by default), what a thread waits before it asks a thread running Python for the GIL"},
};
/* clang-format on */

const loader_ops_t loader_threads = {
    .name = "threads",
    .help = "a pool of loader.threads threads in each training process, sharing its GIL "
            "(SPDL, torchdata.nodes, a ThreadPoolExecutor)",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .sync_reads = 1,
    .init = thr_init,
    .begin_batch = thr_begin_batch,
    .item = thr_item,
    .batch_ready = thr_batch_ready,
    .train_cpu = thr_train_cpu,
    .iter_cpu = thr_iter_cpu,
    .destroy = thr_destroy,
    .check = thr_check,
    .shard_lanes = thr_shard_lanes,
    .readers_in_flight = thr_readers,
    .items_s = thr_items_s,
    .model_epoch = threads_model_epoch,
    .knob = "loader.threads",
    .knob_unit = "threads a GPU",
    .prep_bound = thr_prep_bound,
    .knob_values = thr_knob_values,
    .knob_set = thr_knob_set,
    .state_bytes = thr_bytes,
};
