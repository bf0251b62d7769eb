/* augment_bench: see augment_bench.h. */
#include "augment_bench.h"

#include <gsl/gsl_rng.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "augment.h"
#include "clock.h"
#include "progress.h"

typedef struct {
    const aug_image *imgs;
    const aug_params *params;
    int nimg, items;
    atomic_int next;
    pthread_barrier_t start;
    double t_start[256], t_end[256]; /* per worker */
} aug_job;

typedef struct {
    aug_job *job;
    int id;
} worker_arg;

static void *aug_worker(void *arg) {
    aug_job *job = ((worker_arg *)arg)->job;
    int id = ((worker_arg *)arg)->id;
    float *out = malloc(sizeof(float) * 3 * AUG_OUT * AUG_OUT);
    pthread_barrier_wait(&job->start);
    job->t_start[id] = clock_now();
    int i;
    while (out && (i = atomic_fetch_add(&job->next, 1)) < job->items) {
        const aug_image *im = &job->imgs[i % job->nimg];
        augment_cpu(im->px, im->w, im->h, &job->params[i], AUG_OUT, AUG_OUT, out);
    }
    job->t_end[id] = clock_now();
    int ok = out != NULL;
    free(out);
    return ok ? job : NULL;
}

/* Elapsed from the first worker's start to the last one's end (the main
 * thread may be scheduled late on a small host). */
static double run_pass(aug_job *job, int threads) {
    pthread_t tid[256];
    worker_arg wa[256];
    atomic_store(&job->next, 0);
    if (pthread_barrier_init(&job->start, NULL, (unsigned)threads + 1) != 0) return -1.0;
    for (int t = 0; t < threads; t++) {
        wa[t] = (worker_arg){job, t};
        if (pthread_create(&tid[t], NULL, aug_worker, &wa[t]) != 0) {
            fprintf(stderr, "calibrate: cannot start %d augment threads\n", threads);
            abort(); /* the barrier would wait forever */
        }
    }
    pthread_barrier_wait(&job->start);
    int ok = 1;
    for (int t = 0; t < threads; t++) {
        void *r;
        pthread_join(tid[t], &r);
        ok &= r != NULL;
    }
    double t0 = job->t_start[0], t1 = job->t_end[0];
    for (int t = 1; t < threads; t++) {
        if (job->t_start[t] < t0) t0 = job->t_start[t];
        if (job->t_end[t] > t1) t1 = job->t_end[t];
    }
    double el = t1 - t0;
    pthread_barrier_destroy(&job->start);
    return ok ? el : -1.0;
}

int augment_bench(const aug_image *imgs, int nimg, int items, int max_threads, int reps,
                  unsigned long seed, augment_result *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (nimg < 1 || items < 1 || reps < 1 || reps > 64 || max_threads < 1 || max_threads > 256) {
        snprintf(err, errlen, "augment: bad arguments");
        return -1;
    }
    aug_params *params = malloc(sizeof *params * (size_t)items);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!params || !rng) {
        free(params);
        if (rng) gsl_rng_free(rng);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    gsl_rng_set(rng, seed);
    for (int i = 0; i < items; i++)
        aug_draw_params(rng, imgs[i % nimg].w, imgs[i % nimg].h, &params[i]);
    gsl_rng_free(rng);

    int counts[AUG_MAX_CURVE], np = 0;
    for (int t = 1; t <= max_threads && np < AUG_MAX_CURVE; t = t < 8 ? t + 1 : t * 2)
        counts[np++] = t;
    if (counts[np - 1] != max_threads && np < AUG_MAX_CURVE) counts[np++] = max_threads;

    aug_job job = {.imgs = imgs, .params = params, .nimg = nimg, .items = items};
    atomic_init(&job.next, 0);
    int rc = 0;
    if (run_pass(&job, 1) < 0) rc = -1; /* warm-up: caches, page faults of the outputs */
    for (int k = 0; k < np && rc == 0; k++) {
        double rate[64], ms[64];
        for (int r = 0; r < reps; r++) {
            double el = run_pass(&job, counts[k]);
            if (el <= 0.0) {
                rc = -1;
                break;
            }
            rate[r] = items / el;
            ms[r] = el * 1e3 / items;
        }
        if (rc) break;
        augment_point *pt = &out->curve[k];
        pt->threads = counts[k];
        pt->items_s = stats_summarize(rate, reps);
        pt->speedup = pt->items_s.median / out->curve[0].items_s.median;
        if (k == 0) {
            out->ms_per_item = stats_summarize(ms, reps);
            pt->speedup = 1.0;
        }
        progress("augment: %d thread%s: %.0f items/s (x%.2f)", counts[k], counts[k] > 1 ? "s" : "",
                 pt->items_s.median, pt->speedup);
    }
    free(params);
    if (rc) {
        snprintf(err, errlen, "augment: out of memory or threads");
        return -1;
    }
    out->items = items;
    out->reps = reps;
    out->images = nimg;
    out->max_threads = max_threads;
    out->npoints = np;
    return 0;
}

