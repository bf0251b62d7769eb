/* loader_dali: NVIDIA DALI as a training job runs it, one pipeline per GPU
 * (one per training process, DDP), each mechanism from DALI's documentation:
 * - the Pipeline's `num_threads` CPU worker threads (loader.num_threads):
 *   "Number of CPU threads used by the pipeline" (nvidia.dali.pipeline.
 *   Pipeline, Python API; docs.nvidia.com/deeplearning/dali, "Advanced
 *   Topics": the thread pool a pipeline is built with). CPU operators work
 *   on one sample at a time per thread, GPU operators on the whole batch
 *   ("Memory consumption": "all GPU operators process the whole batch at a
 *   time while the CPU operator processes one sample at a time", DALI PR
 *   #587). Here a batch's samples are taken by the rank's threads in turn,
 *   each holding one of its server's cores (the CPU calendar, calendar.h,
 *   that every pipeline and training process on the server shares, as the
 *   pytorch kind's processes do; several jobs on a server each have their
 *   share of its cores, as under every kind); a batch's CPU stage starts when the
 *   previous one's has ended (the executor runs a stage iteration by
 *   iteration). The samples' operators are one task per sample: DALI runs
 *   operator after operator with the pool between them, which is the same
 *   time for samples of equal cost and a little more for unequal ones.
 * - mixed and GPU operators (prep.decode: gpu, nvJPEG's hybrid decoder;
 *   prep.on_gpu) run batched on the pipeline's GPU, which is the training
 *   GPU: their time is taken from it (scenario_job_compute_s) and reported
 *   as prep on the GPU (gpu_prep_s, DS-Analyzer's split); the decoder's CPU
 *   part (prep.huffman_*) runs in the pipeline's threads like any CPU
 *   operator. On a GPU with a hardware JPEG decoder (prep.hw_decode_mp_s),
 *   the mixed decoder sends it hw_decoder_load of the images (the
 *   decoders.image argument, default 0.65): those cost no thread and none
 *   of the SMs, only the engine's time beside them
 *   (scenario_job_gpu_prep_s).
 * - exec_pipelined / exec_async (default True): the CPU, mixed and GPU
 *   stages run asynchronously, "overlapping CPU and GPU computation ... but
 *   larger memory consumption" (Pipeline), with `prefetch_queue_depth`
 *   batches buffered (loader.prefetch_queue_depth, default 2); DALI also
 *   takes it as a dict {"cpu_size": .., "gpu_size": ..} with separated
 *   queues (exec_separated; the TensorFlow plugin's cpu_prefetch_queue_depth
 *   and gpu_prefetch_queue_depth, "DALIDataset", TensorFlow Plugin API):
 *   here loader.cpu_queue_depth and loader.gpu_queue_depth, given together.
 *   The CPU stage then runs up to cpu_size batches ahead of the mixed stage
 *   and that up to gpu_size ahead of the training loop: cpu_size + gpu_size
 *   batches in flight (uniform: prefetch_queue_depth). The GPU stage's time
 *   is the training GPU's, so the split changes where the buffers lie (host
 *   or GPU memory, below), not the times.
 * - the file reader (fn.readers.file: shard_id / num_shards, random_shuffle
 *   with initial_fill = 1024, prefetch_queue_depth = 1, "the number of
 *   batches to be prefetched by the internal Loader"): each pipeline reads
 *   its own shard of the data set; "reading is done in sequence in each
 *   pipeline" and, with random_shuffle, into "an internal buffer of fixed
 *   size (initial_fill) ... randomly sampled" when a batch is made (DALI
 *   issue #5429, maintainers' answer). Here each rank's Loader has
 *   loader.reader_threads threads (1: DALI's file reader) that read one file
 *   at a time, synchronously, so a disk sees ranks x reader threads reads in
 *   flight (readers_in_flight); the Loader reads batch k once the CPU stage
 *   has taken batch k - loader.reader_queue_depth (the reader's
 *   prefetch_queue_depth), and a batch's CPU stage starts once its files are
 *   all read (the reader outputs whole batches). loader.shuffle_buffer is
 *   initial_fill, one buffer per pipeline (buffer_items): reads run that
 *   many items per rank ahead of the output. The engine draws each epoch's
 *   order at random over the ranks; DALI's reader walks its shard in the
 *   file list's order, so on a disk whose files lie in that order its
 *   reads are nearer sequential than simulated (a pessimistic figure there).
 * Memory (NVIDIA/DALI issue #840, JanuszL: "the worst case sizes of images
 * in the batch at each operator output + prefetch queue depth number of
 * output buffers"; issue #2588: each stage boundary keeps as many buffers
 * as the output queue): per rank, host memory holds the CPU operators'
 * outputs for a batch (the reader's files at their largest, the CPU
 * decoder's images, the CPU transforms' outputs) and the CPU stage's output
 * queue; GPU memory the mixed and GPU operators' outputs for a batch and
 * the output queue (dali_host_bytes, dali_gpu_bytes).
 * The model solves the same stages at the epoch's mean costs, batch by
 * batch (dali_model_epoch), the cores shared as a fluid (dali_share). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calendar.h"
#include "diag.h"
#include "kinds.h"
#include "loader.h"
#include "memory.h"

/* The dali loader kind's own options (its rows store into them: KIND_FIELD). */
typedef struct {
    int64_t num_threads;
    int64_t prefetch_queue_depth;
    int64_t cpu_queue_depth; /* with gpu_queue_depth: separated queues; 0 = uniform */
    int64_t gpu_queue_depth;
    int64_t reader_threads;
    int64_t reader_queue_depth;
    double device_memory_padding_mb; /* nvJPEG's device buffer a thread (mixed decoder) */
    double host_memory_padding_mb;   /* and its two pinned host buffers a thread */
} dali_opts_t;
SCN_KIND_OPTS_FITS(dali_opts_t);

