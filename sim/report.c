/* report: see report.h. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "schema.h"

#ifndef STALLSIM_VERSION
#define STALLSIM_VERSION "0.0.0"
#endif

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

/* ---- CSV ---- */

void report_csv_header(FILE *out, const char *extra) {
    fprintf(out,
            "%svariant,job,epoch,source,epoch_s,throughput_items_s,gpu_util,prep_stall_s,"
            "fetch_stall_s,hit_rate,remote_hit_rate,storage_read_bytes,network_bytes,cpu_util,"
            "storage_util,t_gpu_s,t_prep_s,bottleneck,approximate,staged_bytes\n",
            extra ? extra : "");
}

void report_csv_row(FILE *out, const char *extra, const char *variant, const char *job, int epoch,
                    const char *source, const epoch_metrics_t *m) {
    fprintf(out,
            "%s%s,%s,%d,%s,%.9g,%.9g,%.6f,%.9g,%.9g,%.6f,%.6f,%.0f,%.0f,%.6f,%.6f,%.9g,%.9g,%s,%d,%"
            ".0f\n",
            extra ? extra : "", variant, job, epoch, source, m->epoch_s, m->throughput_items_s,
            m->gpu_util, m->prep_stall_s, m->fetch_stall_s, m->hit_rate, m->remote_hit_rate,
            m->storage_read_bytes, m->network_bytes, m->cpu_util, m->storage_util, m->t_gpu_s,
            m->t_prep_s, bottleneck_names[m->bottleneck], m->approximate, m->staged_bytes);
}

static void write_csv(FILE *out, const variant_run_t *v, int nv) {
    report_csv_header(out, NULL);
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                report_csv_row(out, NULL, v[k].scn.variant, v[k].topo.inst[i].name, e + 1, "model",
                               metrics_at(&v[k].model, i, e));
                if (v[k].sim.m)
                    report_csv_row(out, NULL, v[k].scn.variant, v[k].topo.inst[i].name, e + 1,
                                   "sim", metrics_at(&v[k].sim, i, e));
            }
}

/* ---- JSON ---- */

void report_json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
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

static void json_config(FILE *out, const scenario_t *s) {
    int n;
    const key_def_t *k = schema_keys(SCOPE_SCENARIO, &n);
    fprintf(out, "{");
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s\"%s\": ", i ? ", " : "", k[i].name);
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
        fprintf(out, "}");
    }
    fprintf(out, "]}");
}

void report_json_metrics(FILE *out, const epoch_metrics_t *m) {
    fprintf(
        out,
        "{\"epoch_s\": %.9g, \"throughput_items_s\": %.9g, \"gpu_util\": %.6f, \"prep_stall_s\": "
        "%.9g, \"fetch_stall_s\": %.9g, \"hit_rate\": %.6f, \"remote_hit_rate\": %.6f, "
        "\"storage_read_bytes\": %.0f, \"network_bytes\": %.0f, \"cpu_util\": %.6f, "
        "\"storage_util\": %.6f, \"t_gpu_s\": %.9g, \"t_prep_s\": %.9g, \"bottleneck\": \"%s\", "
        "\"approximate\": %s, \"staged_bytes\": %.0f}",
        m->epoch_s, m->throughput_items_s, m->gpu_util, m->prep_stall_s, m->fetch_stall_s,
        m->hit_rate, m->remote_hit_rate, m->storage_read_bytes, m->network_bytes, m->cpu_util,
        m->storage_util, m->t_gpu_s, m->t_prep_s, bottleneck_names[m->bottleneck],
        m->approximate ? "true" : "false", m->staged_bytes);
}

