/* report: see report.h. */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advice.h"
#include "cost.h"
#include "fig.h"
#include "gap.h"
#include "goodout.h"
#include "gpu_rates.h"
#include "memory.h"
#include "memout.h"
#include "html.h"
#include "kinds.h"
#include "schema.h"
#include "spread_out.h"
#include "text.h"
#include "valid.h"

#ifndef STALLSIM_VERSION
#define STALLSIM_VERSION "0.0.0"
#endif

int report_format_parse(void *format, const char *cmd, const char *value) {
    static const char *const names[] = {"text", "csv", "json", "html"};
    for (int i = 0; i < 4; i++)
        if (strcmp(value, names[i]) == 0) {
            *(report_format_t *)format = (report_format_t)i;
            return 0;
        }
    return options_error(cmd, "--format: expected text, csv, json or html, got '%s'", value);
}

double report_total_s(const run_metrics_t *r) {
    double total = 0;
    for (int e = 0; e < r->nepochs; e++) {
        double worst = 0;
        for (int i = 0; i < r->ninst; i++)
            if (metrics_at(r, i, e)->epoch_s > worst) worst = metrics_at(r, i, e)->epoch_s;
        total += worst;
    }
    return total;
}

static const run_metrics_t *best_source(const variant_run_t *v) {
    return v->sim.m ? &v->sim : &v->model;
}

/* ---- the columns of an epoch's metrics ----
 *
 * One row per column drives the CSV header and rows, the JSON object and the
 * text table, so the three cannot drift. A column with a NULL get is the
 * text table's alone (vs_model compares with the model's row). */

typedef struct {
    const char *name; /* CSV header and JSON key */
    out_kind_t kind;
    const char *fmt; /* printf format of the value in CSV and JSON */
    /* The value; ref is the model's row a sim row compares with (NULL: none). */
    double (*get)(const epoch_metrics_t *m, const epoch_metrics_t *ref);
    fig_range_t range; /* what a value must be to be printed (report_check_metrics) */
    /* The text table: heading, separator before it and field width
     * (negative: left-aligned); text NULL: not in the text table. */
    const char *head, *sep;
    int width;
    void (*text)(char *buf, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *model,
                 int fine);
} column_t;

#define GETTER(field)                                                                              \
    static double get_##field(const epoch_metrics_t *m, const epoch_metrics_t *ref) {              \
        (void)ref;                                                                                 \
        return m->field;                                                                           \
    }
GETTER(epoch_s)
GETTER(throughput_items_s)
GETTER(gpu_util)
GETTER(prep_stall_s)
GETTER(fetch_stall_s)
GETTER(hit_rate)
GETTER(remote_hit_rate)
GETTER(storage_read_bytes)
GETTER(network_bytes)
GETTER(cpu_util)
GETTER(storage_util)
GETTER(t_gpu_s)
GETTER(t_prep_s)
GETTER(staged_bytes)
GETTER(storage_reads)
GETTER(storage_heads)
GETTER(storage_retries)
GETTER(storage_lists)
GETTER(shards_per_batch)
GETTER(tier_hit_rate)
GETTER(gpu_prep_s)
GETTER(startup_s)
GETTER(startup_requests)
GETTER(resume_s)
GETTER(startup_lists)
GETTER(startup_gets)
GETTER(startup_heads)
GETTER(checkpoint_s)
GETTER(startup_throttled)
static double get_startup_approximate(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    (void)ref;
    return m->startup_approximate;
}
/* Launch to the first step in the first epoch (its start-up phase, then its
 * first batch); the epoch's start to its first step in a later one. */
static double first_step_s(const epoch_metrics_t *m) {
    return m->startup_first_s + m->resume_s + m->first_batch_s;
}
static double get_first_step_s(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    (void)ref;
    return first_step_s(m);
}
static double get_bottleneck(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    (void)ref;
    return m->bottleneck;
}
static double get_approximate(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    (void)ref;
    return m->approximate;
}
/* A model row (no ref) is its own reference: 0, false. */
static double get_vs_model(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    return gap_rel(m, ref);
}
static double get_model_differs(const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    return gap_marked(gap_rel(m, ref));
}

static void text_epoch(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                       int fine) {
    (void)ref;
    char f[32];
    snprintf(b, n, "%s%s", fig(f, sizeof f, m->epoch_s, fine ? 3 : 1), m->approximate ? "~" : " ");
}
static void text_vs_model(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                          int fine) {
    (void)fine;
    double g = gap_rel(m, ref);
    if (ref) /* ~: past GAP_MARK (gap.h) */
        snprintf(b, n, "%+.1f%%%s", fig_zero(100 * g, 1), gap_marked(g) ? "~" : " ");
    else
        b[0] = 0;
}
static void text_items(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                       int fine) {
    (void)ref, (void)fine;
    fig(b, n, m->throughput_items_s, 0);
}
static void text_gpu(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                     int fine) {
    (void)ref, (void)fine;
    snprintf(b, n, "%.1f%%", 100 * fig_clean(m->gpu_util, FIG_SHARE, 1));
}
static void stall(char *b, size_t n, double s, double epoch, int fine) {
    char f[32];
    s = fig_clean(s, FIG_TIME, epoch);
    snprintf(b, n, "%s (%4.1f%%)", fig(f, sizeof f, s, fine ? 2 : 1),
             fig_zero(epoch > 0 ? 100 * s / epoch : 0, 1));
}
static void text_prep(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                      int fine) {
    (void)ref;
    stall(b, n, m->prep_stall_s, m->epoch_s, fine);
}
static void text_fetch(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                       int fine) {
    (void)ref;
    stall(b, n, m->fetch_stall_s, m->epoch_s, fine);
}
static void text_hit(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                     int fine) {
    (void)ref, (void)fine;
    snprintf(b, n, "%.1f%%", 100 * fig_clean(m->hit_rate, FIG_SHARE, 1));
}
static void text_remote(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                        int fine) {
    (void)ref, (void)fine;
    snprintf(b, n, "%.1f%%", 100 * fig_clean(m->remote_hit_rate, FIG_SHARE, 1));
}
static void text_read(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                      int fine) {
    (void)ref;
    fig(b, n, fig_clean(m->storage_read_bytes, FIG_NONNEG, 1) / 1e9, fine ? 4 : 1);
}
static void text_bottleneck(char *b, size_t n, const epoch_metrics_t *m, const epoch_metrics_t *ref,
                            int fine) {
    (void)ref, (void)fine;
    snprintf(b, n, "%s", bottleneck_names[m->bottleneck]);
}

