/* advise_search: see advise_plan.h. */
#include "advise_plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "grid_run.h"
#include "model.h"
#include "sweep_describe.h"
#include "text.h"
#include "valid.h"

/* A point of a built and run variant: the last epoch, the worst instance. */
static void summarise(const advise_plan_t *p, const variant_run_t *v, const run_metrics_t *r,
                      double key_value, advise_point_t *pt) {
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
        const advise_target_t *t = &p->targets[k];
        double worst = t->ge ? INFINITY : -INFINITY;
        for (int i = 0; i < r->ninst; i++) {
            double x = advise_metric_of(r, i, e, t->metric);
            if (t->ge ? x < worst : x > worst) worst = x;
        }
        if (k == 0) pt->lead = worst;
        if (t->ge ? !(worst >= t->value) : !(worst <= t->value)) pt->ok = 0;
    }
    pt->objective = p->per_useful     ? advise_useful_objective(v, r)
                    : p->obj_axis < 0 ? pt->cost
                    : p->maximize     ? -key_value
                                      : key_value;
}

/* --set and --prices, the alternative's assignments, then configuration c's values. */
int advise_config_sets(const advise_plan_t *p, const advise_search_t *s, int64_t c,
                       assign_list_t *l, double *key_value) {
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
int advise_evaluate(const advise_plan_t *p, const advise_search_t *s, int64_t c, int simulate,
                    variant_run_t *v, assign_list_t *sets, advise_point_t *model,
                    advise_point_t *sim) {
    double key_value;
    int over = 0, rc = advise_config_sets(p, s, c, sets, &key_value);
    if (!rc) rc = run_build_fitting(p->doc, sets, s->variant, simulate, v, &over);
    if (rc) return rc;
    if (over) { /* its workers would die at the first batches: never a candidate */
        memset(model, 0, sizeof *model);
        model->over_limit = 1;
        model->objective = INFINITY;
        if (sim) *sim = *model;
        return 0;
    }
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
    const advise_plan_t *p;
    advise_search_t *s;
} eval_t;

enum { CHUNK = 64 };

static int eval_one(void *ctx, grid_worker_t *w, int64_t c, char **buf, size_t *len) {
    (void)buf, (void)len;
    const eval_t *e = ctx;
    return advise_evaluate(e->p, e->s, c, 0, w->v, &w->sets, &e->s->pts[c], NULL);
}

/* qsort has no context argument: set before each sort (sorts run on the main thread). */
static const advise_plan_t *sort_plan;
static const advise_search_t *sort_search;

/* Best first: the objective, then the first target's metric (the better
 * side), then the configuration's index. */
static int by_objective(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    const advise_point_t *pa = &sort_search->pts[a], *pb = &sort_search->pts[b];
    if (pa->objective != pb->objective) return pa->objective < pb->objective ? -1 : 1;
    int ge = sort_plan->targets[0].ge;
    if (pa->lead != pb->lead) return (pa->lead > pb->lead) == ge ? -1 : 1;
    return a < b ? -1 : a > b;
}

/* For the Pareto front: the objective, then higher utilisation, then index. */
static int by_front(const void *x, const void *y) {
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    const advise_point_t *pa = &sort_search->pts[a], *pb = &sort_search->pts[b];
    if (pa->objective != pb->objective) return pa->objective < pb->objective ? -1 : 1;
    if (pa->util != pb->util) return pa->util > pb->util ? -1 : 1;
    return a < b ? -1 : a > b;
}

int advise_search_model(advise_plan_t *p, advise_search_t *s) {
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
        nok += s->pts[c].ok, s->nover += s->pts[c].over_limit;
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

static int simulate_one(advise_plan_t *p, advise_search_t *s, int64_t c, advise_checked_t **out) {
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c == c) {
            *out = &s->sims[i];
            return 0;
        }
    advise_checked_t *n = realloc(s->sims, (size_t)(s->nsims + 1) * sizeof *n);
    if (!n) return EXIT_RUNTIME;
    s->sims = n;
    advise_checked_t *k = &s->sims[s->nsims];
    memset(k, 0, sizeof *k);
    k->c = c;
    variant_run_t *v = calloc(1, sizeof *v);
    assign_list_t sets = {0};
    int rc = v ? advise_evaluate(p, s, c, 1, v, &sets, &k->model, &k->sim) : EXIT_RUNTIME;
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
int advise_confirm(advise_plan_t *p, advise_search_t *s, int budget) {
    s->rec = -1;
    if (!p->simulate) {
        if (s->nok) s->rec = s->order[0];
        return 0;
    }
    for (int64_t i = 0; i < s->nok && budget > 0 && p->sims_left > 0; i++, budget--) {
        advise_checked_t *k;
        int rc = simulate_one(p, s, s->order[i], &k);
        if (rc) return rc;
        if (!k->sim.ok) continue;
        /* Dollars per useful epoch: the model's best few, the simulator's
         * figure choosing among them (its draws of failures can reorder
         * close ones); otherwise the first the simulator confirms. */
        if (!p->per_useful) {
            s->rec = k->c;
            return 0;
        }
        if (s->rec < 0 || k->sim.objective < advise_sim_of(s, s->rec)->sim.objective) s->rec = k->c;
    }
    return 0;
}

const advise_checked_t *advise_sim_of(const advise_search_t *s, int64_t c) {
    for (int i = 0; i < s->nsims; i++)
        if (s->sims[i].c == c) return &s->sims[i];
    return NULL;
}

int advise_pareto(advise_plan_t *p) {
    advise_search_t *s = &p->main;
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
        const advise_point_t *pt = &s->pts[all[i]];
        if (!pt->over_limit && pt->util > best) {
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
            if (j < 0 || j >= p->npareto || advise_sim_of(s, p->pareto[j])) continue;
            advise_checked_t *k;
            int rc = simulate_one(p, s, p->pareto[j], &k);
            if (rc) return rc;
        }
    }
    return 0;
}
