/* advise: see advise.h. */
#include "advise.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cost.h"
#include "model.h"
#include "report.h"
#include "valid.h"
#include "run.h"
#include "scenario.h"
#include "grid_run.h"
#include "sweep_describe.h"
#include "sweep_grid.h"
#include "text.h"

#define MAX_TARGETS      8
#define MAX_ALTS         8
#define MAX_CONFIGS      10000000LL /* one result of 56 bytes each is kept per configuration */
#define PARETO_TEXT_ROWS 25 /* a longer front is thinned in the text table (all in JSON, CSV) */
#define MAX_SIMS         100

typedef struct {
    run_args_t a;        /* first, then g: the shared rows' offsets are into them */
    sweep_grid_args_t g; /* --vary, --tie, as sweep's */
    const char *target[MAX_TARGETS];
    int ntarget;
    const char *alt[MAX_ALTS];
    int nalt;
    const char *prices, *minimize, *maximize;
    int confirm; /* simulations in all (0: the default) */
    int threads;
    report_format_t format;
} advise_opts_t;
_Static_assert(offsetof(advise_opts_t, g) == offsetof(sweep_grid_cmd_t, g),
               "sweep_grid_options' offsets");

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

typedef struct {
    int metric;
    int ge; /* >= (else <=) */
    double value;
    const char *text;
} target_t;

/* What the model (or the simulator) says of one configuration: its last
 * epoch, the worst job instance for each figure. */
typedef struct {
    double objective; /* minimised: dollars, the key's value, or minus it when maximised */
    double cost;      /* dollars of the whole run (0 when unpriced) */
    double util;      /* GPU utilisation of the least busy instance */
    double lead;      /* the first target's metric, worst instance */
    double epoch_s;   /* the slowest instance's epoch */
    signed char ok;   /* meets every target */
    signed char bottleneck;
} point_t;

typedef struct {
    int64_t c;
    point_t model, sim;
} checked_t;

typedef struct {
    char name[SCN_STR * 4]; /* what the alternative changes, for the reader */
    int variant;            /* into doc->variants, -1 = none */
    assign_list_t extra;    /* --alternative's assignments */
    point_t *pts;
    int64_t nok;
    int64_t rec;     /* the recommendation (confirmed, or the model's with no simulation), -1 */
    int64_t *order;  /* the feasible configurations, best first */
    checked_t *sims; /* every simulated configuration, in the order run */
    int nsims;
} search_t;

typedef struct {
    const advise_opts_t *o;
    scenario_doc_t *doc;
    sweep_grid_t grid;
    target_t targets[MAX_TARGETS];
    int ntargets;
    int obj_axis;       /* the varied key minimised or maximised, or -1 for cost */
    int maximize;       /* the objective key is maximised */
    double *obj_value;  /* numeric value of each of obj_axis's values */
    assign_list_t base; /* --set, --prices */
    int variant;        /* the variant searched */
    int simulate;       /* simulations allowed in all */
    int sims_left;
    search_t main;
    search_t alts[SCN_MAX_VARIANTS + MAX_ALTS];
    int nalts;
    int have_given; /* the scenario as given evaluated */
    point_t given;
    int64_t *pareto;
    int64_t npareto;
} plan_t;

/* ---- options ---- */

static int usage_error(const char *fmt, const char *arg) {
    return options_error("advise", fmt, arg);
}

static const option_t advise_own_options[] = {
    {.name = "--target",
     .type = OPT_LIST,
     .arg = "METRIC>=X",
     .offset = offsetof(advise_opts_t, target),
     .count_offset = offsetof(advise_opts_t, ntarget),
     .max = MAX_TARGETS,
     .help = "what a configuration must reach, in the run's last epoch for its worst\n"
             "job: METRIC>=X or METRIC<=X with METRIC one of gpu_util, epoch_s,\n"
             "throughput_items_s, prep_stall_s, fetch_stall_s, hit_rate, cpu_util,\n"
             "storage_util (default gpu_util>=0.9). Repeatable: all must hold."},
    {.name = "--minimize",
     .type = OPT_STR,
     .arg = "cost|KEY",
     .offset = offsetof(advise_opts_t, minimize),
     .help = "what the cheapest means: cost (dollars of the run, from the prices;\n"
             "the default when the scenario is priced) or a varied key"},
    {.name = "--maximize",
     .type = OPT_STR,
     .arg = "KEY",
     .offset = offsetof(advise_opts_t, maximize),
     .help = "the most of a varied key that still meets the target\n"
             "(--maximize jobs.0.gpus: the most GPUs the storage feeds)"},
    {.name = "--prices",
     .type = OPT_STR,
     .arg = "FILE",
     .offset = offsetof(advise_opts_t, prices),
     .help = "a price file, read once; its prices override the scenario's"},
    {.name = "--alternative",
     .type = OPT_LIST,
     .arg = "KEY=V[,KEY=V]",
     .offset = offsetof(advise_opts_t, alt),
     .count_offset = offsetof(advise_opts_t, nalt),
     .max = MAX_ALTS,
     .help = "another kind to search the same grid with (dataset.shard_items=1000);\n"
             "the scenario's other variants are searched too. Repeatable."},
    {.name = "--confirm",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(advise_opts_t, confirm),
     .min = 1,
     .max = MAX_SIMS,
     .help = "simulations in all, to confirm the recommendation, Pareto points\n"
             "and alternatives (default 4)"},
    {.name = "--threads",
     .type = OPT_INT,
     .arg = "N",
     .offset = offsetof(advise_opts_t, threads),
     .min = 1,
     .max = 1024,
     .help = "threads evaluating the model (default: the online CPUs); the answer\n"
             "is the same for any N"},
    REPORT_FORMAT_OPTION(offsetof(advise_opts_t, format)),
    {0},
};