/* clang-format off */
static const column_t columns[] = {
    {"epoch_s", OUT_NUM, "%.9g", get_epoch_s, FIG_POSITIVE, "epoch_s", " ", 11, text_epoch},
    {"vs_model (text)", OUT_NUM, NULL, NULL, FIG_ANY, "vs_model", " ", 8, text_vs_model},
    {"throughput_items_s", OUT_NUM, "%.9g", get_throughput_items_s, FIG_NONNEG, "items/s", " ", 9, text_items},
    {"gpu_util", OUT_NUM, "%.6f", get_gpu_util, FIG_SHARE, "gpu", " ", 7, text_gpu},
    {"prep_stall_s", OUT_NUM, "%.9g", get_prep_stall_s, FIG_TIME, "prep_stall_s", " ", 16, text_prep},
    {"fetch_stall_s", OUT_NUM, "%.9g", get_fetch_stall_s, FIG_TIME, "fetch_stall_s", " ", 16, text_fetch},
    {"hit_rate", OUT_NUM, "%.6f", get_hit_rate, FIG_SHARE, "hit", " ", 8, text_hit},
    {"remote_hit_rate", OUT_NUM, "%.6f", get_remote_hit_rate, FIG_SHARE, "remote", " ", 8, text_remote},
    {"storage_read_bytes", OUT_NUM, "%.0f", get_storage_read_bytes, FIG_NONNEG, "read_GB", " ", 9, text_read},
    {"network_bytes", OUT_NUM, "%.0f", get_network_bytes, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"cpu_util", OUT_NUM, "%.6f", get_cpu_util, FIG_SHARE, NULL, NULL, 0, NULL},
    {"storage_util", OUT_NUM, "%.6f", get_storage_util, FIG_SHARE, NULL, NULL, 0, NULL},
    {"t_gpu_s", OUT_NUM, "%.9g", get_t_gpu_s, FIG_TIME, NULL, NULL, 0, NULL},
    {"t_prep_s", OUT_NUM, "%.9g", get_t_prep_s, FIG_TIME, NULL, NULL, 0, NULL},
    {"bottleneck", OUT_NAME, "%s", get_bottleneck, FIG_ANY, "bottleneck", "  ", 0, text_bottleneck},
    {"approximate", OUT_BOOL, "%d", get_approximate, FIG_ANY, NULL, NULL, 0, NULL},
    {"staged_bytes", OUT_NUM, "%.0f", get_staged_bytes, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"storage_requests", OUT_NUM, "%.9g", get_storage_reads, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"shards_per_batch", OUT_NUM, "%.6g", get_shards_per_batch, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"tier_hit_rate", OUT_NUM, "%.6f", get_tier_hit_rate, FIG_SHARE, NULL, NULL, 0, NULL},
    {"gpu_prep_s", OUT_NUM, "%.9g", get_gpu_prep_s, FIG_TIME, NULL, NULL, 0, NULL},
    {"storage_heads", OUT_NUM, "%.9g", get_storage_heads, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"storage_retries", OUT_NUM, "%.9g", get_storage_retries, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"storage_lists", OUT_NUM, "%.9g", get_storage_lists, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"first_step_s", OUT_NUM, "%.9g", get_first_step_s, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_s", OUT_NUM, "%.9g", get_startup_s, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_requests", OUT_NUM, "%.9g", get_startup_requests, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_throttled", OUT_NUM, "%.9g", get_startup_throttled, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_lists", OUT_NUM, "%.9g", get_startup_lists, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_heads", OUT_NUM, "%.9g", get_startup_heads, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_gets", OUT_NUM, "%.9g", get_startup_gets, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"startup_approximate", OUT_BOOL, "%d", get_startup_approximate, FIG_ANY, NULL, NULL, 0, NULL},
    {"resume_s", OUT_NUM, "%.9g", get_resume_s, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"checkpoint_s", OUT_NUM, "%.9g", get_checkpoint_s, FIG_NONNEG, NULL, NULL, 0, NULL},
    {"vs_model", OUT_NUM, "%.6f", get_vs_model, FIG_ANY, NULL, NULL, 0, NULL},
    {"model_differs", OUT_BOOL, "%d", get_model_differs, FIG_ANY, NULL, NULL, 0, NULL},
};
/* clang-format on */
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

/* A column as an out field, and its value with its noise cleaned (fig_clean). */
static out_field_t field_of(const column_t *c) {
    return (out_field_t){
        .name = c->name, .kind = c->kind, .fmt = c->fmt, .names = bottleneck_names};
}
static double value_of(const column_t *c, const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    return fig_clean(c->get(m, ref), c->range, m->epoch_s);
}

/* ---- CSV ---- */

static void csv_header_body(FILE *out, const char *extra) {
    fprintf(out, "%svariant,job,epoch,source", extra ? extra : "");
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].get) fprintf(out, ",%s", columns[i].name);
}

void report_csv_header(FILE *out, const char *extra) {
    csv_header_body(out, extra);
    fputc('\n', out);
}

int report_check_metrics(const epoch_metrics_t *m, const epoch_metrics_t *model, const char **name,
                         double *value, fig_range_t *range) {
    for (int i = 0; i < NCOLUMNS; i++) {
        const column_t *c = &columns[i];
        if (!c->get) continue;
        double v = c->get(m, model);
        if (fig_ok(v, c->range, m->epoch_s)) continue;
        *name = c->name, *value = v, *range = c->range;
        return 1;
    }
    if (m->bottleneck < 0 || m->bottleneck >= BN__COUNT) {
        *name = "bottleneck", *value = m->bottleneck, *range = FIG_ANY;
        return 1;
    }
    return 0;
}

static void csv_row_body(FILE *out, const char *extra, const char *variant, const char *job,
                         int epoch, const char *source, const epoch_metrics_t *m,
                         const epoch_metrics_t *model) {
    fputs(extra ? extra : "", out);
    out_csv_field(out, variant);
    fputc(',', out);
    out_csv_field(out, job);
    fprintf(out, ",%d,%s", epoch, source);
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].get) {
            const out_field_t f = field_of(&columns[i]);
            fputc(',', out);
            out_value(out, &f, value_of(&columns[i], m, model));
        }
}

void report_csv_row(FILE *out, const char *extra, const char *variant, const char *job, int epoch,
                    const char *source, const epoch_metrics_t *m, const epoch_metrics_t *model) {
    csv_row_body(out, extra, variant, job, epoch, source, m, model);
    fputc('\n', out);
}

/* "sampled: K of N servers, bound ±x %": what a server-sampled run says. */
static void server_sample_line(char *buf, size_t n, const variant_run_t *v) {
    char b[32];
    snprintf(buf, n, "sampled: %d of %lld servers, bound ±%s %%", v->sim.servers_sampled,
             (long long)v->scn.server.count,
             fig(b, sizeof b, fig_zero(v->sim.servers_bound, 2), 2));
}

