/* checkpoint: see checkpoint.h. */
#include "checkpoint.h"

#include <math.h>
#include <stdlib.h>

#include "burst.h"
#include "diag.h"

static int on(const job_t *j) {
    return j->checkpoint.gb > 0 && j->checkpoint.every_steps > 0;
}

double checkpoint_count(const job_t *j, double before, double steps) {
    if (!on(j)) return 0;
    const double k = (double)j->checkpoint.every_steps;
    return floor((before + steps) / k) - floor(before / k);
}

/* Instance i's ranks each write their share, `writers` parts at once. */
static void plan_of(const scenario_t *s, const topology_t *t, int i, burst_plan_t *p,
                    burst_who_t *w) {
    const job_t *j = &s->jobs[t->inst[i].job];
    const int64_t ranks = (int64_t)t->inst[i].gpus_per_server * t->inst[i].nservers;
    const double writers = (double)j->checkpoint.writers;
    *p = (burst_plan_t){.bodies = writers,
                        .body_bytes = j->checkpoint.gb * 1e9 / (double)ranks / writers,
                        .threads = j->checkpoint.writers};
    *w = (burst_who_t){on(j) ? ranks : 0, 1};
}

/* One instance's burst at a time, the others sending nothing. */
static int each(const scenario_t *s, const topology_t *t, double *secs, int sim) {
    burst_plan_t *p = calloc((size_t)t->ninst, sizeof *p);
    burst_who_t *w = calloc((size_t)t->ninst, sizeof *w);
    burst_t *out = calloc((size_t)t->ninst, sizeof *out);
    int rc = p && w && out ? 0 : EXIT_RUNTIME;
    for (int i = 0; rc == 0 && i < t->ninst; i++) {
        secs[i] = 0;
        if (!on(&s->jobs[t->inst[i].job])) continue;
        for (int k = 0; k < t->ninst; k++)
            w[k] = (burst_who_t){0, 1};
        plan_of(s, t, i, &p[i], &w[i]);
        if (sim)
            rc = burst_sim(s, t, p, w, out);
        else
            burst_model(s, t, p, w, out);
        secs[i] = out[i].seconds;
    }
    free(p), free(w), free(out);
    return rc;
}

int checkpoint_sim(const scenario_t *s, const topology_t *t, double *secs) {
    return each(s, t, secs, 1);
}

void checkpoint_model(const scenario_t *s, const topology_t *t, double *secs) {
    if (each(s, t, secs, 0) != 0)
        for (int i = 0; i < t->ninst; i++)
            secs[i] = 0;
}
