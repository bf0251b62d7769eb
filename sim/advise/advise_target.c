/* advise_target: see advise_plan.h. */
#include "advise_plan.h"

#include <math.h>
#include <string.h>

#include "options.h"

/* The metrics a target may name; fractions must lie in [0, 1]. */
static const struct {
    const char *name;
    size_t off;
    int fraction;
} metric_defs[] = {
    {"gpu_util", offsetof(epoch_metrics_t, gpu_util), 1},
    {"epoch_s", offsetof(epoch_metrics_t, epoch_s), 0},
    {"throughput_items_s", offsetof(epoch_metrics_t, throughput_items_s), 0},
    {"prep_stall_s", offsetof(epoch_metrics_t, prep_stall_s), 0},
    {"fetch_stall_s", offsetof(epoch_metrics_t, fetch_stall_s), 0},
    {"hit_rate", offsetof(epoch_metrics_t, hit_rate), 1},
    {"cpu_util", offsetof(epoch_metrics_t, cpu_util), 1},
    {"storage_util", offsetof(epoch_metrics_t, storage_util), 1},
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
                             "cpu_util, storage_util",
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

double advise_metric_of(const epoch_metrics_t *m, int metric) {
    return *(const double *)((const char *)m + metric_defs[metric].off);
}

const char *advise_metric_name(int metric) {
    return metric_defs[metric].name;
}