/* A row, and where memory is shown the job's first server's memory, where
 * goodput is its source's goodput (r: the model's or the simulator's rows). */
static void csv_row_mem(FILE *out, const variant_run_t *v, int i, int e, const char *source,
                        const run_metrics_t *r, const epoch_metrics_t *model, int mem, int good) {
    csv_row_body(out, NULL, v->scn.variant, v->topo.inst[i].name, e + 1, source,
                 metrics_at(r, i, e), model);
    if (mem) memout_csv_values(out, v, v->topo.inst[i].first_server);
    if (good) goodout_csv_values(out, v, i, r);
    fputc('\n', out);
}

static void write_csv(FILE *out, const variant_run_t *v, int nv) {
    const int mem = memout_any(v, nv), good = goodout_any(v, nv);
    csv_header_body(out, NULL);
    if (mem) memout_csv_names(out);
    if (good) goodout_csv_names(out);
    fputc('\n', out);
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const epoch_metrics_t *mm = metrics_at(&v[k].model, i, e);
                csv_row_mem(out, &v[k], i, e, "model", &v[k].model, NULL, mem, good);
                if (v[k].sim.m)
                    csv_row_mem(out, &v[k], i, e, run_sim_source(&v[k]), &v[k].sim, mm, mem, good);
            }
}

/* ---- JSON ---- */

static void json_value(out_json_t *j, const key_def_t *k, const void *base) {
    char buf[SCN_PATH];
    schema_format(k, base, buf, sizeof buf);
    if (k->type == KT_INT || k->type == KT_REAL)
        out_jnumtext(j, k->name, buf);
    else if (k->type == KT_BOOL)
        out_jbool(j, k->name, strcmp(buf, "true") == 0);
    else
        out_jstr(j, k->name, buf);
}

/* The published rate row a job names (jobs.N.gpu, model), with its source;
 * "used": false when a given rate overrides it. Nothing without one. */
static void json_rate_row(out_json_t *j, const job_t *jb) {
    const gpu_rate_t *r = jb->rate_row;
    if (!r) return;
    out_jobj(j, "published_rate");
    out_jbool(j, "used", !jb->rate_given);
    out_jnum(j, "items_per_s", "%.9g", r->items_per_s);
    out_jint(j, "batch", (long long)r->batch);
    const char *names[] = {"gpu",  "model", "precision", "source", "table",
                           "date", "url",   "setup",     "note"};
    const char *vals[] = {r->gpu,  r->model, r->precision, r->source, r->table,
                          r->date, r->url,   r->setup,     r->note};
    for (int i = 0; i < 9; i++)
        out_jstr(j, names[i], vals[i]);
    out_jend(j);
}

void report_json_config(out_json_t *j, const char *key, const scenario_t *s) {
    int n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    out_jobj(j, key);
    for (int i = 0; i < n; i++)
        if (kinds_key_used(s, k[i].name)) json_value(j, &k[i], s);
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    out_jarr(j, "jobs");
    for (int jb = 0; jb < s->njobs; jb++) {
        out_jobj(j, NULL);
        for (int i = 0; i < n; i++)
            json_value(j, &jk[i], &s->jobs[jb]);
        json_rate_row(j, &s->jobs[jb]);
        out_jend(j);
    }
    out_jend(j);
    out_jend(j);
}

void report_json_metrics(out_json_t *j, const char *key, const epoch_metrics_t *m,
                         const epoch_metrics_t *model) {
    out_jobj(j, key);
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].get) {
            const out_field_t f = field_of(&columns[i]);
            out_jfield(j, &f, value_of(&columns[i], m, model));
        }
    out_jend(j);
}

/* The per-server figures, one row per column as for an epoch's metrics: the
 * JSON key and the text table's heading, width and value (shares of the
 * accesses for the hit columns, GB or MB for bytes). */
typedef struct {
    const char *name, *head;
    int width;
    double (*get)(const server_metrics_t *m);
    double scale; /* text: value / scale, or a percentage of accesses when 0 */
} server_column_t;

#define SGETTER(field)                                                                             \
    static double sget_##field(const server_metrics_t *m) {                                        \
        return m->field;                                                                           \
    }
SGETTER(accesses)
SGETTER(local_hits)
SGETTER(remote_hits)
SGETTER(storage_reads)
SGETTER(storage_read_bytes)
SGETTER(net_in_bytes)
SGETTER(net_out_bytes)
SGETTER(staged_bytes)
SGETTER(tier_hits)

static const server_column_t server_columns[] = {
    {"accesses", "accesses", 12, sget_accesses, 1},
    {"local_hits", "local", 8, sget_local_hits, 0},
    {"remote_hits", "remote", 8, sget_remote_hits, 0},
    {"storage_reads", "storage", 8, sget_storage_reads, 0},
    {"storage_read_bytes", "read_GB", 9, sget_storage_read_bytes, 1e9},
    {"net_in_bytes", "net_in_GB", 9, sget_net_in_bytes, 1e9},
    {"net_out_bytes", "net_out_GB", 9, sget_net_out_bytes, 1e9},
    {"staged_bytes", "staged_MB", 10, sget_staged_bytes, 1e6},
    {"tier_hits", "tier", 8, sget_tier_hits, 0},
};
#define NSERVER_COLUMNS ((int)(sizeof server_columns / sizeof server_columns[0]))

int report_check_server(const server_metrics_t *m, const char **name, double *value) {
    for (int i = 0; i < NSERVER_COLUMNS; i++)
        if (!fig_ok(server_columns[i].get(m), FIG_NONNEG, 1)) {
            *name = server_columns[i].name, *value = server_columns[i].get(m);
            return 1;
        }
    return 0;
}

static void json_server(out_json_t *j, const char *key, const server_metrics_t *m) {
    out_jobj(j, key);
    for (int i = 0; i < NSERVER_COLUMNS; i++)
        out_jnum(j, server_columns[i].name, "%.0f",
                 fig_clean(server_columns[i].get(m), FIG_NONNEG, 1));
    out_jend(j);
}

static void json_servers(out_json_t *j, const variant_run_t *v) {
    const run_metrics_t *r = v->sim.m ? &v->sim : &v->model;
    if (!r->srv) return;
    out_jbreak(j, "\n   ");
    out_jarr(j, "servers");
    for (int k = 0; k < r->nservers; k++) {
        out_jbreak(j, "\n    ");
        out_jobj(j, NULL);
        out_jint(j, "server", k);
        out_jarr(j, "epochs");
        for (int e = 0; e < r->nepochs; e++) {
            out_jbreak(j, "\n     ");
            out_jobj(j, NULL);
            out_jint(j, "epoch", e + 1);
            json_server(j, "model", server_at(&v->model, k, e));
            /* A server-sampled run has figures of its sampled servers only. */
            if (v->sim.m && v->sim.srv &&
                !(v->sim.servers_sampled > 0 && server_at(&v->sim, k, e)->accesses == 0))
                json_server(j, "sim", server_at(&v->sim, k, e));
            out_jend(j);
        }
        out_jend(j);
        out_jend(j);
    }
    out_jend(j);
}

