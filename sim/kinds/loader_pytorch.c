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
 *   created, unless persistent_workers keeps them from the first epoch.
 * CPU contention: every rank's workers and training process share the
 * stream's cores on a server. demand counts each worker by the share of an
 * item's time it is not blocked in a read (prep over prep and the storage
 * kind's service time for the misses; a worker waiting 50 ms for an object
 * store's first byte holds no core), and each
 * training process by the share of an iteration it spends on CPU (all of it
 * under num_workers = 0; an iteration lasts the longer of its own CPU and
 * GPU time and a batch's prep spread over the workers). When demand exceeds
 * the cores, each CPU second takes demand / cores seconds; and each busy core
 * runs at a speed that falls linearly from 1 (one busy) to
 * loader.core_efficiency (all busy): SMT siblings, memory bandwidth and the
 * kernel's own work, which the probe measures with one worker per core; a
 * measured curve (prep.scaling) or the memory-bandwidth bound
 * (server.mem_gbps, prep.mem_mb_per_item) multiplies it by the effective
 * cores over the busy ones. The simulator and the model use the same factor, fixed
 * for the run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "kinds.h"
#include "loader.h"

typedef struct {
    int W, G, persistent;
    double start_s, collate_s, pin_s; /* per worker start; per item of a batch */
    int64_t k;                        /* the batch's worker */
    double *wfree;                    /* [2][G][W]: when each worker is free */
    double *pin_free;                 /* [2][G]: when each rank's pin thread is free */
    double *clk;                      /* [2][G]: each rank's batch so far; clk[0..G) is p->clock */
    int *items;                       /* [G]: items of the batch on each rank */
} torch_t;

static double ms(double v) {
    return v / 1e3;
}

/* Seconds per item to collate a batch, and hand it over from a worker. */
static double collate_item(const scenario_t *s) {
    double c = ms(s->loader.torch.collate_ms_per_item);
    return s->loader.torch.num_workers > 0 ? c + ms(s->loader.torch.share_ms_per_item) : c;
}

/* Seconds of training-process CPU per iteration before contention. */
static double iter_cpu(const scenario_t *s, const job_t *j) {
    double t = ms(s->loader.torch.step_ms);
    if (s->loader.torch.num_workers > 0)
        t += ms(s->loader.torch.transfer_ms_per_item) * (double)j->batch_per_gpu;
    return t;
}

/* The contention factor (see the header) for ranks_per_server training
 * processes on `cores` cores. */
static double slowdown(const scenario_t *s, const job_t *j, double cores, int ranks_per_server) {
    double w = (double)s->loader.torch.num_workers, main = 1, duty = 1;
    if (w > 0) {
        double b = (double)j->batch_per_gpu, mean = scenario_item_bytes_mean(s);
        double cpu = iter_cpu(s, j), gpu = scenario_job_compute_s(s, j, b);
        double item = scenario_job_prep_s(s, j, mean) + collate_item(s);
        double prep = b * item;
        double period = cpu + gpu > prep / w ? cpu + gpu : prep / w;
        main = period > 0 ? cpu / period : 1;
        /* A worker blocked in a read holds no core: its share of an item's
         * time is the prep over prep and the read's wait (the misses of a
         * cache holding its capacity's share of the data). */
        double f =
            scenario_dataset_bytes(s) > 0 ? scenario_cache_bytes(s) / scenario_dataset_bytes(s) : 1;
        /* Record shards: one request's wait for S items. */
        double S = scenario_items_per_read(s);
        double wait = (f < 1 ? 1 - f : 0) * scenario_storage(s)->service_s(s, S * mean) / S;
        duty = item + wait > 0 ? item / (item + wait) : 1;
    }
    double demand = ranks_per_server * (w * duty + main);
    double busy = demand < cores ? demand : cores;
    double eff = 1;
    if (cores > 1 && busy > 1)
        eff = 1 - (1 - s->loader.torch.core_efficiency) * (busy - 1) / (cores - 1);
    /* A measured curve (prep.scaling) or the memory-bandwidth bound slows
     * each busy core to the effective cores over the busy ones (1 without). */
    if (busy > 1 && scenario_prep_cores_shaped(s)) eff *= scenario_prep_cores(s, busy, NULL) / busy;
    return (demand > cores ? demand / cores : 1) / eff;
}

static int torch_init(prep_t *p) {
    const scenario_t *s = p->s;
    torch_t *t = calloc(1, sizeof *t);
    p->state = t;
    if (!t) return -1;
    t->W = (int)s->loader.torch.num_workers;
    t->G = p->ranks;
    t->persistent = s->loader.torch.persistent_workers;
    int gps = p->ranks_per_server;
    double slow = slowdown(s, p->job, p->cores, gps);
    p->slowdown = slow;
    double procs = (double)gps * (t->W > 0 ? t->W : 1);
    p->cpu_slots = procs > p->cores ? procs : p->cores;
    p->iter_cpu_s = iter_cpu(s, p->job) * slow;
    t->start_s = ms(s->loader.torch.worker_start_ms);
    t->collate_s = collate_item(s) * slow;
    t->pin_s = s->loader.torch.pin_memory ? ms(s->loader.torch.pin_ms_per_item) * slow : 0;
    size_t G = (size_t)t->G, W = t->W > 0 ? (size_t)t->W : 1;
    t->wfree = calloc(2 * G * W, sizeof *t->wfree);
    t->pin_free = calloc(2 * G, sizeof *t->pin_free);
    t->clk = calloc(2 * G, sizeof *t->clk);
    t->items = calloc(G, sizeof *t->items);
    if (!t->wfree || !t->pin_free || !t->clk || !t->items) return -1;
    p->clock = t->clk;
    return 0;
}

static void torch_begin_batch(prep_t *p, int epoch, int64_t batch, const double issue[2],
                              const double idle[2]) {
    torch_t *t = p->state;
    int G = t->G, W = t->W;
    t->k = W > 0 ? (p->batch_worker ? (int64_t)p->batch_worker[batch] : batch % W) : 0;
    int spawn = W > 0 && batch < W && (epoch == 0 || !t->persistent);
    for (int tl = 0; tl < 2; tl++) {
        for (int r = 0; r < G; r++) {
            double at = issue[tl];
            if (W == 0) {
                if (idle[tl] > at) at = idle[tl];
            } else {
                double *wf = &t->wfree[((size_t)tl * G + r) * W + t->k];
                /* The iterator forks its workers one after another. */
                if (spawn) *wf = issue[tl] + t->start_s * (double)(t->k + 1);
                if (*wf > at) at = *wf;
            }
            t->clk[tl * G + r] = at;
        }
    }
    memset(t->items, 0, sizeof *t->items * (size_t)G);
}

static prep_end_t torch_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                             double dur) {
    (void)sv, (void)ready_mem;
    torch_t *t = p->state;
    double *c = t->clk;
    /* ready: the read issued at clk[rank] is done. */
    prep_end_t e = {ready + dur, c[t->G + rank] + dur};
    c[rank] = e.t;
    c[t->G + rank] = e.mem;
    t->items[rank]++;
    return e;
}