static const option_t *const advise_tables[] = {sweep_grid_options, advise_own_options,
                                                run_model_only_option, run_scenario_options, NULL};

const command_t advise_command = {
    .name = "advise",
    .synopsis = "SCENARIO --vary key=values... [--target gpu_util>=0.9]\n"
                "                       [--minimize cost|KEY | --maximize KEY] [options]",
    .about = "Searches the grid of the --vary keys for the cheapest configuration that meets the\n"
             "target: the model evaluates every configuration, the simulator confirms the\n"
             "winner (a configuration it finds missing the target is passed over). Prints the\n"
             "recommendation, its bottleneck, the Pareto front (objective vs GPU utilisation)\n"
             "and what the scenario's other variants and each --alternative would need.",
    .tables = advise_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(advise_opts_t, a.file),
    .footer = "--variant NAME picks the variant searched (default: the first). With --model-only\n"
              "nothing is simulated and the recommendation is the model's.\n",
};

/* ---- the pieces: targets, objective ---- */

static int parse_target(const char *arg, target_t *t) {
    const char *op = strstr(arg, ">=");
    if (!op) op = strstr(arg, "<=");
    char name[64];
    if (!op || op == arg || (size_t)(op - arg) >= sizeof name)
        return usage_error("--target %s: expected METRIC>=X or METRIC<=X (gpu_util>=0.9)", arg);
    memcpy(name, arg, (size_t)(op - arg));
    name[op - arg] = 0;
    t->metric = -1;
    for (int i = 0; i < NMETRICS; i++)
        if (strcmp(metric_defs[i].name, name) == 0) t->metric = i;
    if (t->metric < 0)
        return usage_error("--target %s: unknown metric; one of gpu_util, epoch_s, "
                           "throughput_items_s, prep_stall_s, fetch_stall_s, hit_rate, "
                           "cpu_util, storage_util",
                           arg);
    t->ge = op[0] == '>';
    char *end;
    t->value = strtod(op + 2, &end);
    if (end == op + 2 || *end || !isfinite(t->value) || t->value < 0)
        return usage_error("--target %s: expected a number >= 0 after the operator", arg);
    if (metric_defs[t->metric].fraction && t->value > 1)
        return usage_error("--target %s: this metric is a fraction in [0, 1] (0.9 for 90%%)", arg);
    t->text = arg;
    return 0;
}

static double metric_of(const epoch_metrics_t *m, int metric) {
    return *(const double *)((const char *)m + metric_defs[metric].off);
}

/* A point of a built and run variant: the last epoch, the worst instance. */
static void summarise(const plan_t *p, const variant_run_t *v, const run_metrics_t *r,
                      double key_value, point_t *pt) {
    const int e = r->nepochs - 1;
    memset(pt, 0, sizeof *pt);
    pt->util = INFINITY;
    pt->ok = 1;
    cost_t total = {0};
    const int priced = cost_priced(&v->scn);
    for (int i = 0; i < r->ninst; i++) {
        const epoch_metrics_t *m = metrics_at(r, i, e);
        if (m->gpu_util < pt->util)
            pt->util = m->gpu_util, pt->bottleneck = (signed char)m->bottleneck;
        if (m->epoch_s > pt->epoch_s) pt->epoch_s = m->epoch_s;
        for (int ep = 0; priced && ep < r->nepochs; ep++) {
            cost_t c;
            cost_epoch(&v->scn, &v->topo, i, ep, metrics_at(r, i, ep), &c);
            cost_add(&total, &c);
        }
    }
    pt->cost = total.total;
    for (int k = 0; k < p->ntargets; k++) {
        const target_t *t = &p->targets[k];
        double worst = t->ge ? INFINITY : -INFINITY;
        for (int i = 0; i < r->ninst; i++) {
            double x = metric_of(metrics_at(r, i, e), t->metric);
            if (t->ge ? x < worst : x > worst) worst = x;
        }
        if (k == 0) pt->lead = worst;
        if (t->ge ? !(worst >= t->value) : !(worst <= t->value)) pt->ok = 0;
    }
    pt->objective = p->obj_axis < 0 ? pt->cost : p->maximize ? -key_value : key_value;
}

/* --set and --prices, the alternative's assignments, then configuration c's values. */
static int config_sets(const plan_t *p, const search_t *s, int64_t c, assign_list_t *l,
                       double *key_value) {
    const assign_list_t *layers[2] = {&p->base, &s->extra};
    *key_value = 0;
    if (c >= 0 && p->obj_axis >= 0) {
        int idx[SWEEP_MAX_AXES];
        sweep_grid_point(&p->grid, c, idx);
        *key_value = p->obj_value[idx[p->obj_axis]];
    }
    return grid_sets(&p->grid, layers, 2, c, l);
}

