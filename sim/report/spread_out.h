/* spread_out: `run`'s line and JSON field for the prediction's sensitivity
 * to the host profile's measured spread (sim/run/spread.h): how far the
 * model's total time moves when the profile's figures move by their spread.
 * Nothing is written for a variant without spreads, so runs without a
 * probed profile print as before.
 *
 *   report_spread_text(out, v, nv);   after the totals table
 *   report_spread_json(&j, &v[k]);    inside a variant's object */
#ifndef STALLSIM_SPREAD_OUT_H
#define STALLSIM_SPREAD_OUT_H

#include <stdio.h>

#include "out.h"
#include "run.h"

void report_spread_text(FILE *out, const variant_run_t *v, int nv);
/* ,\n   "profile_spread": {...} (nothing without spreads) */
void report_spread_json(out_json_t *j, const variant_run_t *v);

#endif