/* Launch to the first step of each job: the start-up phase (startup.*),
 * then its first batch; the model's ~ where a rate cap binds the start-up
 * (its refusals and back-offs are the simulator's alone). */
static void write_text_first_step(FILE *out, const variant_run_t *v, int nv) {
    const int w = report_variant_width(v, nv);
    fprintf(out, "\n%-*s %-12s %16s %12s %12s %12s %10s %10s %10s\n", w, "variant", "job",
            "first_step_s", "(sim)", "startup_s", "(sim)", "requests", "throttled", "resume_s");
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++) {
            const epoch_metrics_t *m = metrics_at(&v[k].model, i, 0);
            const epoch_metrics_t *x = v[k].sim.m ? metrics_at(&v[k].sim, i, 0) : m;
            char a[32], b[32] = "-", c[32], d[32] = "-", r[32];
            fig(a, sizeof a, first_step_s(m), 3), fig(c, sizeof c, m->startup_s, 3);
            fig(r, sizeof r, x->resume_s, 3);
            if (v[k].sim.m) fig(b, sizeof b, first_step_s(x), 3), fig(d, sizeof d, x->startup_s, 3);
            fprintf(out, "%-*s %-12s %15s%s %12s %12s %12s %10.0f %10.0f %10s\n", w,
                    v[k].scn.variant, v[k].topo.inst[i].name, a, m->startup_approximate ? "~" : " ",
                    b, c, d, x->startup_requests, x->startup_throttled, r);
        }
    int any = 0;
    for (int k = 0; k < nv; k++)
        any |= v[k].scn.startup.resolve != RESOLVE_NONE || v[k].scn.startup.resume_at > 0;
    if (!any) {
        fputs("first_step_s: launch to the first training step (the loader's workers start, read\n"
              "  and prepare the first batch); startup.* adds what comes before it "
              "(docs/startup.md).\n",
              out);
        return;
    }
    fputs("first_step_s: launch to the first training step: the start-up phase (startup.resolve:\n"
          "  the dataset's LIST pages, HEADs and index, by the resolvers it names), a restart's\n"
          "  resume (resume_s: its skip through the items before its position), then the first\n"
          "  batch (the loader's workers start, read and prepare it); requests and throttled\n"
          "  (refused with 503 or 429, retried after a back-off): the start-up phase's;\n"
          "  simulator where run.\n",
          out);
}

/* Requests to storage of each variant that reads an object store or record
 * shards (where a request is not simply a file read), and how mixed the
 * shards' batches are: the speed and the shuffle quality side by side. */
static void write_text_requests(FILE *out, const variant_run_t *v, int nv) {
    int head = 0;
    const int w = report_variant_width(v, nv);
    for (int k = 0; k < nv; k++) {
        const scenario_t *s = &v[k].scn;
        int shards = s->dataset.shard_items > 1;
        if (!shards && !scenario_storage(s)->lists_requests) continue;
        if (!head++)
            fprintf(out, "\n%-*s %-12s %16s %18s %12s %12s %8s\n", w, "variant", "job",
                    "requests/epoch", "shards_per_batch", "503_retried", "HEADs", "LISTs");
        const run_metrics_t *r = best_source(&v[k]);
        for (int i = 0; i < v[k].topo.ninst; i++) {
            const epoch_metrics_t *m = metrics_at(r, i, v[k].scn.epochs - 1);
            char mix[32] = "-";
            if (shards && v[k].sim.m) snprintf(mix, sizeof mix, "%.2f", m->shards_per_batch);
            fprintf(out, "%-*s %-12s %16.0f %18s %12.0f %12.0f %8.0f\n", w, s->variant,
                    v[k].topo.inst[i].name, m->storage_reads, mix, m->storage_retries,
                    m->storage_heads, m->storage_lists);
        }
    }
    if (head)
        fprintf(out, "requests/epoch: storage requests of the last epoch (simulator where run): "
                     "GETs, or whole record shards; shards_per_batch: distinct shards a batch "
                     "drew from (loose files: every item its own); 503_retried: requests the "
                     "store refused over a prefix's rate and the client sent again after a "
                     "back-off (simulator only; not billed); HEADs: one an object where the "
                     "loader stats it (server.storage.head); LISTs: pages of 1000 keys at the "
                     "epoch's start.\n");
}

/* ---- cost ---- */

/* A cost_t's fields: JSON members and the text table's columns. */
static const out_field_t cost_fields[] = {
    {"requests", OUT_NUM, "%.9g", NULL, 0, NULL, 11, "%.2f"},
    {"lists", OUT_NUM, "%.9g", NULL, 0, NULL, 9, "%.2f"},
    {"egress", OUT_NUM, "%.9g", NULL, 0, NULL, 9, "%.2f"},
    {"gpu", OUT_NUM, "%.9g", NULL, 0, NULL, 11, "%.2f"},
    {"gpu_stall", OUT_NUM, "%.9g", NULL, 0, "gpu_stalled", 11, "%.2f"},
    {"cores", OUT_NUM, "%.9g", NULL, 0, NULL, 9, "%.2f"},
    {"cache", OUT_NUM, "%.9g", NULL, 0, NULL, 9, "%.2f"},
    {"total", OUT_NUM, "%.9g", NULL, 0, NULL, 11, "%.2f"},
};
#define NCOST ((int)(sizeof cost_fields / sizeof cost_fields[0]))

static void cost_values(const cost_t *c, double *v) {
    v[0] = c->requests, v[1] = c->lists, v[2] = c->egress, v[3] = c->gpu;
    v[4] = c->gpu_stall, v[5] = c->cores, v[6] = c->cache, v[7] = c->total;
}

static void json_cost_one(out_json_t *j, const char *key, const cost_t *c) {
    double f[NCOST];
    cost_values(c, f);
    out_jrecord(j, key, cost_fields, NCOST, f);
}

/* Instance i's dollars per epoch and for the run, from the simulator where
 * it ran, else the model. */
static void json_cost(out_json_t *j, const variant_run_t *v, int i) {
    const run_metrics_t *r = best_source(v);
    cost_t run = {0}, c;
    out_jobj(j, "cost_usd");
    out_jstr(j, "source", v->sim.m ? "sim" : "model");
    out_jarr(j, "epochs");
    for (int e = 0; e < v->scn.epochs; e++) {
        cost_epoch(&v->scn, &v->topo, i, e, metrics_at(r, i, e), &c);
        cost_add(&run, &c);
        json_cost_one(j, NULL, &c);
    }
    out_jend(j);
    json_cost_one(j, "run", &run);
    out_jend(j);
}

