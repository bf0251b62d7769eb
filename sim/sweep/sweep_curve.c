/* sweep_curve: see sweep_curve.h. */
#include "sweep_curve.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kinds.h"
#include "model.h"
#include "mrc.h"
#include "report.h"
#include "valid.h"
#include "sim.h"

enum { CHECKS = 3 }; /* configurations simulated in full: first, middle, last */

struct sweep_curve {
    sweep_build_fn build;
    void *ctx;
    int threads;
    int64_t n;
    uint64_t *caps;     /* [n]: each configuration's cache bytes, as the simulator takes them */
    variant_run_t base; /* configuration 0, built: the scenario the replay runs */
    mrc_t mrc;
    int64_t check[CHECKS];
    variant_run_t *sim[CHECKS]; /* the full runs */
    /* the pre-phase's work queue */
    pthread_mutex_t mu;
    int next, failed;
};

static int checked(const sweep_curve_t *cv, int64_t c) {
    for (int k = 0; k < CHECKS; k++)
        if (cv->check[k] == c) return k;
    return -1;
}

void sweep_curve_free(sweep_curve_t *cv) {
    if (!cv) return;
    for (int k = 0; k < CHECKS; k++)
        if (cv->sim[k]) {
            run_release(cv->sim[k]);
            free(cv->sim[k]);
        }
    mrc_free(&cv->mrc);
    free(cv->caps);
    free(cv);
}

int sweep_curve_plan(const sweep_grid_t *g, int variants, int threads, sweep_build_fn build,
                     void *ctx, sweep_curve_t **out) {
    *out = NULL;
    /* Four sizes or more: below that a curve saves nothing over the three
     * simulations that confirm it. */
    if (g->naxes != 1 || g->axes[0].is_variant || strcmp(g->axes[0].key, "server.cache_gb") != 0 ||
        variants != 1 || g->size < 4)
        return 0;
    sweep_curve_t *cv = calloc(1, sizeof *cv);
    if (!cv) return EXIT_RUNTIME;
    cv->build = build, cv->ctx = ctx, cv->threads = threads, cv->n = g->size;
    cv->caps = calloc((size_t)g->size, sizeof *cv->caps);
    if (!cv->caps) {
        free(cv);
        return EXIT_RUNTIME;
    }
    int rc = 0;
    for (int64_t c = 0; c < g->size && !rc; c++) {
        rc = build(ctx, c, &cv->base);
        if (!rc) cv->caps[c] = (uint64_t)scenario_cache_bytes(&cv->base.scn);
    }
    if (!rc) rc = build(ctx, 0, &cv->base);
    const char *why = rc ? NULL : mrc_inexact(&cv->base.scn, &cv->base.topo);
    /* Past sim.sample_above_items each size is a quick sampled run already. */
    if (!rc && !why && run_sampled(&cv->base.scn, &cv->base.topo))
        why = "more items than sim.sample_above_items: each size is a sampled run";
    if (rc || why) {
        if (why) fprintf(stderr, "stallsim sweep: note: every cache size simulated (%s)\n", why);
        free(cv->caps), free(cv);
        return rc;
    }
    cv->check[0] = 0, cv->check[1] = (g->size - 1) / 2, cv->check[2] = g->size - 1;
    *out = cv;
    return 0;
}

double sweep_curve_memory(const sweep_curve_t *cv, double largest, double *replay) {
    const double r = mrc_memory_bytes(&cv->base.scn, &cv->base.topo, 1, (int)cv->n);
    if (replay) *replay = r;
    const int nt = cv->threads < CHECKS + 1 ? cv->threads : CHECKS + 1;
    if (nt <= 1) return r > largest ? r : largest; /* one task at a time */
    const double with = r + (nt - 1) * largest, sims = (nt < CHECKS ? nt : CHECKS) * largest;
    return with > sims ? with : sims;
}

int sweep_curve_rows(const sweep_curve_t *cv, int64_t c) {
    return checked(cv, c) >= 0 ? 3 : 2;
}

/* Task 0 the replay, task k > 0 the full run of check[k - 1]. */
static int task(sweep_curve_t *cv, int k) {
    if (k == 0) {
        int rc = mrc_run(&cv->base.scn, &cv->base.topo, cv->caps, (int)cv->n, &cv->mrc);
        if (rc) fprintf(stderr, "stallsim sweep: cannot allocate the cache-size curve's replay\n");
        return rc ? EXIT_RUNTIME : 0;
    }
    variant_run_t *v = calloc(1, sizeof *v);
    if (!v) return EXIT_RUNTIME;
    cv->sim[k - 1] = v;
    int rc = cv->build(cv->ctx, cv->check[k - 1], v);
    return rc ? rc : run_execute(v, 1);
}

