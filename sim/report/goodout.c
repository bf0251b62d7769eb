/* goodout: see goodout.h. */
#include "goodout.h"

#include <math.h>

#include "cost.h"
#include "svg.h"
#include "report.h"

/* The figures: CSV column (JSON key: json[]) and format. The two that may
 * be empty come before the last, so that a truncated CSV line still shows
 * as one (an empty last field). */
static const out_field_t fields[] = {
    {"goodput", OUT_NUM, "%.6f", NULL, 0, NULL, 0, NULL},
    {"useful_epoch_s", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"cost_per_useful_epoch_usd", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"goodput_restarts", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"goodput_lost_s", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"goodput_restart_s", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"goodput_checkpoint_s", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
    {"goodput_best_every_steps", OUT_NUM, "%.9g", NULL, 0, NULL, 0, NULL},
};
#define NFIELDS ((int)(sizeof fields / sizeof fields[0]))
/* The JSON's keys, as goodput's object has had them. */
static const char *const json[NFIELDS] = {
    "goodput",   "useful_epoch_s", "cost_per_useful_epoch_usd", "restarts", "lost_s",
    "restart_s", "checkpoint_s",   "best_every_steps"};
enum { F_GOOD, F_USEFUL, F_COST, F_RESTARTS, F_LOST, F_RESTART, F_CHECKPOINT, F_EVERY };

int goodout_any(const variant_run_t *v, int nv) {
    for (int k = 0; k < nv; k++)
        if (goodput_asked(&v[k].scn)) return 1;
    return 0;
}

double goodout_cost_per_useful_epoch(const variant_run_t *v, int i, const run_metrics_t *r,
                                     const goodput_t *g) {
    if (!cost_priced(&v->scn) || !isfinite(g->useful_epoch_s)) return NAN;
    cost_t run = {0}, c;
    double wall = 0;
    for (int e = 0; e < r->nepochs; e++) {
        cost_epoch(&v->scn, &v->topo, i, e, metrics_at(r, i, e), &c);
        cost_add(&run, &c);
        wall += metrics_at(r, i, e)->epoch_s;
    }
    /* the run's dollars an hour, for the hours an epoch kept takes */
    return wall > 0 ? run.total / wall * g->useful_epoch_s : NAN;
}

/* Instance i's figures from r: the model's closed form, the simulator's draws. */
static void values_of(const variant_run_t *v, int i, const run_metrics_t *r, double *f) {
    goodput_t g;
    goodput_of(&v->scn, &v->topo, i, r, r == &v->sim, &g);
    f[F_GOOD] = g.goodput, f[F_RESTARTS] = g.restarts, f[F_LOST] = g.lost_s;
    f[F_RESTART] = g.restart_s, f[F_CHECKPOINT] = g.checkpoint_s, f[F_EVERY] = g.best_every;
    f[F_USEFUL] = g.useful_epoch_s;
    f[F_COST] = goodout_cost_per_useful_epoch(v, i, r, &g);
}

/* ---- text ---- */

static void text_row(FILE *out, int w, int priced, const variant_run_t *v, int i) {
    double m[NFIELDS], x[NFIELDS];
    values_of(v, i, &v->model, m);
    if (v->sim.m) values_of(v, i, &v->sim, x);
    const double *g = v->sim.m ? x : m;
    char sim[32] = "-";
    if (v->sim.m) snprintf(sim, sizeof sim, "%.1f%%", 100 * x[F_GOOD]);
    fprintf(out, "%-*s %-12s %13.1f%% %8s %10.1f %9.1f %10.1f %12.1f %10.0f", w, v->scn.variant,
            v->topo.inst[i].name, 100 * m[F_GOOD], sim, g[F_RESTARTS], g[F_LOST] / 3600,
            g[F_RESTART], g[F_CHECKPOINT], g[F_EVERY]);
    if (priced) {
        char usd[32] = "-";
        if (isfinite(g[F_COST])) snprintf(usd, sizeof usd, "%.4g", g[F_COST]);
        fprintf(out, " %12s", usd);
    }
    fputc('\n', out);
}

void goodout_text(FILE *out, const variant_run_t *v, int nv) {
    if (!goodout_any(v, nv)) return;
    const int w = report_variant_width(v, nv);
    int priced = 0;
    for (int k = 0; k < nv; k++)
        priced |= goodput_asked(&v[k].scn) && cost_priced(&v[k].scn);
    fprintf(out, "\n%-*s %-12s %14s %8s %10s %9s %10s %12s %10s%s\n", w, "variant", "job",
            "goodput", "(sim)", "restarts", "lost_h", "restart_s", "checkpoint_s", "best_every",
            priced ? "  usd/useful" : "");
    for (int k = 0; k < nv; k++) {
        if (!goodput_asked(&v[k].scn)) continue;
        for (int i = 0; i < v[k].topo.ninst; i++)
            text_row(out, w, priced, &v[k], i);
    }
    fputs("goodput: the GPUs' training time over wall time across failures.horizon_h, the\n"
          "  last epoch's pace with its checkpoints, a failure every mtbf_gpu_h / GPUs hours\n"
          "  losing the work since the last checkpoint and a restart (restart_s: its own time,\n"
          "  the way to the first step and the checkpoint's reload); the model's closed form\n"
          "  (Daly), the simulator's epochs with failures drawn from the seed (restarts and\n"
          "  lost_h: work lost and restarts, its); best_every: the Young/Daly interval, steps.\n",
          out);
    if (priced)
        fputs("usd/useful: dollars per epoch of training kept, the run's dollars an hour over\n"
              "  the wall time one takes with the checkpoints and failures (simulator where run;\n"
              "  -: no prices, or no work kept).\n",
              out);
}

/* ---- CSV ---- */

void goodout_csv_names(FILE *out) {
    out_csv_names(out, fields, NFIELDS, "");
}

void goodout_csv_values(FILE *out, const variant_run_t *v, int i, const run_metrics_t *r) {
    double f[NFIELDS];
    values_of(v, i, r, f);
    for (int c = 0; c < NFIELDS; c++) {
        fputc(',', out);
        if (isfinite(f[c])) out_value(out, &fields[c], f[c]);
    }
}

/* ---- JSON ---- */

static void json_one(out_json_t *j, const char *key, const variant_run_t *v, int i,
                     const run_metrics_t *r) {
    double f[NFIELDS];
    values_of(v, i, r, f);
    out_jobj(j, key);
    for (int c = 0; c < NFIELDS; c++)
        if (isfinite(f[c])) out_jnum(j, json[c], fields[c].fmt, f[c]);
    out_jend(j);
}

void goodout_json(out_json_t *j, const variant_run_t *v, int i) {
    if (!goodput_asked(&v->scn)) return;
    out_jobj(j, "goodput");
    out_jnum(j, "horizon_h", "%.9g", v->scn.failures.horizon_h);
    json_one(j, "model", v, i, &v->model);
    if (v->sim.m) json_one(j, "sim", v, i, &v->sim);
    out_jend(j);
}

/* ---- HTML ---- */

static void html_cell(FILE *out, double x, const char *fmt) {
    if (!isfinite(x)) {
        fputs("<td>-</td>", out);
        return;
    }
    fputs("<td>", out);
    fprintf(out, fmt, x);
    fputs("</td>", out);
}

void goodout_html(FILE *out, const variant_run_t *v, int nv) {
    if (!goodout_any(v, nv)) return;
    fputs("<h2>Goodput</h2>\n<p class=\"note\">The GPUs' training time over wall time across "
          "failures.horizon_h, with the checkpoints and the failures: the model's closed form "
          "(Daly), the simulator's epochs with failures drawn from the seed; the rest from the "
          "simulator where run. The Young/Daly interval in steps; dollars per epoch of training "
          "kept where priced.</p>\n<table>\n<tr><th class=\"name\">variant</th><th "
          "class=\"name\">job</th><th>goodput, model</th><th>goodput, simulator</th>"
          "<th>restarts</th><th>lost (h)</th><th>restart (s)</th><th>checkpoint (s)</th>"
          "<th>Young/Daly interval (steps)</th><th>useful epoch (s)</th><th>USD per useful "
          "epoch</th></tr>\n",
          out);
    for (int k = 0; k < nv; k++) {
        if (!goodput_asked(&v[k].scn)) continue;
        for (int i = 0; i < v[k].topo.ninst; i++) {
            double m[NFIELDS], x[NFIELDS];
            values_of(&v[k], i, &v[k].model, m);
            if (v[k].sim.m) values_of(&v[k], i, &v[k].sim, x);
            const double *g = v[k].sim.m ? x : m;
            fputs("<tr><td class=\"name\">", out);
            html_put_text(out, v[k].scn.variant);
            fputs("</td><td class=\"name\">", out);
            html_put_text(out, v[k].topo.inst[i].name);
            fputs("</td>", out);
            html_cell(out, 100 * m[F_GOOD], "%.1f%%");
            html_cell(out, v[k].sim.m ? 100 * x[F_GOOD] : NAN, "%.1f%%");
            html_cell(out, g[F_RESTARTS], "%.1f");
            html_cell(out, g[F_LOST] / 3600, "%.1f");
            html_cell(out, g[F_RESTART], "%.1f");
            html_cell(out, g[F_CHECKPOINT], "%.1f");
            html_cell(out, g[F_EVERY], "%.0f");
            html_cell(out, g[F_USEFUL], "%.1f");
            html_cell(out, g[F_COST], "%.4g");
            fputs("</tr>\n", out);
        }
    }
    fputs("</table>\n", out);
}