static void json_server(FILE *out, const server_metrics_t *m) {
    fprintf(out,
            "{\"accesses\": %.0f, \"local_hits\": %.0f, \"remote_hits\": %.0f, "
            "\"storage_reads\": %.0f, \"storage_read_bytes\": %.0f, \"net_in_bytes\": %.0f, "
            "\"net_out_bytes\": %.0f, \"staged_bytes\": %.0f}",
            m->accesses, m->local_hits, m->remote_hits, m->storage_reads, m->storage_read_bytes,
            m->net_in_bytes, m->net_out_bytes, m->staged_bytes);
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
            if (v->sim.m && v->sim.srv) {
                fprintf(out, ", \"sim\": ");
                json_server(out, server_at(&v->sim, k, e));
            }
            fprintf(out, "}");
        }
        fprintf(out, "]}");
    }
    fprintf(out, "]");
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
        fprintf(out, "}, \"speedup\": %.6f,\n   \"config\": ",
                base / report_total_s(best_source(&v[k])));
        json_config(out, &v[k].scn);
        fprintf(out, ",\n   \"jobs\": [");
        for (int i = 0; i < v[k].topo.ninst; i++) {
            fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
            report_json_string(out, v[k].topo.inst[i].name);
            fprintf(out, ", \"cpus\": %.6g, \"first_server\": %d, \"servers\": %d, \"epochs\": [",
                    v[k].topo.inst[i].cpus, v[k].topo.inst[i].first_server,
                    v[k].topo.inst[i].nservers);
            for (int e = 0; e < v[k].scn.epochs; e++) {
                fprintf(out, "%s\n     {\"epoch\": %d, \"model\": ", e ? "," : "", e + 1);
                report_json_metrics(out, metrics_at(&v[k].model, i, e));
                if (v[k].sim.m) {
                    fprintf(out, ", \"sim\": ");
                    report_json_metrics(out, metrics_at(&v[k].sim, i, e));
                }
                fprintf(out, "}");
            }
            fprintf(out, "]}");
        }
        fprintf(out, "]");
        json_servers(out, &v[k]);
        fprintf(out, "}");
    }
    fprintf(out, "\n]}\n");
}

/* ---- text ---- */

static void fmt_stall(char *buf, size_t n, double s, double epoch) {
    snprintf(buf, n, "%.1f (%4.1f%%)", s, epoch > 0 ? 100 * s / epoch : 0);
}

