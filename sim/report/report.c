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
    {"vs_model", OUT_NUM, "%.6f", get_vs_model, FIG_ANY, NULL, NULL, 0, NULL},
    {"model_differs", OUT_BOOL, "%d", get_model_differs, FIG_ANY, NULL, NULL, 0, NULL},
};
/* clang-format on */
#define NCOLUMNS ((int)(sizeof columns / sizeof columns[0]))

/* One value as CSV (json = 0) or JSON text, its noise cleaned (fig_clean). */
static void put_value(FILE *out, const column_t *c, const epoch_metrics_t *m,
                      const epoch_metrics_t *ref, int json) {
    const out_field_t f = {c->name, c->kind, c->fmt, bottleneck_names, 0};
    out_value(out, &f, fig_clean(c->get(m, ref), c->range, m->epoch_s), json);
}

/* ---- CSV ---- */

/* RFC 4180: a field holding a comma, a double quote, CR or LF is quoted, its
 * quotes doubled; any other is written as it is. */
static int csv_needs_quotes(const char *s) {
    return s[strcspn(s, ",\"\r\n")] != 0;
}

void report_csv_field(FILE *out, const char *s) {
    if (!csv_needs_quotes(s)) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

size_t report_csv_quote(char *buf, size_t n, const char *s) {
    size_t used = 0;
    int q = csv_needs_quotes(s);
#define PUT(c)                                                                                     \
    do {                                                                                           \
        if (used + 1 < n) buf[used] = (c);                                                         \
        used++;                                                                                    \
    } while (0)
    if (q) PUT('"');
    for (; *s; s++) {
        if (q && *s == '"') PUT('"');
        PUT(*s);
    }
    if (q) PUT('"');
#undef PUT
    if (n) buf[used < n ? used : n - 1] = 0;
    return used;
}

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
    report_csv_field(out, variant);
    fputc(',', out);
    report_csv_field(out, job);
    fprintf(out, ",%d,%s", epoch, source);
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].get) {
            fputc(',', out);
            put_value(out, &columns[i], m, model, 0);
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

/* A row, and where memory is shown the job's first server's memory. */
static void csv_row_mem(FILE *out, const variant_run_t *v, int i, int e, const char *source,
                        const epoch_metrics_t *m, const epoch_metrics_t *model, int mem) {
    csv_row_body(out, NULL, v->scn.variant, v->topo.inst[i].name, e + 1, source, m, model);
    if (mem) memout_csv_values(out, v, v->topo.inst[i].first_server);
    fputc('\n', out);
}

static void write_csv(FILE *out, const variant_run_t *v, int nv) {
    const int mem = memout_any(v, nv);
    csv_header_body(out, NULL);
    if (mem) memout_csv_names(out);
    fputc('\n', out);
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const epoch_metrics_t *mm = metrics_at(&v[k].model, i, e);
                csv_row_mem(out, &v[k], i, e, "model", mm, NULL, mem);
                if (v[k].sim.m)
                    csv_row_mem(out, &v[k], i, e, run_sim_source(&v[k]),
                                metrics_at(&v[k].sim, i, e), mm, mem);
            }
}

/* ---- JSON ---- */

void report_json_string(FILE *out, const char *s) {
    fputc('"', out);
    while (*s) {
        unsigned char c = (unsigned char)*s;
        int len = text_utf8_len(s);
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(out, "\\u%04x", c);
        else if (len == 0) /* not UTF-8 (a path from the command line): JSON cannot hold it */
            fputs("\\ufffd", out);
        else
            fwrite(s, 1, (size_t)len, out);
        s += len ? len : 1;
    }
    fputc('"', out);
}

static void json_value(FILE *out, const key_def_t *k, const void *base) {
    char buf[SCN_PATH];
    schema_format(k, base, buf, sizeof buf);
    if (k->type == KT_INT || k->type == KT_REAL || k->type == KT_BOOL)
        fputs(buf, out);
    else
        report_json_string(out, buf);
}

