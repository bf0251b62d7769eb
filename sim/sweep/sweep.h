/* sweep: `stallsim sweep`, a grid of configurations of one scenario run in
 * parallel into one tidy CSV.
 *
 * Each configuration is the scenario with --set and one value per --vary key
 * applied (sweep_grid.h), run through the same pipeline as `stallsim run`
 * (scenario_build, topology_build, model_run, sim_run); its rows are those of
 * `run --format csv`, prefixed by the configuration index and the varied
 * values. The grid runner's worker threads (grid_run.h, shared with advise)
 * take configurations in index order; the main thread writes finished ones
 * strictly in grid order through sweep_out.h, so the output does not depend
 * on --threads and an interrupted sweep resumes. */
#ifndef STALLSIM_SWEEP_H
#define STALLSIM_SWEEP_H

#include "options.h"

/* Its flags and usage text (`stallsim help sweep`). */
extern const command_t sweep_command;

/* argv[0] is "sweep". Returns an exit code (EXIT_OK, EXIT_RUNTIME, EXIT_INPUT). */
int sweep_main(int argc, char **argv);

#endif
