/* valid: the one check every figure a command prints passes before anything
 * is printed. A figure outside its range (fig_range_t: non-finite, a share
 * or utilisation outside [0, 1], a negative time, stall or count, an epoch
 * of 0 s) is a fault of stallsim's predictors for that input, never a
 * result: the command stops with exit 1 (EXIT_RUNTIME) and a message naming
 * the figure, where it is (variant, job, epoch, source) and the scenario
 * keys behind it as far as they can be told (those of the row's bottleneck
 * the scenario sets). `run` (every format), `sweep` and `advise` check each
 * variant_run_t; `measure` checks its rows. */
#ifndef STALLSIM_VALID_H
#define STALLSIM_VALID_H

#include "run.h"

/* 0, or EXIT_RUNTIME after the message; cmd names the command in it. */
int report_valid_runs(const variant_run_t *v, int nv, const char *cmd);
/* One variant's rows from epoch from_epoch (0-based) on, as a command that
 * ran the model only from there (advise) prints them; its steady state too
 * when `steady`. */
int report_valid_variant(const variant_run_t *v, int from_epoch, int steady, const char *cmd);
/* One row of metrics (model NULL: none to compare with); s may be NULL
 * (no keys named); where says which row it is, for the message; measured:
 * the row is a measurement (measure), whose differential runs disagreed,
 * not a prediction. */
int report_valid_row(const epoch_metrics_t *m, const epoch_metrics_t *model, const scenario_t *s,
                     const char *cmd, const char *where, int measured);

#endif
