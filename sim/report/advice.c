/* advice: see advice.h. */
#include "advice.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* Two limits within this fraction of each other both bind: lifting one gains little. */
#define BIND_TOGETHER 0.15
#define MAX_CORES     65536 /* server.cpus's bound */

/* Everything the advice works on, allocated once per variant. */
typedef struct {
    scenario_t s;
    topology_t t;
    run_metrics_t r;
    int epoch; /* the steady epoch (0-based) */
} whatif_t;

/* The model's steady epoch of instance 0 for w->s; 0, or -1 when the
 * changed scenario does not build (then no advice is given for it). */
static int model_at(whatif_t *w, epoch_metrics_t *m) {
    if (topology_build(&w->s, &w->t)) return -1;
    w->s.epochs = w->epoch + 1;
    metrics_free(&w->r);
    if (metrics_alloc(&w->r, w->t.ninst, w->epoch + 1)) return -1;
    model_run_from(&w->s, &w->t, &w->r, w->epoch);
    *m = *metrics_at(&w->r, 0, w->epoch);
    return 0;
}

/* T_prep with `cpus` cores a server (storage plays no part in it). */
static double prep_limit(whatif_t *w, const scenario_t *base, int64_t cpus) {
    w->s = *base;
    w->s.server.cpus = cpus;
    epoch_metrics_t m;
    return model_at(w, &m) ? INFINITY : m.t_prep_s;
}

/* The fewest cores a server for T_prep <= goal, or 0 when no number does
 * (jobs with their own cores, or a prep time that does not fall). */
static int64_t cores_for(whatif_t *w, const scenario_t *base, double goal) {
    int64_t lo = base->server.cpus, hi = lo;
    if (prep_limit(w, base, lo) <= goal) return lo;
    while (hi < MAX_CORES) {
        lo = hi;
        hi = hi * 2 < MAX_CORES ? hi * 2 : MAX_CORES;
        if (prep_limit(w, base, hi) <= goal) break;
    }
    if (prep_limit(w, base, hi) > goal) return 0;
    while (hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        if (prep_limit(w, base, mid) <= goal)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

static void one_variant(FILE *out, const variant_run_t *v, whatif_t *w) {
    const scenario_t *base = &v->scn;
    w->epoch = v->steady_from;
    w->s = *base;
    epoch_metrics_t now, free_prep;
    if (model_at(w, &now)) return;
    /* The storage of instance 0's first server serves every stream reading
     * through it (each job over S servers reads 1/S of its bytes there), or
     * every stream when the servers share one device. */
    double bytes = 0;
    const topology_t *t = &v->topo;
    for (int i = 0; i < t->ninst; i++) {
        const instance_t *in = &t->inst[i], *me = &t->inst[0];
        int here =
            base->server.storage.shared || (me->first_server >= in->first_server &&
                                            me->first_server < in->first_server + in->nservers);
        if (in->lead == i && here)
            bytes += metrics_at(&w->r, i, w->epoch)->storage_read_bytes /
                     (base->server.storage.shared ? 1 : in->nservers);
    }
    /* Storage alone: prep (decode and augment on the cores) free. */
    w->s = *base;
    w->s.prep.decode_ms_per_mb = w->s.prep.decode_ms_per_item = w->s.prep.augment_ms = 0;
    if (model_at(w, &free_prep)) return;

    const double T = now.epoch_s, Tg = now.t_gpu_s, Tp = now.t_prep_s, Ts = free_prep.epoch_s;
    const double util = T > 0 ? Tg / T : 1, goal = Tg / ADVICE_TARGET;
    fprintf(out, "%-10s GPU %.0f%% busy", base->variant, 100 * util);
    if (now.bottleneck == BN_GPU) {
        fputs(": the GPUs bind; more cores or faster storage would not help.\n", out);
        return;
    }
    const int net = free_prep.bottleneck == BN_NETWORK;
    const char *fetch = net ? "the network" : "storage",
               *fetch_cap = net ? "The network" : "Storage";
    const int prep_first = Tp >= Ts;
    const double a = prep_first ? Tp : Ts, b = prep_first ? Ts : Tp;
    if (util >= ADVICE_TARGET) {
        fprintf(out,
                ", %.0f%% or more: %s binds next, at %.0f s an epoch against %.0f s of GPU "
                "work.\n",
                100 * ADVICE_TARGET, prep_first ? "prep" : fetch, a, Tg);
        return;
    }
    /* What each needs for the target alone. */
    char cores[160], reads[160];
    int64_t c = cores_for(w, base, goal);
    if (c > 0)
        snprintf(cores, sizeof cores, "%lld cores a server (%.1f per GPU; %lld now)", (long long)c,
                 (double)c / (double)base->server.gpus, (long long)base->server.cpus);
    else
        snprintf(cores, sizeof cores, "a prep faster than more cores can make it");
    if (net)
        snprintf(reads, sizeof reads, "a faster network (it carries %.1f GB an epoch)",
                 now.network_bytes / 1e9);
    else
        snprintf(reads, sizeof reads, "%.2f GB/s of storage reads %s (%.2f now)",
                 bytes / goal / 1e9, base->server.storage.shared ? "in all" : "a server",
                 Ts > 0 ? bytes / Ts / 1e9 : 0);

    fprintf(out, ". %s limits you at %.0f s an epoch", prep_first ? "Prep" : fetch_cap, a);
    if (b > goal) {
        fprintf(out, ", and %s would at %.0f s", prep_first ? fetch : "prep", b);
        if (b >= (1 - BIND_TOGETHER) * a)
            fprintf(out,
                    ": the two bind within %.0f%% of each other, so lifting only %s gains at "
                    "most %.0f%%, only %s %.0f%%",
                    100 * (1 - b / a), prep_first ? "prep" : fetch, 100 * (1 - b / T),
                    prep_first ? fetch : "prep", 100 * (1 - a / T > 0 ? 1 - a / T : 0));
        fprintf(out, ". About %s and %s together reach %.0f%%.\n", prep_first ? cores : reads,
                prep_first ? reads : cores, 100 * ADVICE_TARGET);
    } else {
        fprintf(out, " (%s: %.0f s). About %s reach %.0f%%.\n", prep_first ? fetch : "prep", b,
                prep_first ? cores : reads, 100 * ADVICE_TARGET);
    }
}

void advice_write_text(FILE *out, const variant_run_t *v, int nv) {
    whatif_t *w = calloc(1, sizeof *w);
    if (!w) return;
    fprintf(out,
            "\nwhat to change (model, steady state, for %.0f%% GPU utilisation; the first "
            "job):\n",
            100 * ADVICE_TARGET);
    for (int k = 0; k < nv; k++)
        one_variant(out, &v[k], w);
    metrics_free(&w->r);
    free(w);
}
