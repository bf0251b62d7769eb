/* advice: the "what to change" lines of `stallsim run`'s text output.
 *
 * For each variant the model works out, in its steady state, the epoch time
 * each input resource alone would allow (prep: every item in memory, T_prep;
 * storage: prep free), says which binds and whether the other binds within
 * a few percent of it (then buying only one of them gains little), and what
 * each would need for the GPUs to be 90 % busy: the prep cores a server
 * (found by the model, cores alone) and the storage reads per second (the
 * bytes the job reads an epoch over the epoch time that reaches 90 %).
 *
 *   advice_write_text(out, runs, nvariants);   after run's summary table
 */
#ifndef STALLSIM_ADVICE_H
#define STALLSIM_ADVICE_H

#include <stdio.h>

#include "run.h"

/* The GPU utilisation the advice aims at. */
#define ADVICE_TARGET 0.9

void advice_write_text(FILE *out, const variant_run_t *v, int nv);

/* One variant's line for GPU utilisation `target` (advise's): v built
 * (run_build); the model is run here, from its steady state. */
void advice_line(FILE *out, const variant_run_t *v, double target);

#endif
