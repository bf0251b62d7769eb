/* sweep_html: see sweep_html.h. */
#include "sweep_html.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "schema.h"
#include "svg.h"

enum { MAX_FIELDS = SWEEP_MAX_AXES + 64, MAX_VARIANTS = SCN_MAX_VARIANTS + 1 };

/* One CSV record's fields (RFC 4180), unquoted into buf. */
typedef struct {
    char *buf;
    size_t cap;
    int n;
    const char *f[MAX_FIELDS];
} record_t;

/* Reads the record at *pos; 0 at the end, -1 without memory. */
static int next_record(const char *csv, size_t len, size_t *pos, record_t *r) {
    if (*pos >= len) return 0;
    if (r->cap < len - *pos + MAX_FIELDS + 1) {
        size_t cap = len - *pos + MAX_FIELDS + 1;
        char *b = realloc(r->buf, cap);
        if (!b) return -1;
        r->buf = b, r->cap = cap;
    }
    size_t i = *pos, o = 0;
    int quoted = 0;
    r->n = 0;
    r->f[r->n++] = r->buf;
    for (; i < len; i++) {
        char c = csv[i];
        if (quoted) {
            if (c == '"' && i + 1 < len && csv[i + 1] == '"')
                r->buf[o++] = '"', i++;
            else if (c == '"')
                quoted = 0;
            else
                r->buf[o++] = c;
        } else if (c == '"') {
            quoted = 1;
        } else if (c == ',') {
            r->buf[o++] = 0;
            if (r->n < MAX_FIELDS) r->f[r->n++] = r->buf + o;
        } else if (c == '\n') {
            i++;
            break;
        } else if (c != '\r') {
            r->buf[o++] = c;
        }
    }
    r->buf[o] = 0;
    *pos = i;
    return 1;
}

/* A dimension of the page: a grid axis, or the variants when none is one. */
typedef struct {
    const char *key;
    int n;
    const char *const *values;
    int axis; /* grid axis, or -1: the variants run */
    int numeric;
    double *x;
} dim_t;

typedef struct {
    double epoch_s, gpu, hit;
    int jobs;
} cell_t;

static int variant_index(const char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return i;
    return -1;
}

/* The key's unit from the schema ("" when none). */
static const char *key_unit(const char *key) {
    int n;
    if (strncmp(key, "jobs.", 5) == 0) {
        const char *rest = key + 5;
        while (isdigit((unsigned char)*rest))
            rest++;
        if (*rest == '.') rest++;
        int row = schema_find(SCOPE_JOB, rest);
        return row < 0 ? "" : schema_keys(SCOPE_JOB, &n)[row].unit;
    }
    int row = schema_find(SCOPE_SCENARIO, key);
    return row < 0 ? "" : schema_keys(SCOPE_SCENARIO, &n)[row].unit;
}

typedef struct {
    const sweep_grid_t *g;
    int64_t first, ncfg;
    dim_t dims[SWEEP_MAX_AXES + 1];
    int ndims;
    int var_dim; /* the dimension of the variants */
    const char *vnames[MAX_VARIANTS];
    int nvar;
    cell_t *cells; /* [(config - first) * nvar + variant] */
    int last_epoch;
} page_t;

static const cell_t *cell_at(const page_t *p, const int *idx) {
    int64_t c = 0, stride = 1;
    for (int a = p->g->naxes - 1; a >= 0; a--) {
        c += idx[a] * stride;
        stride *= p->g->axes[a].nvalues;
    }
    int v = idx[p->var_dim];
    if (p->dims[p->var_dim].axis >= 0) { /* the variant axis: its value's name */
        v = variant_index(p->vnames, p->nvar, p->dims[p->var_dim].values[v]);
        if (v < 0) return NULL;
    }
    if (c < p->first || c >= p->first + p->ncfg) return NULL;
    const cell_t *cl = &p->cells[(c - p->first) * p->nvar + v];
    return cl->jobs ? cl : NULL;
}

