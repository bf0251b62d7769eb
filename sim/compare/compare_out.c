/* compare_out: see compare_out.h. */
#include "compare_out.h"

#include <math.h>
#include <string.h>

#include "html.h"
#include "svg.h"

/* part / whole first: 100 * part overflowed to inf at part 1e308. */
static double pct(double part, double whole) {
    return whole > 0 ? part / whole * 100 : 0;
}

/* The explanation of the worst epoch, in words (all three formats). */
static void explain_text(const cmp_t *c, char *b, size_t n) {
    const char *in = c->input;
    double mv = c->in_meas, pv = c->in_pred;
    if (!strcmp(in, "batches"))
        snprintf(b, n,
                 "the batches per epoch: %.0f measured, %.0f in the scenario (dataset.items / "
                 "(jobs.0.gpus x jobs.0.batch_per_gpu)): the epochs are not the same work",
                 mv, pv);
    else if (!strcmp(in, "step"))
        snprintf(b, n,
                 "the step: %.3f ms a batch measured (step_s / iterations), %.3f ms in the "
                 "scenario (jobs.0.compute_s_per_batch, or batch_per_gpu / gpu_items_per_s); "
                 "--set jobs.0.compute_s_per_batch=%.6g predicts with the measured one",
                 mv, pv, mv / 1e3);
    else if (!strcmp(in, "stall"))
        snprintf(b, n,
                 "the input pipeline: the loop waited %.3f s for batches, the scenario %.3f s "
                 "(prep: prep.*, server.cpus, loader.num_workers; fetch: server.storage.*, the "
                 "cache); watch(..., differential=300) tells prep from fetch",
                 mv, pv);
    else if (!strcmp(in, "prep"))
        snprintf(
            b, n,
            "prep: with the items in memory an iteration took %.3f ms measured (%.0f items/s), "
            "%.3f ms in the scenario (%.0f items/s): prep.* costs, server.cpus, "
            "loader.num_workers (stallsim-probe times them on this host)",
            mv, mv > 0 ? c->batch * 1e3 / mv : 0, pv, pv > 0 ? c->batch * 1e3 / pv : 0);
    else
        snprintf(b, n,
                 "fetch: reading added %.3f ms an iteration measured, %.3f ms in the scenario: "
                 "server.storage.*, loader.cache, server.cache_gb",
                 mv, pv);
}

static void text_split(FILE *out, const measured_t *m, const cmp_t *c) {
    fprintf(out, "\nstall split, per iteration: %10s %10s %10s %11s %12s\n", "T_ms", "T_prep_ms",
            "T_gpu_ms", "prep_stall", "fetch_stall");
    if (c->has_split)
        fprintf(out, "  %-26s%10.3f %10.3f %10.3f %10.1f%% %11.1f%%\n", "measured (watch)", c->m_t,
                c->m_prep, c->m_gpu, pct(fmax(c->m_prep - c->m_gpu, 0), c->m_t),
                pct(fmax(c->m_t - c->m_prep, 0), c->m_t));
    else
        fprintf(out, "  %-26snot split (watch(..., differential=300) runs the passes)\n",
                "measured");
    char head[40];
    snprintf(head, sizeof head, "predicted (epoch %d)", c->n);
    fprintf(out, "  %-26s%10.3f %10.3f %10.3f %10.1f%% %11.1f%%\n", head, c->p_t, c->p_prep,
            c->p_gpu, pct(c->p_prep - c->p_gpu, c->p_t), pct(c->p_t - c->p_prep, c->p_t));
    if (c->has_split)
        fprintf(out, "  (watch's passes: %lld iterations each; T_prep: %s)\n", m->diff_iterations,
                m->t_prep_method[0] ? m->t_prep_method : "not said");
}

