/* sim: the discrete-event simulator. Replays every epoch item by item for
 * each job instance of a scenario and fills the same metrics as the model.
 * See sim.c for what is simulated and what is not. */
#ifndef STALLSIM_SIM_H
#define STALLSIM_SIM_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* out is allocated by the caller (t->ninst x s->epochs). Returns 0, or
 * EXIT_RUNTIME when memory cannot be had (after a message). */
int sim_run(const scenario_t *s, const topology_t *t, run_metrics_t *out);

/* A long simulation, watched: about every half second of wall time the
 * simulator calls progress with the share of its batches done (0..1); a
 * nonzero return stops it, and sim_run_watched returns SIM_STOPPED with out
 * incomplete. The callback owns the clock, the limits and the messages. */
typedef struct {
    int (*progress)(void *ctx, double done);
    void *ctx;
} sim_watch_t;
enum { SIM_STOPPED = 3 };
int sim_run_watched(const scenario_t *s, const topology_t *t, run_metrics_t *out,
                    const sim_watch_t *watch);

#endif
