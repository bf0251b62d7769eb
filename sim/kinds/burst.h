/* burst: many senders' requests to the storage at once, outside the epochs'
 * reads: a launch's resolution of its dataset (startup.h), a checkpoint's
 * writes (checkpoint.h). Each sender sends its pages one after another,
 * then its bodies and HEADs `threads` at a time; every request goes to the
 * scenario's storage kind as a read does (its `request` op: the store's
 * caps, prefixes and 503s, a device's queue and channel), or for a plan's
 * writes its `write` op (a disk's write rate, a store's PUTs).
 *
 * burst_sim replays the requests one by one on fresh devices of the kind;
 * burst_model is its closed form: the largest of one sender alone, the
 * requests on a device over its request cap, its transfers over its
 * channel and, for a device's queue, the requests' time over its slots.
 *
 *   burst_plan_t plan[ninst]; burst_who_t who[ninst]; burst_t out[ninst];
 *   burst_sim(s, t, plan, who, out) or burst_model(s, t, plan, who, out) */
#ifndef STALLSIM_BURST_H
#define STALLSIM_BURST_H

#include <stdint.h>

#include "scenario.h"
#include "storage.h"
#include "topology.h"

/* What one sender of an instance sends, in order. */
typedef struct {
    double pages, page_bytes;  /* one after another first (LIST pages) */
    double page_objects;       /* objects a page names (page j is at object j x this) */
    double bodies, body_bytes; /* then, threads at a time: GETs or PUTs */
    double heads;              /* and HEADs (object k at k), threads at a time */
    int64_t threads;
    int write; /* the bodies are writes: the kind's write path (storage.h) */
} burst_plan_t;

/* Who sends: `senders` of the instance, `per_rank` a rank in rank order
 * over its servers (0: one sender, on its first server). */
typedef struct {
    int64_t senders, per_rank;
} burst_who_t;

typedef struct {
    double seconds; /* from the burst's start to its instance's last answer */
    /* to when every rank's first sender is done (a DataLoader's first batch
     * comes from its worker 0, whatever its other workers still do) */
    double first_s;
    double requests;             /* requests its senders sent: */
    double pages, bodies, heads; /* by kind (LIST pages, GETs or PUTs, HEADs) */
    double throttled;            /* of those, refused (503/429) and retried */
    int approximate;             /* model: no exact closed form (a cap's refusals, contention) */
} burst_t;

/* Above this many requests in all the simulator replays none and gives the
 * closed form's figures, flagged approximate. */
#define BURST_SIM_MAX 5e6

/* out[t->ninst]: 0, or EXIT_RUNTIME without memory (after a message). */
int burst_sim(const scenario_t *s, const topology_t *t, const burst_plan_t *plan,
              const burst_who_t *who, burst_t *out);
void burst_model(const scenario_t *s, const topology_t *t, const burst_plan_t *plan,
                 const burst_who_t *who, burst_t *out);

/* The same replay on the caller's devices (the simulator's: the epochs'
 * reads go on beside it), from `at`, as often as asked: open builds its
 * senders once (NULL without memory, with no sender, or past
 * BURST_SIM_MAX requests: the caller keeps the closed form); run replays
 * every sender from `at`, adds the requests to *acct and returns when the
 * last answer arrives. A device without state (a server-sampled run's
 * unsimulated servers) sends nothing. plan, who's copy and dev must outlive it. */
typedef struct burst_replay burst_replay_t;
burst_replay_t *burst_replay_open(const scenario_t *s, const topology_t *t,
                                  const burst_plan_t *plan, const burst_who_t *who, storage_t *dev);
double burst_replay_run(burst_replay_t *b, double at, io_acct_t *acct);
/* The same in steps, interleaved with the caller's own requests in time:
 * begin from `at`, then until(t) sends the requests due before t and sets
 * *end to the last answer of those sent so far; 1 when none is left. */
void burst_replay_begin(burst_replay_t *b, double at);
int burst_replay_until(burst_replay_t *b, double until, io_acct_t *acct, double *end);
void burst_replay_close(burst_replay_t *b);

#endif