static const dali_opts_t *dali_opts(const scenario_t *s) {
    return scenario_kind_opts_c(s, FAMILY_LOADER, s->loader.kind);
}

typedef struct {
    int G, T, R, Q, ns, b;
    double *rfree;     /* [2][G][R]: when each reader thread is free */
    double *clk;       /* [2][G]: each rank's next read; clk[0..G) is p->clock */
    double *gate;      /* [2][G]: when the Loader may read this batch */
    double *rend;      /* [2][G]: the batch's last file read */
    double *cend;      /* [2][G]: the previous batch's CPU stage done */
    double *cstart;    /* [2][G][Q]: when the CPU stage took batch k (ring) */
    double *tfree;     /* [G][T]: scratch, each rank's threads in the batch */
    double *dur;       /* [G][b]: the batch's items' CPU seconds */
    int *items;        /* [G] */
    uint16_t *rank_sv; /* [G] */
    double issue[2];
    int64_t k;
    calendar_t *cpu; /* [2][ns]: each server's cores */
} dali_t;

enum { CPU_LOG2 = 13 };

/* Batches in flight: the CPU queue and the GPU queue, or the uniform depth. */
static int separated(const scenario_t *s) {
    return dali_opts(s)->cpu_queue_depth > 0;
}

static int64_t cpu_depth(const scenario_t *s) {
    return separated(s) ? dali_opts(s)->cpu_queue_depth : dali_opts(s)->prefetch_queue_depth;
}

static int64_t gpu_depth(const scenario_t *s) {
    return separated(s) ? dali_opts(s)->gpu_queue_depth : dali_opts(s)->prefetch_queue_depth;
}

static int64_t dali_staged(const scenario_t *s, const job_t *j) {
    (void)j;
    return separated(s) ? cpu_depth(s) + gpu_depth(s) : dali_opts(s)->prefetch_queue_depth;
}

static double effective_cores(const scenario_t *s, double cores) {
    return scenario_prep_cores_shaped(s) ? scenario_prep_cores(s, cores, NULL) : cores;
}

/* Buckets of about two items' CPU, reaching back over a few batches. */
static double bucket_s(const scenario_t *s, const job_t *j) {
    double c = scenario_job_prep_s(s, j, scenario_item_bytes_mean(s));
    double wait = scenario_storage(s)->service_s(s, scenario_item_bytes_mean(s));
    double reach = 4 * (double)j->batch_per_gpu * (c + wait);
    if (reach < CALENDAR_REACH_S) reach = CALENDAR_REACH_S;
    double dt = 2 * c, least = reach / (double)(1 << CPU_LOG2);
    return dt > least ? dt : least;
}

/* calendar_hold, ending no sooner than its last bucket has served what it
 * gave out at its rate (the same rule as loader_threads.c: the slots alone
 * let requests at a bucket's start take its capacity all at once). */
static double hold(calendar_t *c, double at, double dur) {
    double end;
    calendar_hold(c, at, dur, &end);
    const double q = end / c->dt;
    int64_t i = q > 0 ? (int64_t)q : 0;
    if ((double)i * c->dt >= end && i > 0) i--;
    if (i < c->top - (int64_t)c->mask) return end;
    const double fluid = (double)i * c->dt + (c->cap - *calendar_left(c, i)) / c->rate;
    return fluid > end ? fluid : end;
}

