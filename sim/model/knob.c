/* knob: see knob.h. */
#include "knob.h"

#include <math.h>
#include <stdlib.h>

#include "kinds.h"
#include "model.h"

/* Ties within this fraction go to the smaller value. */
#define KNOB_TIE 0.01

/* The model's time for every epoch of s (the slowest instance's, each
 * epoch): INFINITY when s does not build; -1 without memory. */
static double run_s(const scenario_t *s) {
    topology_t t;
    if (topology_build(s, &t)) return INFINITY;
    run_metrics_t r;
    if (metrics_alloc(&r, t.ninst, s->epochs)) return -1;
    model_run(s, &t, &r);
    double total = 0;
    for (int e = 0; e < s->epochs; e++) {
        double worst = 0;
        for (int i = 0; i < t.ninst; i++)
            if (metrics_at(&r, i, e)->epoch_s > worst) worst = metrics_at(&r, i, e)->epoch_s;
        total += worst;
    }
    metrics_free(&r);
    return total;
}

int model_best_knob(const scenario_t *s, knob_best_t *out) {
    const loader_ops_t *L = scenario_loader(s);
    if (!L->knob || !L->knob_values || !L->knob_set) return 0;
    scenario_t *w = malloc(sizeof *w);
    if (!w) return -1;
    *w = *s;
    out->key = L->knob;
    out->n = L->knob_values(s, out->value, KNOB_MAX);
    out->current_s = run_s(s);
    int best = -1;
    for (int i = 0; i < out->n; i++) {
        L->knob_set(w, out->value[i]);
        out->run_s[i] = run_s(w);
        if (out->run_s[i] < 0 || out->current_s < 0) {
            free(w);
            return -1;
        }
        if (best < 0 || out->run_s[i] < out->run_s[best]) best = i;
    }
    free(w);
    if (best < 0) return 0;
    /* The fewest within KNOB_TIE of the fastest. */
    for (int i = 0; i < best; i++)
        if (out->run_s[i] <= out->run_s[best] * (1 + KNOB_TIE)) {
            best = i;
            break;
        }
    out->best = out->value[best];
    out->best_s = out->run_s[best];
    return 1;
}
