/* gpu_bench: see gpu_bench.h. */
#include "gpu_bench.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "bench.h"
#include "gpu.h"
#include "progress.h"

#define CHECK_ITEMS 8
#define TOLERANCE   1e-5

int gpu_bench(const aug_image *imgs, int nimg, int batch, int reps, unsigned long seed, int quick,
              gpu_result *out) {
    memset(out, 0, sizeof *out);
    out->built = gpu_built();
    if (gpu_probe(out->device, sizeof out->device, out->reason, sizeof out->reason) != 0) return 1;
    if (reps > 64) reps = 64;
    progress("gpu: %s", out->device);
    const size_t per_item = (size_t)3 * AUG_OUT * AUG_OUT;
    aug_image *bi = malloc(sizeof *bi * (size_t)batch);
    aug_params *bp = malloc(sizeof *bp * (size_t)batch);
    float *res = malloc(sizeof(float) * per_item * (size_t)batch);
    float *ref = malloc(sizeof(float) * per_item);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    double ms[64], v[64];
    int rc = -1;
    if (!bi || !bp || !res || !ref || !rng) {
        snprintf(out->reason, sizeof out->reason, "out of memory");
        goto done;
    }
    gsl_rng_set(rng, seed);
    for (int i = 0; i < batch; i++) {
        bi[i] = imgs[i % nimg];
        aug_draw_params(rng, bi[i].w, bi[i].h, &bp[i]);
    }
    /* One untimed launch first: module load and first-touch costs are not the kernel's. */
    if (gpu_augment(bi, bp, batch, AUG_OUT, AUG_OUT, res, 1, ms, out->reason, sizeof out->reason) ||
        gpu_augment(bi, bp, batch, AUG_OUT, AUG_OUT, res, reps, ms, out->reason,
                    sizeof out->reason))
        goto done;
    out->checked_items = batch < CHECK_ITEMS ? batch : CHECK_ITEMS;
    for (int i = 0; i < out->checked_items; i++) {
        augment_ref(bi[i].px, bi[i].w, bi[i].h, &bp[i], AUG_OUT, AUG_OUT, ref);
        for (size_t k = 0; k < per_item; k++) {
            double d = fabs((double)ref[k] - res[per_item * i + k]);
            if (d > out->max_abs_err) out->max_abs_err = d;
        }
    }
    if (!(out->max_abs_err <= TOLERANCE)) {
        snprintf(out->reason, sizeof out->reason,
                 "augment kernel disagrees with the C reference (max error %g): not reported",
                 out->max_abs_err);
        goto done;
    }
    out->batch = batch;
    out->reps = reps;
    out->launch_ms = stats_summarize(ms, reps);
    for (int r = 0; r < reps; r++)
        v[r] = ms[r] / batch;
    out->augment_ms = stats_summarize(v, reps);
    progress("gpu: augment %.4f ms/item in batches of %d", out->augment_ms.median, batch);

    out->h2d_bytes = quick ? (size_t)64 << 20 : (size_t)256 << 20;
    if (gpu_h2d(out->h2d_bytes, 1, reps, v, out->reason, sizeof out->reason)) goto done;
    out->h2d_pinned_gb_s = stats_summarize(v, reps);
    if (gpu_h2d(out->h2d_bytes, 0, reps, v, out->reason, sizeof out->reason)) goto done;
    out->h2d_pageable_gb_s = stats_summarize(v, reps);
    progress("gpu: host-to-device %.1f GB/s pinned, %.1f GB/s pageable",
             out->h2d_pinned_gb_s.median, out->h2d_pageable_gb_s.median);
    out->sgemm_n = quick ? 2048 : 8192;
    if (gpu_sgemm(out->sgemm_n, reps, v, out->reason, sizeof out->reason)) goto done;
    out->sgemm_tflops = stats_summarize(v, reps);
    progress("gpu: SGEMM %d: %.1f TFLOP/s", out->sgemm_n, out->sgemm_tflops.median);
    out->available = 1;
    out->reason[0] = '\0';
    rc = 0;
done:
    free(bi);
    free(bp);
    free(res);
    free(ref);
    if (rng) gsl_rng_free(rng);
    return rc;
}

/* calibrate's benchmark: a GPU that is not there is not a failure (the
 * profile says why); one that fails mid-way is reported and left out. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    gpu_result *g = res;
    if (calib_images(c, err, errlen) != 0) return -1;
    int rc = gpu_bench(c->imgs, c->nimg, c->quick ? 64 : 256, c->reps, c->seed, c->quick, g);
    if (rc == 1)
        fprintf(stderr, "calibrate: no GPU measured: %s; writing a CPU-only profile\n", g->reason);
    else if (rc < 0)
        fprintf(stderr, "calibrate: GPU measurement failed: %s; writing a CPU-only profile\n",
                g->reason);
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    const gpu_result *g = res;
    if (g->available)
        profile_key_num(k, CALIB_KEY(600, "prep.gpu_augment_ms"), g->augment_ms.median);
}

static void bench_measured(const void *res, prof_t *o) {
    const gpu_result *g = res;
    prof_bool(o, 4, "built_with_cuda", g->built);
    prof_bool(o, 4, "available", g->available);
    if (!g->available) {
        prof_str(o, 4, "reason", g->reason);
        return;
    }
    prof_str(o, 4, "device", g->device);
    prof_int(o, 4, "batch", g->batch);
    prof_int(o, 4, "repetitions", g->reps);
    prof_stat(o, 4, "augment_launch_ms", g->launch_ms);
    prof_stat(o, 4, "augment_ms_per_item", g->augment_ms);
    prof_num(o, 4, "augment_max_abs_error_vs_reference", g->max_abs_err);
    prof_int(o, 4, "h2d_bytes", (long)g->h2d_bytes);
    prof_stat(o, 4, "h2d_pinned_gb_s", g->h2d_pinned_gb_s);
    prof_stat(o, 4, "h2d_pageable_gb_s", g->h2d_pageable_gb_s);
    prof_int(o, 4, "sgemm_n", g->sgemm_n);
    prof_stat(o, 4, "sgemm_tflops", g->sgemm_tflops);
}

static void bench_judge(const void *res, stability_t *st) {
    const gpu_result *g = res;
    if (!g->available) return;
    stability_figure(st, "GPU augment ms/item", g->augment_ms);
    stability_figure(st, "host-to-device GB/s (pinned)", g->h2d_pinned_gb_s);
    stability_figure(st, "SGEMM TFLOP/s", g->sgemm_tflops);
}

const calib_bench_t bench_gpu = {
    .section = "gpu",
    .size = sizeof(gpu_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
    .judge = bench_judge,
};