static int dali_alloc(dali_t *d, int ns) {
    size_t G = (size_t)d->G;
    d->rfree = calloc(2 * G * (size_t)d->R, sizeof *d->rfree);
    d->clk = calloc(2 * G, sizeof *d->clk);
    d->gate = calloc(2 * G, sizeof *d->gate);
    d->rend = calloc(2 * G, sizeof *d->rend);
    d->cend = calloc(2 * G, sizeof *d->cend);
    d->cstart = calloc(2 * G * (size_t)d->Q, sizeof *d->cstart);
    d->tfree = calloc(G * (size_t)d->T, sizeof *d->tfree);
    d->dur = calloc(G * (size_t)d->b, sizeof *d->dur);
    d->items = calloc(G, sizeof *d->items);
    d->rank_sv = calloc(G, sizeof *d->rank_sv);
    d->cpu = calloc(2 * (size_t)ns, sizeof *d->cpu);
    return !d->rfree || !d->clk || !d->gate || !d->rend || !d->cend || !d->cstart || !d->tfree ||
                   !d->dur || !d->items || !d->rank_sv || !d->cpu
               ? -1
               : 0;
}

static int dali_init(prep_t *p) {
    const scenario_t *s = p->s;
    dali_t *d = calloc(1, sizeof *d);
    p->state = d;
    if (!d) return -1;
    d->G = p->ranks;
    d->T = (int)dali_opts(s)->num_threads;
    d->R = (int)dali_opts(s)->reader_threads;
    d->Q = (int)dali_opts(s)->reader_queue_depth;
    d->ns = p->ns;
    d->b = (int)p->job->batch_per_gpu;
    p->slowdown = 1;
    p->cpu_slots = effective_cores(s, p->cores);
    if (dali_alloc(d, p->ns) != 0) return -1;
    const int per = p->ranks_per_server > 0 ? p->ranks_per_server : 1;
    for (int r = 0; r < d->G; r++)
        d->rank_sv[r] = (uint16_t)(r / per < p->ns ? r / per : p->ns - 1);
    const double dt = bucket_s(s, p->job);
    for (int i = 0; i < 2 * p->ns; i++)
        if (calendar_init(&d->cpu[i], dt, p->cpu_slots, CPU_LOG2) != 0) return -1;
    p->clock = d->clk;
    return 0;
}

/* Rank r's next read on timeline tl: its earliest-free reader thread, not
 * before the Loader may read the batch. */
static double next_read(const dali_t *d, int tl, int r, int *thread) {
    const double *f = &d->rfree[((size_t)tl * d->G + r) * d->R];
    int k = 0;
    for (int i = 1; i < d->R; i++)
        if (f[i] < f[k]) k = i;
    if (thread) *thread = k;
    const double g = d->gate[tl * d->G + r];
    return f[k] > g ? f[k] : g;
}

static void dali_begin_batch(prep_t *p, int epoch, int64_t batch, const double issue[2],
                             const double idle[2]) {
    (void)epoch, (void)idle;
    dali_t *d = p->state;
    const int G = d->G, Q = d->Q;
    d->k = batch;
    for (int tl = 0; tl < 2; tl++) {
        d->issue[tl] = issue[tl];
        for (int i = 0; batch == 0 && i < d->ns; i++)
            calendar_cap_before(&d->cpu[tl * d->ns + i], issue[tl]);
        for (int r = 0; r < G; r++) {
            /* The Loader reads batch k once the CPU stage has taken batch
             * k - Q (its prefetch queue), and no earlier than the window
             * lets the batch be issued at all at an epoch's start. */
            double g = batch >= Q ? d->cstart[((size_t)tl * G + r) * Q + batch % Q] : issue[tl];
            if (batch == 0 || g < 0) g = issue[tl];
            d->gate[tl * G + r] = g;
            d->rend[tl * G + r] = g;
            d->clk[tl * G + r] = next_read(d, tl, r, NULL);
        }
    }
    memset(d->items, 0, sizeof *d->items * (size_t)G);
}