static void write_text(FILE *out, const measured_t *m, const cmp_t *c) {
    fprintf(out, "stallsim compare: %s (%s on %s, rank %lld of %lld, batch %lld)\n",
            c->measured_path, m->tool[0] ? m->tool : "?", m->host[0] ? m->host : "?", m->rank,
            m->world_size, m->batch);
    fprintf(out, "  against %s (variant %s, job %s; the %s)\n\n", c->scenario_path,
            c->variant[0] ? c->variant : "-", c->job,
            !strcmp(c->source, "sim") ? "simulator" : "analytical model");
    fprintf(out, "%5s %15s %11s %11s %8s %11s %11s %10s %10s\n", "epoch", "batches m/p",
            "measured_s", "predicted_s", "error", "meas_stall", "pred_stall", "pred_prep",
            "pred_fetch");
    for (int e = 0; e < c->n; e++) {
        const cmp_row_t *r = &c->row[e];
        char it[40];
        snprintf(it, sizeof it, "%lld/%lld%s", r->meas_iters, c->pred_iters,
                 r->complete ? "" : "*");
        fprintf(out, "%5d %15s %11.3f %11.3f %+7.1f%% %10.1f%% %10.1f%% %9.1f%% %9.1f%%\n", e + 1,
                it, r->meas_s, r->pred_s, 100 * r->err, pct(r->meas_stall, r->meas_s),
                pct(r->pred_stall, r->pred_s), pct(r->pred_prep, r->pred_s),
                pct(r->pred_fetch, r->pred_s));
    }
    fprintf(out, "%5s %15s %11.3f %11.3f %+7.1f%%\n", "all", "", c->meas_total, c->pred_total,
            100 * c->total_err);
    text_split(out, m, c);
    const cmp_row_t *w = &c->row[c->worst];
    char why[768];
    explain_text(c, why, sizeof why);
    fprintf(out, "\ndiffers most: epoch %d, predicted %+.1f%% (%.3f s against %.3f s measured)\n",
            c->worst + 1, 100 * w->err, w->pred_s, w->meas_s);
    fprintf(out, "most likely: %s\n", why);
    for (int e = 0; e < c->n; e++)
        if (!c->row[e].complete) {
            fputs("(*: the loop left that epoch early; its batches are fewer, and its prediction "
                  "is that share of a predicted epoch)\n",
                  out);
            break;
        }
}

/* A number, never "-0" (the writer puts null where it is not finite). */
static void jnum(out_json_t *j, const char *key, double v) {
    out_jnum(j, key, "%.9g", v == 0 ? 0 : v);
}

static void json_ms(out_json_t *j, const char *key, double t, double t_prep, double t_gpu) {
    out_jobj(j, key);
    jnum(j, "t", t);
    jnum(j, "t_prep", t_prep);
    jnum(j, "t_gpu", t_gpu);
    out_jend(j);
}

static void json_epoch(out_json_t *j, const cmp_t *c, int e) {
    const cmp_row_t *r = &c->row[e];
    out_jbreak(j, "\n    ");
    out_jobj(j, NULL);
    out_jint(j, "epoch", e + 1);
    out_jobj(j, "measured");
    out_jint(j, "batches", r->meas_iters);
    out_jbool(j, "complete", r->complete);
    jnum(j, "epoch_s", r->meas_s);
    jnum(j, "stall_s", r->meas_stall);
    jnum(j, "step_s", r->meas_gpu);
    out_jend(j);
    out_jobj(j, "predicted");
    out_jint(j, "batches", c->pred_iters);
    jnum(j, "epoch_s", r->pred_s);
    jnum(j, "stall_s", r->pred_stall);
    jnum(j, "t_gpu_s", r->pred_gpu);
    jnum(j, "prep_stall_s", r->pred_prep);
    jnum(j, "fetch_stall_s", r->pred_fetch);
    out_jend(j);
    jnum(j, "error", r->err);
    out_jend(j);
}

/* What was compared with what, and each epoch's figures. */
static void json_head(out_json_t *j, const measured_t *m, const cmp_t *c) {
    out_jbreak(j, "\n  ");
    out_jstr(j, "measured", c->measured_path);
    out_jstr(j, "scenario", c->scenario_path);
    out_jstr(j, "variant", c->variant);
    out_jstr(j, "job", c->job);
    out_jstr(j, "source", c->source);
    out_jbreak(j, "\n  ");
    out_jint(j, "rank", m->rank);
    out_jint(j, "world_size", m->world_size);
    out_jint(j, "batch", m->batch);
    out_jbreak(j, "\n  ");
    out_jarr(j, "epochs");
    for (int e = 0; e < c->n; e++)
        json_epoch(j, c, e);
    out_jbreak(j, "\n  ");
    out_jend(j);
}

