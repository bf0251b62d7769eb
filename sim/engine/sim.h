/* sim: the discrete-event simulator. Replays every epoch item by item for
 * each job instance of a scenario and fills the same metrics as the model.
 * See sim.c for what is simulated and what is not. */
#ifndef STALLSIM_SIM_H
#define STALLSIM_SIM_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* out is allocated by the caller (t->ninst x s->epochs). Returns 0, or
 * EXIT_RUNTIME when memory cannot be had (after a message). */
int sim_run(const scenario_t *s, const topology_t *t, run_metrics_t *out);

/* The item sizes (bytes) the simulator draws from r for the first n items
 * of s, in the order it draws them: for replays of its access sequence
 * (sim/mrc) that must see the same sizes. */
void sim_item_sizes(const scenario_t *s, gsl_rng *r, uint32_t n, uint32_t *size);

#endif