/* Builds configuration c (or the scenario as given, c < 0) and runs the
 * model, and with `simulate` the simulator. */
static int evaluate(const plan_t *p, const search_t *s, int64_t c, int simulate, variant_run_t *v,
                    assign_list_t *sets, point_t *model, point_t *sim) {
    double key_value;
    int rc = config_sets(p, s, c, sets, &key_value);
    if (!rc) rc = run_build(p->doc, sets, s->variant, simulate, v);
    if (rc) return rc;
    memset(&v->model, 0, sizeof v->model);
    memset(&v->sim, 0, sizeof v->sim);
    if (simulate) {
        rc = run_execute(v, 1);
    } else if (metrics_alloc(&v->model, v->topo.ninst, (int)v->scn.epochs)) {
        rc = EXIT_RUNTIME;
    } else {
        /* Without prices only the last epoch counts (no steady state either). */
        int epochs = (int)v->scn.epochs;
        model_run_from(&v->scn, &v->topo, &v->model, cost_priced(&v->scn) ? 0 : epochs - 1);
        rc = report_valid_variant(v, cost_priced(&v->scn) ? 0 : epochs - 1, 0, "advise");
    }
    if (!rc && simulate) rc = report_valid_runs(v, 1, "advise");
    if (!rc) summarise(p, v, &v->model, key_value, model);
    if (!rc && simulate) summarise(p, v, &v->sim, key_value, sim);
    run_release(v);
    return rc;
}

/* ---- the model over the whole grid, on the grid runner ---- */

typedef struct {
    const plan_t *p;
    search_t *s;
} eval_t;

enum { CHUNK = 64 };

static int eval_one(void *ctx, grid_worker_t *w, int64_t c, char **buf, size_t *len) {
    (void)buf, (void)len;
    const eval_t *e = ctx;
    return evaluate(e->p, e->s, c, 0, w->v, &w->sets, &e->s->pts[c], NULL);
}

/* qsort has no context argument: set before each sort (sorts run on the main thread). */
static const plan_t *sort_plan;
static const search_t *sort_search;

/* Best first: the objective, then the first target's metric (the better
 * side), then the configuration's index. */
static int by_objective(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    const point_t *pa = &sort_search->pts[a], *pb = &sort_search->pts[b];
    if (pa->objective != pb->objective) return pa->objective < pb->objective ? -1 : 1;
    int ge = sort_plan->targets[0].ge;
    if (pa->lead != pb->lead) return (pa->lead > pb->lead) == ge ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* For the Pareto front: the objective, then higher utilisation, then index. */
static int by_front(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    const point_t *pa = &sort_search->pts[a], *pb = &sort_search->pts[b];
    if (pa->objective != pb->objective) return pa->objective < pb->objective ? -1 : 1;
    if (pa->util != pb->util) return pa->util > pb->util ? -1 : 1;
    return a < b ? -1 : a > b;
}

static int search_model(plan_t *p, search_t *s) {
    s->pts = calloc((size_t)p->grid.size, sizeof *s->pts);
    if (!s->pts) return EXIT_RUNTIME;
    eval_t e = {.p = p, .s = s};
    grid_run_spec_t spec = {.first = 0,
                            .end = p->grid.size,
                            .threads = p->o->threads,
                            .chunk = CHUNK,
                            .run = eval_one,
                            .ctx = &e};
    int64_t failed_at;
    int rc = grid_run(&spec, &failed_at);
    if (rc == EXIT_INPUT && failed_at >= 0) {
        char what[4096];
        sweep_config_text(&p->grid, failed_at, what, sizeof what);
        fprintf(stderr, "stallsim advise: configuration %lld (", (long long)failed_at);
        text_put_escaped(stderr, what);
        fprintf(stderr, ")%s%s of --vary is invalid: see the error above\n",
                s->extra.n || s != &p->main ? " with " : "", s != &p->main ? s->name : "");
    }
    if (rc) return rc;
    int64_t nok = 0;
    for (int64_t c = 0; c < p->grid.size; c++)
        nok += s->pts[c].ok;
    s->nok = nok;
    s->order = malloc((size_t)(nok ? nok : 1) * sizeof *s->order);
    if (!s->order) return EXIT_RUNTIME;
    nok = 0;
    for (int64_t c = 0; c < p->grid.size; c++)
        if (s->pts[c].ok) s->order[nok++] = c;
    sort_plan = p, sort_search = s;
    qsort(s->order, (size_t)nok, sizeof *s->order, by_objective);
    return 0;
}

/* ---- the simulator's confirmations ---- */

static int simulate_one(plan_t *p, search_t *s, int64_t c, checked_t **out) {
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c == c) {
            *out = &s->sims[i];
            return 0;
        }
    checked_t *n = realloc(s->sims, (size_t)(s->nsims + 1) * sizeof *n);
    if (!n) return EXIT_RUNTIME;
    s->sims = n;
    checked_t *k = &s->sims[s->nsims];
    memset(k, 0, sizeof *k);
    k->c = c;
    variant_run_t *v = calloc(1, sizeof *v);
    assign_list_t sets = {0};
    int rc = v ? evaluate(p, s, c, 1, v, &sets, &k->model, &k->sim) : EXIT_RUNTIME;
    assign_list_free(&sets);
    free(v);
    if (rc) return rc;
    s->nsims++;
    p->sims_left--;
    *out = k;
    return 0;
}