static double torch_batch_ready(prep_t *p, int tl, double last_item) {
    (void)last_item;
    torch_t *t = p->state;
    int G = t->G, W = t->W;
    double ready = 0;
    for (int r = 0; r < G; r++) {
        double done = t->clk[tl * G + r] + t->collate_s * t->items[r];
        if (W > 0) t->wfree[((size_t)tl * G + r) * W + t->k] = done;
        if (t->pin_s > 0) {
            double *pf = &t->pin_free[tl * G + r];
            done = (done > *pf ? done : *pf) + t->pin_s * t->items[r];
            *pf = done;
        }
        if (done > ready) ready = done;
    }
    return ready;
}

static void torch_destroy(prep_t *p) {
    torch_t *t = p->state;
    if (t) free(t->wfree), free(t->pin_free), free(t->clk), free(t->items);
    free(t);
    p->state = NULL;
    p->clock = NULL;
}

static int torch_check(const scenario_t *s) {
    int bad = 0;
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
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "prep.decode")],
                   "prep.decode: gpu is DALI's mixed decoder (loader.kind: pool); loader.kind: "
                   "pytorch decodes in its workers on the CPU (use prep.decode: cpu)");
        bad = 1;
    }
    int pf = schema_find(SCOPE_JOB, "prefetch_batches");
    for (int i = 0; i < s->njobs; i++) {
        if (!s->jobs[i].origin[pf].file) continue;
        diag_error(s->jobs[i].origin[pf],
                   "jobs.%d.prefetch_batches is the pool loader's window; loader.kind: pytorch "
                   "keeps loader.prefetch_factor x loader.num_workers batches outstanding",
                   i);
        bad = 1;
    }
    if (s->loader.torch.drop_last) {
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
    int64_t w = s->loader.torch.num_workers;
    return w > 0 ? w * s->loader.torch.prefetch_factor : 1;
}

