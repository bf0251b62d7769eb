/* spread: see spread.h. */
#include "spread.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "model.h"
#include "schema.h"

#define SPREAD_PREFIX "measured.stability.spread."

double spread_total_s(const run_metrics_t *m) {
    double total = 0;
    for (int e = 0; e < m->nepochs; e++) {
        double worst = 0;
        for (int i = 0; i < m->ninst; i++)
            if (metrics_at(m, i, e)->epoch_s > worst) worst = metrics_at(m, i, e)->epoch_s;
        total += worst;
    }
    return total;
}

/* One measured.stability.spread entry: kept when its key is a real-valued
 * scenario key the scenario leaves to the profile. 0, or 1 after an error. */
static int take(const assign_t *a, const scenario_t *s, spread_t *out) {
    const char *key = a->key + strlen(SPREAD_PREFIX);
    char *end;
    double rel = a->is_scalar ? strtod(a->value, &end) : NAN;
    if (!a->is_scalar || end == a->value || *end || !(rel >= 0) || !isfinite(rel)) {
        diag_error(a->pos, "key '%s': expected the figure's spread, a number >= 0, got '%s'",
                   a->key, a->is_scalar ? a->value : "a mapping or list");
        return 1;
    }
    int row = schema_find(SCOPE_SCENARIO, key), n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    /* Another program's keys, a string (the oversub curve), or the user's own value. */
    if (row < 0 || k[row].type != KT_REAL || s->explicit_key[row] || rel == 0) return 0;
    if (out->n == SPREAD_MAX_KEYS) return 0;
    snprintf(out->key[out->n], SCN_STR, "%s", key);
    out->rel[out->n] = rel;
    out->row[out->n] = row;
    if (rel > out->rel[out->widest]) out->widest = out->n;
    out->n++;
    return 0;
}

int spread_load(const scenario_doc_t *doc, const scenario_t *s, spread_t *out) {
    memset(out, 0, sizeof *out);
    if (!s->host[0]) return 0;
    if (scenario_host_path(doc, s->host, out->profile, sizeof out->profile)) return EXIT_RUNTIME;
    assign_list_t all = {0};
    /* scenario_build has read this file already: it parses. */
    /* Only the spreads: calibrate's descriptions elsewhere in the profile
     * are longer than a value may be (the whole file flattened refused
     * every profile calibrate wrote). */
    int rc = scenario_flat_section_load(out->profile, out->profile, "measured.stability.spread",
                                        &all),
        errors = 0;
    for (size_t i = 0; !rc && i < all.n; i++)
        if (strncmp(all.v[i].key, SPREAD_PREFIX, strlen(SPREAD_PREFIX)) == 0)
            errors += take(&all.v[i], s, out);
    assign_list_free(&all);
    if (errors) out->n = 0;
    return rc ? rc : errors ? EXIT_INPUT : 0;
}

/* row's value in s moved by factor f, held inside the row's bounds. */
static void move(scenario_t *s, const key_def_t *k, double x, double f) {
    double v = x * f;
    if (v < k->min || (k->min_open && v <= k->min)) v = x; /* a bound it cannot cross */
    if (v > k->max) v = k->max;
    *(double *)((char *)s + k->offset) = v;
}

static double total_at(const scenario_t *s, const topology_t *t, run_metrics_t *m) {
    model_run(s, t, m);
    return spread_total_s(m);
}

int spread_apply(const scenario_t *s, const topology_t *t, spread_t *sp) {
    if (sp->n == 0) return 0;
    scenario_t *w = malloc(sizeof *w);
    run_metrics_t m = {0};
    if (!w || metrics_alloc(&m, t->ninst, (int)s->epochs) ||
        metrics_alloc_servers(&m, (int)s->server.count)) {
        free(w);
        metrics_free(&m);
        return EXIT_RUNTIME;
    }
    *w = *s;
    int nrows;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &nrows);
    double x[SPREAD_MAX_KEYS];
    int up[SPREAD_MAX_KEYS]; /* 1: the figure's upper bound is its slow one */
    sp->total_s = total_at(w, t, &m);
    for (int i = 0; i < sp->n; i++) {
        const key_def_t *r = &k[sp->row[i]];
        x[i] = *(const double *)((const char *)s + r->offset);
        move(w, r, x[i], 1 + sp->rel[i]);
        double hi = total_at(w, t, &m);
        move(w, r, x[i], 1 - sp->rel[i]);
        double lo = total_at(w, t, &m);
        move(w, r, x[i], 1);
        up[i] = hi >= lo;
    }
    for (int i = 0; i < sp->n; i++)
        move(w, &k[sp->row[i]], x[i], up[i] ? 1 + sp->rel[i] : 1 - sp->rel[i]);
    sp->slow_s = total_at(w, t, &m);
    for (int i = 0; i < sp->n; i++)
        move(w, &k[sp->row[i]], x[i], up[i] ? 1 - sp->rel[i] : 1 + sp->rel[i]);
    sp->fast_s = total_at(w, t, &m);
    /* Each figure's own direction need not hold once all move: the range is
     * what was seen. */
    if (sp->slow_s < sp->fast_s) {
        double tmp = sp->slow_s;
        sp->slow_s = sp->fast_s, sp->fast_s = tmp;
    }
    metrics_free(&m);
    free(w);
    return 0;
}