/* The best feasible configuration the simulator agrees meets the target;
 * with no simulation left (or --model-only), the model's best. */
static int confirm(plan_t *p, search_t *s, int budget) {
    s->rec = -1;
    if (!p->simulate) {
        if (s->nok) s->rec = s->order[0];
        return 0;
    }
    for (int64_t i = 0; i < s->nok && budget > 0 && p->sims_left > 0; i++, budget--) {
        checked_t *k;
        int rc = simulate_one(p, s, s->order[i], &k);
        if (rc) return rc;
        if (k->sim.ok) {
            s->rec = k->c;
            return 0;
        }
    }
    return 0;
}

static const checked_t *sim_of(const search_t *s, int64_t c) {
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c == c) return &s->sims[i];
    return NULL;
}

static int pareto(plan_t *p) {
    search_t *s = &p->main;
    int64_t *all = malloc((size_t)p->grid.size * sizeof *all);
    p->pareto = malloc((size_t)p->grid.size * sizeof *p->pareto);
    if (!all || !p->pareto) {
        free(all);
        return EXIT_RUNTIME;
    }
    for (int64_t c = 0; c < p->grid.size; c++)
        all[c] = c;
    sort_plan = p, sort_search = s;
    qsort(all, (size_t)p->grid.size, sizeof *all, by_front);
    double best = -INFINITY;
    p->npareto = 0;
    for (int64_t i = 0; i < p->grid.size; i++) {
        const point_t *pt = &s->pts[all[i]];
        if (pt->util > best) {
            best = pt->util;
            p->pareto[p->npareto++] = all[i];
        }
    }
    free(all);
    /* Simulate the front's points beside the recommendation while simulations are left. */
    int64_t at = -1;
    for (int64_t i = 0; i < p->npareto && s->rec >= 0; i++)
        if (s->pts[p->pareto[i]].objective <= s->pts[s->rec].objective) at = i;
    for (int64_t d = 0; p->simulate && at >= 0 && p->sims_left > 0 && d < p->npareto; d++) {
        for (int side = -1; side <= 1 && p->sims_left > 0; side += 2) {
            int64_t j = at + side * d + (side > 0 ? 1 : 0);
            if (d == 0 && side < 0) j = at;
            if (j < 0 || j >= p->npareto || sim_of(s, p->pareto[j])) continue;
            checked_t *k;
            int rc = simulate_one(p, s, p->pareto[j], &k);
            if (rc) return rc;
        }
    }
    return 0;
}

/* ---- output ---- */

static const char *obj_name(const plan_t *p) {
    return p->obj_axis < 0 ? "cost" : p->grid.axes[p->obj_axis].key;
}

static double obj_shown(const plan_t *p, const point_t *pt) {
    return p->maximize ? -pt->objective : pt->objective;
}

static void fmt_obj(const plan_t *p, const point_t *pt, char *buf, size_t n) {
    if (p->obj_axis < 0)
        snprintf(buf, n, "$%.2f", pt->cost);
    else
        snprintf(buf, n, "%.6g", obj_shown(p, pt));
}

static void text_point(FILE *f, const char *what, const point_t *pt) {
    fprintf(f, "%s: gpu %.1f%%, epoch %.1f s, bottleneck %s", what, 100 * pt->util, pt->epoch_s,
            bottleneck_names[pt->bottleneck]);
}

/* What an alternative saves against the recommendation, in the objective's terms. */
static void saving(const plan_t *p, const point_t *rec, const point_t *alt, char *buf, size_t n) {
    double d = obj_shown(p, rec) - obj_shown(p, alt);
    const char *key = obj_name(p);
    if (d == 0)
        snprintf(buf, n,
                 p->obj_axis < 0 ? "costs the same as the recommendation"
                                 : "needs the same %s as the recommendation",
                 key);
    else if (p->obj_axis < 0)
        snprintf(buf, n, "costs $%.2f %s than the recommendation", fabs(d),
                 d > 0 ? "less" : "more");
    else if (p->maximize)
        snprintf(buf, n, "feeds %.6g %s %s than the recommendation", fabs(d),
                 d < 0 ? "more" : "fewer", key);
    else
        snprintf(buf, n, "needs %.6g %s %s than the recommendation", fabs(d),
                 d > 0 ? "less" : "more", key);
}