/* The published rate row a job names (jobs.N.gpu, model), with its source;
 * "used": false when a given rate overrides it. Nothing without one. */
static void json_rate_row(FILE *out, const job_t *j) {
    const gpu_rate_t *r = j->rate_row;
    if (!r) return;
    fprintf(out, ", \"published_rate\": {\"used\": %s, \"items_per_s\": %.9g, \"batch\": %lld",
            j->rate_given ? "false" : "true", r->items_per_s, (long long)r->batch);
    const char *names[] = {"gpu",  "model", "precision", "source", "table",
                           "date", "url",   "setup",     "note"};
    const char *vals[] = {r->gpu,  r->model, r->precision, r->source, r->table,
                          r->date, r->url,   r->setup,     r->note};
    for (int i = 0; i < 9; i++) {
        fprintf(out, ", \"%s\": ", names[i]);
        report_json_string(out, vals[i]);
    }
    fprintf(out, "}");
}

void report_json_config(FILE *out, const scenario_t *s) {
    int n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    fprintf(out, "{");
    for (int i = 0, shown = 0; i < n; i++) {
        if (!kinds_key_used(s, k[i].name)) continue;
        fprintf(out, "%s\"%s\": ", shown++ ? ", " : "", k[i].name);
        json_value(out, &k[i], s);
    }
    const key_def_t *jk = schema_keys(SCOPE_JOB, &n);
    fprintf(out, ", \"jobs\": [");
    for (int j = 0; j < s->njobs; j++) {
        fprintf(out, "%s{", j ? ", " : "");
        for (int i = 0; i < n; i++) {
            fprintf(out, "%s\"%s\": ", i ? ", " : "", jk[i].name);
            json_value(out, &jk[i], &s->jobs[j]);
        }
        json_rate_row(out, &s->jobs[j]);
        fprintf(out, "}");
    }
    fprintf(out, "]}");
}

void report_json_metrics(FILE *out, const epoch_metrics_t *m, const epoch_metrics_t *model) {
    int first = 1;
    fputc('{', out);
    for (int i = 0; i < NCOLUMNS; i++)
        if (columns[i].get) {
            fprintf(out, "%s\"%s\": ", first ? "" : ", ", columns[i].name);
            put_value(out, &columns[i], m, model, 1);
            first = 0;
        }
    fputc('}', out);
}

/* The per-server figures, one row per column as for an epoch's metrics: the
 * JSON key and the text table's heading, width and value (shares of the
 * accesses for the hit columns, GB or MB for bytes). */