static void text_row(FILE *out, const char *variant, const char *job, int epoch, const char *src,
                     const epoch_metrics_t *m, const epoch_metrics_t *ref) {
    char ps[48], fs[48], diff[24] = "";
    fmt_stall(ps, sizeof ps, m->prep_stall_s, m->epoch_s);
    fmt_stall(fs, sizeof fs, m->fetch_stall_s, m->epoch_s);
    if (ref)
        snprintf(diff, sizeof diff, "%+.1f%%", 100 * (m->epoch_s - ref->epoch_s) / ref->epoch_s);
    fprintf(
        out,
        "%-10s %-12s %5d  %-6s %10.1f%1s %7s %9.0f %6.1f%% %16s %16s %7.1f%% %7.1f%% %9.1f  %s\n",
        variant, job, epoch, src, m->epoch_s, m->approximate ? "~" : "", diff,
        m->throughput_items_s, 100 * m->gpu_util, ps, fs, 100 * m->hit_rate,
        100 * m->remote_hit_rate, m->storage_read_bytes / 1e9, bottleneck_names[m->bottleneck]);
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

static void text_server_row(FILE *out, const char *variant, int server, int epoch, const char *src,
                            const server_metrics_t *m) {
    double n = m->accesses > 0 ? m->accesses : 1;
    fprintf(out, "%-10s %6d %5d  %-6s %12.0f %7.1f%% %7.1f%% %7.1f%% %9.1f %9.1f %9.1f %10.0f\n",
            variant, server + 1, epoch, src, m->accesses, 100 * m->local_hits / n,
            100 * m->remote_hits / n, 100 * m->storage_reads / n, m->storage_read_bytes / 1e9,
            m->net_in_bytes / 1e9, m->net_out_bytes / 1e9, m->staged_bytes / 1e6);
}

/* Per-server figures, when there is more than one job or server to tell apart. */
static void write_text_servers(FILE *out, const variant_run_t *v, int nv) {
    int wanted = 0;
    for (int k = 0; k < nv; k++)
        wanted |= v[k].model.srv && (v[k].model.nservers > 1 || v[k].topo.ninst > 1);
    if (!wanted) return;
    fprintf(out, "\n%-10s %6s %5s  %-6s %12s %8s %8s %8s %9s %9s %9s %10s\n", "variant", "server",
            "epoch", "source", "accesses", "local", "remote", "storage", "read_GB", "net_in_GB",
            "net_out_GB", "staged_MB");
    for (int k = 0; k < nv; k++) {
        if (!v[k].model.srv) continue;
        for (int sv = 0; sv < v[k].model.nservers; sv++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const server_metrics_t *mm = server_at(&v[k].model, sv, e);
                if (mm->accesses == 0) continue; /* a server no job uses */
                text_server_row(out, v[k].scn.variant, sv, e + 1, "model", mm);
                if (v[k].sim.m && v[k].sim.srv)
                    text_server_row(out, v[k].scn.variant, sv, e + 1, "sim",
                                    server_at(&v[k].sim, sv, e));
            }
    }
}

static void write_text(FILE *out, const char *path, const variant_run_t *v, int nv) {
    if (nv == 0) return;
    const scenario_t *s = &v[0].scn;
    double D = scenario_dataset_bytes(s), C = scenario_cache_bytes(s);
    fprintf(out, "stallsim %s -- %s (%s), seed %lld, %lld epochs\n", STALLSIM_VERSION, s->name,
            path, (long long)s->seed, (long long)s->epochs);
    fprintf(out,
            "dataset %lld items, %.1f GB (mean %.1f KB, cv %.2f); %lld server(s) x %lld GPUs, "
            "%lld cores, cache %.1f GB each (%.1f%% of the dataset)\n",
            (long long)s->dataset.items, D / 1e9, s->dataset.item_kb, s->dataset.item_kb_cv,
            (long long)s->server.count, (long long)s->server.gpus, (long long)s->server.cpus,
            C / 1e9, D > 0 ? 100 * C / D : 0);
    for (int k = 0; k < nv; k++) {
        fprintf(out, "variant %-10s ", v[k].scn.variant);
        text_config_diff(out, s, &v[k].scn);
        fprintf(out, "\n");
    }
    fprintf(out, "\n%-10s %-12s %5s  %-6s %11s %7s %9s %7s %16s %16s %8s %8s %9s  %s\n", "variant",
            "job", "epoch", "source", "epoch_s", "vs_model", "items/s", "gpu", "prep_stall_s",
            "fetch_stall_s", "hit", "remote", "read_GB", "bottleneck");
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const epoch_metrics_t *mm = metrics_at(&v[k].model, i, e);
                text_row(out, v[k].scn.variant, v[k].topo.inst[i].name, e + 1, "model", mm, NULL);
                if (v[k].sim.m)
                    text_row(out, v[k].scn.variant, v[k].topo.inst[i].name, e + 1, "sim",
                             metrics_at(&v[k].sim, i, e), mm);
            }
    write_text_servers(out, v, nv);
    fprintf(out, "\n%-10s %14s %14s %9s  %s\n", "variant", "total_s(model)", "total_s(sim)",
            "speed-up", "steady-state bottleneck (model, last epoch)");
    double base = report_total_s(best_source(&v[0]));
    for (int k = 0; k < nv; k++) {
        char simt[32] = "-";
        if (v[k].sim.m) snprintf(simt, sizeof simt, "%.1f", report_total_s(&v[k].sim));
        const epoch_metrics_t *last = metrics_at(&v[k].model, 0, v[k].scn.epochs - 1);
        fprintf(out, "%-10s %14.1f %14s %8.2fx  %s\n", v[k].scn.variant,
                report_total_s(&v[k].model), simt, base / report_total_s(best_source(&v[k])),
                bottleneck_names[last->bottleneck]);
    }
    fprintf(out,
            "\nspeed-up: the first variant's total time over each variant's (simulator where run). "
            "~ marks a model figure with no exact closed form.\n");
}

void report_write(FILE *out, report_format_t fmt, const char *path, const variant_run_t *v,
                  int nv) {
    if (fmt == FORMAT_CSV)
        write_csv(out, v, nv);
    else if (fmt == FORMAT_JSON)
        write_json(out, path, v, nv);
    else
        write_text(out, path, v, nv);
}
