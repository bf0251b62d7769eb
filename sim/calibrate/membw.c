/* membw: see membw.h. */
#include "membw.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "progress.h"

#define MEMBW_BYTES_PER_ELEM 24.0 /* b and c read, a written */

typedef struct {
    double *a, *b, *c;
    size_t n;
    double q;
    int threads, passes, init;
    /* The workers wait at the gate until every one of them exists (or
     * abort, when one could not be started: no barrier is left waiting). */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open, abort;
    pthread_barrier_t pass; /* each pass starts together */
    double *t0, *t1;        /* [pass * threads + id] */
} bw_job;

typedef struct {
    bw_job *job;
    int id;
} bw_arg;

/* Out of line and through pointers the caller keeps: its stores are the
 * measurement, and the caller reads every one of them back. */
__attribute__((noinline)) static void triad(double *restrict a, const double *restrict b,
                                            const double *restrict c, size_t n, double q) {
    for (size_t i = 0; i < n; i++)
        a[i] = b[i] + q * c[i];
}

static void *bw_worker(void *arg) {
    bw_job *job = ((bw_arg *)arg)->job;
    const int id = ((bw_arg *)arg)->id, T = job->threads;
    pthread_mutex_lock(&job->mu);
    while (!job->open)
        pthread_cond_wait(&job->cv, &job->mu);
    int abort_run = job->abort;
    pthread_mutex_unlock(&job->mu);
    if (abort_run) return NULL;
    const size_t lo = job->n * (size_t)id / (size_t)T, hi = job->n * (size_t)(id + 1) / (size_t)T;
    for (int p = 0; p < job->passes; p++) {
        pthread_barrier_wait(&job->pass);
        job->t0[p * T + id] = clock_now();
        if (job->init) { /* first touch: the pages land near this slice's thread */
            for (size_t i = lo; i < hi; i++)
                job->a[i] = 0, job->b[i] = 1, job->c[i] = 2;
        } else {
            triad(job->a + lo, job->b + lo, job->c + lo, hi - lo, job->q);
        }
        job->t1[p * T + id] = clock_now();
    }
    return job;
}

/* Runs job->passes passes on job->threads threads; 0, or -1 when a thread
 * could not be started. */
static int run_threads(bw_job *job) {
    pthread_t tid[256];
    bw_arg arg[256];
    int started = 0, rc = 0;
    job->open = job->abort = 0;
    for (; started < job->threads; started++) {
        arg[started] = (bw_arg){job, started};
        if (pthread_create(&tid[started], NULL, bw_worker, &arg[started]) != 0) break;
    }
    if (started < job->threads || pthread_barrier_init(&job->pass, NULL, (unsigned)job->threads))
        job->abort = 1, rc = -1;
    pthread_mutex_lock(&job->mu);
    job->open = 1;
    pthread_cond_broadcast(&job->cv);
    pthread_mutex_unlock(&job->mu);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (!job->abort) pthread_barrier_destroy(&job->pass);
    return rc;
}

/* The size of cpu0's highest cache level in KB (1000 bytes; sysfs gives
 * KiB), from sysfs; 0 = unknown. */
static double llc_kb(void) {
    double kb = 0;
    int best = 0;
    for (int i = 0; i < 8; i++) {
        char path[96], line[64];
        int level = 0;
        double size = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (fgets(line, sizeof line, f)) level = atoi(line);
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if ((f = fopen(path, "r"))) {
            char unit = 'K';
            if (fgets(line, sizeof line, f) && sscanf(line, "%lf%c", &size, &unit) >= 1)
                size *= unit == 'M' ? 1024 : unit == 'G' ? 1024 * 1024 : 1;
            fclose(f);
        }
        if (level > best && size > 0) best = level, kb = size;
    }
    return kb * 1.024;
}

