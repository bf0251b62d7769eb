/* gap: see gap.h. */
#include "gap.h"

#include <math.h>
#include <string.h>

#include "fig.h"

double gap_rel(const epoch_metrics_t *sim, const epoch_metrics_t *model) {
    if (!sim || !model || !(model->epoch_s > 0)) return 0;
    return (sim->epoch_s - model->epoch_s) / model->epoch_s;
}

int gap_marked(double rel) {
    return fabs(rel) > GAP_MARK;
}

/* Batches one epoch of instance i gives its GPUs (the last one partial). */
static double epoch_batches(const variant_run_t *v, int i) {
    const job_t *j = &v->scn.jobs[v->topo.inst[i].job];
    double global = (double)(j->gpus * j->batch_per_gpu);
    return ceil((double)v->scn.dataset.items / global);
}

/* The mechanism behind a gap, where one is known: "" where none is. */
static void mechanism(char *b, size_t n, const variant_run_t *v, int i, const epoch_metrics_t *sim,
                      const epoch_metrics_t *model) {
    double batches = epoch_batches(v, i);
    char h1[32], h2[32];
    b[0] = 0;
    if (batches <= 10)
        snprintf(b, n,
                 "the epoch is only %.0f batch%s, so the pipeline's fill and drain, which the "
                 "model's steady rates leave out, are much of it",
                 batches, batches == 1 ? "" : "es");
    else if (fabs(sim->hit_rate - model->hit_rate) > 0.02)
        snprintf(b, n, "the cache serves %s%% of the reads in the simulator, %s%% in the model",
                 fig(h1, sizeof h1, 100 * sim->hit_rate, 1),
                 fig(h2, sizeof h2, 100 * model->hit_rate, 1));
    else if (model->approximate)
        snprintf(b, n, "the model's figure has no exact closed form here (~ on its epoch_s)");
}

/* A note per variant whose simulator and model name different bottlenecks
 * in some row (within GAP_WARN: past it the warning says both). */
static void label_notes(FILE *out, const variant_run_t *v) {
    if (!v->sim.m) return;
    int n = 0, wi = -1, we = -1;
    for (int i = 0; i < v->topo.ninst; i++)
        for (int e = 0; e < v->scn.epochs; e++) {
            const epoch_metrics_t *s = metrics_at(&v->sim, i, e), *m = metrics_at(&v->model, i, e);
            if (s->bottleneck == m->bottleneck || fabs(gap_rel(s, m)) > GAP_WARN) continue;
            if (n++ == 0) wi = i, we = e;
        }
    if (n == 0) return;
    const epoch_metrics_t *s = metrics_at(&v->sim, wi, we), *m = metrics_at(&v->model, wi, we);
    fprintf(out,
            "note: the simulator and the model name different bottlenecks (variant %s, job %s, "
            "epoch %d%s): the simulator %s, the model %s (the advice is proven on the simulator)\n",
            v->scn.variant[0] ? v->scn.variant : "-", v->topo.inst[wi].name, we + 1,
            n > 1 ? ", and other rows" : "", bottleneck_names[s->bottleneck],
            bottleneck_names[m->bottleneck]);
}

void gap_write_warnings(FILE *out, const variant_run_t *v, int nv) {
    for (int k = 0; k < nv; k++)
        label_notes(out, &v[k]);
    for (int k = 0; k < nv; k++) {
        if (!v[k].sim.m) continue;
        int wi = -1, we = -1, over = 0;
        double worst = 0;
        for (int i = 0; i < v[k].topo.ninst; i++)
            for (int e = 0; e < v[k].scn.epochs; e++) {
                double g = gap_rel(metrics_at(&v[k].sim, i, e), metrics_at(&v[k].model, i, e));
                if (fabs(g) <= GAP_WARN) continue;
                over++;
                if (fabs(g) > fabs(worst)) worst = g, wi = i, we = e;
            }
        if (wi < 0) continue;
        const epoch_metrics_t *s = metrics_at(&v[k].sim, wi, we),
                              *m = metrics_at(&v[k].model, wi, we);
        char why[256], more[64] = "";
        mechanism(why, sizeof why, &v[k], wi, s, m);
        if (over > 1) snprintf(more, sizeof more, "; %d rows over %.0f %%", over, 100 * GAP_WARN);
        fprintf(out,
                "warning: the simulator and the model differ by %.0f %% here (variant %s, job "
                "%s, epoch %d%s): the simulator is %s (%.4g s against %.4g s); it names %s the "
                "bottleneck, the model %s; %s\n",
                100 * fabs(worst), v[k].scn.variant[0] ? v[k].scn.variant : "-",
                v[k].topo.inst[wi].name, we + 1, more, worst > 0 ? "slower" : "faster", s->epoch_s,
                m->epoch_s, bottleneck_names[s->bottleneck], bottleneck_names[m->bottleneck],
                why[0] ? why : "mechanism not identified");
    }
}
