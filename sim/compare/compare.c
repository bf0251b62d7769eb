/* compare: see compare.h. The prediction takes `run`'s path (run_build,
 * run_execute) with epochs set to the measured ones (the user's --set and
 * --epochs after, so they win); the figures are the simulator's, or the
 * model's with --model-only. One job instance, the first, stands for the
 * rank that measured (data-parallel ranks of a job share its epochs). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_out.h"
#include "fig.h"
#include "report.h"
#include "run.h"
#include "watchdog.h"

typedef struct {
    run_args_t a; /* first: the shared rows' offsets are into it */
    report_format_t format;
    double max_seconds; /* 0: no bound */
} compare_opts_t;

static const option_t compare_own_options[] = {
    {.name = "--format",
     .type = OPT_FN,
     .arg = "FMT",
     .offset = offsetof(compare_opts_t, format),
     .fn = report_format_parse,
     .help = "text (default), json or html (one page)"},
    WATCHDOG_OPTION(offsetof(compare_opts_t, max_seconds)),
    {0},
};

static const option_t *const compare_tables[] = {run_scenario_options, compare_own_options,
                                                 run_model_only_option, NULL};

const command_t compare_command = {
    .name = "compare",
    .synopsis = "MEASURED SCENARIO [options]",
    .about = "Holds a measured run (the profile stallsim.watch writes from your training loop,\n"
             "docs/watch.md) against the scenario's prediction of it: each epoch's time and\n"
             "stall side by side, the stall split when watch ran its differential passes, the\n"
             "epoch where they differ most and the input that most likely explains it.\n"
             "MEASURED comes first. The scenario runs as `run` runs it, with its epochs set\n"
             "to the measured ones (--epochs and --set still override).",
    .tables = compare_tables,
    .positional = "SCENARIO",
    .positional_offset = offsetof(compare_opts_t, a.file),
    .footer = "Keys of a measured profile: stallsim help measured. Bad input: file:line:col,\n"
              "the key, what was expected; exit 2.\n",
};

/* Batches of one epoch for the first instance's job: the items split over
 * its GPUs' batches, the last one partial. */
static long long pred_iterations(const variant_run_t *v) {
    const job_t *j = &v->scn.jobs[v->topo.inst[0].job];
    long long m = (long long)(j->gpus * j->batch_per_gpu);
    return m > 0 ? ((long long)v->scn.dataset.items + m - 1) / m : 0;
}

static double share(double part, double whole) {
    return whole > 0 ? part / whole : 0;
}

/* An epoch the loop left early is held against the same share of a
 * predicted epoch: its batches' part of each predicted time. Compared whole,
 * the batches never run counted as prediction error (+588 %). */
static void scale_partial(cmp_row_t *row, long long pred_iters) {
    if (pred_iters <= 0 || row->meas_iters >= pred_iters) return;
    double f = (double)row->meas_iters / (double)pred_iters;
    row->pred_s *= f, row->pred_gpu *= f, row->pred_prep *= f, row->pred_fetch *= f;
    row->pred_stall *= f;
    row->err = share(row->pred_s - row->meas_s, row->meas_s);
}

/* Each epoch side by side, and the epoch where the times differ most. */
static void fill_rows(const measured_t *m, const variant_run_t *v, cmp_t *c) {
    const run_metrics_t *r = v->sim.m ? &v->sim : &v->model;
    c->source = v->sim.m ? "sim" : "model";
    c->n = m->nepochs < r->nepochs ? m->nepochs : r->nepochs;
    c->pred_iters = pred_iterations(v);
    double worst = -1;
    int worst_whole = -1;
    for (int e = 0; e < c->n; e++) {
        const epoch_metrics_t *p = metrics_at(r, 0, e);
        const measured_epoch_t *me = &m->ep[e];
        cmp_row_t *row = &c->row[e];
        row->meas_iters = me->iterations;
        row->meas_s = me->epoch_s, row->pred_s = p->epoch_s;
        row->err = share(p->epoch_s - me->epoch_s, me->epoch_s);
        row->meas_stall = me->wait_s, row->meas_gpu = me->step_s;
        row->pred_gpu = p->t_gpu_s;
        /* Differences of sums leave 1e-17 s stalls: cleaned as run prints them. */
        row->pred_prep = fig_clean(p->prep_stall_s, FIG_TIME, p->epoch_s);
        row->pred_fetch = fig_clean(p->fetch_stall_s, FIG_TIME, p->epoch_s);
        row->pred_stall = fig_clean(p->epoch_s - p->t_gpu_s, FIG_TIME, p->epoch_s);
        row->complete = me->complete;
        if (!me->complete) scale_partial(row, c->pred_iters);
        c->meas_total += row->meas_s, c->pred_total += row->pred_s;
        /* A partial epoch is the worst only when no whole one was measured. */
        int whole = me->complete != 0;
        if (whole > worst_whole || (whole == worst_whole && fabs(row->err) > worst))
            worst = fabs(row->err), worst_whole = whole, c->worst = e;
    }
    c->total_err = share(c->pred_total - c->meas_total, c->meas_total);
}

/* The split per iteration: measured by watch's passes, predicted from the
 * last compared epoch (the steady one when there are several). */
static void fill_split(const measured_t *m, cmp_t *c) {
    c->has_split = m->diff_iterations > 0;
    c->m_t = m->t_ms, c->m_prep = m->t_prep_ms, c->m_gpu = m->t_gpu_ms;
    c->batch = (double)m->batch;
    if (!c->n || c->pred_iters <= 0) return;
    const cmp_row_t *row = &c->row[c->n - 1];
    double it = (double)c->pred_iters;
    c->p_t = 1e3 * row->pred_s / it;
    c->p_gpu = 1e3 * row->pred_gpu / it;
    c->p_prep = c->p_gpu + 1e3 * row->pred_prep / it;
}