static prep_end_t dali_item(prep_t *p, int sv, int rank, double ready, double ready_mem,
                            double dur) {
    (void)sv, (void)ready_mem;
    dali_t *d = p->state;
    const int G = d->G;
    /* T: the file read issued at clk[rank] is in at `ready`; T_prep: in
     * memory, read at once when the Loader may read it. */
    const double in[2] = {ready, d->clk[G + rank]};
    for (int tl = 0; tl < 2; tl++) {
        int th;
        next_read(d, tl, rank, &th);
        d->rfree[((size_t)tl * G + rank) * d->R + th] = in[tl];
        double *re = &d->rend[tl * G + rank];
        if (in[tl] > *re) *re = in[tl];
        d->clk[tl * G + rank] = next_read(d, tl, rank, NULL);
    }
    int n = d->items[rank]++;
    if (n < d->b) d->dur[(size_t)rank * d->b + n] = dur;
    /* The item's CPU runs with its batch's stage (batch_ready); what is
     * said per item here is its read's end and its own CPU after it. */
    return (prep_end_t){in[0] + dur, in[1] + dur};
}

/* The batch's CPU stage on timeline tl: each rank's samples in turn on its
 * threads, each holding one of its server's cores, from when the rank's
 * files are in, its previous batch's stage is done and the window lets it
 * start. The ranks' samples are interleaved (sample i of every rank, then
 * i + 1) so that a server's calendar is asked in about time order: rank
 * after rank would find each bucket taken by the ranks before. */
static double dali_batch_ready(prep_t *p, int tl, double last_item) {
    (void)last_item;
    dali_t *d = p->state;
    const int G = d->G, T = d->T;
    int most = 0;
    for (int r = 0; r < G; r++) {
        double start = d->rend[tl * G + r];
        if (d->cend[tl * G + r] > start) start = d->cend[tl * G + r];
        if (d->issue[tl] > start) start = d->issue[tl];
        d->cstart[((size_t)tl * G + r) * d->Q + d->k % d->Q] = start;
        d->cend[tl * G + r] = start;
        for (int i = 0; i < T; i++)
            d->tfree[(size_t)r * T + i] = start;
        if (d->items[r] > most) most = d->items[r];
    }
    if (most > d->b) most = d->b;
    for (int i = 0; i < most; i++)
        for (int r = 0; r < G; r++) {
            if (i >= d->items[r]) continue;
            double *f = &d->tfree[(size_t)r * T];
            int t = 0;
            for (int j = 1; j < T; j++)
                if (f[j] < f[t]) t = j;
            f[t] = hold(&d->cpu[tl * d->ns + d->rank_sv[r]], f[t], d->dur[(size_t)r * d->b + i]);
            if (f[t] > d->cend[tl * G + r]) d->cend[tl * G + r] = f[t];
        }
    double ready = d->issue[tl];
    for (int r = 0; r < G; r++)
        if (d->cend[tl * G + r] > ready) ready = d->cend[tl * G + r];
    return ready;
}

/* Each rank's training process runs its step's CPU beside its GPU's
 * compute, on its server's cores, against the pipelines' threads. */
static double dali_train_cpu(prep_t *p, int tl, double start, double dur) {
    dali_t *d = p->state;
    double end = start;
    for (int r = 0; r < d->G; r++) {
        double e = hold(&d->cpu[tl * d->ns + d->rank_sv[r]], start, dur);
        if (e > end) end = e;
    }
    return end;
}

static void dali_destroy(prep_t *p) {
    dali_t *d = p->state;
    if (d) {
        for (int i = 0; d->cpu && i < 2 * d->ns; i++)
            calendar_destroy(&d->cpu[i]);
        free(d->rfree), free(d->clk), free(d->gate), free(d->rend), free(d->cend);
        free(d->cstart), free(d->tfree), free(d->dur), free(d->items), free(d->rank_sv);
        free(d->cpu);
    }
    free(d);
    p->state = NULL;
    p->clock = NULL;
}

static double dali_items_s(double cores, double item_s) {
    return item_s > 0 ? cores / item_s : INFINITY;
}

/* ---- the model ---- */

/* What one server's pipelines ask of its cores: per item, the CPU stage's
 * c and the training process's CPU tr; each rank's items flow at the
 * slowest of its threads (T / (sg c)), its reader (R / w), its GPU (b /
 * gpu) and the stream's storage (1 / (floor G)). */
typedef struct {
    double c, tr, w, gpu, b, T, R, gps, G, floor;
} demand_t;

static double rank_items_s(const demand_t *d, double sg) {
    double x = d->c > 0 ? d->T / (sg * d->c) : INFINITY;
    if (d->w > 0 && d->R / d->w < x) x = d->R / d->w;
    if (d->gpu > 0 && d->b / d->gpu < x) x = d->b / d->gpu;
    if (d->floor > 0 && 1 / (d->floor * d->G) < x) x = 1 / (d->floor * d->G);
    return x;
}

/* The slowdown (>= 1) at which the CPU the server's pipelines and
 * training processes use fits the cores: the calendar's fluid sharing. */