static void write_text(FILE *f, const plan_t *p) {
    const search_t *s = &p->main;
    fprintf(f, "stallsim advise -- %s, variant %s\n", p->o->a.file,
            s->variant >= 0 ? p->doc->variants[s->variant].name : "(none)");
    fputs("target:", f);
    for (int k = 0; k < p->ntargets; k++)
        fprintf(f, "%s %s", k ? " and" : "", p->targets[k].text);
    fprintf(f, " (model, the run's last epoch, the worst job); %s %s\n",
            p->maximize ? "maximize" : "minimize", obj_name(p));
    fprintf(f, "searched %lld configurations with the model: %lld meet the target\n",
            (long long)p->grid.size, (long long)s->nok);
    if (p->have_given) text_point(f, "the scenario as given (model)", &p->given), fputc('\n', f);
    char what[4096], ob[64];
    fputc('\n', f);
    if (s->rec >= 0) {
        const point_t *m = &s->pts[s->rec];
        sweep_config_text(&p->grid, s->rec, what, sizeof what);
        fmt_obj(p, m, ob, sizeof ob);
        fprintf(f, "recommendation: %s (configuration %lld), %s %s\n", what, (long long)s->rec,
                obj_name(p), ob);
        text_point(f, "  model", m);
        const checked_t *k = sim_of(s, s->rec);
        if (k) {
            fputc('\n', f);
            text_point(f, "  simulator", &k->sim);
            fputs(": meets the target\n", f);
        } else {
            fputs(" (model only: not simulated)\n", f);
        }
        const point_t *now = k ? &k->sim : m;
        fprintf(f, "  its bottleneck becomes %s", bottleneck_names[now->bottleneck]);
        if (p->have_given)
            fprintf(f, " (as given: %s, gpu %.1f%%)", bottleneck_names[p->given.bottleneck],
                    100 * p->given.util);
        fputc('\n', f);
    } else if (s->nok) {
        fprintf(f,
                "no recommendation: the simulator found all %d candidates it ran missing the "
                "target\n",
                s->nsims);
    } else {
        int64_t top = p->pareto[p->npareto - 1]; /* the busiest, the cheapest of those */
        sweep_config_text(&p->grid, top, what, sizeof what);
        fprintf(f,
                "no configuration of the grid meets the target; the busiest GPUs: %s "
                "(configuration %lld)",
                what, (long long)top);
        text_point(f, "", &s->pts[top]);
        fputc('\n', f);
    }
    for (int i = 0; i < s->nsims; i++) {
        const checked_t *k = &s->sims[i];
        if (k->sim.ok || !k->model.ok) continue;
        sweep_config_text(&p->grid, k->c, what, sizeof what);
        fprintf(f,
                "  not recommended: %s (configuration %lld): model gpu %.1f%%, simulator %.1f%% "
                "misses the target\n",
                what, (long long)k->c, 100 * k->model.util, 100 * k->sim.util);
    }

    fprintf(f, "\nPareto front (%s vs GPU utilisation; model, simulator where run):\n",
            obj_name(p));
    fprintf(f, "%10s ", "config");
    for (int a = 0; a < p->grid.naxes; a++)
        fprintf(f, " %16s", p->grid.axes[a].key);
    fprintf(f, " %12s %8s %8s %10s %s\n", p->obj_axis < 0 ? "cost_usd" : "objective", "gpu",
            "gpu_sim", "epoch_s", "bottleneck");
    int64_t step = p->npareto > PARETO_TEXT_ROWS
                       ? (p->npareto + PARETO_TEXT_ROWS - 2) / (PARETO_TEXT_ROWS - 1)
                       : 1;
    int64_t shown = 0;
    for (int64_t i = 0; i < p->npareto; i++) {
        int64_t c = p->pareto[i];
        const checked_t *k = sim_of(s, c);
        if (i % step && i != p->npareto - 1 && c != s->rec && !k) continue;
        shown++;
        int idx[SWEEP_MAX_AXES];
        sweep_grid_point(&p->grid, c, idx);
        const point_t *pt = &s->pts[c];
        fprintf(f, "%10lld ", (long long)c);
        for (int a = 0; a < p->grid.naxes; a++)
            fprintf(f, " %16s", p->grid.axes[a].values[idx[a]]);
        char sim[16] = "-";
        if (k) snprintf(sim, sizeof sim, "%.1f%%", 100 * k->sim.util);
        fmt_obj(p, pt, ob, sizeof ob);
        fprintf(f, " %12s %7.1f%% %8s %10.1f %s%s\n", ob, 100 * pt->util, sim, pt->epoch_s,
                bottleneck_names[pt->bottleneck], c == s->rec ? "  <- recommended" : "");
    }
    if (shown < p->npareto)
        fprintf(f, "(%lld of the front's %lld points shown; --format csv has all)\n",
                (long long)shown, (long long)p->npareto);

    if (p->nalts) fputs("\nAlternatives of another kind (the same grid and target):\n", f);
    for (int i = 0; i < p->nalts; i++) {
        const search_t *a = &p->alts[i];
        fprintf(f, "  %s: ", a->name);
        if (a->rec < 0) {
            fprintf(f, "%s\n",
                    a->nok ? "no candidate the simulator confirmed"
                           : "no configuration meets the target");
            continue;
        }
        sweep_config_text(&p->grid, a->rec, what, sizeof what);
        const checked_t *k = sim_of(a, a->rec);
        fprintf(f, "%s; gpu %.1f%%%s", what, 100 * (k ? k->sim.util : a->pts[a->rec].util),
                k ? " (simulator)" : " (model)");
        if (s->rec >= 0) {
            char sv[128];
            saving(p, &s->pts[s->rec], &a->pts[a->rec], sv, sizeof sv);
            fprintf(f, ": %s", sv);
        }
        fputc('\n', f);
    }
}

