/* advise: `stallsim advise`, the cheapest configuration of a grid that meets a
 * target (gpu_util>=0.9), and the most of a resource a configuration feeds.
 *
 * The grid is a sweep's (sweep_grid.h: --vary, --tie). The analytical model
 * evaluates every configuration (worker threads, one result per
 * configuration, so the answer does not depend on --threads); the feasible
 * ones are ordered by the objective (dollars from the prices, or a varied key
 * to minimise or maximise), then by the target's metric, then by index. The
 * simulator then confirms candidates in that order: one whose simulated
 * figures miss the target is reported and passed over. Besides the
 * recommendation it reports the Pareto front (objective vs GPU utilisation),
 * and the same search for each alternative of another kind (the scenario's
 * other variants, --alternative KEY=VALUE). Text, JSON or CSV. */
#ifndef STALLSIM_ADVISE_H
#define STALLSIM_ADVISE_H

#include "options.h"

/* Its flags and usage text (`stallsim help advise`). */
extern const command_t advise_command;

/* argv[0] is "advise". Returns an exit code (EXIT_OK, EXIT_RUNTIME, EXIT_INPUT). */
int advise_main(int argc, char **argv);

#endif