static int64_t torch_epoch_items(const scenario_t *s, int64_t n, int64_t m) {
    return s->loader.torch.drop_last ? n / m * m : n;
}

static double torch_items_s(double cores, double item_s) {
    return item_s > 0 ? cores / item_s : INFINITY;
}

/* The simulator's batch pipeline at the mean costs, batch by batch. */
static void torch_model_epoch(const loader_model_t *m, double *epoch_s, double *t_prep_s) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    const int W = (int)s->loader.torch.num_workers;
    const int64_t P = torch_staged(s, j);
    const int gps = (int)(j->gpus / m->ns);
    const double slow = slowdown(s, j, m->cores, gps > 0 ? gps : 1);
    const double b = (double)j->batch_per_gpu, M = b * (double)j->gpus;
    const double cpu = iter_cpu(s, j) * slow, start = ms(s->loader.torch.worker_start_ms);
    const double collate = collate_item(s) * slow;
    const double pin = s->loader.torch.pin_memory ? ms(s->loader.torch.pin_ms_per_item) * slow : 0;
    const int drop = s->loader.torch.drop_last;
    const int64_t nb = drop ? (int64_t)floor(m->items / M) : (int64_t)ceil(m->items / M);
    const int spawn = W > 0 && (m->epoch == 0 || !s->loader.torch.persistent_workers);
    double *wfree = calloc((size_t)(W > 0 ? W : 1), sizeof *wfree);
    double *started = calloc((size_t)P, sizeof *started);
    for (int tl = 0; tl < 2; tl++) {
        double end = 0, pin_free = 0, io_free = 0;
        for (int w = 0; wfree && w < W; w++)
            wfree[w] = spawn ? start * (w + 1) : 0;
        for (int64_t k = 0; wfree && started && k < nb; k++) {
            int last = k == nb - 1;
            double items = last && !drop ? (m->items - (double)k * M) : M;
            double per_rank = ceil(items / (double)j->gpus);
            int at = (int)(((double)k * M + items / 2) / m->items * m->steps);
            if (at >= m->steps) at = m->steps - 1;
            double wait = tl == 0 ? m->wait_s[at] : 0, floor_s = tl == 0 ? m->floor_s[at] : 0;
            double issue = k < P ? 0 : started[k % P];
            double begin = issue;
            if (W == 0) {
                if (end > begin) begin = end;
            } else if (wfree[k % W] > begin) {
                begin = wfree[k % W];
            }
            double done = begin + per_rank * (m->prep_s * slow + wait + collate);
            /* The stream's storage serves at most one item per floor_s. */
            io_free = (io_free > begin ? io_free : begin) + items * floor_s;
            if (io_free > done) done = io_free;
            if (W > 0) wfree[k % W] = done;
            if (pin > 0) done = pin_free = (done > pin_free ? done : pin_free) + pin * per_rank;
            double go = done > end ? done : end;
            end = go + cpu + (last ? m->t_last : m->t_batch);
            started[k % P] = go;
        }
        if (tl == 0)
            *epoch_s = end;
        else
            *t_prep_s = end;
    }
    free(wfree), free(started);
}