static double dali_share(const demand_t *d, double capacity) {
    const double per = d->c + d->tr;
    if (!(capacity > 0) || !(per > 0)) return 1;
#define USED(sg) (d->gps * rank_items_s(d, (sg)) * per)
    if (USED(1) <= capacity) return 1;
    double lo = 1, hi = 2;
    for (int i = 0; i < 64 && USED(hi) > capacity; i++)
        lo = hi, hi *= 2;
    for (int i = 0; i < 60 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (USED(mid) > capacity)
            lo = mid;
        else
            hi = mid;
    }
#undef USED
    return hi;
}

/* The slowdown in slice `at` on timeline tl. */
static double share_at(const loader_model_t *m, int tl, int at) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    const int gps = (int)(j->gpus / m->ns);
    const double train = j->train_cpu_ms / 1e3;
    demand_t d = {
        .c = m->prep_s,
        .tr = train / (double)j->batch_per_gpu,
        .w = tl == 0 ? m->wait_s[at] : 0,
        .gpu = fmax(m->t_batch, train),
        .b = (double)j->batch_per_gpu,
        .T = (double)dali_opts(s)->num_threads,
        .R = (double)dali_opts(s)->reader_threads,
        .gps = gps > 0 ? gps : 1,
        .G = (double)j->gpus,
        .floor = fmax(tl == 0 ? m->floor_s[at] : 0, m->engine_s),
    };
    return dali_share(&d, effective_cores(s, m->cores));
}

/* One rank's mean batch through the stages: the reader, then the CPU
 * stage; state carried from batch to batch. */
typedef struct {
    double rfree, cend, io_free, buf;
    double *cstart;  /* [Q] */
    double *started; /* [P + lag]: when the loop took output batch k */
} chain_t;

static void dali_model_epoch(const loader_model_t *m, double *epoch_s, double *t_prep_s) {
    const scenario_t *s = m->s;
    const job_t *j = m->job;
    const double G = (double)j->gpus, M = (double)j->batch_per_gpu * G;
    const int64_t nb = (int64_t)ceil(m->items / M);
    const int64_t lag = loader_buffer_slices(s, j, (int64_t)m->items, (int64_t)M);
    const int64_t A = dali_staged(s, j) + lag, Q = dali_opts(s)->reader_queue_depth;
    const double T = (double)dali_opts(s)->num_threads, R = (double)dali_opts(s)->reader_threads;
    const double train = j->train_cpu_ms / 1e3;
    const double t_batch = fmax(m->t_batch, train), t_last = fmax(m->t_last, train);
    chain_t c = {.cstart = calloc((size_t)Q, sizeof(double)),
                 .started = calloc((size_t)A, sizeof(double))};
    double *sg = malloc(2 * (size_t)m->steps * sizeof *sg);
    for (int i = 0; sg && i < 2 * m->steps; i++)
        sg[i] = share_at(m, i / m->steps, i % m->steps);
    for (int tl = 0; tl < 2 && c.cstart && c.started && sg; tl++) {
        double end = 0;
        int64_t out = 0; /* the next output batch the loop takes */
        c.rfree = c.cend = c.io_free = c.buf = 0;
        for (int64_t k = 0; k < nb; k++) {
            const int last = k == nb - 1;
            const double items = last ? m->items - (double)k * M : M;
            const double n = ceil(items / G);
            int at = (int)(((double)k * M + items / 2) / m->items * m->steps);
            if (at >= m->steps) at = m->steps - 1;
            const double i0 = (double)k * M, i1 = i0 + items;
            const double wait = tl == 0 ? loader_model_span(m, m->wait_s, i0, i1) : 0;
            const double floor_s =
                fmax(tl == 0 ? loader_model_span(m, m->floor_s, i0, i1) : 0, m->engine_s);
            const double issue = k < A ? 0 : c.started[k % A];
            /* The Loader: batch k once the CPU stage took batch k - Q. */
            const double gate = k < Q ? issue : c.cstart[k % Q];
            double rb = c.rfree > gate ? c.rfree : gate;
            double rend = rb + ceil(n / R) * wait;
            c.io_free = (c.io_free > rb ? c.io_free : rb) + items * floor_s;
            if (c.io_free > rend) rend = c.io_free;
            c.rfree = rend;
            double start = fmax(fmax(rend, c.cend), issue);
            c.cstart[k % Q] = start;
            /* Alone, the threads take the samples in rounds; shared, the
             * cores other pipelines leave fill a round's idle threads. */
            const double slow = sg[tl * m->steps + at];
            c.cend = start + fmax(ceil(n / T), n * slow / T) * m->prep_s;
            /* The shuffle buffer: output batch k - lag leaves once slice k
             * is in; the last slice lets out the rest. */
            if (c.cend > c.buf) c.buf = c.cend;
            for (; out <= (last ? nb - 1 : k - lag); out++) {
                double go = c.buf > end ? c.buf : end;
                end = go + (out == nb - 1 ? t_last : t_batch);
                c.started[out % A] = go;
                if (out == 0 && tl == 0 && m->first_go) *m->first_go = go;
            }
        }
        if (tl == 0)
            *epoch_s = end;
        else
            *t_prep_s = end;
    }
    free(c.cstart), free(c.started), free(sg);
}

