/* goodout: goodput (goodput.h) in `run`'s outputs, where a variant asks for
 * it (goodput_asked: failures, or a job that checkpoints; nothing otherwise,
 * so outputs without either are as before). One table of fields (out.h) is
 * written as text, CSV, JSON and HTML alike: the goodput, the restarts, the
 * work lost, a restart's and a checkpoint's time, the Young/Daly interval,
 * the wall time per epoch of training kept and, where the variant is priced
 * (cost.h), its dollars: the run's dollars per hour x useful_epoch_s / 3600.
 *
 *   goodout_text(out, v, nv);                   // the goodput table
 *   if (goodout_any(v, nv)) goodout_csv_names(out);  // ",goodput,..."
 *   goodout_csv_values(out, &v[k], i, r);       // instance i from r (model or sim)
 *   goodout_json(&j, &v[k], i);                 // "goodput": {...} in the job
 *   goodout_html(out, v, nv);                   // <h2>Goodput</h2><table>...
 *
 * In the CSV the columns come last, where any variant asks for goodput
 * (a scenario without it keeps its columns), and every epoch row of a job
 * carries its source's figures (they are the run's, not the epoch's). A
 * figure that does not exist is left empty: useful_epoch_s and its dollars
 * where no work is kept (failures and no checkpoints), the dollars where
 * the variant has no prices. */
#ifndef STALLSIM_GOODOUT_H
#define STALLSIM_GOODOUT_H

#include <stdio.h>

#include "goodput.h"
#include "out.h"
#include "run.h"

/* 1 when some variant asks for goodput: then the CSV has the columns, and
 * every variant's rows their figures. */
int goodout_any(const variant_run_t *v, int nv);
/* Dollars per epoch of training kept of instance i from r (model or
 * simulator rows) with its goodput g: NAN where unpriced or nothing is kept. */
double goodout_cost_per_useful_epoch(const variant_run_t *v, int i, const run_metrics_t *r,
                                     const goodput_t *g);
void goodout_text(FILE *out, const variant_run_t *v, int nv);
void goodout_csv_names(FILE *out);
/* Instance i of v from r, v's model or simulator rows (the simulator's
 * failures drawn from the seed). */
void goodout_csv_values(FILE *out, const variant_run_t *v, int i, const run_metrics_t *r);
void goodout_json(out_json_t *j, const variant_run_t *v, int i);
void goodout_html(FILE *out, const variant_run_t *v, int nv);

#endif