static double torch_bytes(const scenario_t *s, const job_t *j, double cores, int ns) {
    (void)cores, (void)ns;
    double G = (double)j->gpus,
           W = s->loader.torch.num_workers > 0 ? s->loader.torch.num_workers : 1;
    return 8 * (2 * G * W + 4 * G) + 4 * G + 64;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.num_workers", KT_INT, "processes", "0", 0, 4096, 0, NULL, SCN_FIELD(loader.torch.num_workers), "pytorch: worker processes per training process (GPU); 0 = load in the training process"},
    {"loader.prefetch_factor", KT_INT, "batches", "2", 1, 1048576, 0, NULL, SCN_FIELD(loader.torch.prefetch_factor), "pytorch: batches each worker may have outstanding"},
    {"loader.persistent_workers", KT_BOOL, "", "false", 0, 0, 0, NULL, SCN_FIELD(loader.torch.persistent_workers), "pytorch: keep the workers across epochs (false: forked again at every epoch)"},
    {"loader.pin_memory", KT_BOOL, "", "false", 0, 0, 0, NULL, SCN_FIELD(loader.torch.pin_memory), "pytorch: a thread copies each batch into pinned memory (PyTorch does nothing without a GPU)"},
    {"loader.drop_last", KT_BOOL, "", "false", 0, 0, 0, NULL, SCN_FIELD(loader.torch.drop_last), "pytorch: skip the last partial batch (its items are not read)"},
    {"loader.collate_ms_per_item", KT_REAL, "ms", "0.05", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.collate_ms_per_item), "pytorch: CPU to collate one item into its batch"},
    {"loader.share_ms_per_item", KT_REAL, "ms", "0.1", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.share_ms_per_item), "pytorch: a worker's CPU per item to hand its batch over (shared memory, the queue)"},
    {"loader.transfer_ms_per_item", KT_REAL, "ms", "0.01", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.transfer_ms_per_item), "pytorch: training-process CPU to receive one item of a batch from a worker"},
    {"loader.pin_ms_per_item", KT_REAL, "ms", "0.05", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.pin_ms_per_item), "pytorch: pin-memory thread CPU to copy one item (with pin_memory)"},
    {"loader.step_ms", KT_REAL, "ms", "0.2", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.step_ms), "pytorch: training-process CPU per iteration, serial with the GPU's compute"},
    {"loader.core_efficiency", KT_REAL, "", "1", 0.05, 1, 0, NULL, SCN_FIELD(loader.torch.core_efficiency), "pytorch: each process's speed with every core busy, relative to one process alone (the probe measures it)"},
    {"loader.worker_start_ms", KT_REAL, "ms", "10", 0, 1e9, 0, NULL, SCN_FIELD(loader.torch.worker_start_ms), "pytorch: forking one worker when an epoch's iterator is made"},
};
/* clang-format on */

static uint32_t torch_shard_lanes(const scenario_t *s, int *per_rank) {
    *per_rank = 1;
    return s->loader.torch.num_workers > 0 ? (uint32_t)s->loader.torch.num_workers : 1;
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
    .destroy = torch_destroy,
    .check = torch_check,
    .shard_lanes = torch_shard_lanes,
    .staged_batches = torch_staged,
    .epoch_items = torch_epoch_items,
    .items_s = torch_items_s,
    .model_epoch = torch_model_epoch,
    .state_bytes = torch_bytes,
};