/* calibrate's benchmark: the training augment on the first images, one
 * thread and the scaling curve up to ctx's threads. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    if (calib_images(c, err, errlen) != 0) return -1;
    return augment_bench(c->imgs, c->nimg, c->quick ? 200 : 1000, c->threads, c->reps, c->seed, res,
                         err, errlen);
}

/* The curve as prep.scaling's "THREADS:SPEEDUP, ..." (quoted); "" for one point. */
static void scaling_text(const augment_result *a, char *out, size_t len) {
    char nb[64];
    size_t used = 1;
    snprintf(out, len, "\"");
    for (int k = 0; k < a->npoints && a->npoints >= 2; k++) {
        char pt[96];
        int n = snprintf(pt, sizeof pt, "%s%d:%s", k ? ", " : "", a->curve[k].threads,
                         profile_num(a->curve[k].speedup, nb, sizeof nb));
        if (n < 0 || used + (size_t)n + 2 > len) break; /* 13 points fit */
        memcpy(out + used, pt, (size_t)n + 1);
        used += (size_t)n;
    }
    if (used > 1)
        memcpy(out + used, "\"", 2);
    else
        out[0] = '\0';
}

static void bench_keys(const void *res, profile_keys *k) {
    const augment_result *a = res;
    profile_key_int(k, CALIB_KEY(100, "server.cpus"), a->max_threads);
    profile_key_num(k, CALIB_KEY(500, "prep.augment_ms"), a->ms_per_item.median);
    /* The augment's measured speed-up over threads (the curve under
     * measured:), for every prep core: a host's curve needs two points. */
    char curve[PROFILE_VALUE_LEN];
    scaling_text(a, curve, sizeof curve);
    if (curve[0]) profile_key(k, CALIB_KEY(1100, "prep.scaling"), curve);
}

static void bench_measured(const void *res, prof_t *o) {
    const augment_result *a = res;
    prof_str(o, 4, "operation",
             "random-resized-crop (bilinear) to 224x224, flip, normalize, HWC u8 to CHW f32");
    prof_int(o, 4, "items_per_pass", a->items);
    prof_int(o, 4, "images", a->images);
    prof_int(o, 4, "repetitions", a->reps);
    prof_stat(o, 4, "ms_per_item", a->ms_per_item);
    fprintf(o->f, "    scaling:\n");
    for (int k = 0; k < a->npoints; k++) {
        fprintf(o->f, "      - threads: %d\n", a->curve[k].threads);
        prof_stat(o, 8, "items_s", a->curve[k].items_s);
        prof_num(o, 8, "speedup", a->curve[k].speedup);
    }
}

static void bench_judge(const void *res, stability_t *st) {
    stability_figure(st, "augment ms/item (one thread)",
                     ((const augment_result *)res)->ms_per_item);
}

const calib_bench_t bench_augment = {
    .section = "augment_cpu",
    .size = sizeof(augment_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
