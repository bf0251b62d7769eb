/* knob: the best setting of the loader kind's own knob (loader_ops_t.knob:
 * the DataLoader's num_workers) by the model, for "what to change" and
 * advise. It runs the closed-form model once per value the kind offers and
 * keeps the fastest run (the fewest workers among runs within 1 % of it:
 * processes cost memory), so the U-shape that loader.oversub makes over
 * num_workers gives its optimum.
 *
 *   knob_best_t b;
 *   if (model_best_knob(s, &b) == 1) printf("%s: %lld\n", b.key, (long long)b.best);
 */
#ifndef STALLSIM_KNOB_H
#define STALLSIM_KNOB_H

#include <stdint.h>

#include "scenario.h"

enum { KNOB_MAX = 32 };

typedef struct {
    const char *key;          /* the knob's scenario key */
    int n;                    /* values tried */
    int64_t value[KNOB_MAX];  /* each value tried, ascending */
    double run_s[KNOB_MAX];   /* the model's time for all epochs at it (inf: did not build) */
    int64_t best;             /* the value to use */
    double best_s, current_s; /* its time, and the scenario's as given */
} knob_best_t;

/* 1 with *out filled, 0 when the scenario's loader kind has no knob, -1
 * without memory. */
int model_best_knob(const scenario_t *s, knob_best_t *out);

#endif
