/* advice: the "what to change" lines of `stallsim run`'s outputs, written
 * from what advice_find (sim/run/advice_find.h) found and proved: the keys
 * to set, what the simulator gave with them, and where nothing the keys can
 * do reaches the target, the limit that stops it. Nothing is searched here.
 *
 *   advice_write_text(out, runs, nv);   after run's summary table
 *   advice_json(&j, &runs[k]);          inside the variant's JSON object
 */
#ifndef STALLSIM_ADVICE_H
#define STALLSIM_ADVICE_H

#include <stdio.h>

#include "out.h"
#include "run.h"

void advice_write_text(FILE *out, const variant_run_t *v, int nv);

/* One variant's line (advise's), from v->advice. */
void advice_line(FILE *out, const variant_run_t *v);

/* The variant's "advice" object: status, the keys and values to set, the
 * simulator's result with them; nothing where v->advice is NULL. */
void advice_json(out_json_t *j, const variant_run_t *v);

#endif