/* ---- memory (NVIDIA/DALI#840's formula, per rank) ---- */

/* A file at its largest: three standard deviations above the mean size. */
static double item_max(const scenario_t *s) {
    return s->dataset.item_kb * 1e3 * (1 + 3 * s->dataset.item_kb_cv);
}

/* A decoded image (RGB, dataset.megapixels), else the prepared item. */
static double decoded(const scenario_t *s, const job_t *j) {
    return s->dataset.megapixels > 0 ? s->dataset.megapixels * 1e6 * 3
                                     : scenario_job_out_item_bytes(s, j);
}

/* The mixed decoder's nvJPEG buffers, preallocated at the padding and kept:
 * one device buffer and two pinned host buffers (double buffering) per
 * thread of the pipeline (NVIDIA/DALI dali/operators/decoder/image_decoder.cc,
 * device_memory_padding and host_memory_padding, defaults 16 and 8 MiB;
 * nvjpeg_decoder_decoupled_api.h: device_buffers_(num_threads_),
 * pinned_buffers_(num_threads_*2)). A larger image than the padding grows a
 * buffer by a size nvJPEG does not publish: not counted. */
static double nvjpeg_bytes(const scenario_t *s, const job_t *j, int device) {
    if (!pipeline_gpu_decodes(s, j)) return 0;
    const double T = (double)dali_opts(s)->num_threads;
    return device ? T * dali_opts(s)->device_memory_padding_mb * MIB
                  : 2 * T * dali_opts(s)->host_memory_padding_mb * MIB;
}

/* Host: the CPU operators' outputs for a batch (the reader's files; under
 * CPU decode the decoder's images and the transforms' outputs) and the CPU
 * stage's output queue (encoded files for the mixed decoder, else the
 * prepared batch); the reader's own prefetch queue of files; the mixed
 * decoder's pinned buffers. */
static double dali_proc(const scenario_t *s, const job_t *j, char *note, size_t n) {
    const double b = (double)j->batch_per_gpu, out = scenario_job_out_item_bytes(s, j);
    const int gpu = pipeline_gpu_decodes(s, j);
    const double ops = b * (item_max(s) + (gpu ? 0 : decoded(s, j) + out));
    const double queue = (double)cpu_depth(s) * b * (gpu ? item_max(s) : out);
    const double reader = (double)dali_opts(s)->reader_queue_depth * b * item_max(s);
    const double pinned = nvjpeg_bytes(s, j, 0);
    if (note)
        snprintf(note, n,
                 "a pipeline's operators %.1f MiB + its CPU queue of %lld batches %.1f "
                 "MiB + its reader's %.1f MiB + nvJPEG's pinned %.1f MiB",
                 ops / MIB, (long long)cpu_depth(s), queue / MIB, reader / MIB, pinned / MIB);
    return ops + queue + reader + pinned;
}

/* GPU: the mixed and GPU operators' outputs for a batch (the decoder's
 * images, the transforms' outputs) and the output queue of prepared
 * batches (gpu_size, or the uniform depth). */
static double dali_gpu(const scenario_t *s, const job_t *j, char *note, size_t n) {
    const double b = (double)j->batch_per_gpu, out = scenario_job_out_item_bytes(s, j);
    const double ops = pipeline_gpu_decodes(s, j) ? b * (decoded(s, j) + out) : 0;
    const double queue = (double)gpu_depth(s) * b * out, dec = nvjpeg_bytes(s, j, 1);
    if (note)
        snprintf(note, n,
                 "DALI's GPU operators %.1f MiB + nvJPEG's buffers %.1f MiB + its GPU queue of "
                 "%lld batches %.1f MiB",
                 ops / MIB, dec / MIB, (long long)gpu_depth(s), queue / MIB);
    return ops + dec + queue;
}

static int64_t dali_buffer_items(const scenario_t *s, const job_t *j, int64_t B) {
    (void)s;
    return B * j->gpus;
}