static void text_cost_row(FILE *out, int w, const char *variant, const char *job, const char *epoch,
                          const cost_t *c) {
    double f[NCOST];
    cost_values(c, f);
    fprintf(out, "%-*s %-12s %5s", w, variant, job, epoch);
    out_text_values(out, cost_fields, NCOST, f);
    fputc('\n', out);
}

/* Dollars per epoch and per run of every priced variant's jobs. */
static void write_text_cost(FILE *out, const variant_run_t *v, int nv) {
    int any = 0;
    for (int k = 0; k < nv; k++)
        any |= cost_priced(&v[k].scn);
    if (!any) return;
    fprintf(out, "\ncost in USD (simulator where run; prices: %s)\n",
            v[0].scn.prices_file[0] ? v[0].scn.prices_file : "the scenario's prices.*");
    const int w = report_variant_width(v, nv);
    fprintf(out, "%-*s %-12s %5s", w, "variant", "job", "epoch");
    out_text_heads(out, cost_fields, NCOST);
    fputc('\n', out);
    for (int k = 0; k < nv; k++) {
        if (!cost_priced(&v[k].scn)) continue;
        const run_metrics_t *r = best_source(&v[k]);
        for (int i = 0; i < v[k].topo.ninst; i++) {
            cost_t run = {0}, c;
            char ep[16];
            for (int e = 0; e < v[k].scn.epochs; e++) {
                cost_epoch(&v[k].scn, &v[k].topo, i, e, metrics_at(r, i, e), &c);
                cost_add(&run, &c);
                snprintf(ep, sizeof ep, "%d", e + 1);
                text_cost_row(out, w, v[k].scn.variant, v[k].topo.inst[i].name, ep, &c);
            }
            text_cost_row(out, w, v[k].scn.variant, v[k].topo.inst[i].name, "run", &run);
        }
    }
    fprintf(out, "gpu_stalled: the part of gpu paid while the GPUs waited for data (T - T_gpu); "
                 "lists: the dataset listed once, 1000 keys a LIST; cache: the job's share of "
                 "its servers' cache and tier GB (by GPUs).\n");
}

/* The variant's totals, steady state, configuration and sampling. */
static void json_variant_head(out_json_t *j, const variant_run_t *v, double base) {
    out_jstr(j, "name", v->scn.variant);
    out_jobj(j, "total_s");
    out_jnum(j, "model", "%.9g", report_total_s(&v->model));
    if (v->sim.m) out_jnum(j, "sim", "%.9g", report_total_s(&v->sim));
    out_jend(j);
    out_jnum(j, "speedup", "%.6f", base / report_total_s(best_source(v)));
    out_jbreak(j, "\n   ");
    out_jobj(j, "steady");
    out_jint(j, "from_epoch", v->steady_from + 1);
    out_jnum(j, "epoch_s", "%.9g", v->steady.epoch_s);
    out_jnum(j, "hit_rate", "%.6f", v->steady.hit_rate);
    out_jstr(j, "bottleneck", bottleneck_names[v->steady.bottleneck]);
    out_jend(j);
    if (v->advice) {
        out_jbreak(j, "\n   ");
        advice_json(j, v);
    }
    out_jbreak(j, "\n   ");
    report_json_config(j, "config", &v->scn);
    if (v->sampled > 0) {
        out_jbreak(j, "\n   ");
        out_jobj(j, "sim_sampled");
        out_jnum(j, "items_share", "%.9g", v->sampled);
        out_jnum(j, "hit_rate_3se", "%.6f", v->sample_err);
        out_jstr(j, "hits", "replay of the hash-sampled items");
        out_jstr(j, "timings", "model given those hits");
        out_jend(j);
    }
    if (v->sim.servers_sampled > 0) {
        char line[160];
        server_sample_line(line, sizeof line, v);
        out_jbreak(j, "\n   ");
        out_jobj(j, "sim_sampled_servers");
        out_jint(j, "sampled", v->sim.servers_sampled);
        out_jint(j, "servers", (long long)v->scn.server.count);
        out_jnum(j, "bound_pct", "%.4f", v->sim.servers_bound);
        out_jstr(j, "text", line);
        out_jend(j);
    }
}

/* Only under a curve or the memory bound: as before without. */
static void json_prep_cores(out_json_t *j, const scenario_t *s, const instance_t *in) {
    prep_cores_why_t w;
    double per = in->cpus / in->nservers;
    double eff = scenario_prep_cores_why(s, per, &w);
    out_jobj(j, "prep_cores");
    out_jnum(j, "per_server", "%.6g", per);
    out_jnum(j, "effective", "%.6g", eff);
    out_jbool(j, "extrapolated", w.extrapolated);
    if (w.bound > 0) {
        out_jobj(j, "memory_bound");
        out_jnum(j, "cores", "%.6g", w.bound);
        out_jbool(j, "binds", w.mem_bound);
        out_jend(j);
    }
    out_jend(j);
}

/* The server's memory by component at its peak (GiB). */
static void json_mem_peak(out_json_t *j, const memory_parts_t *m) {
    out_jobj(j, "mem_peak_gib");
    out_jnum(j, "server", "%.6g", m->total / GIB);
    out_jnum(j, "training_processes", "%.6g", m->processes / GIB);
    out_jnum(j, "pinned", "%.6g", m->pinned / GIB);
    out_jnum(j, "workers", "%.6g", m->workers / GIB);
    out_jnum(j, "shm", "%.6g", m->shm / GIB);
    out_jnum(j, "cache", "%.6g", m->cache / GIB);
    out_jend(j);
}

