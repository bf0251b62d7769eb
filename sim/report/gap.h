/* gap: the one place that says how far the simulator and the model differ
 * and why. A sim (or sampled) row's gap is its epoch time over the model's,
 * minus 1. Past GAP_MARK the text table marks the row's vs_model with `~`
 * and CSV/JSON say "model_differs": true; past GAP_WARN the text prints a
 * warning after the table with the bottleneck each predictor names and,
 * where one is known, the mechanism. */
#ifndef STALLSIM_GAP_H
#define STALLSIM_GAP_H

#include <stdio.h>

#include "run.h"

#define GAP_MARK 0.05
#define GAP_WARN 0.10

/* (sim - model) / model epoch time; 0 without a model row to compare with. */
double gap_rel(const epoch_metrics_t *sim, const epoch_metrics_t *model);
/* Whether a gap is marked (`~`, model_differs). */
int gap_marked(double rel);
/* The warning lines (text): one per variant whose worst gap passes GAP_WARN,
 * and a note per variant whose two predictors name different bottlenecks. */
void gap_write_warnings(FILE *out, const variant_run_t *v, int nv);

#endif