/* ---- rules ---- */

static int refuse(const scenario_t *s, const char *key, int on, const char *why) {
    if (!on) return 0;
    diag_error(s->origin[schema_find(SCOPE_SCENARIO, key)], "%s: loader.kind: dali %s", key, why);
    return 1;
}

/* A GPU's memory: the job's own and DALI's buffers on it. */
static int gpu_fits(const scenario_t *s) {
    if (!(s->server.gpu_mem_gb > 0)) return 0;
    for (int i = 0; i < s->njobs; i++) {
        const job_t *j = &s->jobs[i];
        char note[160];
        const double need = j->gpu_mem_gb * 1e9 + dali_gpu(s, j, note, sizeof note);
        if (need <= s->server.gpu_mem_gb * 1e9) continue;
        diag_error(s->origin[schema_find(SCOPE_SCENARIO, "server.gpu_mem_gb")],
                   "job '%s' does not fit its GPUs under loader.kind: dali: %.4g GB each "
                   "(training %.3g GB + %s) but server.gpu_mem_gb = %g; lower batch_per_gpu or "
                   "loader.gpu_queue_depth (loader.prefetch_queue_depth)",
                   j->name, need / 1e9, j->gpu_mem_gb, note, s->server.gpu_mem_gb);
        return 1;
    }
    return 0;
}

static int dali_check(const scenario_t *s) {
    int bad = 0;
    const int cq = schema_find(SCOPE_SCENARIO, "loader.cpu_queue_depth"),
              gq = schema_find(SCOPE_SCENARIO, "loader.gpu_queue_depth"),
              pq = schema_find(SCOPE_SCENARIO, "loader.prefetch_queue_depth");
    if (!s->explicit_key[cq] != !s->explicit_key[gq]) {
        diag_error(s->origin[s->explicit_key[cq] ? cq : gq],
                   "loader.cpu_queue_depth and loader.gpu_queue_depth are DALI's separated "
                   "queues (prefetch_queue_depth={\"cpu_size\": C, \"gpu_size\": G}): give both, "
                   "or neither and loader.prefetch_queue_depth");
        bad = 1;
    } else if (s->explicit_key[cq] && s->explicit_key[pq]) {
        diag_error(s->origin[pq], "loader.prefetch_queue_depth: the separated queues "
                                  "(loader.cpu_queue_depth, loader.gpu_queue_depth) replace it: "
                                  "leave it out");
        bad = 1;
    }
    bad |= refuse(s, "loader.prep", s->loader.prep == PREP_COORDINATED,
                  "runs a pipeline per GPU of each job (CoorDL's coordinated prep: loader.kind: "
                  "pool)");
    bad |= refuse(s, "dataset.shard_items", s->dataset.shard_items > 1,
                  "reads loose files with fn.readers.file (its record readers are not modelled "
                  "yet: use loader.kind: pool)");
    int pf = schema_find(SCOPE_JOB, "prefetch_batches");
    for (int i = 0; i < s->njobs; i++) {
        if (!s->jobs[i].origin[pf].file) continue;
        diag_error(s->jobs[i].origin[pf],
                   "jobs.%d.prefetch_batches is the pool loader's window; loader.kind: dali "
                   "keeps loader.prefetch_queue_depth batches in flight",
                   i);
        bad = 1;
    }
    bad |= gpu_fits(s);
    return bad ? EXIT_INPUT : 0;
}

/* ---- the rest of the ops ---- */

static double dali_bytes(const scenario_t *s, const job_t *j, double cores, int ns) {
    (void)cores;
    const double G = (double)j->gpus;
    const double R = (double)dali_opts(s)->reader_threads,
                 Q = (double)dali_opts(s)->reader_queue_depth,
                 T = (double)dali_opts(s)->num_threads, b = (double)j->batch_per_gpu;
    return 8 * (2 * G * R + 8 * G + 2 * G * Q + G * T + G * b) + 6 * G + 160 +
           2 * ns * (calendar_bytes(CPU_LOG2) + 64);
}

/* Loose files only (record shards are refused): the engine still asks. */
static uint32_t dali_shard_lanes(const scenario_t *s, int *per_rank) {
    (void)s;
    *per_rank = 0;
    return 1;
}

/* Each pipeline's reader threads wait on one file each: ranks x reader
 * threads, a server holding at most its GPUs' ranks. */
static int64_t dali_readers(const scenario_t *s) {
    return loader_ranks_a_server(s) * dali_opts(s)->reader_threads;
}