static void json_point(FILE *f, const plan_t *p, const point_t *pt) {
    fprintf(f,
            "{\"objective\": %.9g, \"cost_usd\": %.6f, \"gpu_util\": %.6f, \"epoch_s\": %.9g, "
            "\"target_metric\": %.9g, \"meets_target\": %s, \"bottleneck\": \"%s\"}",
            obj_shown(p, pt), pt->cost, pt->util, pt->epoch_s, pt->lead, pt->ok ? "true" : "false",
            bottleneck_names[pt->bottleneck]);
}

static void json_config(FILE *f, const plan_t *p, const search_t *s, int64_t c) {
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(&p->grid, c, idx);
    fprintf(f, "{\"config\": %lld, \"values\": {", (long long)c);
    for (int a = 0; a < p->grid.naxes; a++) {
        fputs(a ? ", " : "", f);
        report_json_string(f, p->grid.axes[a].key);
        fputs(": ", f);
        report_json_string(f, p->grid.axes[a].values[idx[a]]);
    }
    fputs("}, \"model\": ", f);
    json_point(f, p, &s->pts[c]);
    const checked_t *k = sim_of(s, c);
    fputs(", \"sim\": ", f);
    if (k)
        json_point(f, p, &k->sim);
    else
        fputs("null", f);
    fputc('}', f);
}

static void write_json(FILE *f, const plan_t *p) {
    const search_t *s = &p->main;
    fputs("{\n  \"format_version\": 1,\n  \"scenario\": ", f);
    report_json_string(f, p->o->a.file);
    fputs(",\n  \"variant\": ", f);
    report_json_string(f, s->variant >= 0 ? p->doc->variants[s->variant].name : "");
    fputs(",\n  \"targets\": [", f);
    for (int k = 0; k < p->ntargets; k++) {
        fputs(k ? ", " : "", f);
        fprintf(f, "{\"metric\": \"%s\", \"op\": \"%s\", \"value\": %.9g}",
                metric_defs[p->targets[k].metric].name,
                p->targets[k].ge ? ">=" : "<=", p->targets[k].value);
    }
    fprintf(f, "],\n  \"objective\": {\"key\": \"%s\", \"direction\": \"%s\"},\n", obj_name(p),
            p->maximize ? "maximize" : "minimize");
    fprintf(f, "  \"configurations\": %lld,\n  \"meet_target\": %lld,\n  \"given\": ",
            (long long)p->grid.size, (long long)s->nok);
    if (p->have_given)
        json_point(f, p, &p->given);
    else
        fputs("null", f);
    fputs(",\n  \"recommendation\": ", f);
    if (s->rec >= 0)
        json_config(f, p, s, s->rec);
    else
        fputs("null", f);
    fputs(",\n  \"simulated\": [", f);
    for (int i = 0; i < s->nsims; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_config(f, p, s, s->sims[i].c);
    }
    fputs("\n  ],\n  \"pareto\": [", f);
    for (int64_t i = 0; i < p->npareto; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        json_config(f, p, s, p->pareto[i]);
    }
    fputs("\n  ],\n  \"alternatives\": [", f);
    for (int i = 0; i < p->nalts; i++) {
        const search_t *a = &p->alts[i];
        fputs(i ? ",\n    " : "\n    ", f);
        fputs("{\"name\": ", f);
        report_json_string(f, a->name);
        fprintf(f, ", \"meet_target\": %lld, \"recommendation\": ", (long long)a->nok);
        if (a->rec >= 0)
            json_config(f, p, a, a->rec);
        else
            fputs("null", f);
        if (a->rec >= 0 && s->rec >= 0)
            fprintf(f, ", \"saves\": %.9g",
                    obj_shown(p, &s->pts[s->rec]) - obj_shown(p, &a->pts[a->rec]));
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}

static void csv_row(FILE *f, const plan_t *p, const search_t *s, const char *role, int64_t c) {
    int idx[SWEEP_MAX_AXES];
    sweep_grid_point(&p->grid, c, idx);
    fputs(role, f);
    fputc(',', f);
    report_csv_field(f, s == &p->main ? "" : s->name);
    fprintf(f, ",%lld", (long long)c);
    for (int a = 0; a < p->grid.naxes; a++) {
        fputc(',', f);
        report_csv_field(f, p->grid.axes[a].values[idx[a]]);
    }
    const point_t *m = &s->pts[c];
    const checked_t *k = sim_of(s, c);
    fprintf(f, ",%.9g,%.6f,%.6f,%.9g,%d,%s,", obj_shown(p, m), m->cost, m->util, m->epoch_s, m->ok,
            bottleneck_names[m->bottleneck]);
    if (k)
        fprintf(f, "%.6f,%.6f,%.9g,%d,%s\n", k->sim.cost, k->sim.util, k->sim.epoch_s, k->sim.ok,
                bottleneck_names[k->sim.bottleneck]);
    else
        fputs(",,,,\n", f);
}

static void write_csv(FILE *f, const plan_t *p) {
    fputs("role,alternative,config", f);
    for (int a = 0; a < p->grid.naxes; a++) {
        fputc(',', f);
        report_csv_field(f, p->grid.axes[a].key);
    }
    fputs(",objective,cost_usd,gpu_util,epoch_s,meets_target,bottleneck,"
          "sim_cost_usd,sim_gpu_util,sim_epoch_s,sim_meets_target,sim_bottleneck\n",
          f);
    const search_t *s = &p->main;
    if (s->rec >= 0) csv_row(f, p, s, "recommendation", s->rec);
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c != s->rec && s->sims[i].model.ok && !s->sims[i].sim.ok)
            csv_row(f, p, s, "rejected", s->sims[i].c);
    for (int64_t i = 0; i < p->npareto; i++)
        csv_row(f, p, s, "pareto", p->pareto[i]);
    for (int i = 0; i < p->nalts; i++)
        if (p->alts[i].rec >= 0) csv_row(f, p, &p->alts[i], "alternative", p->alts[i].rec);
}