/* Charts of the three metrics against dimension d. */
static void charts_vs(FILE *out, const page_t *p, int d) {
    const dim_t *x = &p->dims[d];
    int other[SWEEP_MAX_AXES + 1], nother = 0;
    int64_t nseries = 1;
    for (int k = 0; k < p->ndims; k++)
        if (k != d && p->dims[k].n > 1) other[nother++] = k, nseries *= p->dims[k].n;
    int shown = nseries < SWEEP_HTML_SERIES ? (int)nseries : SWEEP_HTML_SERIES;
    double *y = malloc(sizeof *y * (size_t)shown * (size_t)x->n * 3);
    svg_series_t *series = calloc((size_t)shown, sizeof *series);
    char(*labels)[96] = calloc((size_t)shown, sizeof *labels);
    if (!y || !series || !labels) {
        free(y), free(series), free(labels);
        return;
    }
    int idx[SWEEP_MAX_AXES + 1] = {0};
    for (int s = 0; s < shown; s++) {
        /* Series s: the other dimensions' values by mixed radix, the last fastest. */
        int64_t rest = s;
        for (int k = nother - 1; k >= 0; k--) {
            idx[other[k]] = (int)(rest % p->dims[other[k]].n);
            rest /= p->dims[other[k]].n;
        }
        size_t used = 0;
        labels[s][0] = 0;
        for (int k = 0; k < nother && used < sizeof labels[s]; k++) {
            const dim_t *o = &p->dims[other[k]];
            used += (size_t)snprintf(labels[s] + used, sizeof labels[s] - used, "%s%s=%s",
                                     k ? ", " : "", o->key, o->values[idx[other[k]]]);
        }
        if (!nother) snprintf(labels[s], sizeof labels[s], "%s", "all configurations");
        if (strlen(labels[s]) > 80) memcpy(labels[s] + 77, "...", 4);
        series[s].label = labels[s];
        series[s].color = svg_color(s);
        for (int i = 0; i < x->n; i++) {
            idx[d] = i;
            const cell_t *c = cell_at(p, idx);
            double *row = y + (size_t)s * x->n;
            size_t plane = (size_t)shown * x->n;
            row[0 * plane + i] = c ? c->epoch_s : NAN;
            row[1 * plane + i] = c ? c->gpu / c->jobs : NAN;
            row[2 * plane + i] = c ? c->hit / c->jobs : NAN;
        }
    }
    char xl[SCN_STR + 48];
    const char *unit = x->axis >= 0 ? key_unit(x->key) : "";
    snprintf(xl, sizeof xl, unit[0] ? "%s (%s)" : "%s", x->key, unit);
    fputs("<h2>", out);
    html_put_text(out, "vs ");
    html_put_text(out, xl);
    fputs("</h2>\n<div class=\"charts\">\n", out);
    static const char *const what[] = {"Epoch time", "GPU utilisation", "Hit rate"};
    static const char *const ylab[] = {"epoch time (s)", "GPU busy (% of the epoch)",
                                       "hit rate (% of reads)"};
    for (int m = 0; m < 3; m++) {
        char title[SCN_STR + 96];
        snprintf(title, sizeof title, "%s vs %s", what[m], x->key);
        svg_chart_t c = {title, xl, ylab[m], 560, 320, m ? 1 : 0, m ? 1 : 0};
        svg_lines(out, &c, x->n, x->numeric ? x->x : NULL, x->values, shown, series,
                  y + (size_t)m * shown * x->n);
    }
    fputs("</div>\n", out);
    if (shown < nseries)
        fprintf(out,
                "<p class=\"note\">%d of %lld series drawn (the first in grid order); the CSV has "
                "them all.</p>\n",
                shown, (long long)nseries);
    free(y), free(series), free(labels);
}

/* Folds a (config, variant, job) group's chosen row into its cell. */
static void fold(page_t *p, int64_t c, int v, double epoch_s, double gpu, double hit) {
    if (c < p->first || c >= p->first + p->ncfg || v < 0) return;
    cell_t *cl = &p->cells[(c - p->first) * p->nvar + v];
    if (epoch_s > cl->epoch_s) cl->epoch_s = epoch_s;
    cl->gpu += gpu, cl->hit += hit, cl->jobs++;
}