/* Job instance i of a variant: its resources, epochs, cost and goodput. */
static void json_job(out_json_t *j, const variant_run_t *v, int i) {
    const scenario_t *s = &v->scn;
    const instance_t *in = &v->topo.inst[i];
    out_jbreak(j, "\n    ");
    out_jobj(j, NULL);
    out_jstr(j, "name", in->name);
    out_jnum(j, "cpus", "%.6g", in->cpus);
    /* /dev/shm in MiB, as df -m and docker's --shm-size count it. */
    out_jobj(j, "shm_peak_mib");
    out_jnum(j, "per_process", "%.6g", memory_shm_process(s, &s->jobs[in->job]) / MIB);
    out_jnum(j, "server", "%.6g", memory_shm_peak(s, &v->topo, in->first_server) / MIB);
    out_jend(j);
    if (memory_counted(s)) {
        memory_parts_t m = memory_peak(s, &v->topo, in->first_server);
        json_mem_peak(j, &m);
    }
    if (scenario_prep_cores_shaped(s)) json_prep_cores(j, s, in);
    out_jint(j, "first_server", in->first_server);
    out_jint(j, "servers", in->nservers);
    out_jarr(j, "epochs");
    for (int e = 0; e < s->epochs; e++) {
        out_jbreak(j, "\n     ");
        out_jobj(j, NULL);
        out_jint(j, "epoch", e + 1);
        report_json_metrics(j, "model", metrics_at(&v->model, i, e), NULL);
        if (v->sim.m)
            report_json_metrics(j, "sim", metrics_at(&v->sim, i, e), metrics_at(&v->model, i, e));
        out_jend(j);
    }
    out_jend(j);
    if (cost_priced(s)) json_cost(j, v, i);
    goodout_json(j, v, i);
    out_jend(j);
}

static void write_json(FILE *out, const char *path, const variant_run_t *v, int nv) {
    out_json_t j;
    out_json_begin(&j, out);
    out_jobj(&j, NULL);
    out_jint(&j, "format_version", 1);
    out_jstr(&j, "stallsim_version", STALLSIM_VERSION);
    out_jstr(&j, "scenario_file", path);
    out_jbreak(&j, "\n ");
    out_jarr(&j, "variants");
    double base = nv ? report_total_s(best_source(&v[0])) : 0;
    for (int k = 0; k < nv; k++) {
        out_jbreak(&j, "\n  ");
        out_jobj(&j, NULL);
        json_variant_head(&j, &v[k], base);
        out_jbreak(&j, "\n   ");
        out_jarr(&j, "jobs");
        for (int i = 0; i < v[k].topo.ninst; i++)
            json_job(&j, &v[k], i);
        out_jend(&j);
        json_servers(&j, &v[k]);
        report_spread_json(&j, &v[k]);
        memout_json(&j, &v[k]);
        out_jend(&j);
    }
    out_jbreak(&j, "\n");
    out_jend(&j);
    out_jend(&j);
    fputc('\n', out);
}

/* ---- text ---- */

const report_table_t report_run_table = {6, 0, 0};

int report_variant_width(const variant_run_t *v, int nv) {
    int w = 10;
    for (int k = 0; k < nv; k++) {
        int n = (int)strlen(v[k].scn.variant);
        if (n > w) w = n;
    }
    return w;
}

static int table_width(const report_table_t *t) {
    return t->variant_width > 0 ? t->variant_width : 10;
}

void report_text_row(FILE *out, const report_table_t *t, const char *variant, const char *job,
                     int epoch, const char *src, const epoch_metrics_t *m,
                     const epoch_metrics_t *ref) {
    fprintf(out, "%-*s %-12s %5d  %-*s", table_width(t), variant, job, epoch, t->source_width, src);
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].text) {
            char buf[64];
            columns[i].text(buf, sizeof buf, m, ref, t->fine);
            fprintf(out, "%s%*s", columns[i].sep, columns[i].width, buf);
        }
    fputc('\n', out);
}

void report_text_header(FILE *out, const report_table_t *t) {
    fprintf(out, "\n%-*s %-12s %5s  %-*s", table_width(t), "variant", "job", "epoch",
            t->source_width, "source");
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].text)
            fprintf(out, "%s%*s", columns[i].sep, columns[i].width, columns[i].head);
    fputc('\n', out);
}

static void text_config_diff(FILE *out, const scenario_t *a, const scenario_t *b) {
    /* What a variant changes relative to the baseline, from the schema. */
    int n, shown = 0;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    char va[SCN_PATH], vb[SCN_PATH];
    for (int i = 0; i < n; i++) {
        schema_format(&k[i], a, va, sizeof va);
        schema_format(&k[i], b, vb, sizeof vb);
        if (strcmp(va, vb) != 0) fprintf(out, "%s%s=%s", shown++ ? ", " : "", k[i].name, vb);
    }
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    for (int j = 0; j < b->njobs && j < a->njobs; j++)
        for (int i = 0; i < n; i++) {
            schema_format(&jk[i], &a->jobs[j], va, sizeof va);
            schema_format(&jk[i], &b->jobs[j], vb, sizeof vb);
            if (strcmp(va, vb) != 0)
                fprintf(out, "%sjobs.%d.%s=%s", shown++ ? ", " : "", j, jk[i].name, vb);
        }
    if (!shown) fprintf(out, "(baseline)");
}

static void text_server_row(FILE *out, int w, const char *variant, int server, int epoch,
                            const char *src, const server_metrics_t *m) {
    double n = m->accesses > 0 ? m->accesses : 1;
    fprintf(out, "%-*s %6d %5d  %-6s", w, variant, server + 1, epoch, src);
    for (int i = 0; i < NSERVER_COLUMNS; i++) {
        const server_column_t *c = &server_columns[i];
        double v = fig_clean(c->get(m), FIG_NONNEG, 1);
        char buf[32];
        if (c->scale > 0)
            snprintf(buf, sizeof buf, c->scale >= 1e9 ? "%.1f" : "%.0f", v / c->scale);
        else
            snprintf(buf, sizeof buf, "%.1f%%", 100 * v / n);
        fprintf(out, " %*s", c->width, buf);
    }
    fputc('\n', out);
}

/* Per-server figures, when there is more than one job or server to tell apart. */
static void write_text_servers(FILE *out, const variant_run_t *v, int nv) {
    int wanted = 0;
    for (int k = 0; k < nv; k++)
        wanted |= v[k].model.srv && (v[k].model.nservers > 1 || v[k].topo.ninst > 1);
    if (!wanted) return;
    const int w = report_variant_width(v, nv);
    fprintf(out, "\n%-*s %6s %5s  %-6s", w, "variant", "server", "epoch", "source");
    for (int i = 0; i < NSERVER_COLUMNS; i++)
        fprintf(out, " %*s", server_columns[i].width, server_columns[i].head);
    fputc('\n', out);
    for (int k = 0; k < nv; k++) {
        if (!v[k].model.srv) continue;
        for (int sv = 0; sv < v[k].model.nservers; sv++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const server_metrics_t *mm = server_at(&v[k].model, sv, e);
                if (mm->accesses == 0) continue; /* a server no job uses */
                text_server_row(out, w, v[k].scn.variant, sv, e + 1, "model", mm);
                if (!v[k].sim.m || !v[k].sim.srv) continue;
                const server_metrics_t *sm = server_at(&v[k].sim, sv, e);
                /* A server-sampled run has figures of its sampled servers only. */
                if (v[k].sim.servers_sampled > 0 && sm->accesses == 0) continue;
                text_server_row(out, w, v[k].scn.variant, sv, e + 1, run_sim_source(&v[k]), sm);
            }
    }
}