/* ---- setting up ---- */

static int setup_objective(plan_t *p) {
    const advise_opts_t *o = p->o;
    if (o->minimize && o->maximize) return usage_error("--minimize and --maximize: give one%s", "");
    const char *key = o->maximize ? o->maximize : o->minimize;
    p->maximize = o->maximize != NULL;
    p->obj_axis = -1;
    if (!key || (!p->maximize && strcmp(key, "cost") == 0)) return 0;
    int a = sweep_grid_axis(&p->grid, key);
    if (a < 0)
        return usage_error("--minimize/--maximize %s: not a varied key (give it a --vary axis, "
                           "or --minimize cost)",
                           key);
    const sweep_axis_t *ax = &p->grid.axes[a];
    p->obj_value = malloc((size_t)ax->nvalues * sizeof *p->obj_value);
    if (!p->obj_value) return EXIT_RUNTIME;
    for (int v = 0; v < ax->nvalues; v++) {
        char *end;
        p->obj_value[v] = strtod(ax->values[v], &end);
        if (end == ax->values[v] || *end)
            return usage_error("--minimize/--maximize %s: the key's values are not numbers", key);
    }
    p->obj_axis = a;
    return 0;
}

static int add_alternative(plan_t *p, const char *arg) {
    search_t *s = &p->alts[p->nalts];
    memset(s, 0, sizeof *s);
    s->variant = p->variant;
    snprintf(s->name, sizeof s->name, "--alternative %s", arg);
    char *list = strdup(arg);
    if (!list) return EXIT_RUNTIME;
    int rc = 0;
    for (char *item = list, *next; !rc && item; item = next) {
        next = strchr(item, ',');
        if (next) *next++ = 0;
        char *eq = strchr(item, '=');
        if (!eq || eq == item) {
            rc = usage_error("--alternative %s: expected KEY=VALUE[,KEY=VALUE...]", arg);
            break;
        }
        *eq = 0;
        if (sweep_grid_axis(&p->grid, item) >= 0) {
            rc = usage_error("--alternative %s: sets a varied key; an alternative changes what "
                             "the grid does not",
                             arg);
            break;
        }
        static const src_pos_t alt_pos = {"--alternative", 0, 0};
        if (assign_push(&s->extra, item, eq + 1, alt_pos, alt_pos, 1)) rc = EXIT_INPUT;
    }
    free(list);
    if (rc) {
        assign_list_free(&s->extra);
        return rc;
    }
    p->nalts++;
    return 0;
}

static void free_search(search_t *s) {
    free(s->pts);
    free(s->order);
    free(s->sims);
    assign_list_free(&s->extra);
}

/* The variant searched's own settings of a varied key win over --vary: said, as sweep says it. */
static void note_overrides(const plan_t *p, int variant) {
    if (variant < 0) return;
    int runs[SCN_MAX_VARIANTS] = {0};
    runs[variant] = 1;
    sweep_note_overrides("advise", &p->grid, p->doc, runs);
}

