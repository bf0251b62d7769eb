/* checkpoint: a job's checkpoints (jobs.N.checkpoint.*): every every_steps
 * steps, counted across epochs, each rank writes its share of checkpoint.gb
 * to the dataset's storage, `writers` writes at a time, while the job's
 * GPUs wait (mode sync); or (async) the GPUs wait only to stage the state
 * to host memory, the writes drain in the background and the next
 * checkpoint waits for them to end (torchtitan waits on the last
 * async_save's future before the next). checkpoint_sim and _model time
 * one alone; the simulator replays them beside the epochs' reads
 * (checkpoint_plan: sim.c), the model bounds the epoch by both on one channel. The writes go to the storage
 * kind as its requests (burst.h: the store's caps, prefixes and 503s, a device's queue and channel)
 * through its write path: a disk's write rate, an object store's multipart PUTs under a prefix's
 * PUT rate.
 *
 *   double w[ninst];  checkpoint_sim(s, t, w) or checkpoint_model(s, t, w)
 *   k = checkpoint_count(job, before, steps): checkpoints among those steps */
#ifndef STALLSIM_CHECKPOINT_H
#define STALLSIM_CHECKPOINT_H

#include <stdint.h>

#include "burst.h"
#include "scenario.h"
#include "topology.h"

/* secs[t->ninst]: one checkpoint's write time (async: its drain) for each instance, each alone
 * on fresh devices (0 without checkpoints). The simulator's returns 0, or
 * EXIT_RUNTIME without memory. */
int checkpoint_sim(const scenario_t *s, const topology_t *t, double *secs);
void checkpoint_model(const scenario_t *s, const topology_t *t, double *secs);
/* secs[t->ninst]: the GPUs' wait to stage one asynchronous checkpoint to
 * host memory (0 for a synchronous one): a server's share of
 * checkpoint.gb over its GPUs' copies together (gpus x stage_gb_s), at
 * most server.mem_gbps where given. */
void checkpoint_stage(const scenario_t *s, const topology_t *t, double *secs);
double checkpoint_stage_one(const scenario_t *s, const instance_t *in);
/* Bytes of staged state one server of instance i holds (async; else 0). */
double checkpoint_staged_bytes(const scenario_t *s, const instance_t *in);
/* 1 when job j's checkpoints are asynchronous and on. */
int checkpoint_async(const job_t *j);
/* Instance i's checkpoint as a burst (burst.h): each rank writes its share
 * as `writers` files, each in its parts, `writers` requests in flight (a
 * disk's: each file's parts together, up to queue_depth); the other
 * instances send nothing. */
void checkpoint_plan(const scenario_t *s, const topology_t *t, int i, burst_plan_t *p,
                     burst_who_t *w);
/* 1 when job j's checkpoints go to each server's tier device
 * (checkpoint.to: tier); their scenario is then tier_scenario's. */
int checkpoint_to_tier(const scenario_t *s, const job_t *j);
/* Checkpoints among the steps (before, before + steps] of job j. */
double checkpoint_count(const job_t *j, double before, double steps);

#endif
