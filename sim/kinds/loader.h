/* loader: what a data-loader kind is to stallsim. Each kind is one file
 * (loader_<name>.c) exporting one loader_ops_t that owns its schema rows,
 * how a batch's items are prepared once fetched (the simulator's prep stage),
 * its prep rate and prefetch window for the model, and its state bytes.
 * kinds.c lists the kinds; `loader.kind` picks one.
 *
 * The simulator runs a stream batch by batch: the engine fetches each item
 * (cache, storage, network) and hands it to the loader on two timelines: T
 * (the item ready when fetched) and T_prep (every item in memory,
 * DS-Analyzer's differential run). One call per item, interleaved with the
 * fetch: the out-of-order core overlaps the loader's arithmetic with the
 * fetch's cache misses (a batch-at-a-time stage measured 1.8x slower). */
#ifndef STALLSIM_LOADER_H
#define STALLSIM_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "scenario.h"
#include "schema.h"

enum { PREP_TIMELINES = 2 }; /* 0: T, 1: T_prep */

/* One stream's prep stage: ns servers with `cores` cores each as the
 * scenario gives them (may be fractional: a share of a server). */
typedef struct {
    const scenario_t *s;
    const job_t *job; /* the stream's (first) job */
    int ns;
    double cores;
    int ranks, ranks_per_server; /* the job's GPUs: one training process each */
    /* Set by init: each item's CPU time is multiplied by slowdown (a
     * fractional share runs as more, slower cores), and cpu_slots is the
     * number of simulated cores per server, the denominator of cpu_util. */
    double slowdown;
    double cpu_slots;
    /* The last item's seconds on its core on timeline T per second of its
     * CPU: the engine sets 1, and a kind that dilates each item itself (the
     * pool under a measured curve) sets it in item. */
    double dilation;
    /* Set by init for a loader whose workers read synchronously (NULL when
     * the reads of a batch are all issued at once): clock[rank] is when the
     * worker preparing that rank's batch on T issues its next read. */
    double *clock;
    /* Set by the engine for record shards read per worker: which worker
     * prepares batch k (a worker out of shards drops out of the turn, as a
     * DataLoader over an IterableDataset does); NULL: k mod workers. */
    const uint32_t *batch_worker;
    /* Set by init: seconds of training-process CPU per iteration, serial
     * with the GPU's compute (receiving the batch, the Python step). */
    double iter_cpu_s;
    /* Set by the engine: the kind's train_share of the stream's cores. */
    double train_share;
    /* Set by the engine: the most of a server's cores the stream can keep
     * busy at once (its window's items there and the server's training
     * processes): loader_cores_in_use's bound. */
    double busy_max;
    /* Set by the engine: the batches of one of the stream's epochs. */
    int64_t batches;
    /* Set by the engine: when the consumers took batch k of the epoch, by
     * k % ahead, on each timeline (batch k + ahead is issued then), known
     * for the batches below taken (during iter_cpu, taken is the batch
     * being taken); the first ahead batches are issued at the epoch's
     * start. A kind that shares cores among workers reads from them which
     * workers have a batch waiting. */
    const double *started[PREP_TIMELINES];
    int64_t ahead, taken;
    void *state;
} prep_t;

/* When an item's prep ends on each timeline (returned in two registers). */
typedef struct {
    double t, mem;
} prep_end_t;

/* What the model knows of one stream's epoch: the pipeline's mean costs,
 * along the epoch's order in `steps` slices of equal items. */
typedef struct loader_model {
    const scenario_t *s;
    const job_t *job;
    double items;          /* in the epoch */
    double cores;          /* per server, for this stream */
    int ns;                /* servers */
    int epoch;             /* 0-based */
    double prep_s;         /* CPU seconds to prepare one mean item */
    const double *wait_s;  /* [steps]: a worker's mean wait per item for storage */
    const double *floor_s; /* [steps]: the least seconds per item the stream's storage allows */
    double engine_s;       /* the least seconds per item the GPUs' decoder engines allow, on
                              both timelines (pipeline_engine_items_s; 0: none) */
    int steps;
    double t_batch, t_last; /* GPU compute of a full and of the last batch */
    /* Out, when not NULL: when the epoch's first step starts on T. */
    double *first_go;
} loader_model_t;