static void write_json(FILE *out, const measured_t *m, const cmp_t *c) {
    out_json_t j;
    out_json_begin(&j, out);
    out_jobj(&j, NULL);
    json_head(&j, m, c);
    out_jbreak(&j, "\n  ");
    out_jobj(&j, "total");
    jnum(&j, "measured_s", c->meas_total);
    jnum(&j, "predicted_s", c->pred_total);
    jnum(&j, "error", c->total_err);
    out_jend(&j);
    out_jbreak(&j, "\n  ");
    out_jobj(&j, "split_ms");
    if (c->has_split)
        json_ms(&j, "measured", c->m_t, c->m_prep, c->m_gpu);
    else
        out_jnull(&j, "measured");
    json_ms(&j, "predicted", c->p_t, c->p_prep, c->p_gpu);
    out_jend(&j);
    out_jbreak(&j, "\n  ");
    out_jobj(&j, "worst");
    out_jint(&j, "epoch", c->worst + 1);
    jnum(&j, "error", c->row[c->worst].err);
    out_jend(&j);
    char why[768];
    explain_text(c, why, sizeof why);
    out_jbreak(&j, "\n  ");
    out_jobj(&j, "explain");
    out_jstr(&j, "input", c->input);
    jnum(&j, "measured", c->in_meas);
    jnum(&j, "predicted", c->in_pred);
    out_jstr(&j, "text", why);
    out_jend(&j);
    out_jbreak(&j, "\n");
    out_jend(&j);
    fputc('\n', out);
}

static void write_html(FILE *out, const measured_t *m, const cmp_t *c) {
    html_begin(out, "stallsim compare");
    fputs("<h1>Measured against predicted</h1>\n<p>", out);
    html_put_text(out, c->measured_path);
    fprintf(out, " (rank %lld of %lld, batch %lld) against ", m->rank, m->world_size, m->batch);
    html_put_text(out, c->scenario_path);
    fprintf(out, " (job ");
    html_put_text(out, c->job);
    fprintf(out, "; the %s).</p>\n", !strcmp(c->source, "sim") ? "simulator" : "model");
    double y[2 * MEASURED_MAX_EPOCHS];
    char lab[MEASURED_MAX_EPOCHS][12];
    const char *labels[MEASURED_MAX_EPOCHS];
    for (int e = 0; e < c->n; e++) {
        y[e] = c->row[e].meas_s, y[c->n + e] = c->row[e].pred_s;
        snprintf(lab[e], sizeof lab[e], "%d", e + 1);
        labels[e] = lab[e];
    }
    svg_series_t s[2] = {{"measured", svg_color(0)}, {"predicted", svg_color(1)}};
    svg_chart_t ch = {"Epoch time", "epoch", "epoch time (s)", 0, 0, 0, 0};
    svg_lines(out, &ch, c->n, NULL, labels, 2, s, y);
    fputs("<table>\n<tr><th>epoch</th><th>batches m/p</th><th>measured s</th><th>predicted "
          "s</th><th>error</th><th>measured stall</th><th>predicted stall</th></tr>\n",
          out);
    for (int e = 0; e < c->n; e++) {
        const cmp_row_t *r = &c->row[e];
        fprintf(out,
                "<tr><td>%d</td><td>%lld/%lld</td><td>%.3f</td><td>%.3f</td><td>%+.1f%%</td>"
                "<td>%.1f%%</td><td>%.1f%%</td></tr>\n",
                e + 1, r->meas_iters, c->pred_iters, r->meas_s, r->pred_s, 100 * r->err,
                pct(r->meas_stall, r->meas_s), pct(r->pred_stall, r->pred_s));
    }
    fputs("</table>\n<h2>Where they differ most</h2>\n<p>", out);
    char why[768];
    explain_text(c, why, sizeof why);
    fprintf(out, "Epoch %d, predicted %+.1f%%. Most likely: ", c->worst + 1,
            100 * c->row[c->worst].err);
    html_put_text(out, why);
    fputs("</p>\n", out);
    html_end(out);
}

int compare_write(FILE *out, report_format_t fmt, const measured_t *m, const cmp_t *c) {
    if (fmt == FORMAT_JSON)
        write_json(out, m, c);
    else if (fmt == FORMAT_HTML)
        write_html(out, m, c);
    else
        write_text(out, m, c);
    return fflush(out) == 0 && !ferror(out) ? 0 : EXIT_RUNTIME;
}