int membw_bench(int max_threads, double array_mb, int reps, membw_result *out, char *err,
                size_t errlen) {
    memset(out, 0, sizeof *out);
    if (max_threads < 1 || max_threads > 256 || reps < 1 || reps > 64 || !(array_mb > 0)) {
        snprintf(err, errlen, "memory bandwidth: bad arguments");
        return -1;
    }
    /* Three arrays in at most a quarter of the free memory. */
    double avail = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (avail > 0 && 3 * array_mb * 1e6 > avail / 4) array_mb = avail / 4 / 3 / 1e6;
    size_t n = (size_t)(array_mb * 1e6 / sizeof(double));
    if (n < (size_t)max_threads * 64) {
        snprintf(err, errlen, "memory bandwidth: %.1f MB free is too little to measure",
                 avail / 1e6);
        return -1;
    }
    int counts[MEMBW_MAX_POINTS], np = 0;
    for (int t = 1; t <= max_threads && np < MEMBW_MAX_POINTS; t = t < 8 ? t + 1 : t * 2)
        counts[np++] = t;
    if (counts[np - 1] != max_threads && np < MEMBW_MAX_POINTS) counts[np++] = max_threads;

    bw_job job = {.n = n};
    job.a = malloc(n * sizeof(double));
    job.b = malloc(n * sizeof(double));
    job.c = malloc(n * sizeof(double));
    job.t0 = malloc(sizeof(double) * (size_t)(reps + 1) * (size_t)max_threads);
    job.t1 = malloc(sizeof(double) * (size_t)(reps + 1) * (size_t)max_threads);
    int rc = job.a && job.b && job.c && job.t0 && job.t1 ? 0 : -1;
    if (rc) snprintf(err, errlen, "memory bandwidth: out of memory (3 x %.0f MB)", array_mb);
    pthread_mutex_init(&job.mu, NULL);
    pthread_cond_init(&job.cv, NULL);
    job.threads = max_threads, job.passes = 1, job.init = 1;
    if (rc == 0 && run_threads(&job) != 0) {
        snprintf(err, errlen, "memory bandwidth: cannot start %d threads", max_threads);
        rc = -1;
    }
    job.init = 0;
    for (int k = 0; k < np && rc == 0; k++) {
        const int T = counts[k];
        job.threads = T, job.passes = reps + 1, job.q = 1 + k; /* a different result each count */
        if (run_threads(&job) != 0) {
            snprintf(err, errlen, "memory bandwidth: cannot start %d threads", T);
            rc = -1;
            break;
        }
        double gbs[64];
        for (int p = 1; p <= reps; p++) { /* pass 0 warmed up */
            double t0 = job.t0[p * T], t1 = job.t1[p * T];
            for (int t = 1; t < T; t++) {
                if (job.t0[p * T + t] < t0) t0 = job.t0[p * T + t];
                if (job.t1[p * T + t] > t1) t1 = job.t1[p * T + t];
            }
            gbs[p - 1] = t1 > t0 ? MEMBW_BYTES_PER_ELEM * (double)n / (t1 - t0) / 1e9 : 0;
        }
        /* Every element holds this count's result: no pass was skipped. */
        const double want = 1 + job.q * 2;
        for (size_t i = 0; i < n; i++)
            if (job.a[i] != want) {
                snprintf(err, errlen, "memory bandwidth: element %zu is %g, not %g", i, job.a[i],
                         want);
                rc = -1;
                break;
            }
        membw_point *pt = &out->curve[k];
        pt->threads = T;
        pt->gb_s = stats_summarize(gbs, reps);
        progress("memory bandwidth: %d thread%s: %.2f GB/s (triad, 3 x %.0f MB)", T,
                 T > 1 ? "s" : "", pt->gb_s.median, array_mb);
    }
    pthread_mutex_destroy(&job.mu);
    pthread_cond_destroy(&job.cv);
    free(job.a), free(job.b), free(job.c), free(job.t0), free(job.t1);
    if (rc) return -1;
    out->reps = reps, out->max_threads = max_threads, out->npoints = np;
    out->array_mb = array_mb;
    out->llc_kb = llc_kb();
    out->gb_s = out->curve[np - 1].gb_s.median;
    return 0;
}

/* calibrate's benchmark: arrays far past any last-level cache; quick keeps
 * them smaller. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    return membw_bench(c->threads, c->quick ? 64 : 256, c->reps, res, err, errlen);
}

static void bench_keys(const void *res, profile_keys *k) {
    profile_key_num(k, CALIB_KEY(200, "server.mem_gbps"), ((const membw_result *)res)->gb_s);
}

static void bench_measured(const void *res, prof_t *o) {
    const membw_result *bw = res;
    prof_str(o, 4, "kernel",
             "STREAM-like triad a[i] = b[i] + q * c[i] on doubles, each thread its own slice; "
             "24 bytes counted per element (b, c read, a written; not the write-allocate read); "
             "1 GB = 1e9 bytes");
    prof_num(o, 4, "array_mb", bw->array_mb);
    prof_num(o, 4, "last_level_cache_kb", bw->llc_kb);
    prof_int(o, 4, "repetitions", bw->reps);
    prof_str(o, 4, "mem_gbps", "the median of the most threads (server.mem_gbps)");
    fprintf(o->f, "    scaling:\n");
    for (int k = 0; k < bw->npoints; k++) {
        fprintf(o->f, "      - threads: %d\n", bw->curve[k].threads);
        prof_stat(o, 8, "gb_s", bw->curve[k].gb_s);
    }
}

static void bench_judge(const void *res, stability_t *st) {
    const membw_result *bw = res;
    stability_figure(st, "memory GB/s (all threads)", bw->curve[bw->npoints - 1].gb_s);
    stability_beyond_cache(st, "memory GB/s", 3 * bw->array_mb, bw->llc_kb);
}

const calib_bench_t bench_membw = {
    .section = "memory_bandwidth",
    .size = sizeof(membw_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