static int column(const record_t *h, int from, const char *name) {
    for (int i = from; i < h->n; i++)
        if (strcmp(h->f[i], name) == 0) return i;
    return -1;
}

/* The CSV's rows into p's cells: each (configuration, variant, job) its
 * last epoch, the simulator's row over the model's. 0, or -1 (after a
 * message when the header is not this sweep's). */
static int read_cells(page_t *p, const char *csv, size_t len, record_t *r, char **names_buf,
                      int var_axis, int naxes_csv) {
    const sweep_grid_t *g = p->g;
    size_t pos = 0;
    if (next_record(csv, len, &pos, r) != 1) return -1;
    int base = 1 + naxes_csv;
    int cv = column(r, base, "variant"), cj = column(r, base, "job"), ce = column(r, base, "epoch"),
        cs = column(r, base, "source"), ct = column(r, base, "epoch_s"),
        cg = column(r, base, "gpu_util"), ch = column(r, base, "hit_rate");
    if (cv != base || cj < 0 || ce < 0 || cs < 0 || ct < 0 || cg < 0 || ch < 0) {
        fprintf(stderr, "stallsim sweep: --html: the CSV's header is not this sweep's\n");
        return -1;
    }
    size_t data = pos;
    /* The variants: the axis's values, else those the rows name, in order. */
    if (var_axis >= 0) {
        for (int i = 0; i < g->axes[var_axis].nvalues && p->nvar < MAX_VARIANTS; i++)
            p->vnames[p->nvar++] = g->axes[var_axis].values[i];
    } else {
        int got;
        while ((got = next_record(csv, len, &pos, r)) == 1) {
            if (r->n <= cv || variant_index(p->vnames, p->nvar, r->f[cv]) >= 0) continue;
            if (p->nvar == MAX_VARIANTS) break;
            if (!(names_buf[p->nvar] = strdup(r->f[cv]))) return -1;
            p->vnames[p->nvar] = names_buf[p->nvar];
            p->nvar++;
        }
        if (got < 0) return -1;
    }
    if (p->nvar == 0) p->vnames[p->nvar++] = "(none)"; /* no rows */
    p->cells = calloc((size_t)(p->ncfg > 0 ? p->ncfg : 1) * (size_t)p->nvar, sizeof *p->cells);
    if (!p->cells) return -1;
    /* Each (config, variant, job): its last epoch, the simulator's row over the model's. */
    pos = data;
    int64_t gc = -1;
    int gv = -1, gepoch = -1, gsim = 0, got;
    char gjob[SCN_STR + 16] = "";
    double gt = 0, gg = 0, gh = 0;
    while ((got = next_record(csv, len, &pos, r)) == 1) {
        if (r->n <= ch) continue;
        int64_t c = strtoll(r->f[0], NULL, 10);
        int v = variant_index(p->vnames, p->nvar, r->f[cv]);
        int epoch = atoi(r->f[ce]), sim = strcmp(r->f[cs], "sim") == 0;
        if (c != gc || v != gv || strcmp(gjob, r->f[cj]) != 0) {
            if (gc >= 0) fold(p, gc, gv, gt, gg, gh);
            gc = c, gv = v, gepoch = -1;
            snprintf(gjob, sizeof gjob, "%s", r->f[cj]);
        }
        if (epoch > gepoch || (epoch == gepoch && sim && !gsim)) {
            gepoch = epoch, gsim = sim;
            gt = strtod(r->f[ct], NULL), gg = strtod(r->f[cg], NULL), gh = strtod(r->f[ch], NULL);
            if (epoch > p->last_epoch) p->last_epoch = epoch;
        }
    }
    if (got < 0) return -1;
    if (gc >= 0) fold(p, gc, gv, gt, gg, gh);
    return 0;
}

