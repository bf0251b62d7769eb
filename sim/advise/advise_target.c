/* advise_target: see advise_plan.h. */
#include "advise_plan.h"

#include <math.h>
#include <string.h>

#include "options.h"

/* Launch to the first step (report.c's first_step_s). */
static double first_step(const epoch_metrics_t *m) {
    return m->startup_first_s + m->resume_s + m->first_batch_s;
}

/* The metrics a target may name; fractions must lie in [0, 1]; `first`:
 * read in the first epoch (what comes before the first step), not the
 * last; `get`: derived, not a field. */
static const struct {
    const char *name;
    size_t off;
    int fraction, first;
    double (*get)(const epoch_metrics_t *m);
} metric_defs[] = {
    {"gpu_util", offsetof(epoch_metrics_t, gpu_util), 1, 0, NULL},
    {"epoch_s", offsetof(epoch_metrics_t, epoch_s), 0, 0, NULL},
    {"throughput_items_s", offsetof(epoch_metrics_t, throughput_items_s), 0, 0, NULL},
    {"prep_stall_s", offsetof(epoch_metrics_t, prep_stall_s), 0, 0, NULL},
    {"fetch_stall_s", offsetof(epoch_metrics_t, fetch_stall_s), 0, 0, NULL},
    {"hit_rate", offsetof(epoch_metrics_t, hit_rate), 1, 0, NULL},
    {"cpu_util", offsetof(epoch_metrics_t, cpu_util), 1, 0, NULL},
    {"storage_util", offsetof(epoch_metrics_t, storage_util), 1, 0, NULL},
    {"startup_s", offsetof(epoch_metrics_t, startup_s), 0, 1, NULL},
    {"first_step_s", 0, 0, 1, first_step},
};
#define NMETRICS ((int)(sizeof metric_defs / sizeof *metric_defs))

int advise_target_parse(const char *arg, advise_target_t *t) {
    const char *op = strstr(arg, ">=");
    if (!op) op = strstr(arg, "<=");
    char name[64];
    if (!op || op == arg || (size_t)(op - arg) >= sizeof name)
        return options_error("advise",
                             "--target %s: expected METRIC>=X or METRIC<=X (gpu_util>=0.9)", arg);
    memcpy(name, arg, (size_t)(op - arg));
    name[op - arg] = 0;
    t->metric = -1;
    for (int i = 0; i < NMETRICS; i++)
        if (strcmp(metric_defs[i].name, name) == 0) t->metric = i;
    if (t->metric < 0)
        return options_error("advise",
                             "--target %s: unknown metric; one of gpu_util, epoch_s, "
                             "throughput_items_s, prep_stall_s, fetch_stall_s, hit_rate, "
                             "cpu_util, storage_util, startup_s, first_step_s",
                             arg);
    t->ge = op[0] == '>';
    char *end;
    t->value = strtod(op + 2, &end);
    if (end == op + 2 || *end || !isfinite(t->value) || t->value < 0)
        return options_error("advise", "--target %s: expected a number >= 0 after the operator",
                             arg);
    if (metric_defs[t->metric].fraction && t->value > 1)
        return options_error(
            "advise", "--target %s: this metric is a fraction in [0, 1] (0.9 for 90%%)", arg);
    t->text = arg;
    return 0;
}

int advise_metric_first(int metric) {
    return metric_defs[metric].first;
}

double advise_metric_of(const run_metrics_t *r, int inst, int last, int metric) {
    const epoch_metrics_t *m = metrics_at(r, inst, metric_defs[metric].first ? 0 : last);
    if (metric_defs[metric].get) return metric_defs[metric].get(m);
    return *(const double *)((const char *)m + metric_defs[metric].off);
}

const char *advise_metric_name(int metric) {
    return metric_defs[metric].name;
}