/* num_threads worth trying: 1, 2, 3, 4, 6, 8, 12, 16, ... up to 64. */
static int dali_knob_values(const scenario_t *s, int64_t *v, int max) {
    (void)s;
    return loader_knob_ladder(v, max, 1, 64);
}

static void dali_knob_set(scenario_t *s, int64_t v) {
    dali_opts_t *o = scenario_kind_opts(s, FAMILY_LOADER, s->loader.kind);
    o->num_threads = v;
}

/* clang-format off */
static const key_def_t keys[] = {
    {"loader.num_threads", KT_INT, "threads", "4", 1, 1024, 0, NULL, KIND_FIELD(dali_opts_t, num_threads), "dali: the CPU threads of each GPU's pipeline (Pipeline(num_threads=)): each runs one sample's CPU operators at a time on one of the server's cores, which every pipeline and training process on the server share"},
    {"loader.prefetch_queue_depth", KT_INT, "batches", "2", 1, 1024, 0, NULL, KIND_FIELD(dali_opts_t, prefetch_queue_depth), "dali: batches each pipeline buffers ahead of the training loop with its stages run asynchronously (Pipeline(prefetch_queue_depth=N), exec_pipelined and exec_async): N in flight, N at each stage boundary"},
    {"loader.cpu_queue_depth", KT_INT, "batches", "0", 0, 1024, 0, NULL, KIND_FIELD(dali_opts_t, cpu_queue_depth), "dali: separated queues (prefetch_queue_depth={\"cpu_size\": C, \"gpu_size\": G}), with loader.gpu_queue_depth: the CPU stage runs C batches ahead of the mixed stage, which runs G ahead of the loop (C + G in flight; C in host memory, G on the GPU; 0 = the uniform loader.prefetch_queue_depth)"},
    {"loader.gpu_queue_depth", KT_INT, "batches", "0", 0, 1024, 0, NULL, KIND_FIELD(dali_opts_t, gpu_queue_depth), "dali: separated queues' gpu_size, with loader.cpu_queue_depth (0 = uniform)"},
    {"loader.reader_threads", KT_INT, "threads", "1", 1, 1024, 0, NULL, KIND_FIELD(dali_opts_t, reader_threads), "dali: threads of each pipeline's file reader (fn.readers.file: its Loader reads its shard's files one at a time, 1), each waiting on one read: the storage sees GPUs x reader_threads reads in flight"},
    {"loader.reader_queue_depth", KT_INT, "batches", "1", 1, 1024, 0, NULL, KIND_FIELD(dali_opts_t, reader_queue_depth), "dali: batches the file reader reads ahead of the CPU stage (fn.readers.file's prefetch_queue_depth)"},
    {"loader.device_memory_padding_mb", KT_REAL, "MiB", "16", 0, 1e6, 0, NULL, KIND_FIELD(dali_opts_t, device_memory_padding_mb), "dali: the mixed decoder's device_memory_padding (fn.decoders.image, 16 MiB by default): under prep.decode: gpu nvJPEG preallocates one device buffer of it per thread, counted in the GPU's memory (a larger image grows it further, not counted)"},
    {"loader.host_memory_padding_mb", KT_REAL, "MiB", "8", 0, 1e6, 0, NULL, KIND_FIELD(dali_opts_t, host_memory_padding_mb), "dali: the mixed decoder's host_memory_padding (8 MiB by default): under prep.decode: gpu nvJPEG preallocates two pinned host buffers of it per thread, counted in the server's memory"},
};
/* clang-format on */

const loader_ops_t loader_dali = {
    .name = "dali",
    .help = "NVIDIA DALI: a pipeline per GPU with loader.num_threads CPU threads, its file reader "
            "on a shard, stages run asynchronously with prefetch_queue_depth",
    .keys = keys,
    .nkeys = sizeof keys / sizeof keys[0],
    .sync_reads = 1,
    .init = dali_init,
    .begin_batch = dali_begin_batch,
    .item = dali_item,
    .batch_ready = dali_batch_ready,
    .train_cpu = dali_train_cpu,
    .destroy = dali_destroy,
    .check = dali_check,
    .staged_batches = dali_staged,
    .shard_lanes = dali_shard_lanes,
    .readers_in_flight = dali_readers,
    .items_s = dali_items_s,
    .model_epoch = dali_model_epoch,
    .proc_bytes = dali_proc,
    .gpu_bytes = dali_gpu,
    .buffer_items = dali_buffer_items,
    .knob = "loader.num_threads",
    .knob_values = dali_knob_values,
    .knob_set = dali_knob_set,
    .state_bytes = dali_bytes,
};
