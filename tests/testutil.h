/* testutil: builds scenarios for tests from YAML text plus --set overrides. */
#ifndef STALLSIM_TESTUTIL_H
#define STALLSIM_TESTUTIL_H

#include "metrics.h"
#include "scenario.h"
#include "topology.h"

/* Writes yaml to a temporary file and builds it with the NULL-terminated
 * "key=value" overrides. Returns the scenario_build/topology exit code. */
int tu_build(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t);
/* Builds, then runs the model and (when sim != NULL) the simulator. */
int tu_run(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t,
           run_metrics_t *model, run_metrics_t *sim);

#endif
