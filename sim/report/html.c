/* html: see html.h. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fig.h"
#include "gap.h"
#include "goodout.h"
#include "memory.h"
#include "memout.h"
#include "report.h"
#include "svg.h"

#ifndef STALLSIM_VERSION
#define STALLSIM_VERSION "0.0.0"
#endif

/* The split's colours (the trace's categories: gpu, stall.prep, stall.fetch). */
static const svg_series_t split[] = {
    {"compute (GPUs busy)", "#4e79a7"},
    {"prep stall", "#f28e2b"},
    {"fetch stall", "#e15759"},
};

enum { MAX_JOB_CHARTS = 6, MAX_HIT_SERIES = 10 };

void html_begin(FILE *out, const char *title) {
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", out);
    html_put_text(out, title);
    fputs("</title>\n<style>\n"
          "body { font-family: sans-serif; margin: 24px; color: #222222; background: #ffffff; }\n"
          "h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; }\n"
          ".charts { display: flex; flex-wrap: wrap; gap: 16px; }\n"
          "table { border-collapse: collapse; font-size: 13px; }\n"
          "th, td { padding: 3px 10px; border-bottom: 1px solid #dddddd; text-align: right; }\n"
          "th { background: #f4f4f4; } td.name, th.name { text-align: left; }\n"
          ".note { color: #555555; font-size: 13px; }\n"
          "pre.advice { white-space: pre-wrap; font-size: 13px; }\n"
          "</style>\n</head>\n<body>\n",
          out);
}

void html_end(FILE *out) {
    fputs("</body>\n</html>\n", out);
}

static const run_metrics_t *source(const variant_run_t *v) {
    return v->sim.m ? &v->sim : &v->model;
}

/* Bars of every variant x epoch of the job instance named `job`. */
static void split_chart(FILE *out, const char *job, const variant_run_t *v, int nv) {
    int nbars = 0;
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            if (strcmp(v[k].topo.inst[i].name, job) == 0) nbars += (int)v[k].scn.epochs;
    double *val = calloc((size_t)nbars * 3 + 1, sizeof *val);
    char **labels = calloc((size_t)nbars + 1, sizeof *labels);
    const char **groups = calloc((size_t)nbars + 1, sizeof *groups);
    char(*text)[16] = calloc((size_t)nbars + 1, sizeof *text);
    if (!val || !labels || !groups || !text) {
        free(val), free(labels), free(groups), free(text);
        return;
    }
    int b = 0;
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++) {
            if (strcmp(v[k].topo.inst[i].name, job) != 0) continue;
            for (int e = 0; e < v[k].scn.epochs; e++, b++) {
                const epoch_metrics_t *m = metrics_at(source(&v[k]), i, e);
                val[b * 3] = m->t_gpu_s;
                val[b * 3 + 1] = m->prep_stall_s;
                val[b * 3 + 2] = m->fetch_stall_s;
                snprintf(text[b], sizeof text[b], "%d", e + 1);
                labels[b] = text[b];
                groups[b] = v[k].scn.variant;
            }
        }
    char title[200];
    snprintf(title, sizeof title, "Where the epoch goes: %s", job);
    svg_chart_t c = {title, "epoch, by variant", "time (s)", 0, 0, 0, 0};
    if (nbars > 12) c.width = 640 + 24 * (nbars - 12);
    svg_stacked_bars(out, &c, nbars, (const char *const *)labels, groups, 3, split, val);
    free(val), free(labels), free(groups), free(text);
}

