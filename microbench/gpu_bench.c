/* gpu_bench: see gpu_bench.h. */
#include "gpu_bench.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "augment.h"
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

int gpu_decode_bench(const jpeg_set *set, int max_items, int reps, nvjpeg_result *out) {
    memset(out, 0, sizeof *out);
    char device[256];
    if (gpu_probe(device, sizeof device, out->reason, sizeof out->reason) != 0) return 1;
    int n = set->n < max_items ? set->n : max_items;
    if (reps > 64) reps = 64;
    const unsigned char **jp = malloc(sizeof *jp * (size_t)n);
    size_t *sz = malloc(sizeof *sz * (size_t)n);
    double *host = malloc(sizeof *host * (size_t)n * (size_t)reps);
    double *dev = malloc(sizeof *dev * (size_t)n * (size_t)reps);
    double *mp = malloc(sizeof *mp * (size_t)n), *hm = malloc(sizeof *hm * (size_t)n);
    double *dm = malloc(sizeof *dm * (size_t)n);
    unsigned char *ref = NULL;
    int rc = 1;
    if (!jp || !sz || !host || !dev || !mp || !hm || !dm) {
        snprintf(out->reason, sizeof out->reason, "out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        jp[i] = set->v[i].jpeg, sz[i] = (size_t)set->v[i].size;
    if (decode_rgb(&set->v[0], &ref, out->reason, sizeof out->reason) != 0) goto done;
    if (gpu_nvjpeg(jp, sz, n, reps, ref, host, dev, mp, &out->mean_abs_diff, out->reason,
                   sizeof out->reason) != 0)
        goto done;
    /* IDCTs and upsampling differ by a level or two; more is a wrong decode. */
    if (!(out->mean_abs_diff <= 4)) {
        snprintf(out->reason, sizeof out->reason,
                 "nvJPEG's RGB differs from TurboJPEG's by %.2f levels on average: not reported",
                 out->mean_abs_diff);
        goto done;
    }
    double sum_mp = 0, sum_mb = 0, sum_d = 0, sum_h = 0;
    for (int i = 0; i < n; i++) {
        dm[i] = stats_summarize(&dev[(size_t)i * reps], reps).median;
        hm[i] = stats_summarize(&host[(size_t)i * reps], reps).median;
        sum_d += dm[i], sum_h += hm[i], sum_mp += mp[i], sum_mb += set->v[i].size / 1e6;
    }
    out->items = n, out->reps = reps;
    out->gpu_ms_per_mp = sum_d / sum_mp;
    out->host_ms_per_mb = sum_h / sum_mb;
    out->device_ms = stats_summarize(dm, n);
    out->host_ms = stats_summarize(hm, n);
    out->measured = 1;
    progress("gpu: nvJPEG decode %.4f ms per megapixel on the GPU, %.3f ms per MB on the CPU "
             "(Huffman)",
             out->gpu_ms_per_mp, out->host_ms_per_mb);
    rc = 0;
done:
    free(jp), free(sz), free(host), free(dev), free(mp), free(hm), free(dm), free(ref);
    return rc;
}
