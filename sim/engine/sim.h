/* sim: the discrete-event simulator. Replays every epoch item by item for
 * each job instance of a scenario and fills the same metrics as the model.
 * See sim.c for what is simulated and what is not.
 *
 * An observer (sim_observer_t, NULL when nobody watches) sees the timeline
 * as the simulator makes it: each batch as its reads are issued, each item
 * fetched and prepared, each iteration of each job instance. The trace
 * writer (sim/report/trace.h) is one; the simulator's results do not depend
 * on whether one watches, and without one it costs a pointer test. */
#ifndef STALLSIM_SIM_H
#define STALLSIM_SIM_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* Where an item came from (the observer's view of the fetch). */
typedef enum {
    SIM_FROM_CACHE,   /* a hit in its server's cache: no request */
    SIM_FROM_REMOTE,  /* another server's cache over both NICs (partitioned caching) */
    SIM_FROM_TIER,    /* the server's tier (server.tier) */
    SIM_FROM_STORAGE, /* the storage */
    SIM_FROM_SHARD    /* a later item of a record shard being read: no request of its own */
} sim_source_t;

/* A batch of a stream, when its reads are issued (all times in seconds of
 * the simulated clock, on the T timeline). */
typedef struct {
    int stream, epoch; /* epoch 0-based */
    int64_t batch;     /* the read slice, 0-based in the epoch */
    double issue;      /* its buffer is free */
    int staged;        /* batches prepared ahead then, this one included */
    int worker;        /* the loader worker it goes to (batch_worker), or -1: batch mod workers */
    int first_server;  /* the stream's servers: [first_server, first_server + servers) */
    int servers;
    const int *inst; /* the job instances it feeds: inst[0..ninst) */
    int ninst;
} sim_batch_t;

/* One item of that batch. */
typedef struct {
    int stream, epoch;
    int64_t batch;
    int server, rank; /* the server (absolute) and the GPU rank it is read for */
    int source;       /* sim_source_t */
    int device;       /* the storage device (server, or 0 when shared) or tier device (server) */
    double bytes;
    double issue;    /* the read is issued (a synchronous worker's clock) */
    double fetched;  /* the item is in memory */
    double req_end;  /* a request it started (remote, tier, storage): its last byte; else 0 */
    double prep_s;   /* its prep, one core (slowed down as the loader kind says) */
    double prep_end; /* its prep is done */
} sim_item_t;

/* One iteration of one job instance, on both timelines: T and T_prep (every
 * item in memory). Epoch e's time is end - ep_start summed over its
 * iterations' waits (start - idle), CPU steps and compute. */
typedef struct {
    int stream, inst, epoch;
    int64_t batch; /* the output batch, 0-based in the epoch */
    double items;
    double idle;      /* the GPUs are free: the previous iteration's end, or the epoch's start */
    double start;     /* the batch is ready and the GPUs free: the step starts */
    double cpu_s;     /* the training process's CPU per iteration (serial with the GPU) */
    double cpu_mem_s; /* the same on T_prep (the cores may be shared otherwise there) */
    double compute_s; /* the GPUs compute */
    double ep_start;  /* the epoch's start on T */
    double idle_mem, start_mem, ep_start_mem; /* the same on T_prep */
    int last;                                 /* the epoch's last iteration */
} sim_iter_t;

typedef struct sim_observer {
    void *ctx;
    void (*batch)(void *ctx, const sim_batch_t *b);
    /* After batch: each of the stream's servers' cache then, bytes held and capacity. */
    void (*cache)(void *ctx, int server, double at, double used, double capacity);
    void (*item)(void *ctx, const sim_item_t *it);
    void (*iteration)(void *ctx, const sim_iter_t *it);
} sim_observer_t;

/* out is allocated by the caller (t->ninst x s->epochs). Returns 0, or
 * EXIT_RUNTIME when memory cannot be had (after a message). */
int sim_run(const scenario_t *s, const topology_t *t, run_metrics_t *out);

/* A long simulation, watched: about every half second of wall time the
 * simulator calls progress with the share of its batches done (0..1); a
 * nonzero return stops it, and sim_run_observed returns SIM_STOPPED with out
 * incomplete. The callback owns the clock, the limits and the messages. */
typedef struct {
    int (*progress)(void *ctx, double done);
    void *ctx;
} sim_watch_t;
enum { SIM_STOPPED = 3 };
/* sim_run with a watch and an observer (either NULL: none). */
int sim_run_observed(const scenario_t *s, const topology_t *t, run_metrics_t *out,
                     const sim_watch_t *watch, const sim_observer_t *obs);
/* The item sizes (bytes) the simulator draws from r for the first n items
 * of s, in the order it draws them: for replays of its access sequence
 * (sim/mrc) that must see the same sizes. */
void sim_item_sizes(const scenario_t *s, gsl_rng *r, uint32_t n, uint32_t *size);

#endif