static void hit_chart(FILE *out, const variant_run_t *v, int nv) {
    int E = 0, ns = 0;
    for (int k = 0; k < nv; k++) {
        if (v[k].scn.epochs > E) E = (int)v[k].scn.epochs;
        ns += v[k].topo.ninst;
    }
    int shown = ns < MAX_HIT_SERIES ? ns : MAX_HIT_SERIES;
    double *y = malloc(((size_t)shown * E + 1) * sizeof *y);
    svg_series_t *series = calloc((size_t)shown + 1, sizeof *series);
    char(*names)[160] = calloc((size_t)shown + 1, sizeof *names);
    char(*xt)[16] = calloc((size_t)E + 1, sizeof *xt);
    const char **xl = calloc((size_t)E + 1, sizeof *xl);
    if (!y || !series || !names || !xt || !xl) {
        free(y), free(series), free(names), free(xt), free(xl);
        return;
    }
    int s = 0;
    for (int k = 0; k < nv && s < shown; k++)
        for (int i = 0; i < v[k].topo.ninst && s < shown; i++, s++) {
            if (v[k].topo.ninst > 1)
                snprintf(names[s], sizeof names[s], "%s / %s", v[k].scn.variant,
                         v[k].topo.inst[i].name);
            else
                snprintf(names[s], sizeof names[s], "%s", v[k].scn.variant);
            series[s].label = names[s];
            series[s].color = svg_color(3 + s);
            for (int e = 0; e < E; e++)
                y[(size_t)s * E + e] =
                    e < v[k].scn.epochs ? metrics_at(source(&v[k]), i, e)->hit_rate : NAN;
        }
    for (int e = 0; e < E; e++) {
        snprintf(xt[e], sizeof xt[e], "%d", e + 1);
        xl[e] = xt[e];
    }
    svg_chart_t c = {"Cache hit rate per epoch", "epoch", "hit rate (% of reads)", 0, 0, 1, 1};
    svg_lines(out, &c, E, NULL, xl, shown, series, y);
    if (shown < ns)
        fprintf(out,
                "<p class=\"note\">The first %d of %d variant/job series are drawn; the table "
                "below has them all.</p>\n",
                shown, ns);
    free(y), free(series), free(names), free(xt), free(xl);
}

static void td_text(FILE *out, const char *s) {
    fputs("<td class=\"name\">", out);
    html_put_text(out, s);
    fputs("</td>", out);
}

static void bottleneck_table(FILE *out, const variant_run_t *v, int nv) {
    fputs("<table>\n<tr><th class=\"name\">variant</th><th>total time, model (s)</th>"
          "<th>total time, simulator (s)</th><th>speed-up</th><th class=\"name\">steady-state "
          "bottleneck (model)</th><th class=\"name\">last epoch's bottleneck, per job</th></tr>\n",
          out);
    double base = report_total_s(source(&v[0]));
    for (int k = 0; k < nv; k++) {
        fputs("<tr>", out);
        td_text(out, v[k].scn.variant);
        fprintf(out, "<td>%.1f</td>", report_total_s(&v[k].model));
        if (v[k].sim.m)
            fprintf(out, "<td>%.1f</td>", report_total_s(&v[k].sim));
        else
            fputs("<td>-</td>", out);
        fprintf(out,
                "<td>%.2fx</td><td class=\"name\">%s (from epoch %d%s)</td><td class=\"name\">",
                base / report_total_s(source(&v[k])), bottleneck_names[v[k].steady.bottleneck],
                v[k].steady_from + 1,
                v[k].steady_from < v[k].scn.epochs ? "" : "; the run ends still warming");
        for (int i = 0; i < v[k].topo.ninst; i++) {
            const epoch_metrics_t *m = metrics_at(source(&v[k]), i, (int)v[k].scn.epochs - 1);
            if (i) fputs(", ", out);
            html_put_text(out, v[k].topo.inst[i].name);
            fprintf(out, ": %s", bottleneck_names[m->bottleneck]);
        }
        fputs("</td></tr>\n", out);
    }
    fputs("</table>\n<p class=\"note\">speed-up: the first variant's total time over each "
          "variant's (simulator where run). The steady state starts where the model's hit rate "
          "stops changing.</p>\n",
          out);
}

static void epoch_table(FILE *out, const variant_run_t *v, int nv) {
    fputs("<table>\n<tr><th class=\"name\">variant</th><th class=\"name\">job</th><th>epoch</th>"
          "<th class=\"name\">source</th><th>epoch (s)</th><th>GPU busy</th><th>prep stall "
          "(s)</th><th>fetch stall (s)</th><th>hit rate</th><th>read (GB)</th><th "
          "class=\"name\">bottleneck</th></tr>\n",
          out);
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                const epoch_metrics_t *m = metrics_at(source(&v[k]), i, e);
                fputs("<tr>", out);
                td_text(out, v[k].scn.variant);
                td_text(out, v[k].topo.inst[i].name);
                fprintf(out,
                        "<td>%d</td><td class=\"name\">%s</td><td>%.1f</td><td>%.1f%%</td>"
                        "<td>%.1f</td><td>%.1f</td><td>%.1f%%</td><td>%.1f</td><td "
                        "class=\"name\">%s</td></tr>\n",
                        e + 1, v[k].sim.m ? "sim" : "model", m->epoch_s,
                        fig_zero(100 * m->gpu_util, 1),
                        fig_zero(fig_clean(m->prep_stall_s, FIG_TIME, m->epoch_s), 1),
                        fig_zero(fig_clean(m->fetch_stall_s, FIG_TIME, m->epoch_s), 1),
                        fig_zero(100 * m->hit_rate, 1), fig_zero(m->storage_read_bytes / 1e9, 1),
                        bottleneck_names[m->bottleneck]);
            }
    fputs("</table>\n", out);
}

