/* testutil: builds scenarios for tests from YAML text plus --set overrides. */
#ifndef STALLSIM_TESTUTIL_H
#define STALLSIM_TESTUTIL_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* Writes yaml to a temporary file and builds it with the NULL-terminated
 * "key=value" overrides. Returns the scenario_build/topology exit code. */
int tu_build(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t);
/* The value of scenario key `key` in s, through its schema row (a kind's
 * own options live in its block, which only the kind's file knows). */
double tu_key(const scenario_t *s, const char *key);
/* Builds, then runs the model and (when sim != NULL) the simulator. */
int tu_run(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t,
           run_metrics_t *model, run_metrics_t *sim);

/* The first instance's first epoch of a run, simulator beside model (the
 * storage kinds' tests). */
typedef struct {
    double sim, model; /* epoch_s */
    int bn_sim, bn_model, approx;
    double reads;                 /* the simulator's storage reads */
    double heads, retries, lists; /* the simulator's HEADs, 503s retried, LISTs */
    double model_heads, model_lists;
} tu_epoch_t;
/* tu_run, failing the test (cmocka) when the scenario does not build. */
tu_epoch_t tu_epoch(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t);
/* Fails the test unless simulator and model are both within tol (relative)
 * of want seconds and, when bn >= 0, both name bottleneck bn. */
void tu_expect_epoch(const char *what, tu_epoch_t r, double want, double tol, int bn);

#endif