/* The fullest server's memory by component, where the scenario counts it
 * (memory.c refused the run past server.mem_gb already). */
static void write_text_host_memory(FILE *out, const variant_run_t *v, int nv, int k, int *head) {
    const scenario_t *s = &v[k].scn;
    if (!memory_counted(s)) return;
    memory_parts_t most = {0};
    int at = 0;
    for (int sv = 0; sv < (int)s->server.count; sv++) {
        memory_parts_t m = memory_peak(s, &v[k].topo, sv);
        if (m.total > most.total) most = m, at = sv;
    }
    if (!(*head)++) fprintf(out, "\nmemory at its peak (the fullest server)\n");
    char lim[96] = "server.mem_gb not given: nothing checked";
    if (s->server.mem_gb > 0) snprintf(lim, sizeof lim, "fits server.mem_gb %g", s->server.mem_gb);
    char pin[64] = "";
    if (most.pinned > 0) snprintf(pin, sizeof pin, " (pinned batches %.2f)", most.pinned / GIB);
    fprintf(out,
            "%-*s memory %.2f GiB on server %d: %d training processes %.2f%s, their workers "
            "%.2f, /dev/shm %.2f, a cache in the loader %.2f GiB; %s\n",
            report_variant_width(v, nv), s->variant, most.total / GIB, at + 1, most.procs,
            most.processes / GIB, pin, most.workers / GIB, most.shm / GIB, most.cache / GIB, lim);
}

/* /dev/shm at its peak, where a loader puts batches there: the figure a
 * container's --shm-size must hold (memory.c refused the run past
 * server.shm_mb already). */
static void write_text_memory(FILE *out, const variant_run_t *v, int nv) {
    int head = 0;
    for (int k = 0; k < nv; k++) {
        write_text_host_memory(out, v, nv, k, &head);
        double most = 0;
        int at = 0;
        for (int sv = 0; sv < (int)v[k].scn.server.count; sv++) {
            double b = memory_shm_peak(&v[k].scn, &v[k].topo, sv);
            if (b > most) most = b, at = sv;
        }
        if (!(most > 0)) continue;
        if (!head++) fprintf(out, "\nmemory at its peak (the fullest server)\n");
        char lim[96] = "server.shm_mb not given: nothing checked (df -m /dev/shm)";
        if (v[k].scn.server.shm_mb > 0)
            snprintf(lim, sizeof lim, "fits server.shm_mb %g", v[k].scn.server.shm_mb);
        fprintf(
            out,
            "%-*s /dev/shm %.1f MiB on server %d: the DataLoaders' batches in shared memory; %s\n",
            report_variant_width(v, nv), v[k].scn.variant, most / MIB, at + 1, lim);
    }
}

/* Under a measured scaling curve (prep.scaling) or the memory-bandwidth
 * bound: each stream's effective cores, which figures rest on the curve's
 * extrapolation past its last measured point, and where the bound binds.
 * Nothing with neither (linear scaling). */
static void write_text_scaling(FILE *out, const variant_run_t *v, int nv) {
    int shown = 0;
    for (int k = 0; k < nv; k++) {
        const scenario_t *s = &v[k].scn;
        const int n = s->prep.scaling_n;
        if (!scenario_prep_cores_shaped(s)) continue;
        const double *t = s->prep.scaling_threads, *sp = s->prep.scaling_speedup;
        double gain = n >= 2 ? (sp[n - 1] - sp[n - 2]) / (t[n - 1] - t[n - 2]) : 0;
        for (int i = 0; i < v[k].topo.ninst; i++) {
            const instance_t *in = &v[k].topo.inst[i];
            if (in->lead != i) continue; /* coordinated prep: the stream's lead speaks for it */
            prep_cores_why_t w;
            double per = in->cpus / in->nservers, eff = scenario_prep_cores_why(s, per, &w);
            fprintf(out, "%sprep cores (%s%s%s): %.6g per server prepare as %.4g (%s)",
                    shown++ ? "" : "\n", s->variant, s->variant[0] ? ", " : "", in->name, per, eff,
                    n ? "prep.scaling" : "linear scaling");
            if (n && w.extrapolated)
                fprintf(out,
                        ": EXTRAPOLATED past the measured %g threads at the last marginal gain, "
                        "%.3g cores per core%s",
                        t[n - 1], gain > 0 ? gain : 0, gain > 0 ? "" : " (clamped at 0)");
            else if (n)
                fprintf(out, ", within the measured curve");
            if (w.mem_bound) {
                double ms = 1e3 * scenario_prep_s(s, scenario_item_bytes_mean(s));
                double raw = s->server.mem_gbps * ms / s->prep.mem_mb_per_item;
                fprintf(out,
                        "; bound by memory bandwidth at %.4g cores (server.mem_gbps %g GB/s x "
                        "%.4g ms of prep per item / prep.mem_mb_per_item %g MB = %.4g cores%s)",
                        w.bound, s->server.mem_gbps, ms, s->prep.mem_mb_per_item, raw,
                        raw < w.bound ? ", below the measured cores, which stand" : "");
            } else if (w.bound > 0)
                fprintf(out, "; the memory-bandwidth bound, %.4g cores, does not bind", w.bound);
            fprintf(out, "\n");
        }
    }
}

/* Where each job's GPU rate comes from, when it names a row of the
 * published table: used (with its source) or overridden by a given rate.
 * One line for each job and row, however many variants share it. */
static void write_text_rates(FILE *out, const variant_run_t *v, int nv) {
    for (int k = 0; k < nv; k++)
        for (int j = 0; j < v[k].scn.njobs; j++) {
            const job_t *jb = &v[k].scn.jobs[j];
            int seen = !jb->rate_row;
            for (int p = 0; p < k && !seen; p++)
                seen = j < v[p].scn.njobs && v[p].scn.jobs[j].rate_row == jb->rate_row &&
                       v[p].scn.jobs[j].rate_given == jb->rate_given;
            if (seen) continue;
            char cite[1024];
            gpu_rate_cite(jb->rate_row, cite, sizeof cite);
            /* The first variant's lines stand for every variant that shares them. */
            fprintf(out, "gpu rate (job %s%s%s): ", jb->name, k ? ", variant " : "",
                    k ? v[k].scn.variant : "");
            if (jb->rate_given)
                fprintf(out, "given (%s %.6g%s), overriding the published %s\n",
                        jb->compute_s_per_batch > 0 ? "compute_s_per_batch" : "gpu_items_per_s",
                        jb->compute_s_per_batch > 0 ? jb->compute_s_per_batch : jb->gpu_items_per_s,
                        jb->compute_s_per_batch > 0 ? " s" : " items/s per GPU", cite);
            else
                fprintf(out, "published, %s\n", cite);
        }
}

