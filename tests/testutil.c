/* testutil: see testutil.h. */
#include "testutil.h"

#include "kinds.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "schema.h"
#include "sim.h"

double tu_key(const scenario_t *s, const char *key) {
    int n, row = schema_find(SCOPE_SCENARIO, key);
    assert_true(row >= 0);
    char buf[256];
    schema_format(&schema_keys(SCOPE_SCENARIO, &n)[row], s, buf, sizeof buf);
    return strtod(buf, NULL);
}

int tu_build(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t) {
    char path[] = "/tmp/stallsim-test-XXXXXX.yaml";
    int fd = mkstemps(path, 5);
    if (fd < 0) return -1;
    FILE *f = fdopen(fd, "w");
    fputs(yaml, f);
    fclose(f);
    /* The scenario's origins (file:line:col) point into its document, which
     * the report's messages print: the last one stays until the next build
     * (a static keeps it reachable), as the program keeps it until exit. */
    static scenario_doc_t doc;
    static int held;
    if (held) scenario_doc_free(&doc), held = 0;
    assign_list_t l = {0};
    int rc = scenario_doc_load(&doc, path);
    if (rc)
        scenario_doc_free(&doc);
    else
        held = 1;
    for (int i = 0; !rc && sets && sets[i]; i++)
        rc = assign_parse_set(&l, sets[i]);
    if (!rc) rc = scenario_build(&doc, &l, -1, s);
    if (!rc) rc = topology_build(s, t);
    if (!rc) rc = kinds_check(s, t);
    assign_list_free(&l);
    unlink(path);
    return rc;
}

int tu_run(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t,
           run_metrics_t *model, run_metrics_t *sim) {
    int rc = tu_build(yaml, sets, s, t);
    if (rc) return rc;
    if (metrics_alloc(model, t->ninst, (int)s->epochs) ||
        metrics_alloc_servers(model, (int)s->server.count))
        return -1;
    model_run(s, t, model);
    if (!sim) return 0;
    if (metrics_alloc(sim, t->ninst, (int)s->epochs) ||
        metrics_alloc_servers(sim, (int)s->server.count))
        return -1;
    return sim_run(s, t, sim);
}

tu_epoch_t tu_epoch(const char *yaml, const char *const *sets, scenario_t *s, topology_t *t) {
    run_metrics_t m, sm;
    assert_int_equal(tu_run(yaml, sets, s, t, &m, &sm), 0);
    const epoch_metrics_t *me = metrics_at(&m, 0, 0), *se = metrics_at(&sm, 0, 0);
    tu_epoch_t r = {.sim = se->epoch_s,
                    .model = me->epoch_s,
                    .bn_sim = se->bottleneck,
                    .bn_model = me->bottleneck,
                    .approx = me->approximate,
                    .reads = se->storage_reads};
    r.heads = metrics_at(&sm, 0, 0)->storage_heads;
    r.retries = metrics_at(&sm, 0, 0)->storage_retries;
    r.lists = metrics_at(&sm, 0, 0)->storage_lists;
    r.model_heads = metrics_at(&m, 0, 0)->storage_heads;
    r.model_lists = metrics_at(&m, 0, 0)->storage_lists;
    metrics_free(&m), metrics_free(&sm);
    return r;
}

void tu_expect_epoch(const char *what, tu_epoch_t r, double want, double tol, int bn) {
    if (fabs(r.sim - want) > tol * want || fabs(r.model - want) > tol * want)
        fail_msg("%s: sim %.6f s, model %.6f s, want %.6f s", what, r.sim, r.model, want);
    if (bn >= 0 && (r.bn_sim != bn || r.bn_model != bn))
        fail_msg("%s: bottleneck sim %s, model %s, want %s", what, bottleneck_names[r.bn_sim],
                 bottleneck_names[r.bn_model], bottleneck_names[bn]);
}
