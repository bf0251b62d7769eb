/* advice: see advice.h. */
#include "advice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "advice_find.h"
#include "kinds.h"
#include "report.h"

#define GPU_PREP_SAID 0.01 /* the GPUs' own prep is said past this share of the epoch */

/* What each bottleneck is, in a user's words. */
static const char *const what_binds[BN__COUNT] = {
    [BN_GPU] = "the GPUs",
    [BN_CHECKPOINT] = "the job's checkpoints (the GPUs wait while each is written)",
    [BN_PREP] = "prep (the cores, or the loader's workers, that decode and augment)",
    [BN_GIL] = "the interpreter lock the loader's threads share",
    [BN_MEM_BW] = "the server's memory bandwidth",
    [BN_LOADER] = "the loader's own work (worker start-up, collation, hand-over)",
    [BN_STORAGE_BW] = "storage bandwidth",
    [BN_STORAGE_IOPS] = "storage IOPS",
    [BN_REQ_RATE] = "the store's request rate (GET/s caps)",
    [BN_IN_FLIGHT] = ("reads in flight x latency (each worker or reader holds its reads "
                      "until they arrive)"),
    [BN_NETWORK] = "the network",
    [BN_TIER] = "the local tier",
};

/* The share of the epoch the training GPUs spend on their own prep: it is
 * prep, not training (DS-Analyzer's T_gpu excludes it), so say it beside
 * the GPU's busy share, which counts training alone. */
static void gpu_prep_clause(FILE *out, const scenario_t *s, const epoch_metrics_t *m) {
    if (!(m->epoch_s > 0) || m->gpu_prep_s < GPU_PREP_SAID * m->epoch_s) return;
    fprintf(out,
            " training, and %.0f%% on its own prep (decode or augment on the GPU%s: %.1f s an "
            "epoch beside %.1f s of training)",
            100 * m->gpu_prep_s / m->epoch_s,
            scenario_hw_decode_share(s) > 0 ? ", waits on its hardware JPEG decoder included" : "",
            m->gpu_prep_s, m->t_gpu_s);
}

static const char *bn_name(int b) {
    return b >= 0 && b < BN__COUNT ? bottleneck_names[b] : "?";
}

/* "loader.num_workers: 32 (8 now), ..." */
static void keys_text(FILE *out, const advice_t *a) {
    for (int i = 0; i < a->n; i++)
        fprintf(out, "%s%s: %s (%s now)", i ? ", " : "", a->key[i], a->value[i], a->was[i]);
}

/* What the configuration gave: the simulator's figure, the model's beside. */
static void result_text(FILE *out, const advice_t *a) {
    if (isfinite(a->sim_util))
        fprintf(out, "GPU %.0f%% (simulated, epoch %d %.3g s; model %.0f%%)", 100 * a->sim_util,
                a->epoch + 1, a->epoch_s, 100 * a->model_util);
    else
        fprintf(out, "GPU %.0f%% (model alone, not simulated)", 100 * a->model_util);
}

/* Why a limit cannot be lifted with the keys: the kind's words where it has them. */
static void stop_text(FILE *out, const scenario_t *s, const advice_t *a) {
    char why[512] = "";
    const loader_ops_t *l = scenario_loader(s);
    const int on_gpu = s->prep.decode == DECODE_GPU || s->prep.on_gpu;
    if ((a->stop == BN_GIL || a->stop == BN_PREP) && l->prep_bound)
        l->prep_bound(s, &s->jobs[0], why, sizeof why);
    if (!why[0] && a->stop == BN_PREP && on_gpu && !(s->prep.decode_ms_per_mb > 0) &&
        !(s->prep.decode_ms_per_item > 0))
        snprintf(why, sizeof why,
                 "the GPUs' own prep binds; a faster prep on the GPU (a hardware JPEG decoder), "
                 "or its CPU costs given (prep.decode_ms_per_mb) to price prep on the CPU");
    if (a->n > 0)
        fprintf(out, "%s binds then, and no key the search can turn lifted it further",
                bn_name(a->stop));
    else
        fprintf(out, "No key stallsim can turn lifts %s", bn_name(a->stop));
    fprintf(out, "%s%s", why[0] ? ": " : "", why);
}

static void one_variant(FILE *out, const variant_run_t *v, int width) {
    const advice_t *a = v->advice;
    if (!a) return;
    const epoch_metrics_t *m = metrics_at(v->sim.m ? &v->sim : &v->model, 0, a->epoch);
    fprintf(out, "%-*s GPU %.0f%% busy", width, v->scn.variant, 100 * a->util);
    gpu_prep_clause(out, &v->scn, m);
    if (a->status == ADVICE_GPU) {
        fputs(": the GPUs bind; more cores or faster storage would not help.\n", out);
        return;
    }
    if (a->status == ADVICE_MET) {
        fprintf(out, ", %.0f%% or more: %s binds next.\n", 100 * a->target, bn_name(a->binds));
        return;
    }
    fprintf(out, "; what binds: %s. ", what_binds[a->binds]);
    if (a->status == ADVICE_FOUND) {
        fputs("Set ", out);
        keys_text(out, a);
        fputs(": ", out);
        result_text(out, a);
        fputs(".\n", out);
        return;
    }
    if (a->n > 0) {
        fputs("As far as the keys go: ", out);
        keys_text(out, a);
        fputs(": ", out);
        result_text(out, a);
        fputs("; ", out);
    }
    stop_text(out, &v->scn, a);
    fputs(".\n", out);
}

void advice_write_text(FILE *out, const variant_run_t *v, int nv) {
    int any = 0;
    for (int k = 0; k < nv; k++)
        any |= v[k].advice != NULL;
    if (!any) return;
    fprintf(out,
            "\nwhat to change (for %.0f%% GPU utilisation in the last epoch, the first job; "
            "searched with the model, then the configuration printed simulated):\n",
            100 * ADVICE_TARGET);
    const int width = report_variant_width(v, nv);
    for (int k = 0; k < nv; k++)
        one_variant(out, &v[k], width);
}

void advice_line(FILE *out, const variant_run_t *v) {
    one_variant(out, v, report_variant_width(v, 1));
}

static const char *const status_names[] = {"none", "gpu", "met", "found", "short"};

void advice_json(out_json_t *j, const variant_run_t *v) {
    const advice_t *a = v->advice;
    if (!a) return;
    out_jobj(j, "advice");
    out_jstr(j, "status", status_names[a->status]);
    out_jnum(j, "target", "%.6f", a->target);
    out_jint(j, "epoch", a->epoch + 1);
    out_jnum(j, "gpu_util", "%.6f", a->util);
    out_jstr(j, "binds", bn_name(a->binds));
    out_jobj(j, "set");
    for (int i = 0; i < a->n; i++)
        out_jstr(j, a->key[i], a->value[i]);
    out_jend(j);
    if (a->n > 0) {
        out_jnum(j, "model_gpu_util", "%.6f", a->model_util);
        if (isfinite(a->sim_util)) out_jnum(j, "sim_gpu_util", "%.6f", a->sim_util);
        out_jnum(j, "epoch_s", "%.9g", a->epoch_s);
        out_jstr(j, "then_binds", bn_name(a->then_binds));
    }
    if (a->stop >= 0) out_jstr(j, "stops_it", bn_name(a->stop));
    out_jend(j);
}