typedef struct {
    const char *name, *head;
    int width;
    double (*json)(const server_metrics_t *m);
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

static void json_server(FILE *out, const server_metrics_t *m) {
    fputc('{', out);
    for (int i = 0; i < NSERVER_COLUMNS; i++)
        fprintf(out, "%s\"%s\": %.0f", i ? ", " : "", server_columns[i].name,
                fig_clean(server_columns[i].json(m), FIG_NONNEG, 1));
    fputc('}', out);
}

static void json_servers(FILE *out, const variant_run_t *v) {
    const run_metrics_t *r = v->sim.m ? &v->sim : &v->model;
    if (!r->srv) return;
    fprintf(out, ",\n   \"servers\": [");
    for (int k = 0; k < r->nservers; k++) {
        fprintf(out, "%s\n    {\"server\": %d, \"epochs\": [", k ? "," : "", k);
        for (int e = 0; e < r->nepochs; e++) {
            fprintf(out, "%s\n     {\"epoch\": %d, \"model\": ", e ? "," : "", e + 1);
            json_server(out, server_at(&v->model, k, e));
            /* A server-sampled run has figures of its sampled servers only. */
            if (v->sim.m && v->sim.srv &&
                !(v->sim.servers_sampled > 0 && server_at(&v->sim, k, e)->accesses == 0)) {
                fprintf(out, ", \"sim\": ");
                json_server(out, server_at(&v->sim, k, e));
            }
            fprintf(out, "}");
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]");
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

static void json_cost_one(FILE *out, const cost_t *c) {
    fprintf(out,
            "{\"requests\": %.9g, \"lists\": %.9g, \"egress\": %.9g, \"gpu\": %.9g, "
            "\"gpu_stall\": %.9g, \"cores\": %.9g, \"cache\": %.9g, \"total\": %.9g}",
            c->requests, c->lists, c->egress, c->gpu, c->gpu_stall, c->cores, c->cache, c->total);
}

/* Instance i's dollars per epoch and for the run, from the simulator where
 * it ran, else the model. */
static void json_cost(FILE *out, const variant_run_t *v, int i) {
    const run_metrics_t *r = best_source(v);
    cost_t run = {0}, c;
    fprintf(out, ", \"cost_usd\": {\"source\": \"%s\", \"epochs\": [", v->sim.m ? "sim" : "model");
    for (int e = 0; e < v->scn.epochs; e++) {
        cost_epoch(&v->scn, &v->topo, i, e, metrics_at(r, i, e), &c);
        cost_add(&run, &c);
        fprintf(out, "%s", e ? ", " : "");
        json_cost_one(out, &c);
    }
    fprintf(out, "], \"run\": ");
    json_cost_one(out, &run);
    fprintf(out, "}");
}

static void text_cost_row(FILE *out, int w, const char *variant, const char *job, const char *epoch,
                          const cost_t *c) {
    fprintf(out, "%-*s %-12s %5s %11.2f %9.2f %9.2f %11.2f %11.2f %9.2f %9.2f %11.2f\n", w, variant,
            job, epoch, c->requests, c->lists, c->egress, c->gpu, c->gpu_stall, c->cores, c->cache,
            c->total);
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
    fprintf(out, "%-*s %-12s %5s %11s %9s %9s %11s %11s %9s %9s %11s\n", w, "variant", "job",
            "epoch", "requests", "lists", "egress", "gpu", "gpu_stalled", "cores", "cache",
            "total");
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

static void write_json(FILE *out, const char *path, const variant_run_t *v, int nv) {
    fprintf(out, "{\"format_version\": 1, \"stallsim_version\": \"%s\", \"scenario_file\": ",
            STALLSIM_VERSION);
    report_json_string(out, path);
    fprintf(out, ",\n \"variants\": [");
    double base = nv ? report_total_s(best_source(&v[0])) : 0;
    for (int k = 0; k < nv; k++) {
        fprintf(out, "%s\n  {\"name\": ", k ? "," : "");
        report_json_string(out, v[k].scn.variant);
        fprintf(out, ", \"total_s\": {\"model\": %.9g", report_total_s(&v[k].model));
        if (v[k].sim.m) fprintf(out, ", \"sim\": %.9g", report_total_s(&v[k].sim));
        fprintf(out,
                "}, \"speedup\": %.6f,\n   \"steady\": {\"from_epoch\": %d, "
                "\"epoch_s\": %.9g, \"hit_rate\": %.6f, \"bottleneck\": \"%s\"},\n   \"config\": ",
                base / report_total_s(best_source(&v[k])), v[k].steady_from + 1,
                v[k].steady.epoch_s, v[k].steady.hit_rate,
                bottleneck_names[v[k].steady.bottleneck]);
        report_json_config(out, &v[k].scn);
        if (v[k].sampled > 0)
            fprintf(out,
                    ",\n   \"sim_sampled\": {\"items_share\": %.9g, \"hit_rate_3se\": %.6f, "
                    "\"hits\": \"replay of the hash-sampled items\", \"timings\": \"model given "
                    "those hits\"}",
                    v[k].sampled, v[k].sample_err);
        if (v[k].sim.servers_sampled > 0) {
            fprintf(out,
                    ",\n   \"sim_sampled_servers\": {\"sampled\": %d, \"servers\": %lld, "
                    "\"bound_pct\": %.4f, \"text\": ",
                    v[k].sim.servers_sampled, (long long)v[k].scn.server.count,
                    v[k].sim.servers_bound);
            char line[160];
            server_sample_line(line, sizeof line, &v[k]);
            report_json_string(out, line);
            fprintf(out, "}");
        }
        fprintf(out, ",\n   \"jobs\": [");
        for (int i = 0; i < v[k].topo.ninst; i++) {
            fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
            report_json_string(out, v[k].topo.inst[i].name);
            fprintf(out, ", \"cpus\": %.6g, ", v[k].topo.inst[i].cpus);
            /* /dev/shm in MiB, as df -m and docker's --shm-size count it. */
            fprintf(out, "\"shm_peak_mib\": {\"per_process\": %.6g, \"server\": %.6g}, ",
                    memory_shm_process(&v[k].scn, &v[k].scn.jobs[v[k].topo.inst[i].job]) / MIB,
                    memory_shm_peak(&v[k].scn, &v[k].topo, v[k].topo.inst[i].first_server) / MIB);
            if (memory_counted(&v[k].scn)) {
                memory_parts_t m =
                    memory_peak(&v[k].scn, &v[k].topo, v[k].topo.inst[i].first_server);
                fprintf(out,
                        "\"mem_peak_gib\": {\"server\": %.6g, \"training_processes\": %.6g, "
                        "\"pinned\": %.6g, \"workers\": %.6g, \"shm\": %.6g, \"cache\": %.6g}, ",
                        m.total / GIB, m.processes / GIB, m.pinned / GIB, m.workers / GIB,
                        m.shm / GIB, m.cache / GIB);
            }
            /* Only under a curve or the memory bound: as before without. */
            if (scenario_prep_cores_shaped(&v[k].scn)) {
                prep_cores_why_t w;
                double per = v[k].topo.inst[i].cpus / v[k].topo.inst[i].nservers;
                double eff = scenario_prep_cores_why(&v[k].scn, per, &w);
                fprintf(out,
                        "\"prep_cores\": {\"per_server\": %.6g, \"effective\": %.6g, "
                        "\"extrapolated\": %s",
                        per, eff, w.extrapolated ? "true" : "false");
                if (w.bound > 0)
                    fprintf(out, ", \"memory_bound\": {\"cores\": %.6g, \"binds\": %s}", w.bound,
                            w.mem_bound ? "true" : "false");
                fprintf(out, "}, ");
            }
            fprintf(out, "\"first_server\": %d, \"servers\": %d, \"epochs\": [",
                    v[k].topo.inst[i].first_server, v[k].topo.inst[i].nservers);
            for (int e = 0; e < v[k].scn.epochs; e++) {
                fprintf(out, "%s\n     {\"epoch\": %d, \"model\": ", e ? "," : "", e + 1);
                report_json_metrics(out, metrics_at(&v[k].model, i, e), NULL);
                if (v[k].sim.m) {
                    fprintf(out, ", \"sim\": ");
                    report_json_metrics(out, metrics_at(&v[k].sim, i, e),
                                        metrics_at(&v[k].model, i, e));
                }
                fprintf(out, "}");
            }
            fprintf(out, "]");
            if (cost_priced(&v[k].scn)) json_cost(out, &v[k], i);
            fprintf(out, "}");
        }
        fprintf(out, "]");
        json_servers(out, &v[k]);
        report_spread_json(out, &v[k]);
        memout_json(out, &v[k]);
        fprintf(out, "}");
    }
    fprintf(out, "\n]}\n");
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
        double v = fig_clean(c->json(m), FIG_NONNEG, 1);
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
    double D = scenario_dataset_bytes(s), C = scenario_cache_bytes(s);
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