/* The input that most likely explains the worst epoch's gap: the part of
 * the epoch (steps, prep stall, fetch stall, or the stall whole without the
 * split) whose measured and predicted seconds differ most, unless the
 * epochs are not the same work (batches per epoch differ). */
static void explain(const measured_t *m, cmp_t *c) {
    const cmp_row_t *w = &c->row[c->worst];
    double it = w->meas_iters > 0 ? (double)w->meas_iters : 1;
    if (w->complete && w->meas_iters != c->pred_iters) {
        c->input = "batches";
        c->in_meas = (double)w->meas_iters, c->in_pred = (double)c->pred_iters;
        return;
    }
    double d_gpu = w->pred_gpu - w->meas_gpu, best = fabs(d_gpu);
    c->input = "step";
    c->in_meas = 1e3 * w->meas_gpu / it, c->in_pred = 1e3 * w->pred_gpu / (double)c->pred_iters;
    if (!c->has_split) {
        if (fabs(w->pred_stall - w->meas_stall) > best) {
            c->input = "stall";
            c->in_meas = w->meas_stall, c->in_pred = w->pred_stall;
        }
        return;
    }
    /* The measured stall of the epoch, split as the passes split T. */
    double prep_share = share(fmax(m->t_prep_ms - m->t_gpu_ms, 0), m->t_ms);
    double fetch_share = share(fmax(m->t_ms - m->t_prep_ms, 0), m->t_ms);
    double d_prep = w->pred_prep - prep_share * w->meas_s;
    double d_fetch = w->pred_fetch - fetch_share * w->meas_s;
    if (fabs(d_prep) > best) {
        best = fabs(d_prep), c->input = "prep";
        c->in_meas = m->t_prep_ms, c->in_pred = c->p_prep;
    }
    if (fabs(d_fetch) > best) {
        c->input = "fetch";
        c->in_meas = m->t_ms - m->t_prep_ms, c->in_pred = c->p_t - c->p_prep;
    }
}

/* The prediction of the measured configuration: variant picked, epochs set. */
static int predict(const compare_opts_t *o, const measured_t *m, scenario_doc_t *doc,
                   variant_run_t *v) {
    int idx[SCN_MAX_VARIANTS + 1], nv = 0;
    int rc = scenario_doc_load(doc, o->a.file);
    if (!rc) rc = run_select(doc, "compare", o->a.only, o->a.nonly, idx, &nv);
    if (!rc && nv != 1) {
        fprintf(stderr,
                "stallsim compare: %s has %d variants: name the one the measured run was with "
                "--variant NAME\n",
                o->a.file, nv);
        return EXIT_INPUT;
    }
    assign_list_t sets = {0};
    char n[32];
    snprintf(n, sizeof n, "%d", m->nepochs);
    if (!rc) rc = assign_parse_key(&sets, "epochs", n);
    for (size_t i = 0; !rc && i < o->a.sets.n; i++) {
        const assign_t *a = &o->a.sets.v[i];
        rc = assign_push(&sets, a->key, a->value, a->pos, a->keypos, a->is_scalar);
    }
    if (!rc) rc = run_build(doc, &sets, idx[0], !o->a.model_only, v);
    if (!rc) rc = run_execute(v, !o->a.model_only);
    assign_list_free(&sets);
    return rc;
}

int compare_main(int argc, char **argv) {
    double t0 = watchdog_now(); /* --max-seconds counts from here */
    compare_opts_t o;
    memset(&o, 0, sizeof o);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        options_usage(stdout, &compare_command);
        return EXIT_OK;
    }
    if (argc < 2 || argv[1][0] == '-')
        return options_error("compare",
                             "expected the measured profile first: stallsim compare "
                             "MEASURED SCENARIO [options] (got '%s')",
                             argc < 2 ? "" : argv[1]);
    const char *measured_path = argv[1];
    int rc = options_parse(&compare_command, argc - 1, argv + 1, &o);
    if (rc == 1) {
        assign_list_free(&o.a.sets);
        return EXIT_OK; /* --help after the file */
    }
    if (!rc && !o.a.file) rc = options_error("compare", "missing the scenario file%s", "");
    if (!rc && o.format == FORMAT_CSV)
        rc = options_error("compare", "--format: expected text, json or html, got '%s'", "csv");
    /* Its simulation ran silent and unbounded (NH2). */
    if (!rc) rc = watchdog_start("compare", t0, o.max_seconds, 1);
    measured_t *m = rc ? NULL : malloc(sizeof *m);
    cmp_t *c = rc ? NULL : calloc(1, sizeof *c);
    if (!rc && (!m || !c)) rc = EXIT_RUNTIME;
    if (!rc) rc = compare_load(measured_path, m);
    scenario_doc_t doc = {0};
    variant_run_t v;
    memset(&v, 0, sizeof v);
    int built = 0;
    if (!rc) {
        rc = predict(&o, m, &doc, &v);
        built = 1;
    }
    if (!rc) {
        fill_rows(m, &v, c);
        fill_split(m, c);
        explain(m, c);
        c->measured_path = measured_path, c->scenario_path = o.a.file;
        c->variant = v.scn.variant, c->job = v.scn.jobs[v.topo.inst[0].job].name;
        rc = compare_write(stdout, o.format, m, c);
    }
    if (built) run_release(&v);
    if (built) scenario_doc_free(&doc);
    assign_list_free(&o.a.sets);
    free(m);
    free(c);
    return rc;
}