static void write_text(FILE *out, const char *path, const variant_run_t *v, int nv) {
    if (nv == 0) return;
    const scenario_t *s = &v[0].scn;
    /* The cache the run gives a server: a page cache's under server.mem_gb
     * is what the processes leave (memory_cache_bytes). */
    double D = scenario_dataset_bytes(s), C = memory_cache_bytes(s, &v[0].topo);
    char pct[32];
    /* The path is the command line's: shown with control characters escaped. */
    fprintf(out, "stallsim %s -- %s (", STALLSIM_VERSION, s->name);
    text_put_escaped(out, path);
    fprintf(out, "), seed %lld, %lld epochs\n", (long long)s->seed, (long long)s->epochs);
    fprintf(out,
            "dataset %lld items, %.1f GB (mean %.1f KB, cv %.2f); %lld server(s) x %lld GPUs, "
            "%lld cores, cache %.1f GB each (%s%% of the dataset)\n",
            (long long)s->dataset.items, D / 1e9, s->dataset.item_kb, s->dataset.item_kb_cv,
            (long long)s->server.count, (long long)s->server.gpus, (long long)s->server.cpus,
            C / 1e9, fig(pct, sizeof pct, D > 0 ? 100 * C / D : 0, 1));
    for (int k = 0; k < nv; k++) {
        fprintf(out, "variant %-*s ", report_variant_width(v, nv), v[k].scn.variant);
        text_config_diff(out, s, &v[k].scn);
        fprintf(out, "\n");
    }
    write_text_rates(out, v, nv);
    report_table_t table = report_run_table;
    table.variant_width = report_variant_width(v, nv);
    report_text_header(out, &table);
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const epoch_metrics_t *mm = metrics_at(&v[k].model, i, e);
                report_text_row(out, &table, v[k].scn.variant, v[k].topo.inst[i].name, e + 1,
                                "model", mm, NULL);
                if (v[k].sim.m)
                    report_text_row(out, &table, v[k].scn.variant, v[k].topo.inst[i].name, e + 1,
                                    run_sim_source(&v[k]), metrics_at(&v[k].sim, i, e), mm);
            }
    for (int k = 0; k < nv; k++)
        if (v[k].sampled > 0)
            fprintf(out,
                    "sampled (%s): more items than sim.sample_above_items, so the simulator "
                    "replayed %.3g%% of them (by hash, the cache scaled alike): its hit rates, "
                    "within %.2f pp (3 standard errors); every other figure of those rows is the "
                    "model's given those hits\n",
                    v[k].scn.variant, 100 * v[k].sampled,
                    fig_zero(fabs(100 * v[k].sample_err), 2)); /* a bound: never "-0.00" */
    for (int k = 0; k < nv; k++)
        if (v[k].sim.servers_sampled > 0) {
            char line[160];
            server_sample_line(line, sizeof line, &v[k]);
            fprintf(out,
                    "%s (%s): a cache on every server, sampled (sim.servers: the exact run "
                    "would not fit this machine's memory, or sampled was asked): the simulator "
                    "ran %d evenly spaced servers, each standing for its share of the others "
                    "(a shared store loaded by all); the bound is the widest over the epochs of "
                    "the 95%% t-intervals of the sampled servers' mean item wait and storage "
                    "bytes, and of the time the slowest of all servers would add (normal order "
                    "statistics of the sampled servers' readiness)\n",
                    line, v[k].scn.variant, v[k].sim.servers_sampled);
        }
    gap_write_warnings(out, v, nv);
    write_text_first_step(out, v, nv);
    goodout_text(out, v, nv);
    write_text_servers(out, v, nv);
    const int w = report_variant_width(v, nv);
    fprintf(out, "\n%-*s %14s %14s %9s  %s\n", w, "variant", "total_s(model)", "total_s(sim)",
            "speed-up", "steady-state bottleneck (model, where the hit rate stops changing)");
    double base = report_total_s(best_source(&v[0]));
    for (int k = 0; k < nv; k++) {
        char simt[32] = "-";
        char modt[32];
        if (v[k].sim.m) fig(simt, sizeof simt, report_total_s(&v[k].sim), 1);
        /* A run that ends while the caches still fill says so: its last
         * epoch is not the steady state. */
        char when[96];
        if (v[k].steady_from < v[k].scn.epochs)
            snprintf(when, sizeof when, "from epoch %d", v[k].steady_from + 1);
        else
            snprintf(when, sizeof when, "from epoch %d; epoch %lld, the last run, is still warming",
                     v[k].steady_from + 1, (long long)v[k].scn.epochs);
        fprintf(out, "%-*s %14s %14s %8.2fx  %s (%s)\n", w, v[k].scn.variant,
                fig(modt, sizeof modt, report_total_s(&v[k].model), 1), simt,
                base / report_total_s(best_source(&v[k])), bottleneck_names[v[k].steady.bottleneck],
                when);
    }
    fprintf(
        out,
        "\nspeed-up: the first variant's total time over each variant's (simulator where run).\n"
        "~ after epoch_s marks a model figure with no exact closed form; after vs_model, a "
        "simulator more than 5%% from the model.\n");
    report_spread_text(out, v, nv);
    write_text_scaling(out, v, nv);
    write_text_memory(out, v, nv);
    memout_text(out, v, nv);
    advice_write_text(out, v, nv);
    write_text_requests(out, v, nv);
    write_text_cost(out, v, nv);
}

/* The page's "what to change" section: the text block as preformatted text. */
static void advice_html(FILE *out, const variant_run_t *v, int nv) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return;
    advice_write_text(m, v, nv);
    if (fclose(m) != 0) {
        free(buf);
        return;
    }
    fputs("<pre class=\"advice\">", out);
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '&')
            fputs("&amp;", out);
        else if (buf[i] == '<')
            fputs("&lt;", out);
        else if (buf[i] == '>')
            fputs("&gt;", out);
        else
            fputc(buf[i], out);
    }
    fputs("</pre>\n", out);
    free(buf);
}

int report_write(FILE *out, report_format_t fmt, const char *path, const variant_run_t *v, int nv,
                 const char *cmd) {
    /* Every figure passes the one check before the first byte goes out. */
    if (report_valid_runs(v, nv, cmd)) return EXIT_RUNTIME;
    if (fmt == FORMAT_CSV)
        write_csv(out, v, nv);
    else if (fmt == FORMAT_JSON)
        write_json(out, path, v, nv);
    else if (fmt == FORMAT_HTML)
        html_run_write(out, path, v, nv, advice_html);
    else
        write_text(out, path, v, nv);
    return 0;
}