typedef struct {
    const char *name;
    const char *help;
    const key_def_t *keys; /* its own scenario rows */
    int nkeys;
    int sync_reads; /* workers read one item at a time: reads reach storage out of time order */

    /* Simulator: init fills slowdown, cpu_slots and the state (0, or -1
     * without memory). item prepares one item that needs `dur` seconds of
     * one core on the stream's server sv, on both timelines at once (one call
     * per item: the hot loop's cost): fetched by `ready` on T, by `ready_mem`
     * on T_prep; it returns when each is done. Items come in issue order,
     * batch by batch; each timeline keeps its own cores. batch_ready turns
     * the time the batch's last item was prepared into the time the batch is
     * ready. */
    int (*init)(prep_t *p);
    /* Optional: called before a batch's first item with the batch's index in
     * the epoch, the time its buffer is free (issue) and the time the
     * training process finished the previous iteration (idle), per timeline. */
    void (*begin_batch)(prep_t *p, int epoch, int64_t batch, const double issue[2],
                        const double idle[2]);
    prep_end_t (*item)(prep_t *p, int sv, int rank, double ready, double ready_mem, double dur);
    double (*batch_ready)(prep_t *p, int tl, double last_item);
    /* Optional: when the training processes' CPU of an iteration that starts
     * at `start` on timeline tl is done (default: start + iter_cpu_s), for a
     * kind whose processes share the cores with that CPU. */
    double (*iter_cpu)(prep_t *p, int tl, double start);
    /* Optional: when the training processes are done with the epoch's
     * loader, their last iteration on timeline tl ending at `end` (PyTorch's
     * iterator joins its workers at StopIteration); default `end`. The next
     * epoch starts then. */
    double (*epoch_end)(prep_t *p, int tl, double end);
    /* Optional: when the stream's training processes (each rank's) are done
     * with `dur` seconds of CPU each, taken beside their GPUs' compute from
     * `start` on timeline tl (jobs.N.train_cpu_ms), for a kind whose cores
     * they share (default: start + dur, a core each of their own). */
    double (*train_cpu)(prep_t *p, int tl, double start, double dur);
    /* Optional: seconds of one of the kind's cores that a training process's
     * CPU second takes on a server of `cores` (a fractional share of a
     * server runs time-shared, slower; default 1). The model uses it too. */
    double (*train_share)(double cores);
    /* Optional: seconds of CPU each rank of a job that consumes a stream
     * shared by `consumers` jobs spends per iteration receiving its slice of
     * the batch (CoorDL's hand-off through shared memory), `readers` ranks
     * of the stream copying on its server at once; charged as
     * jobs.N.train_cpu_ms is (train_cpu), but prep, not T_gpu. Default 0. */
    double (*handoff_s)(const scenario_t *s, const job_t *j, int consumers, int readers);
    void (*destroy)(prep_t *p);

    /* Optional: the scenario rules this kind adds (0, or EXIT_INPUT after errors). */
    int (*check)(const scenario_t *s);
    /* Optional: batches the job's loader may have in flight (default: the
     * job's prefetch_batches, or loader.staging_mb under coordinated prep). */
    int64_t (*staged_batches)(const scenario_t *s, const job_t *j);
    /* Optional: items an epoch reads of n in batches of m (default n). */
    int64_t (*epoch_items)(const scenario_t *s, int64_t n, int64_t m);

    /* Model: items/s the stream's cores prepare at item_s core-seconds per
     * item (a pool's rate; the batch pipeline of model.c does the rest). */
    double (*items_s)(double cores, double item_s);
    /* Optional: the kind's own model of one epoch, replacing the pool's
     * (model.c: loader_model_t says what it is given). */
    void (*model_epoch)(const struct loader_model *in, double *epoch_s, double *t_prep_s);

    /* Record shards (shards.h): how many shard streams read at once, and
     * whether per rank (PyTorch's workers: each reads its own shards, as
     * WebDataset splits them) or for the whole stream (the pool's lanes). */
    uint32_t (*shard_lanes)(const scenario_t *s, int *per_rank);
    /* For a kind with sync_reads (its workers wait on one read each): reads
     * one server's workers have in flight at most, all jobs together. The
     * storage kinds size their queues by it (kinds.h: loader_sync_readers). */
    int64_t (*readers_in_flight)(const scenario_t *s);
    /* Optional: worker processes each rank runs beside its training process
     * (a trace's lanes: "rank r worker k"); NULL: none, the items are
     * prepared in the training process or in a pool of cores. */
    int64_t (*worker_procs)(const scenario_t *s);

    /* Optional: bytes of /dev/shm one training process's loader holds at
     * its peak (batches its worker processes collated into shared memory;
     * none without). When note is given and the bytes pass `budget`, it
     * says in the kind's own keys what would fit. */
    double (*shm_bytes)(const scenario_t *s, const job_t *j, double budget, char *note, size_t n);
    /* Optional: bytes of private memory one training process's loader
     * holds at its peak outside /dev/shm and the process itself (its worker
     * processes' own pages); with note, says what it is in the kind's keys. */
    double (*proc_bytes)(const scenario_t *s, const job_t *j, char *note, size_t n);
    /* Optional: bytes of page-locked host memory one training process
     * holds for the loader's batches at its peak (PyTorch's pin_memory: the
     * caching host allocator keeps every block it allocated); counted in the
     * process's own memory. With note, says what it is in the kind's keys. */
    double (*pinned_bytes)(const scenario_t *s, const job_t *j, char *note, size_t n);
    /* Optional: bytes one training process holds itself as the kind's
     * probe measured it (the interpreter, the framework, the Dataset and the
     * loader in the training process), standing for jobs.N.host_mem_gb
     * where a job does not give it; 0 where not measured. */
    double (*process_bytes)(const scenario_t *s, const job_t *j);

    /* Optional: bytes of GPU memory one training process's loader holds on
     * its GPU at its peak (buffers of its GPU operators, its GPU-side
     * prefetch queue); none without. With note, says what it is. */
    double (*gpu_bytes)(const scenario_t *s, const job_t *j, char *note, size_t n);
    /* Optional: items the stream's shuffle buffers hold together when each
     * is loader.shuffle_buffer = B items (default B: one for the stream;
     * DALI: one in each rank's pipeline). */
    int64_t (*buffer_items)(const scenario_t *s, const job_t *j, int64_t B);

    /* Optional: the kind's own knob a user turns (the DataLoader's
     * num_workers), for "what to change" and advise (sim/model/knob.h runs the
     * model over it): its key, the values worth trying for s (ascending, at
     * most max; returns how many), and setting one in s. */
    const char *knob;
    int (*knob_values)(const scenario_t *s, int64_t *v, int max);
    void (*knob_set)(scenario_t *s, int64_t v);
    /* With knob: what one of its units is, for the advice ("workers a GPU"). */
    const char *knob_unit;
    /* Optional: what bounds a job's prep that neither more cores nor the
     * knob would lift (a thread loader's GIL), said in the kind's own keys
     * into buf; 0 where nothing beyond them does. */
    int (*prep_bound)(const scenario_t *s, const job_t *j, char *buf, size_t n);

    /* Memory budget: bytes of one stream's prep state. */
    double (*state_bytes)(const scenario_t *s, const job_t *j, double cores, int ns);
} loader_ops_t;

#endif
