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

#endif
