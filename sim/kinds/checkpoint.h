/* checkpoint: a job's synchronous checkpoints (jobs.N.checkpoint.*): every
 * every_steps steps, counted across epochs, each rank writes its share of
 * checkpoint.gb to the dataset's storage, `writers` writes at a time, while
 * the job's GPUs wait. The writes go to the storage kind as its requests
 * (burst.h: the store's caps, prefixes and 503s, a device's queue and
 * channel) through its write path: a disk's write rate, an object
 * store's multipart PUTs under a prefix's PUT rate.
 *
 *   double w[ninst];  checkpoint_sim(s, t, w) or checkpoint_model(s, t, w)
 *   k = checkpoint_count(job, before, steps): checkpoints among those steps */
#ifndef STALLSIM_CHECKPOINT_H
#define STALLSIM_CHECKPOINT_H

#include <stdint.h>

#include "scenario.h"
#include "topology.h"

/* secs[t->ninst]: one checkpoint's write time for each instance, each alone
 * on fresh devices (0 without checkpoints). The simulator's returns 0, or
 * EXIT_RUNTIME without memory. */
int checkpoint_sim(const scenario_t *s, const topology_t *t, double *secs);
void checkpoint_model(const scenario_t *s, const topology_t *t, double *secs);
/* Checkpoints among the steps (before, before + steps] of job j. */
double checkpoint_count(const job_t *j, double before, double steps);

#endif