/* The text's warnings where the simulator and the model differ past GAP_WARN. */
static void gap_html(FILE *out, const variant_run_t *v, int nv) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return;
    gap_write_warnings(m, v, nv);
    if (fclose(m) == 0 && len) {
        fputs("<p class=\"note\">", out);
        html_put_text(out, buf);
        fputs("</p>\n", out);
    }
    free(buf);
}

void html_run_write(FILE *out, const char *path, const variant_run_t *v, int nv,
                    html_advice_fn advice) {
    if (nv == 0) return;
    const scenario_t *s = &v[0].scn;
    char title[300];
    snprintf(title, sizeof title, "stallsim: %s", s->name);
    html_begin(out, title);
    fputs("<h1>", out);
    html_put_text(out, title);
    fputs("</h1>\n<p>", out);
    html_put_text(out, path);
    double D = scenario_dataset_bytes(s), C = memory_cache_bytes(s, &v[0].topo);
    fprintf(out,
            ", seed %lld, %lld epochs; dataset %lld items, %.1f GB; %lld server(s) x %lld GPUs, "
            "%lld cores, cache %.1f GB each (%.1f%% of the dataset). stallsim %s; figures from "
            "the %s.</p>\n",
            (long long)s->seed, (long long)s->epochs, (long long)s->dataset.items, D / 1e9,
            (long long)s->server.count, (long long)s->server.gpus, (long long)s->server.cpus,
            C / 1e9, D > 0 ? 100 * C / D : 0, STALLSIM_VERSION,
            v[0].sim.m ? "simulator" : "analytical model (--model-only)");

    fputs("<h2>Where the epoch goes</h2>\n<p class=\"note\">Each bar is one epoch: the GPUs' "
          "compute time, and the stalls split as DS-Analyzer's differential runs split them "
          "(prep stall: what remains with every item in memory; fetch stall: the rest).</p>\n"
          "<div class=\"charts\">\n",
          out);
    /* One chart per job instance name, in order of first appearance. */
    int charts = 0, names = 0;
    for (int k = 0; k < nv; k++)
        for (int i = 0; i < v[k].topo.ninst; i++) {
            const char *job = v[k].topo.inst[i].name;
            int seen = 0;
            for (int k2 = 0; k2 <= k && !seen; k2++)
                for (int i2 = 0; i2 < (k2 == k ? i : v[k2].topo.ninst) && !seen; i2++)
                    seen = strcmp(v[k2].topo.inst[i2].name, job) == 0;
            if (seen) continue;
            names++;
            if (charts < MAX_JOB_CHARTS) split_chart(out, job, v, nv), charts++;
        }
    fputs("</div>\n", out);
    if (charts < names)
        fprintf(out,
                "<p class=\"note\">The first %d of %d jobs are drawn; the table below has "
                "them all.</p>\n",
                charts, names);
    fputs("<h2>Hit rate per epoch</h2>\n", out);
    hit_chart(out, v, nv);
    fputs("<h2>Bottleneck</h2>\n", out);
    bottleneck_table(out, v, nv);
    if (advice) {
        fputs("<h2>What to change</h2>\n", out);
        advice(out, v, nv);
    } else {
        fputs("<!-- what to change: the advice for this run goes here -->\n", out);
    }
    fputs("<h2>Every epoch</h2>\n", out);
    epoch_table(out, v, nv);
    memout_html(out, v, nv);
    goodout_html(out, v, nv);
    gap_html(out, v, nv);
    html_end(out);
}