static void *worker(void *arg) {
    sweep_curve_t *cv = arg;
    for (;;) {
        pthread_mutex_lock(&cv->mu);
        int k = cv->failed ? CHECKS + 1 : cv->next++;
        pthread_mutex_unlock(&cv->mu);
        if (k > CHECKS) break;
        int rc = task(cv, k);
        if (rc) {
            pthread_mutex_lock(&cv->mu);
            if (!cv->failed) cv->failed = rc;
            pthread_mutex_unlock(&cv->mu);
        }
    }
    return NULL;
}

typedef struct {
    const sweep_curve_t *cv;
    const topology_t *t;
    int c;
} hits_ctx_t;

static double curve_hits(void *ctx, int i, int e, double *hu) {
    const hits_ctx_t *h = ctx;
    return mrc_profile(&h->cv->mrc, h->t, h->c, i, e, hu);
}

/* The model's timings from the curve's hits at configuration c (v built). */
static int curve_metrics(const sweep_curve_t *cv, int64_t c, const variant_run_t *v,
                         run_metrics_t *r) {
    if (metrics_alloc(r, v->topo.ninst, (int)v->scn.epochs)) return EXIT_RUNTIME;
    hits_ctx_t h = {cv, &v->topo, (int)c};
    model_run_hits(&v->scn, &v->topo, curve_hits, &h, r);
    return 0;
}

int sweep_curve_run(sweep_curve_t *cv) {
    pthread_mutex_init(&cv->mu, NULL);
    int tasks = CHECKS + 1, nt = cv->threads < tasks ? cv->threads : tasks;
    pthread_t th[CHECKS + 1];
    int started = 0;
    for (; started < nt; started++)
        if (pthread_create(&th[started], NULL, worker, cv)) break;
    if (started == 0) worker(cv);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&cv->mu);
    if (cv->failed) return cv->failed;
    /* The curve against the full runs: hits must agree exactly, timings are the model's. */
    double dh = 0, dt = 0;
    for (int k = 0; k < CHECKS; k++) {
        const variant_run_t *v = cv->sim[k];
        run_metrics_t r;
        if (curve_metrics(cv, cv->check[k], v, &r)) return EXIT_RUNTIME;
        for (int i = 0; i < v->topo.ninst; i++)
            for (int e = 0; e < v->scn.epochs; e++) {
                const epoch_metrics_t *a = metrics_at(&r, i, e), *b = metrics_at(&v->sim, i, e);
                double h = fabs(a->hit_rate - b->hit_rate), t = fabs(a->epoch_s / b->epoch_s - 1);
                if (h > dh) dh = h;
                if (t > dt) dt = t;
            }
        metrics_free(&r);
    }
    fprintf(stderr,
            "stallsim sweep: server.cache_gb from one cache-size curve (%s, one replay of the "
            "simulator's accesses): rows with source curve have its hit rates and the model's "
            "timings from them; configurations %lld, %lld and %lld also simulated in full "
            "(source sim): hit rate differs by at most %.3g pp, epoch time by at most %.2f%%\n",
            scenario_cache(&cv->base.scn)->name, (long long)cv->check[0], (long long)cv->check[1],
            (long long)cv->check[2], dh * 100, dt * 100);
    if (dh > 1e-9)
        fprintf(stderr, "stallsim sweep: warning: the curve's hit rates are not the simulator's "
                        "here; rerun with --no-curve\n");
    return 0;
}

int sweep_curve_config(const sweep_curve_t *cv, int64_t c, variant_run_t *v, FILE *m,
                       const char *prefix) {
    int rc = cv->build(cv->ctx, c, v);
    if (!rc) rc = run_execute(v, 0);
    if (!rc) rc = report_valid_runs(v, 1, "sweep");
    run_metrics_t r = {0};
    if (!rc) rc = curve_metrics(cv, c, v, &r);
    int k = checked(cv, c);
    for (int i = 0; !rc && i < v->topo.ninst; i++)
        for (int e = 0; e < v->scn.epochs; e++) {
            const char *job = v->topo.inst[i].name;
            const epoch_metrics_t *mm = metrics_at(&v->model, i, e);
            report_csv_row(m, prefix, v->scn.variant, job, e + 1, "model", mm, NULL);
            if (k >= 0)
                report_csv_row(m, prefix, v->scn.variant, job, e + 1, "sim",
                               metrics_at(&cv->sim[k]->sim, i, e), mm);
            report_csv_row(m, prefix, v->scn.variant, job, e + 1, "curve", metrics_at(&r, i, e),
                           mm);
        }
    metrics_free(&r);
    run_release(v);
    return rc;
}