/* The dimensions: the grid's axes, and the variants when no axis is. 0, or -1. */
static int build_dims(page_t *p, int var_axis) {
    const sweep_grid_t *g = p->g;
    for (int a = 0; a < g->naxes; a++) {
        dim_t *d = &p->dims[p->ndims++];
        d->key = g->axes[a].key;
        d->n = g->axes[a].nvalues;
        d->values = (const char *const *)g->axes[a].values;
        d->axis = a;
        if (g->axes[a].is_variant) p->var_dim = p->ndims - 1;
        d->numeric = !g->axes[a].is_variant;
        d->x = d->numeric ? calloc((size_t)d->n, sizeof *d->x) : NULL;
        for (int i = 0; d->numeric && i < d->n; i++) {
            char *e;
            if (!d->x) return -1;
            d->x[i] = strtod(d->values[i], &e);
            if (e == d->values[i] || *e || !isfinite(d->x[i])) d->numeric = 0;
        }
    }
    if (var_axis < 0) {
        dim_t *d = &p->dims[p->ndims++];
        d->key = "variant";
        d->n = p->nvar;
        d->values = p->vnames;
        d->axis = -1;
        p->var_dim = p->ndims - 1;
    }

    return 0;
}

static void write_page(FILE *out, const page_t *p, const char *scenario, int64_t first,
                       int64_t end) {
    const sweep_grid_t *g = p->g;
    char title[SCN_PATH + 32];
    snprintf(title, sizeof title, "stallsim sweep: %s", scenario);
    html_begin(out, title);
    fputs("<h1>", out);
    html_put_text(out, title);
    fprintf(out, "</h1>\n<p>%lld configuration%s", (long long)p->ncfg, p->ncfg == 1 ? "" : "s");
    if (p->ncfg != g->size)
        fprintf(out, " (%lld to %lld of %lld: a shard)", (long long)first, (long long)end - 1,
                (long long)g->size);
    fputs(" over", out);
    for (int k = 0; k < p->ndims; k++) {
        fputs(k ? "; " : " ", out);
        html_put_text(out, p->dims[k].key);
        fputs(" = ", out);
        for (int i = 0; i < p->dims[k].n && i < 12; i++) {
            if (i) fputs(", ", out);
            html_put_text(out, p->dims[k].values[i]);
        }
        if (p->dims[k].n > 12) fprintf(out, ", ... (%d values)", p->dims[k].n);
    }
    fprintf(out,
            ".</p>\n<p class=\"note\">Each point is a configuration's last epoch (epoch %d), from "
            "the simulator where it ran, else the model; with several jobs, the slowest job's "
            "epoch time and the mean GPU utilisation and hit rate. Missing points were not in the "
            "CSV.</p>\n",
            p->last_epoch);
    int drawn = 0;
    for (int k = 0; k < p->ndims; k++)
        if (p->dims[k].n > 1) charts_vs(out, p, k), drawn++;
    if (!drawn) fputs("<p>Nothing varies: one configuration and one variant.</p>\n", out);
    html_end(out);
}

int sweep_html_write(FILE *out, const sweep_grid_t *g, int64_t first, int64_t end,
                     const char *scenario, const char *csv, size_t len) {
    page_t p;
    memset(&p, 0, sizeof p);
    p.g = g, p.first = first, p.ncfg = end - first;
    record_t r = {0};
    char *names_buf[MAX_VARIANTS] = {0};
    int rc = -1;
    int naxes_csv = 0, var_axis = -1;
    for (int a = 0; a < g->naxes; a++) {
        if (g->axes[a].is_variant)
            var_axis = a;
        else
            naxes_csv++;
    }
    if (read_cells(&p, csv, len, &r, names_buf, var_axis, naxes_csv) || build_dims(&p, var_axis))
        goto done;
    write_page(out, &p, scenario, first, end);
    rc = 0;
done:
    for (int k = 0; k < p.ndims; k++)
        free(p.dims[k].x);
    for (int i = 0; i < MAX_VARIANTS; i++)
        free(names_buf[i]);
    free(p.cells);
    free(r.buf);
    return rc;
}
