/* gpu_decode_bench: see gpu_decode_bench.h. */
#include "gpu_decode_bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "gpu.h"
#include "progress.h"

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

/* calibrate's benchmark: without a GPU or nvJPEG the profile says why, and
 * a scenario that decodes on the GPU must give the rates itself. */
static int bench_run(calib_ctx *c, void *res, char *err, size_t errlen) {
    (void)err, (void)errlen;
    nvjpeg_result *nj = res;
    if (gpu_decode_bench(c->set, c->quick ? 32 : 128, c->reps, nj) != 0)
        fprintf(stderr,
                "calibrate: GPU decode not measured: %s; a scenario with prep.decode gpu must "
                "give prep.gpu_decode_ms_per_mp and prep.huffman_ms_per_mb itself\n",
                nj->reason);
    return 0;
}

static void bench_keys(const void *res, profile_keys *k) {
    const nvjpeg_result *nj = res;
    if (!nj->measured) return;
    profile_key_num(k, CALIB_KEY(700, "prep.huffman_ms_per_mb"), nj->host_ms_per_mb);
    profile_key_num(k, CALIB_KEY(701, "prep.gpu_decode_ms_per_mp"), nj->gpu_ms_per_mp);
}

static void bench_measured(const void *res, prof_t *o) {
    const nvjpeg_result *nj = res;
    prof_bool(o, 4, "measured", nj->measured);
    if (!nj->measured) {
        prof_str(o, 4, "reason", nj->reason);
        return;
    }
    prof_str(o, 4, "method",
             "hybrid backend, decoupled API: host phase (Huffman, CPU wall clock) and device "
             "phase (transfer + decode to RGBI, CUDA events), per image");
    prof_int(o, 4, "items", nj->items);
    prof_int(o, 4, "repetitions", nj->reps);
    prof_stat(o, 4, "device_ms_per_image", nj->device_ms);
    prof_stat(o, 4, "host_ms_per_image", nj->host_ms);
    prof_num(o, 4, "gpu_ms_per_megapixel", nj->gpu_ms_per_mp);
    prof_num(o, 4, "host_ms_per_mb", nj->host_ms_per_mb);
    prof_num(o, 4, "rgb_mean_abs_diff_vs_turbojpeg", nj->mean_abs_diff);
}

const calib_bench_t bench_nvjpeg = {
    .section = "nvjpeg",
    .size = sizeof(nvjpeg_result),
    .run = bench_run,
    .keys = bench_keys,
    .measured = bench_measured,
};
