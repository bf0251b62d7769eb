/* advise_useful: see advise_plan.h (--minimize cost_per_useful_epoch). */
#include "advise_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "goodout.h"
#include "goodput.h"
#include "model.h"

#define EVERY_KEY "jobs.0.checkpoint.every_steps"
/* Intervals tried around the Young/Daly interval where the grid has none of
 * its own: sqrt(2 delta / lambda) moves by sqrt of the checkpoint's write,
 * so a storage 16x faster or slower than the given still has its optimum
 * within a factor of 4. */
static const double ladder[] = {0.25, 0.5, 1, 2, 4};
#define NLADDER        ((int)(sizeof ladder / sizeof ladder[0]))
#define MAX_CANDIDATES 64

int advise_useful_wanted(const char *minimize) {
    return minimize && strcmp(minimize, ADVISE_USEFUL) == 0;
}

double advise_useful_objective(const variant_run_t *v, const run_metrics_t *r) {
    double sum = 0;
    for (int i = 0; i < r->ninst; i++) {
        goodput_t g;
        goodput_of(&v->scn, &v->topo, i, r, r == &v->sim, &g);
        double c = goodout_cost_per_useful_epoch(v, i, r, &g);
        if (!isfinite(c)) return INFINITY; /* no work kept: never a candidate */
        sum += c;
    }
    return sum;
}

/* The scenario as given, its model from the first epoch: job 0's interval
 * (given, and Young/Daly's) into *given and *yd. 0, or an exit code. */
static int as_given(advise_plan_t *p, double *given, double *yd) {
    variant_run_t *v = calloc(1, sizeof *v);
    assign_list_t sets = {0};
    double kv;
    int rc = v ? advise_config_sets(p, &p->main, -1, &sets, &kv) : EXIT_RUNTIME;
    if (!rc) rc = run_build(p->doc, &sets, p->variant, 0, v);
    if (!rc && !goodput_asked(&v->scn))
        rc = options_error("advise",
                           "--minimize %s: the scenario neither checkpoints (jobs.N.checkpoint.gb "
                           "and every_steps) nor fails (failures.mtbf_gpu_h): every epoch is "
                           "useful; --minimize cost",
                           ADVISE_USEFUL);
    if (!rc && !cost_priced(&v->scn))
        rc =
            options_error("advise", "--minimize %s: the scenario has no prices; give --prices FILE",
                          ADVISE_USEFUL);
    if (!rc && metrics_alloc(&v->model, v->topo.ninst, (int)v->scn.epochs)) rc = EXIT_RUNTIME;
    if (!rc) {
        goodput_t g;
        model_run_from(&v->scn, &v->topo, &v->model, 0);
        goodput_of(&v->scn, &v->topo, 0, &v->model, 0, &g);
        *given = (double)v->scn.jobs[0].checkpoint.every_steps;
        *yd = v->scn.jobs[0].checkpoint.gb > 0 ? g.best_every : 0;
    }
    if (v) run_release(v);
    assign_list_free(&sets);
    free(v);
    return rc;
}

static int has_value(const double *x, int n, double y) {
    for (int i = 0; i < n; i++)
        if (x[i] == y) return 1;
    return 0;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* "KEY=v1,v2,..." of the values, ascending. */
static void vary_text(char *buf, size_t n, double *x, int nx) {
    qsort(x, (size_t)nx, sizeof *x, by_value);
    size_t used = (size_t)snprintf(buf, n, "%s=", EVERY_KEY);
    for (int i = 0; i < nx && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%.0f", i ? "," : "", x[i]);
}

/* The grid again from --vary, with the interval's axis as `text`: in its
 * place where the user varies it (so configurations keep their order), else
 * last. */
static int rebuild(advise_plan_t *p, int axis, const char *text) {
    sweep_grid_args_t g = p->o->g;
    if (axis >= 0)
        g.vary[axis] = text;
    else if (g.nvary < SWEEP_MAX_AXES)
        g.vary[g.nvary++] = text;
    else
        return options_error("advise",
                             "--minimize %s: no room for the checkpoint interval's axis "
                             "(16 --vary at most)",
                             ADVISE_USEFUL);
    const char *names[SCN_MAX_VARIANTS];
    for (int i = 0; i < p->doc->nvariants; i++)
        names[i] = p->doc->variants[i].name;
    sweep_grid_free(&p->grid);
    sweep_grid_init(&p->grid);
    p->grid.cmd = "advise";
    return sweep_grid_build(&p->grid, &g, names, p->doc->nvariants, &p->o->a.sets);
}

/* 1 when --set names the interval (the user fixed it: not searched). */
static int interval_set(const advise_plan_t *p) {
    for (size_t i = 0; i < p->o->a.sets.n; i++)
        if (strcmp(p->o->a.sets.v[i].key, EVERY_KEY) == 0) return 1;
    return 0;
}

int advise_useful_setup(advise_plan_t *p) {
    double given, yd;
    int rc = as_given(p, &given, &yd);
    if (rc) return rc;
    p->young_daly = yd;
    if (!(yd > 0) || interval_set(p)) {
        fprintf(stderr, "stallsim advise: note: the checkpoint interval is not searched: %s\n",
                interval_set(p) ? "--set " EVERY_KEY " fixes it"
                                : "job 0 has no Young/Daly interval (no failures, or no "
                                  "checkpoint size)");
        return 0;
    }
    const int axis = sweep_grid_axis(&p->grid, EVERY_KEY);
    double x[MAX_CANDIDATES];
    int nx = 0;
    if (axis >= 0) {
        const sweep_axis_t *ax = &p->grid.axes[axis];
        int tied = ax->tied_to >= 0;
        for (int a = 0; a < p->grid.naxes; a++)
            tied |= p->grid.axes[a].tied_to == axis;
        if (tied || ax->nvalues >= MAX_CANDIDATES) {
            fprintf(stderr,
                    "stallsim advise: note: the Young/Daly interval (%.0f steps) is not "
                    "added to --vary " EVERY_KEY ": the axis is tied or long\n",
                    yd);
            return 0;
        }
        for (int i = 0; i < ax->nvalues; i++)
            x[nx++] = atof(ax->values[i]);
    } else {
        if (given > 0) x[nx++] = given;
        for (int i = 0; i < NLADDER; i++) {
            double s = fmax(1, round(ladder[i] * yd));
            if (!has_value(x, nx, s)) x[nx++] = s;
        }
    }
    if (!has_value(x, nx, yd)) x[nx++] = yd;
    vary_text(p->useful_vary, sizeof p->useful_vary, x, nx);
    rc = rebuild(p, axis, p->useful_vary);
    if (!rc && p->grid.size > MAX_CONFIGS)
        rc = options_error("advise",
                           "the grid has more than 10^7 configurations with the "
                           "checkpoint interval's values (%s)",
                           p->useful_vary);
    return rc;
}