static int advise(const advise_opts_t *o, scenario_doc_t *doc) {
    plan_t *p = calloc(1, sizeof *p);
    if (!p) return EXIT_RUNTIME;
    p->o = o;
    p->doc = doc;
    sweep_grid_init(&p->grid);
    p->grid.cmd = "advise";
    const char *names[SCN_MAX_VARIANTS];
    for (int i = 0; i < doc->nvariants; i++)
        names[i] = doc->variants[i].name;
    int rc = sweep_grid_build(&p->grid, &o->g, names, doc->nvariants, &o->a.sets);
    for (int a = 0; a < p->grid.naxes && !rc; a++)
        if (p->grid.axes[a].is_variant)
            rc = usage_error("--vary variant=...: advise searches one variant (--variant NAME) "
                             "and the others are its alternatives%s",
                             "");
    if (!rc && p->grid.size > MAX_CONFIGS)
        rc = usage_error("the grid has more than 10^7 configurations%s", "");
    const char *deflt = "gpu_util>=0.9";
    p->ntargets = o->ntarget ? o->ntarget : 1;
    for (int k = 0; k < p->ntargets && !rc; k++)
        rc = parse_target(o->ntarget ? o->target[k] : deflt, &p->targets[k]);
    if (!rc) rc = setup_objective(p);
    for (size_t i = 0; i < o->a.sets.n && !rc; i++) {
        const assign_t *a = &o->a.sets.v[i];
        rc = assign_push(&p->base, a->key, a->value, a->pos, a->keypos, 1) ? EXIT_RUNTIME : 0;
    }
    if (!rc && o->prices) {
        /* Loaded once, not at every configuration; its prices act as --set prices.*=... */
        char path[SCN_PATH * 2 + 2];
        rc = scenario_host_path(doc, o->prices, path, sizeof path);
        if (!rc) rc = scenario_prices_load(path, o->prices, &p->base);
    }
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    if (!rc && o->a.nonly > 1)
        rc = usage_error("--variant: advise searches one variant; the others are its "
                         "alternatives%s",
                         "");
    if (!rc) rc = run_select(doc, "advise", o->a.only, o->a.nonly, idx, &nv);
    if (!rc) {
        p->variant = nv ? idx[0] : -1;
        p->main.variant = p->variant;
        snprintf(p->main.name, sizeof p->main.name, "%s",
                 p->variant >= 0 ? doc->variants[p->variant].name : "");
        for (int i = 0; i < doc->nvariants && !rc; i++) {
            if (i == p->variant) continue;
            search_t *s = &p->alts[p->nalts++];
            memset(s, 0, sizeof *s);
            s->variant = i;
            snprintf(s->name, sizeof s->name, "variant %s", doc->variants[i].name);
        }
        for (int i = 0; i < o->nalt && !rc; i++)
            rc = add_alternative(p, o->alt[i]);
    }
    if (!rc) note_overrides(p, p->variant);

    /* The objective cost needs prices (known once a configuration is built). */
    variant_run_t *v = rc ? NULL : calloc(1, sizeof *v);
    if (!rc && !v) rc = EXIT_RUNTIME;
    assign_list_t sets = {0};
    if (!rc) {
        double kv;
        rc = config_sets(p, &p->main, 0, &sets, &kv);
        if (!rc) rc = run_build(doc, &sets, p->variant, 0, v);
        if (rc == EXIT_INPUT) {
            char what[4096];
            sweep_config_text(&p->grid, 0, what, sizeof what);
            fprintf(stderr,
                    "stallsim advise: configuration 0 (%s) of --vary is invalid: see the "
                    "error above\n",
                    what);
        }
        if (!rc && p->obj_axis < 0 && !p->maximize && !cost_priced(&v->scn))
            rc = usage_error("nothing to minimise: the scenario has no prices; give --prices "
                             "FILE, or --minimize KEY / --maximize KEY with a varied key%s",
                             "");
        /* The scenario as given: what the recommendation changes. */
        if (!rc && evaluate(p, &p->main, -1, 0, v, &sets, &p->given, NULL) == 0) p->have_given = 1;
    }
    assign_list_free(&sets);
    free(v);

    p->simulate = !o->a.model_only;
    p->sims_left = p->simulate ? (o->confirm ? o->confirm : 4) : 0;
    if (!rc) rc = search_model(p, &p->main);
    /* Most of the simulations go to the recommendation; one is kept per alternative when
     * there are enough. */
    if (!rc) {
        int keep = p->sims_left > p->nalts ? p->nalts : 0;
        rc = confirm(p, &p->main, p->sims_left - keep);
    }
    for (int i = 0; i < p->nalts && !rc; i++) {
        rc = search_model(p, &p->alts[i]);
        if (!rc) rc = confirm(p, &p->alts[i], 1);
    }
    if (!rc) rc = pareto(p);
    if (!rc) {
        if (o->format == FORMAT_JSON)
            write_json(stdout, p);
        else if (o->format == FORMAT_CSV)
            write_csv(stdout, p);
        else
            write_text(stdout, p);
    }
    free_search(&p->main);
    for (int i = 0; i < p->nalts; i++)
        free_search(&p->alts[i]);
    assign_list_free(&p->base);
    free(p->obj_value);
    free(p->pareto);
    sweep_grid_free(&p->grid);
    free(p);
    return rc;
}

int advise_main(int argc, char **argv) {
    advise_opts_t o;
    memset(&o, 0, sizeof o);
    int rc = options_parse(&advise_command, argc, argv, &o);
    if (rc) {
        assign_list_free(&o.a.sets);
        return rc == 1 ? EXIT_OK : rc;
    }
    if (!o.a.file) rc = usage_error("missing the scenario file%s", "");
    if (!rc && o.g.nvary == 0)
        rc = usage_error("nothing to search: give at least one --vary key=values%s", "");
    if (!rc && o.threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.threads = n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
    }
    scenario_doc_t doc;
    memset(&doc, 0, sizeof doc);
    int loaded = 0;
    if (!rc) {
        rc = scenario_doc_load(&doc, o.a.file);
        loaded = 1;
    }
    if (!rc) rc = advise(&o, &doc);
    /* Every runtime failure below is an allocation that failed (the paths
     * that fail otherwise say so and return EXIT_INPUT): said once, here. */
    if (rc == EXIT_RUNTIME)
        fprintf(stderr, "stallsim advise: out of memory: nothing was advised (fewer --vary values, "
                        "--threads 1, --model-only, or more memory)\n");
    if (loaded) scenario_doc_free(&doc);
    assign_list_free(&o.a.sets);
    return rc;
}
